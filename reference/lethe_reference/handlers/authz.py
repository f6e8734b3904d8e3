"""Authorized-operation bit fields, for a broker without an authorizer.

The reference broker has no ACLs: like a Kafka broker with no
``authorizer.class.name``, it allows everything, and when a client asks for
authorized operations (Metadata ``include_topic_authorized_operations``,
DescribeCluster ``include_cluster_authorized_operations``) it reports every
operation the resource type supports (``AuthHelper.authorizedOperations`` with
no authorizer, ``AclEntry.supportedOperations``), as a bit field with bit
``AclOperation.code`` set (``Utils.to32BitField``)::

    TOPIC    READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8,
             DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11                      -> 3576
    CLUSTER  CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10,
             ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12                       -> 8096

A field the client did not ask for is ``-2147483648`` (INT32_MIN), the
schema default.
"""

from __future__ import annotations

__all__ = ["CLUSTER_OPERATIONS", "OMITTED", "TOPIC_OPERATIONS", "bit_field"]

OMITTED = -(1 << 31)


def bit_field(codes: tuple[int, ...]) -> int:
    """``Utils.to32BitField``: bit ``code`` set for every code."""
    field = 0
    for code in codes:
        field |= 1 << code
    return field


TOPIC_OPERATIONS = bit_field((3, 4, 5, 6, 7, 8, 10, 11))
CLUSTER_OPERATIONS = bit_field((5, 7, 8, 9, 10, 11, 12))
