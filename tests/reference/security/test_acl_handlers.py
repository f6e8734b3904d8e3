"""CreateAcls (30), DescribeAcls (29), DeleteAcls (31) as Kafka 4.0's AclApis answer them:
SECURITY_DISABLED (54) "No Authorizer is configured." without an authorizer,
CLUSTER_AUTHORIZATION_FAILED (31) without ALTER / DESCRIBE on the cluster,
INVALID_REQUEST (42) for a binding Kafka refuses, bindings grouped by resource, and
ACLs surviving a broker restart; the wire layout round-trips at every version 1-3."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.create_acls import AclCreation, CreateAclsRequest
from lethe_formats.protocol.messages.delete_acls import DeleteAclsFilter, DeleteAclsRequest
from lethe_formats.protocol.messages.describe_acls import (
    AclDescription,
    DescribeAclsRequest,
    DescribeAclsResource,
)
from lethe_reference.broker import Broker
from lethe_reference.handlers.dispatch import dispatch
from security_support import ADMIN, ALICE, ctx, plain_broker, secured_broker

READ_T = AclCreation(2, "t", 3, ALICE, "*", 3, 3)
WRITE_T = AclCreation(2, "t", 3, ALICE, "*", 4, 3)
DENY_P = AclCreation(2, "p-", 4, "User:*", "*", 6, 2)
EVERYTHING = DescribeAclsRequest(1, None, 1, None, None, 1, 1)


def call(broker: Broker, key: ApiKey, request: Any, principal: str = ADMIN) -> Any:
    return dispatch(broker, ctx(key, 3, principal), request)


def test_without_an_authorizer_every_acl_request_is_security_disabled(tmp_path: Path) -> None:
    broker = plain_broker(tmp_path)
    created = call(broker, ApiKey.CREATE_ACLS, CreateAclsRequest((READ_T,)))
    assert [(r.error_code, r.error_message) for r in created.results] == [
        (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")
    ]
    described = call(broker, ApiKey.DESCRIBE_ACLS, EVERYTHING)
    assert described.error_code == ErrorCode.SECURITY_DISABLED
    deleted = call(
        broker,
        ApiKey.DELETE_ACLS,
        DeleteAclsRequest((DeleteAclsFilter(1, None, 1, None, None, 1, 1),)),
    )
    assert deleted.filter_results[0].error_code == ErrorCode.SECURITY_DISABLED
    broker.shutdown()


def test_a_principal_without_cluster_rights_gets_31(tmp_path: Path) -> None:
    broker = secured_broker(tmp_path)
    created = call(broker, ApiKey.CREATE_ACLS, CreateAclsRequest((READ_T,)), ALICE)
    assert created.results[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert call(broker, ApiKey.DESCRIBE_ACLS, EVERYTHING, ALICE).error_code == 31
    broker.shutdown()


def test_created_acls_are_described_grouped_by_resource_and_survive_a_restart(
    tmp_path: Path,
) -> None:
    broker = secured_broker(tmp_path)
    created = call(broker, ApiKey.CREATE_ACLS, CreateAclsRequest((READ_T, WRITE_T, DENY_P)))
    assert [r.error_code for r in created.results] == [0, 0, 0]
    broker.shutdown()
    broker = secured_broker(tmp_path)
    described = call(broker, ApiKey.DESCRIBE_ACLS, EVERYTHING)
    assert described.error_code == ErrorCode.NONE
    assert described.resources == (
        DescribeAclsResource(
            2, "t", 3, (AclDescription(ALICE, "*", 3, 3), AclDescription(ALICE, "*", 4, 3))
        ),
        DescribeAclsResource(2, "p-", 4, (AclDescription("User:*", "*", 6, 2),)),
    )
    broker.shutdown()


def test_invalid_bindings_are_42_and_the_valid_ones_still_created(tmp_path: Path) -> None:
    broker = secured_broker(tmp_path)
    any_op = AclCreation(2, "t", 3, ALICE, "*", 1, 3)
    bad_principal = AclCreation(2, "t", 3, "alice", "*", 3, 3)
    created = call(broker, ApiKey.CREATE_ACLS, CreateAclsRequest((any_op, READ_T, bad_principal)))
    assert [r.error_code for r in created.results] == [42, 0, 42]
    assert created.results[0].error_message == "Invalid operation ANY"
    assert len(call(broker, ApiKey.DESCRIBE_ACLS, EVERYTHING).resources[0].acls) == 1
    broker.shutdown()


def test_delete_acls_removes_what_each_filter_matches_once(tmp_path: Path) -> None:
    broker = secured_broker(tmp_path)
    call(broker, ApiKey.CREATE_ACLS, CreateAclsRequest((READ_T, WRITE_T, DENY_P)))
    reads = DeleteAclsFilter(2, "t", 3, None, None, 3, 1)
    everything_on_t = DeleteAclsFilter(2, "t", 1, None, None, 1, 1)
    deleted = call(broker, ApiKey.DELETE_ACLS, DeleteAclsRequest((reads, everything_on_t)))
    assert [[m.operation for m in r.matching_acls] for r in deleted.filter_results] == [[3], [4]]
    remaining = call(broker, ApiKey.DESCRIBE_ACLS, EVERYTHING).resources
    assert [r.resource_name for r in remaining] == ["p-"]
    broker.shutdown()


@pytest.mark.parametrize("version", [1, 2, 3])
def test_acl_messages_round_trip_at_every_version(version: int) -> None:
    for message in (
        CreateAclsRequest((READ_T, DENY_P)),
        DeleteAclsRequest((DeleteAclsFilter(2, None, 1, ALICE, None, 1, 1),)),
        DescribeAclsRequest(2, "t", 2, None, "*", 8, 3),
    ):
        assert decode(type(message), version, encode(message, version)) == message


def test_create_acls_v1_bytes_follow_kafkas_classic_layout() -> None:
    """v1: [int32 count] then per creation int8 type, string name, int8 pattern, string
    principal, string host, int8 operation, int8 permission (int16-length strings)."""
    data = encode(CreateAclsRequest((AclCreation(2, "t", 3, "User:a", "*", 6, 3),)), 1)
    assert data.hex() == "0000000102000174030006557365723a6100012a0603"
