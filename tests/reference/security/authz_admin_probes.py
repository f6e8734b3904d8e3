"""Probes for ElectLeaders, Alter/ListPartitionReassignments, Describe/AlterClientQuotas
and Describe/AlterUserScramCredentials as a principal without rights (authz_probes.PROBES
takes them in).

ControllerApis refuses the first three and AlterClientQuotas with
``authorizeClusterOperation`` (ALTER; DESCRIBE for the listing; ALTER_CONFIGS for quotas),
whose ``ClusterAuthorizationException`` message names the request object ("Request
Request(processor=...) is not authorized."), text no other broker reproduces: those
summaries keep the codes only. DescribeClientQuotas (KafkaApis) answers with the
default message and null entries; AlterClientQuotas' error response uses the default
message too (``Errors.message()``). DescribeUserScramCredentials (KafkaApis, DESCRIBE on
the cluster) answers 31 with a null message (the exception's message is the default,
which ``ApiError.fromThrowable`` drops) on the request and on one result per asked user,
whose name is left empty; AlterUserScramCredentials (ControllerApis, ALTER) names every
user once, sorted, with 31 and the request-naming message (codes only)."""

from __future__ import annotations

from typing import Any

from authz_table import ABSENT, CAF, CLUSTER_DENIED, TOPIC, Probe, World, same
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages.alter_client_quotas import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    AlterQuotaEntry,
    QuotaOp,
)
from lethe_formats.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartition,
    ReassignableTopic,
)
from lethe_formats.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    ScramDeletion,
    ScramUpsertion,
)
from lethe_formats.protocol.messages.describe_client_quotas import (
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
    QuotaComponent,
    QuotaEntity,
)
from lethe_formats.protocol.messages.describe_user_scram_credentials import (
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    ScramUserName,
)
from lethe_formats.protocol.messages.elect_leaders import (
    ElectLeadersRequest,
    ElectLeadersResponse,
    ElectLeadersTopic,
)
from lethe_formats.protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    ListPartitionReassignmentsTopic,
)

__all__ = ["ADMIN_PROBES"]


def _elected(r: ElectLeadersResponse, _: World) -> Any:
    return r.error_code, [
        (t.topic, p.partition_id, p.error_code)
        for t in r.replica_election_results
        for p in t.partition_result
    ]


def _reassigned(r: AlterPartitionReassignmentsResponse, _: World) -> Any:
    return r.error_code, [
        (t.name, p.partition_index, p.error_code) for t in r.responses for p in t.partitions
    ]


def _listed(r: ListPartitionReassignmentsResponse, _: World) -> Any:
    return r.error_code, [
        (t.name, p.partition_index, p.replicas) for t in r.topics for p in t.partitions
    ]


def _described(r: DescribeClientQuotasResponse, _: World) -> Any:
    return r.error_code, r.error_message, r.entries


def _altered(r: AlterClientQuotasResponse, _: World) -> Any:
    return [(e.error_code, e.error_message, e.entity) for e in r.entries]


def _scram_described(r: DescribeUserScramCredentialsResponse, _: World) -> Any:
    return (
        r.error_code,
        r.error_message,
        [(u.user, u.error_code, u.error_message, u.credential_infos) for u in r.results],
    )


def _scram_altered(r: AlterUserScramCredentialsResponse, _: World) -> Any:
    return [(u.user, u.error_code) for u in r.results]


_QUOTA_ENTITY = (QuotaEntity("user", "alice"),)
_SALTED = bytes(32)

ADMIN_PROBES: tuple[Probe, ...] = (
    Probe(
        "elect leaders",
        ApiKey.ELECT_LEADERS,
        2,
        "ControllerApis.handleElectLeaders: ALTER on the cluster, else getErrorResponse "
        "(31 at the top and on every named partition)",
        lambda _: ElectLeadersRequest(
            0, (ElectLeadersTopic(TOPIC, (0,)), ElectLeadersTopic(ABSENT, (0,)))
        ),
        _elected,
        same((CAF, [(TOPIC, 0, CAF), (ABSENT, 0, CAF)])),
    ),
    Probe(
        "alter partition reassignments",
        ApiKey.ALTER_PARTITION_REASSIGNMENTS,
        0,
        "ControllerApis.handleAlterPartitionReassignments: ALTER on the cluster",
        lambda _: AlterPartitionReassignmentsRequest(
            topics=(ReassignableTopic(TOPIC, (ReassignablePartition(0, (1,)),)),)
        ),
        _reassigned,
        same((CAF, [(TOPIC, 0, CAF)])),
    ),
    Probe(
        "list partition reassignments",
        ApiKey.LIST_PARTITION_REASSIGNMENTS,
        0,
        "ControllerApis.handleListPartitionReassignments: DESCRIBE on the cluster; the "
        "error response names the asked partitions with empty replica lists",
        lambda _: ListPartitionReassignmentsRequest(
            topics=(ListPartitionReassignmentsTopic(TOPIC, (0,)),)
        ),
        _listed,
        same((CAF, [(TOPIC, 0, ())])),
    ),
    Probe(
        "describe client quotas",
        ApiKey.DESCRIBE_CLIENT_QUOTAS,
        1,
        "handleDescribeClientQuotasRequest: DESCRIBE_CONFIGS on the cluster, else 31 with "
        "null entries",
        lambda _: DescribeClientQuotasRequest((QuotaComponent("user", 2, None),), False),
        _described,
        same((CAF, CLUSTER_DENIED, None)),
    ),
    Probe(
        "alter client quotas",
        ApiKey.ALTER_CLIENT_QUOTAS,
        1,
        "ControllerApis.handleAlterClientQuotas: ALTER_CONFIGS on the cluster, else "
        "getErrorResponse (each entry, default message)",
        lambda _: AlterClientQuotasRequest(
            (AlterQuotaEntry(_QUOTA_ENTITY, (QuotaOp("producer_byte_rate", 1024.0, False),)),),
            False,
        ),
        _altered,
        same([(CAF, CLUSTER_DENIED, _QUOTA_ENTITY)]),
    ),
    Probe(
        "describe user scram credentials",
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
        0,
        "handleDescribeUserScramCredentialsRequest: DESCRIBE on the cluster, else "
        "getErrorResponse (31, null message, one nameless result per asked user)",
        lambda _: DescribeUserScramCredentialsRequest(
            (ScramUserName("alice"), ScramUserName("bob"))
        ),
        _scram_described,
        same((CAF, None, [("", CAF, None, ()), ("", CAF, None, ())])),
    ),
    Probe(
        "alter user scram credentials",
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
        0,
        "ControllerApis.handleAlterUserScramCredentials: ALTER on the cluster, else "
        "getErrorResponse (every named user once, sorted, 31)",
        lambda _: AlterUserScramCredentialsRequest(
            (ScramDeletion("zed", 1),),
            (
                ScramUpsertion("bob", 1, 4096, b"salt", _SALTED),
                ScramUpsertion("bob", 2, 4096, b"s", _SALTED),
            ),
        ),
        _scram_altered,
        same([("bob", CAF), ("zed", CAF)]),
    ),
)
