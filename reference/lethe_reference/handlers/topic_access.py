"""CreateTopics, DeleteTopics and CreatePartitions under an authorizer (``ControllerApis``).

Theory of operation
-------------------
CreateTopics: CREATE on the CLUSTER allows every topic of the request; without
it, each topic needs CREATE on itself. A refused topic is answered
TOPIC_AUTHORIZATION_FAILED (29) "Authorization failed." before any validation
of its settings, and nothing is created (:func:`creatable`).

A created topic's configs, partition count and replication factor are
answered only with DESCRIBE_CONFIGS on the topic (no cluster shortcut); without
it the topic is created all the same and its result says
``topic_config_error_code`` TOPIC_AUTHORIZATION_FAILED with -1, -1 and no
configs (``ReplicationControlManager.createTopic``, :func:`configs_visible`).
Refused topics are listed after the duplicates (``ControllerApis.createTopics``).

DeleteTopics: DELETE on the CLUSTER allows every topic (Kafka's
``hasClusterAuth``); without it each topic needs DESCRIBE and DELETE on
itself (:func:`deletion_rights`; what each refusal answers is in
:mod:`.topic_deletion`).

CreatePartitions (``ControllerApis.createPartitions``): after the duplicate
names are answered, each remaining topic needs ALTER on itself; a refused one
is TOPIC_AUTHORIZATION_FAILED with a null message, before existence or the
count is looked at, so an absent topic is 29 too (:func:`alterable`).

Without an authorizer every check passes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorize, authorize_cluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.topic_deletion import ALL_RIGHTS, Rights

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["CREATE_DENIED", "alterable", "configs_visible", "creatable", "deletion_rights"]

CREATE_DENIED = "Authorization failed."


def _may(broker: Broker, ctx: RequestContext, op: AclOperation, name: str) -> bool:
    return authorize(broker, ctx, op, ResourceType.TOPIC, name)


def creatable(broker: Broker, ctx: RequestContext, names: Iterable[str]) -> set[str]:
    """The names the principal may create (all of them with CREATE on the cluster)."""
    wanted = set(names)
    if authorize_cluster(broker, ctx, AclOperation.CREATE):
        return wanted
    return {n for n in wanted if _may(broker, ctx, AclOperation.CREATE, n)}


def configs_visible(broker: Broker, ctx: RequestContext, name: str) -> bool:
    """CreateTopics: whether a created topic's configs may be returned (DESCRIBE_CONFIGS)."""
    return _may(broker, ctx, AclOperation.DESCRIBE_CONFIGS, name)


def deletion_rights(broker: Broker, ctx: RequestContext) -> Rights:
    """DeleteTopics' DESCRIBE / DELETE checks (all granted by DELETE on the CLUSTER)."""
    if authorize_cluster(broker, ctx, AclOperation.DELETE):
        return ALL_RIGHTS
    return Rights(
        lambda name: _may(broker, ctx, AclOperation.DESCRIBE, name),
        lambda name: _may(broker, ctx, AclOperation.DELETE, name),
    )


def alterable(broker: Broker, ctx: RequestContext, name: str) -> bool:
    """CreatePartitions: ALTER on the topic."""
    return _may(broker, ctx, AclOperation.ALTER, name)
