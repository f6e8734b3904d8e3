"""Classic consumer groups: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
DescribeGroups, ListGroups (keys 10, 11, 14, 12, 13, 15, 16).

Theory of operation
-------------------
``KafkaApis`` + ``GroupCoordinatorService`` of Kafka 4.0 over the sans-IO
:class:`~lethe_reference.cluster.group.GroupCoordinator`, which
:mod:`lethe_reference.cluster.group_runtime` owns. Each handler maps the request
of the version the client spoke to a coordinator call and the result back;
JoinGroup and SyncGroup may return a :class:`~lethe_reference.purgatory.Deferred`
the coordinator completes later (another member's request, or its timers on the
broker scheduler). Authorization comes first (:mod:`.group_access`);
FindCoordinator names this broker's address on the request's listener.

FindCoordinator (``getCoordinator``), per key (v0-3 one ``key``, v4+ the
``coordinator_keys`` batch)::

    key type 0 (group)        __consumer_offsets missing: create it, COORDINATOR_NOT_AVAILABLE
                              its partition for the key missing: COORDINATOR_NOT_AVAILABLE
                              else NONE, this node
    key type 1 (transaction)  COORDINATOR_NOT_AVAILABLE while __transaction_state is created,
                              else NONE, the leader of the id's partition
    key type 2 (share)        INVALID_REQUEST (v6+: no share coordinator; before v6: illegal)
    other                     INVALID_REQUEST (Kafka throws; every key of the request fails)

A batch that finds the offsets topic missing answers every group key 15 (Kafka
creates the topic asynchronously, so no key of that request sees it). v0-3
answer an error with node -1, host "", port -1 and the error's stock
message; success carries the message "NONE" (``Errors.NONE.message()``). v4+
entries leave ``error_message`` "" unless the whole request failed.

Transactions (key type 1): the first lookup creates ``__transaction_state``
and answers COORDINATOR_NOT_AVAILABLE (Kafka creates it asynchronously); then
the leader of the id's partition (:mod:`lethe_reference.cluster.txn_runtime`).

Version mapping (``JoinGroupResponse``, ``LeaveGroupResponse``, ...):

* JoinGroup: below v7 a null protocol name is sent as "", from v7 "" is sent as
  null; ``protocol_type`` exists from v7, ``skip_assignment`` from v9; a new
  member must first fetch its id (MEMBER_ID_REQUIRED) from v4. Errors raised
  before the coordinator ran (NOT_COORDINATOR) carry member id "".
* SyncGroup v5+ without protocol type or name: INCONSISTENT_GROUP_PROTOCOL.
* LeaveGroup v0-2 name one member and get one error code (the group's, else the
  member's); v3+ answer per member. An unknown group answers every member
  UNKNOWN_MEMBER_ID with top-level NONE.
* DescribeGroups: an unknown group is "Dead" with no members, but
  GROUP_ID_NOT_FOUND "Group <id> not found." in v6; authorized operations (v3+,
  when asked) are the group operations READ, DELETE, DESCRIBE (328). Groups are
  answered in request order (Kafka orders them by ``__consumer_offsets``
  partition, in Java hash order).
* ListGroups: state filters are trimmed and case-insensitive, type filters
  case-insensitive ("classic" is the only type here).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages import describe_groups as dg
from lethe_formats.protocol.messages.find_coordinator import (
    KEY_TYPE_GROUP,
    KEY_TYPE_SHARE,
    KEY_TYPE_TRANSACTION,
    Coordinator,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from lethe_formats.protocol.messages.heartbeat import HeartbeatRequest, HeartbeatResponse
from lethe_formats.protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
)
from lethe_formats.protocol.messages.leave_group import (
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
)
from lethe_formats.protocol.messages.list_groups import (
    ListedGroup,
    ListGroupsRequest,
    ListGroupsResponse,
)
from lethe_formats.protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

from lethe_reference.cluster.acl import ResourceType
from lethe_reference.cluster.group import (
    DescribedGroup,
    JoinRequest,
    JoinResult,
    LeaveMember,
    MemberLeft,
    SyncRequest,
    SyncResult,
)
from lethe_reference.cluster.group_runtime import client_host, runtime_of
from lethe_reference.cluster.metadata_view import cluster_leader
from lethe_reference.cluster.txn_runtime import txn_runtime_of
from lethe_reference.handlers import group_access as access
from lethe_reference.handlers.authz import OMITTED, authorized_operations
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.endpoints import advertised_endpoint
from lethe_reference.metadata import CONSUMER_OFFSETS, TRANSACTION_STATE
from lethe_reference.purgatory import Deferred

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__: list[str] = []

_NO_NODE = (-1, "", -1)


def _message(code: ErrorCode) -> str:
    """``Errors.message()``: the stock text, "NONE" for no error."""
    return "NONE" if code is ErrorCode.NONE else code.message


@handles(ApiKey.FIND_COORDINATOR)
def handle_find_coordinator(
    broker: Broker, ctx: RequestContext, request: FindCoordinatorRequest
) -> FindCoordinatorResponse:
    version, key_type = ctx.api_version, request.key_type
    node = (broker.node_id, *advertised_endpoint(broker, ctx))
    if version < 4:
        code = access.find_refusal(broker, ctx, key_type, request.key) or ErrorCode.NONE
        found = node
        if code is ErrorCode.NONE:
            code, found = _locate(broker, key_type, request.key, node)
        node_id, host, port = found if code is ErrorCode.NONE else _NO_NODE
        return FindCoordinatorResponse(
            error_code=code,
            error_message=_message(code),
            node_id=node_id,
            host=host,
            port=port,
        )
    if key_type not in (KEY_TYPE_GROUP, KEY_TYPE_TRANSACTION, KEY_TYPE_SHARE):
        text = _message(ErrorCode.INVALID_REQUEST)
        return FindCoordinatorResponse(
            coordinators=tuple(
                Coordinator(key, *_NO_NODE, ErrorCode.INVALID_REQUEST, text)
                for key in request.coordinator_keys
            )
        )
    runtime, entries = runtime_of(broker), []
    creating = runtime.offsets_topic_partitions() == 0
    for key in request.coordinator_keys:
        refusal = access.find_refusal(broker, ctx, key_type, key)
        code, found = refusal or ErrorCode.NONE, node
        if code is ErrorCode.NONE:
            code, found = _locate(broker, key_type, key, node)
        if creating and key_type == KEY_TYPE_GROUP and refusal is None:  # created asynchronously
            code = ErrorCode.COORDINATOR_NOT_AVAILABLE
        node_id, host, port = found if code is ErrorCode.NONE else _NO_NODE
        entries.append(Coordinator(key, node_id, host, port, code, ""))
    return FindCoordinatorResponse(coordinators=tuple(entries))


def _locate(
    broker: Broker, key_type: int, key: str, this: tuple[int, str, int]
) -> tuple[ErrorCode, tuple[int, str, int]]:
    """The coordinator of a group or transactional id, or why there is none."""
    if key_type == KEY_TYPE_TRANSACTION:
        txn = txn_runtime_of(broker)
        code = txn.find_coordinator(key)
        if code is not ErrorCode.NONE:
            return code, _NO_NODE
        return _coordinator(broker, TRANSACTION_STATE, txn.coordinator.partition_for(key), this)
    runtime = runtime_of(broker)
    code = runtime.find_coordinator(key_type, key)
    if code is not ErrorCode.NONE or key_type != KEY_TYPE_GROUP:
        return code, this
    return _coordinator(broker, CONSUMER_OFFSETS, runtime.coordinator.partition_for(key), this)


def _coordinator(
    broker: Broker, topic: str, partition: int, this: tuple[int, str, int]
) -> tuple[ErrorCode, tuple[int, str, int]]:
    """The key's coordinator: the leader of its partition of ``topic`` in a cluster
    (COORDINATOR_NOT_AVAILABLE while it has none), this broker when alone."""
    leader = cluster_leader(broker, topic, partition)
    if leader is None:
        return ErrorCode.NONE, this
    if leader[0] < 0:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, _NO_NODE
    return ErrorCode.NONE, leader


# -- JoinGroup ------------------------------------------------------------------------------


def _join_response(result: JoinResult, version: int) -> JoinGroupResponse:
    name = result.protocol_name
    if version < 7 and name is None:
        name = ""
    elif version >= 7 and name == "":
        name = None
    members = tuple(
        JoinGroupResponseMember(
            m.member_id, m.group_instance_id if version >= 5 else None, m.metadata
        )
        for m in result.members
    )
    not_run = result.error_code == ErrorCode.NOT_COORDINATOR
    return JoinGroupResponse(
        error_code=result.error_code,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type if version >= 7 else None,
        protocol_name=name,
        leader=result.leader,
        skip_assignment=result.skip_assignment if version >= 9 else False,
        member_id="" if not_run else result.member_id,
        members=members,
    )


def _join_error(
    request: JoinGroupRequest, code: ErrorCode, message: str | None
) -> JoinGroupResponse:
    """``JoinGroupRequest.getErrorResponse`` (protocol name "" in every version)."""
    return JoinGroupResponse(error_code=code, protocol_name="", leader="", member_id="")


@handles(ApiKey.JOIN_GROUP, error_response=_join_error)
def handle_join_group(
    broker: Broker, ctx: RequestContext, request: JoinGroupRequest
) -> JoinGroupResponse | Deferred[JoinGroupResponse]:
    if not access.may_read_group(broker, ctx, request.group_id):
        return _join_error(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    version = ctx.api_version
    runtime = runtime_of(broker)
    result = runtime.coordinator.join_group(
        JoinRequest(
            group_id=request.group_id,
            member_id=request.member_id,
            protocol_type=request.protocol_type,
            protocols=tuple((p.name, p.metadata) for p in request.protocols),
            session_timeout_ms=request.session_timeout_ms,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            client_id=ctx.client_id or "",
            client_host=client_host(ctx),
            group_instance_id=request.group_instance_id,
            require_known_member_id=version >= 4,
        )
    )
    expired = JoinResult(ErrorCode.NOT_COORDINATOR, "")
    return runtime.reply(result, lambda r: _join_response(r, version), expired)


# -- SyncGroup ------------------------------------------------------------------------------


def _sync_response(result: SyncResult, version: int) -> SyncGroupResponse:
    v5 = version >= 5
    return SyncGroupResponse(
        error_code=result.error_code,
        protocol_type=result.protocol_type if v5 else None,
        protocol_name=result.protocol_name if v5 else None,
        assignment=result.assignment,
    )


def _sync_error(
    request: SyncGroupRequest, code: ErrorCode, message: str | None
) -> SyncGroupResponse:
    return SyncGroupResponse(error_code=code)


@handles(ApiKey.SYNC_GROUP, error_response=_sync_error)
def handle_sync_group(
    broker: Broker, ctx: RequestContext, request: SyncGroupRequest
) -> SyncGroupResponse | Deferred[SyncGroupResponse]:
    if not access.may_read_group(broker, ctx, request.group_id):
        return _sync_error(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    version = ctx.api_version
    if version >= 5 and (request.protocol_type is None or request.protocol_name is None):
        return SyncGroupResponse(error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
    runtime = runtime_of(broker)
    result = runtime.coordinator.sync_group(
        SyncRequest(
            group_id=request.group_id,
            member_id=request.member_id,
            generation_id=request.generation_id,
            assignments=tuple((a.member_id, a.assignment) for a in request.assignments),
            group_instance_id=request.group_instance_id,
            protocol_type=request.protocol_type,
            protocol_name=request.protocol_name,
        )
    )
    expired = SyncResult(ErrorCode.NOT_COORDINATOR)
    return runtime.reply(result, lambda r: _sync_response(r, version), expired)


# -- Heartbeat, LeaveGroup -------------------------------------------------------------------


def _heartbeat_error(
    request: HeartbeatRequest, code: ErrorCode, message: str | None
) -> HeartbeatResponse:
    return HeartbeatResponse(error_code=code)


@handles(ApiKey.HEARTBEAT, error_response=_heartbeat_error)
def handle_heartbeat(
    broker: Broker, ctx: RequestContext, request: HeartbeatRequest
) -> HeartbeatResponse:
    if not access.may_read_group(broker, ctx, request.group_id):
        return _heartbeat_error(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    runtime = runtime_of(broker)
    code = runtime.coordinator.heartbeat(
        request.group_id, request.member_id, request.generation_id, request.group_instance_id
    )
    runtime.rearm()
    return HeartbeatResponse(error_code=code)


def _leaving(request: LeaveGroupRequest, version: int) -> list[LeaveMember]:
    if version < 3:
        return [LeaveMember(request.member_id)]
    return [LeaveMember(m.member_id, m.group_instance_id) for m in request.members]


def _leave_error(
    request: LeaveGroupRequest, code: ErrorCode, message: str | None
) -> LeaveGroupResponse:
    return LeaveGroupResponse(error_code=code)


@handles(ApiKey.LEAVE_GROUP, error_response=_leave_error)
def handle_leave_group(
    broker: Broker, ctx: RequestContext, request: LeaveGroupRequest
) -> LeaveGroupResponse:
    if not access.may_read_group(broker, ctx, request.group_id):
        return _leave_error(request, ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    version = ctx.api_version
    leaving = _leaving(request, version)
    runtime = runtime_of(broker)
    result = runtime.coordinator.leave_group(request.group_id, leaving)
    runtime.rearm()
    top, answers = result.error_code, result.members
    if top == ErrorCode.UNKNOWN_MEMBER_ID and not answers:  # no such group
        top = ErrorCode.NONE
        answers = tuple(
            MemberLeft(m.member_id, m.group_instance_id, ErrorCode.UNKNOWN_MEMBER_ID)
            for m in leaving
        )
    if version >= 3:
        members = tuple(
            LeaveGroupMemberResponse(a.member_id, a.group_instance_id, a.error_code)
            for a in answers
        )
        return LeaveGroupResponse(error_code=top, members=members)
    member_error = next((a.error_code for a in answers if a.error_code), ErrorCode.NONE)
    return LeaveGroupResponse(error_code=top or member_error)


# -- DescribeGroups, ListGroups -------------------------------------------------------------


def _described(found: DescribedGroup, version: int) -> dg.DescribedGroup:
    group_id = found.group_id
    if found.error_code:
        return dg.DescribedGroup(
            error_code=found.error_code,
            group_id=group_id,
            group_state="",
            protocol_type="",
            protocol_data="",
        )
    if not found.exists and version >= 6:
        return dg.DescribedGroup(
            error_code=ErrorCode.GROUP_ID_NOT_FOUND,
            error_message=f"Group {group_id} not found.",
            group_id=group_id,
            group_state="",
            protocol_type="",
            protocol_data="",
        )
    members = tuple(
        dg.DescribedGroupMember(
            member_id=m.member_id,
            group_instance_id=m.group_instance_id if version >= 4 else None,
            client_id=m.client_id,
            client_host=m.client_host,
            member_metadata=m.metadata,
            member_assignment=m.assignment,
        )
        for m in found.members
    )
    return dg.DescribedGroup(
        error_code=ErrorCode.NONE,
        group_id=group_id,
        group_state=found.state,
        protocol_type=found.protocol_type,
        protocol_data=found.protocol_data,
        members=members,
    )


@handles(ApiKey.DESCRIBE_GROUPS)
def handle_describe_groups(
    broker: Broker, ctx: RequestContext, request: dg.DescribeGroupsRequest
) -> dg.DescribeGroupsResponse:
    version = ctx.api_version
    coordinator = runtime_of(broker).coordinator
    operations = version >= 3 and request.include_authorized_operations
    refused = []
    groups = []
    for group_id in request.groups:
        refusal = access.describe_refusal(broker, ctx, group_id)
        if refusal is not None:
            refused.append(refusal)
            continue
        entry = _described(coordinator.describe_group(group_id), version)
        if version >= 3:
            allowed = operations and entry.error_code == ErrorCode.NONE
            ops = authorized_operations(broker, ctx, ResourceType.GROUP, group_id)
            entry = replace(entry, authorized_operations=ops if allowed else OMITTED)
        groups.append(entry)
    return dg.DescribeGroupsResponse(groups=tuple(refused + groups))


@handles(ApiKey.LIST_GROUPS)
def handle_list_groups(
    broker: Broker, ctx: RequestContext, request: ListGroupsRequest
) -> ListGroupsResponse:
    coordinator = runtime_of(broker).coordinator
    states = [state.strip() for state in request.states_filter]
    listed = coordinator.list_groups(states, request.types_filter)
    listed = [g for g in listed if access.may_list_group(broker, ctx, g.group_id)]
    return ListGroupsResponse(
        error_code=ErrorCode.NONE,
        groups=tuple(
            ListedGroup(g.group_id, g.protocol_type, g.state, g.group_type) for g in listed
        ),
    )
