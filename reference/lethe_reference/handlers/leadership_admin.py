"""ElectLeaders (43), AlterPartitionReassignments (45), ListPartitionReassignments (46).

Theory of operation
-------------------
A Kafka broker forwards all three to the KRaft controller (``ControllerApis``), which
answers from its partition records; lethe's broker is (or shares) that controller:

* a single broker is the controller of partitions it alone holds: replicas, ISR and
  leader are this node, so every election is ELECTION_NOT_NEEDED (84), the only
  valid target list is ``[this node]`` (a no-op) and nothing is ever being moved;
* a member of an :class:`~lethe_reference.embedded_cluster.EmbeddedCluster` asks the
  shared :class:`~lethe_reference.cluster.controller.ClusterController`, whose
  changes every broker applies (new leaders, followers that start or stop fetching).

Authorization, as ``ControllerApis``: ALTER on the cluster for ElectLeaders and
AlterPartitionReassignments, DESCRIBE for ListPartitionReassignments; refused, the
whole request gets CLUSTER_AUTHORIZATION_FAILED (31) through each API's error
response (``getErrorResponse``), with the error's default message (Kafka's names
the request object, ``Request Request(processor=...) is not authorized.``, text no
other broker can reproduce).

ElectLeaders (``ReplicationControlManager.electLeaders``): per requested partition
in request order, UNKNOWN_TOPIC_OR_PARTITION (3) "No such topic as T" / "No such
partition as T-P", else the outcome of :func:`~lethe_reference.cluster.elections.elect`
with the error's default message (None when it succeeded). With ``topic_partitions``
null every topic is listed, in the controller's ``TimelineHashMap`` order
(:func:`~lethe_reference.handlers.java_order.timeline_hash_order` of the names in
creation order), without its partitions that needed no election. An unknown
``election_type`` is INVALID_REQUEST (42) for the whole request.

AlterPartitionReassignments (``alterPartitionReassignment``): per partition, 3 with
"Unable to find a topic named T." / "Unable to find partition T:P.", the target
checks of :func:`~lethe_reference.cluster.reassignment.check_target` (39), a cancel
without a reassignment NO_REASSIGNMENT_IN_PROGRESS (85); top-level error 0 with a
null message.

ListPartitionReassignments: the partitions with a reassignment in progress, with
the whole replica list, adding and removing; for ``topics`` null every moving
topic (by name: Kafka walks a hash map of topic ids, which are random per cluster).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.broker_errors import KafkaError, error_for_code
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from lethe_formats.protocol.messages.elect_leaders import (
    ElectLeadersPartitionResult,
    ElectLeadersRequest,
    ElectLeadersResponse,
    ElectLeadersTopicResult,
)
from lethe_formats.protocol.messages.list_partition_reassignments import (
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
)

from lethe_reference.cluster import elections
from lethe_reference.cluster import reassignment as moves
from lethe_reference.cluster.acl import AclOperation
from lethe_reference.cluster.controller import ClusterController, PartitionState
from lethe_reference.cluster.membership import member_of
from lethe_reference.handlers.authz import authorize_cluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.java_order import timeline_hash_order

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "alter_error_response",
    "elect_error_response",
    "handle_alter",
    "handle_elect",
    "handle_list",
    "list_error_response",
]

TopicPartition = tuple[str, int]


def _error(code: ErrorCode, message: str | None = None) -> KafkaError:
    return error_for_code(code, message)


def _controller(broker: Broker) -> ClusterController | None:
    member = member_of(broker)
    return None if member is None else member.controller


def _single_state(broker: Broker, topic: str, partition: int) -> PartitionState | None:
    """The partition record of a partition a single broker holds alone."""
    info = broker.metadata.get(topic)
    if info is None or not 0 <= partition < info.partitions:
        return None
    node = broker.node_id
    return PartitionState((node,), node, broker.metadata.leader_epoch(topic, partition), (node,))


def _state(broker: Broker, tp: TopicPartition) -> PartitionState | None:
    controller = _controller(broker)
    if controller is None:
        return _single_state(broker, *tp)
    return controller.state(tp)


def _registered(broker: Broker) -> tuple[int, ...]:
    controller = _controller(broker)
    return (broker.node_id,) if controller is None else controller.node_ids


# --- ElectLeaders ------------------------------------------------------------------------


def elect_error_response(
    request: ElectLeadersRequest, code: ErrorCode, message: str | None
) -> ElectLeadersResponse:
    """``ElectLeadersRequest.getErrorResponse``: ``code`` on every named partition."""
    results = tuple(
        ElectLeadersTopicResult(
            t.topic, tuple(ElectLeadersPartitionResult(p, code, message) for p in t.partitions)
        )
        for t in request.topic_partitions or ()
    )
    return ElectLeadersResponse(error_code=code, replica_election_results=results)


def _elect_one(
    broker: Broker, topic: str, partition: int, election_type: int
) -> ElectLeadersPartitionResult:
    if broker.metadata.get(topic) is None:
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return ElectLeadersPartitionResult(partition, code, f"No such topic as {topic}")
    state = _state(broker, (topic, partition))
    if state is None:
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        return ElectLeadersPartitionResult(
            partition, code, f"No such partition as {topic}-{partition}"
        )
    controller = _controller(broker)
    if controller is None:
        code = elections.elect(state, election_type, lambda n: n == broker.node_id).error
    else:
        code = controller.elect((topic, partition), election_type)
    return ElectLeadersPartitionResult(
        partition, code, None if code == ErrorCode.NONE else code.message
    )


def _all_topics(broker: Broker) -> list[tuple[str, list[int]]]:
    names = timeline_hash_order(broker.metadata.creation_order())
    out = []
    for name in names:
        info = broker.metadata.get(name)
        if info is not None:
            out.append((name, list(range(info.partitions))))
    return out


@handles(ApiKey.ELECT_LEADERS, error_response=elect_error_response)
def handle_elect(
    broker: Broker, ctx: RequestContext, request: ElectLeadersRequest
) -> ElectLeadersResponse:
    if not authorize_cluster(broker, ctx, AclOperation.ALTER):
        raise _error(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    if request.election_type not in {elections.PREFERRED, elections.UNCLEAN}:
        raise _error(ErrorCode.INVALID_REQUEST, f"Unknown election type {request.election_type}")
    everything = request.topic_partitions is None
    asked = (
        _all_topics(broker)
        if request.topic_partitions is None
        else [(t.topic, list(t.partitions)) for t in request.topic_partitions]
    )
    results = []
    for topic, partitions in asked:
        outcomes = (_elect_one(broker, topic, p, request.election_type) for p in partitions)
        kept = tuple(
            o
            for o in outcomes
            if not (everything and o.error_code == ErrorCode.ELECTION_NOT_NEEDED)
        )
        results.append(ElectLeadersTopicResult(topic, kept))
    return ElectLeadersResponse(error_code=ErrorCode.NONE, replica_election_results=tuple(results))


# --- AlterPartitionReassignments -----------------------------------------------------------


def alter_error_response(
    request: AlterPartitionReassignmentsRequest, code: ErrorCode, message: str | None
) -> AlterPartitionReassignmentsResponse:
    """``AlterPartitionReassignmentsRequest.getErrorResponse``: the top-level error and
    the same on every partition."""
    responses = tuple(
        ReassignableTopicResponse(
            t.name,
            tuple(
                ReassignablePartitionResponse(p.partition_index, code, message)
                for p in t.partitions
            ),
        )
        for t in request.topics
    )
    return AlterPartitionReassignmentsResponse(
        error_code=code, error_message=message, responses=responses
    )


def _reassign_one(
    broker: Broker, topic: str, partition: int, target: tuple[int, ...] | None
) -> ReassignablePartitionResponse:
    try:
        if broker.metadata.get(topic) is None:
            raise _error(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic}."
            )
        state = _state(broker, (topic, partition))
        if state is None:
            raise _error(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                f"Unable to find partition {topic}:{partition}.",
            )
        controller = _controller(broker)
        if controller is not None:
            controller.reassign((topic, partition), target)
        elif target is None:
            raise _error(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS)
        else:
            moves.check_target(target, _registered(broker))
    except KafkaError as error:
        return ReassignablePartitionResponse(partition, error.code, error.message)
    return ReassignablePartitionResponse(partition, ErrorCode.NONE, None)


@handles(ApiKey.ALTER_PARTITION_REASSIGNMENTS, error_response=alter_error_response)
def handle_alter(
    broker: Broker, ctx: RequestContext, request: AlterPartitionReassignmentsRequest
) -> AlterPartitionReassignmentsResponse:
    if not authorize_cluster(broker, ctx, AclOperation.ALTER):
        raise _error(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    responses = tuple(
        ReassignableTopicResponse(
            t.name,
            tuple(
                _reassign_one(broker, t.name, p.partition_index, p.replicas) for p in t.partitions
            ),
        )
        for t in request.topics
    )
    return AlterPartitionReassignmentsResponse(
        error_code=ErrorCode.NONE, error_message=None, responses=responses
    )


# --- ListPartitionReassignments -------------------------------------------------------------


def list_error_response(
    request: ListPartitionReassignmentsRequest, code: ErrorCode, message: str | None
) -> ListPartitionReassignmentsResponse:
    """``ListPartitionReassignmentsRequest.getErrorResponse``: the named partitions with
    empty replica lists."""
    topics = tuple(
        OngoingTopicReassignment(
            t.name, tuple(OngoingPartitionReassignment(p, (), (), ()) for p in t.partition_indexes)
        )
        for t in request.topics or ()
    )
    return ListPartitionReassignmentsResponse(error_code=code, error_message=message, topics=topics)


def _ongoing(
    controller: ClusterController, topic: str, partitions: list[int]
) -> OngoingTopicReassignment | None:
    found = []
    for partition in partitions:
        moving = controller.reassignments.get((topic, partition))
        state = controller.state((topic, partition))
        if moving is not None and state is not None:
            found.append(
                OngoingPartitionReassignment(
                    partition, state.replicas, moving.adding, moving.removing
                )
            )
    return OngoingTopicReassignment(topic, tuple(found)) if found else None


@handles(ApiKey.LIST_PARTITION_REASSIGNMENTS, error_response=list_error_response)
def handle_list(
    broker: Broker, ctx: RequestContext, request: ListPartitionReassignmentsRequest
) -> ListPartitionReassignmentsResponse:
    if not authorize_cluster(broker, ctx, AclOperation.DESCRIBE):
        raise _error(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    controller = _controller(broker)
    if controller is None:
        return ListPartitionReassignmentsResponse(error_code=ErrorCode.NONE, error_message=None)
    if request.topics is None:
        moving: dict[str, list[int]] = {}
        for topic, partition in sorted(controller.reassignments):
            moving.setdefault(topic, []).append(partition)
        asked = list(moving.items())
    else:
        asked = [
            (t.name, list(t.partition_indexes)) for t in request.topics if t.name in broker.metadata
        ]
    topics = (_ongoing(controller, name, partitions) for name, partitions in asked)
    return ListPartitionReassignmentsResponse(
        error_code=ErrorCode.NONE,
        error_message=None,
        topics=tuple(t for t in topics if t is not None),
    )
