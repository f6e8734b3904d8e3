"""Where a request goes on a cluster reached by address: plain functions, no sockets.

Theory of operation
-------------------
A Kafka client sends a partition's requests to that partition's leader and a
group's requests to the group's coordinator; any broker answers the rest
(Metadata, CreateTopics, ...). This module decides the destination from what
the cluster said, so the rule is testable without a broker::

    needs(body, view)        -> topics / group the view must learn first
    split(body, view)        -> [(node or None, sub-request)]   None: any broker
    merge(body, answers)     -> one response, in the request's topic/partition order
    stale(answer)            -> the answer only says "not here (any more)"

:class:`ClusterView` holds what Metadata and FindCoordinator answered: broker
addresses, partition leaders, topic ids, group coordinators. A request whose
partitions have different leaders is split into one request per leader (as
Kafka's producer and admin client do) and the answers merged back. A
partition whose leader is unknown (a topic that does not exist, no leader
elected yet) goes to any broker, which answers as Kafka does for it
(UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER).

Following a move: an answer made only of :data:`STALE` errors means the broker
did nothing; the caller forgets what the view knew about that part, asks again
and resends only if the destination changed (a deliberate probe, e.g. a fenced
epoch on a steady leader, is answered once, as sent).

A transactional id's requests (InitProducerId with a transactional id,
AddPartitionsToTxn in its client form, AddOffsetsToTxn, EndTxn,
DescribeTransactions) go to its transaction coordinator, found with
FindCoordinator key type 1 and kept apart from the group coordinators (a group
and a transactional id may share a name); TxnOffsetCommit goes to its group's
coordinator, as Kafka's producer sends it. ListTransactions goes to every broker
and the answers are merged, as Kafka's admin client does: each broker lists only
the transactions its coordinator partitions hold.

A broker config resource (DescribeConfigs / IncrementalAlterConfigs naming a
node id) goes to that broker, as Kafka's admin client sends it. A topic's
DescribeConfigs goes to the leader of its partition 0: any broker may answer
it from its own metadata image, and a config change reaches the brokers one by
one, so a scenario waiting for a change to show waits for it where the
partition's requests will be judged (found on a 3-node Kafka 4.0: the
bootstrap broker showed ``cleanup.policy=compact`` while the leader still
accepted DeleteRecords).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from lethe_formats.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest
from lethe_formats.protocol.messages.delete_groups import DeleteGroupsRequest
from lethe_formats.protocol.messages.delete_records import DeleteRecordsRequest
from lethe_formats.protocol.messages.describe_configs import DescribeConfigsRequest
from lethe_formats.protocol.messages.describe_groups import DescribeGroupsRequest
from lethe_formats.protocol.messages.describe_transactions import DescribeTransactionsRequest
from lethe_formats.protocol.messages.end_txn import EndTxnRequest
from lethe_formats.protocol.messages.fetch import FetchRequest
from lethe_formats.protocol.messages.find_coordinator import FindCoordinatorResponse
from lethe_formats.protocol.messages.heartbeat import HeartbeatRequest
from lethe_formats.protocol.messages.incremental_alter_configs import (
    IncrementalAlterConfigsRequest,
)
from lethe_formats.protocol.messages.init_producer_id import InitProducerIdRequest
from lethe_formats.protocol.messages.join_group import JoinGroupRequest
from lethe_formats.protocol.messages.leave_group import LeaveGroupRequest
from lethe_formats.protocol.messages.list_offsets import ListOffsetsRequest
from lethe_formats.protocol.messages.list_transactions import (
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from lethe_formats.protocol.messages.metadata import MetadataResponse
from lethe_formats.protocol.messages.offset_commit import OffsetCommitRequest
from lethe_formats.protocol.messages.offset_delete import OffsetDeleteRequest
from lethe_formats.protocol.messages.offset_fetch import OffsetFetchRequest
from lethe_formats.protocol.messages.produce import ProduceRequest
from lethe_formats.protocol.messages.sync_group import SyncGroupRequest
from lethe_formats.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest
from lethe_formats.protocol.schema import Struct

__all__ = [
    "ROUTED",
    "STALE",
    "ClusterView",
    "Needs",
    "group_of",
    "merge",
    "needs",
    "split",
    "stale",
    "transaction_of",
]

#: Answers meaning "this broker is not (any more) the one to ask": Kafka's clients
#: refresh metadata or the coordinator and retry after them.
STALE = frozenset(
    {
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    }
)
_RESOURCE_TOPIC = 2
_RESOURCE_BROKER = 4


@dataclass(frozen=True, slots=True)
class _Shape:
    """Where a partition request keeps its topics and partitions (request and response)."""

    topics: str
    name: str
    partitions: str
    index: str
    answer_topics: str
    answer_name: str
    answer_partitions: str
    answer_index: str


def _shape(request: str, response: str) -> _Shape:
    """Field names, each side as ``"topics name partitions index"``."""
    return _Shape(*request.split(), *response.split())


_SHAPES: dict[type[Struct], _Shape] = {
    ProduceRequest: _shape(
        "topic_data name partition_data index", "responses name partition_responses index"
    ),
    FetchRequest: _shape(
        "topics topic partitions partition", "responses topic partitions partition_index"
    ),
    ListOffsetsRequest: _shape(
        "topics name partitions partition_index", "topics name partitions partition_index"
    ),
    DeleteRecordsRequest: _shape(
        "topics name partitions partition_index", "topics name partitions partition_index"
    ),
}
#: Group requests naming one group in ``group_id``.
_GROUP_ID = (
    JoinGroupRequest,
    SyncGroupRequest,
    HeartbeatRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    TxnOffsetCommitRequest,
)
#: Requests about one transactional id, for its transaction coordinator.
_TRANSACTION = (
    InitProducerIdRequest,
    AddPartitionsToTxnRequest,
    AddOffsetsToTxnRequest,
    EndTxnRequest,
    DescribeTransactionsRequest,
)
#: Every request type that goes somewhere in particular; the rest go to any broker.
ROUTED: frozenset[type[Struct]] = frozenset(
    {
        *_SHAPES,
        *_GROUP_ID,
        *_TRANSACTION,
        ListTransactionsRequest,
        OffsetFetchRequest,
        DescribeGroupsRequest,
        DeleteGroupsRequest,
        DescribeConfigsRequest,
        IncrementalAlterConfigsRequest,
    }
)


@dataclass(slots=True)
class ClusterView:
    """What the cluster told us: brokers, leaders, topic ids, coordinators."""

    brokers: dict[int, tuple[str, int]] = field(default_factory=dict)
    leaders: dict[tuple[str, int], int] = field(default_factory=dict)
    topics: set[str] = field(default_factory=set)
    names: dict[uuid.UUID, str] = field(default_factory=dict)
    coordinators: dict[str, int] = field(default_factory=dict)
    txn_coordinators: dict[str, int] = field(default_factory=dict)

    def learn_metadata(self, answer: MetadataResponse) -> None:
        """Brokers and leaders from a Metadata answer. A topic is known only once every
        partition has a leader: until then it is asked for again."""
        for broker in answer.brokers:
            self.brokers[broker.node_id] = (broker.host, broker.port)
        for topic in answer.topics:
            if topic.name is None or topic.error_code != ErrorCode.NONE:
                continue
            self.forget_topics([topic.name])
            self.names[topic.topic_id] = topic.name
            for partition in topic.partitions:
                if partition.leader_id >= 0:
                    self.leaders[(topic.name, partition.partition_index)] = partition.leader_id
            if topic.partitions and all(p.leader_id >= 0 for p in topic.partitions):
                self.topics.add(topic.name)

    def learn_coordinator(
        self, group: str, answer: FindCoordinatorResponse, *, transaction: bool = False
    ) -> None:
        """The coordinator of a group (or, with ``transaction``, of a transactional id),
        from a FindCoordinator answer (v0-3 or batched v4+)."""
        found = [c for c in answer.coordinators if c.key == group]
        if found:
            entry = found[0]
            code, node, host, port = entry.error_code, entry.node_id, entry.host, entry.port
        else:
            code, node, host, port = answer.error_code, answer.node_id, answer.host, answer.port
        if code == ErrorCode.NONE and node >= 0:
            self.brokers[node] = (host, port)
            (self.txn_coordinators if transaction else self.coordinators)[group] = node

    def forget_topics(self, names: Iterable[str]) -> None:
        for name in list(names):
            self.topics.discard(name)
            for key in [k for k in self.leaders if k[0] == name]:
                del self.leaders[key]

    def forget_group(self, group: str) -> None:
        self.coordinators.pop(group, None)

    def forget_transaction(self, transactional_id: str) -> None:
        self.txn_coordinators.pop(transactional_id, None)

    def node_of(self, topic: str, partition: int) -> int | None:
        node = self.leaders.get((topic, partition))
        return node if node in self.brokers else None


@dataclass(frozen=True, slots=True)
class Needs:
    """What the view must learn before ``body`` can be routed."""

    topics: tuple[str, ...] = ()
    group: str | None = None
    transactional_id: str | None = None
    #: every broker's address (a request for all of them: ListTransactions)
    brokers: bool = False


def group_of(body: Struct) -> str | None:
    """The group a group request is about (the first one of a multi-group request)."""
    if isinstance(body, _GROUP_ID):
        return str(body.group_id)
    if isinstance(body, OffsetFetchRequest):
        return str(body.groups[0].group_id) if body.groups else str(body.group_id)
    if isinstance(body, DescribeGroupsRequest) and body.groups:
        return str(body.groups[0])
    if isinstance(body, DeleteGroupsRequest) and body.groups_names:
        return str(body.groups_names[0])
    return None


def transaction_of(body: Struct) -> str | None:
    """The transactional id a transaction request is about (the first one of a
    DescribeTransactions; None for an idempotent producer's InitProducerId)."""
    if isinstance(body, AddPartitionsToTxnRequest):
        return body.v3_and_below_transactional_id or None
    if isinstance(body, DescribeTransactionsRequest):
        return str(body.transactional_ids[0]) if body.transactional_ids else None
    if isinstance(body, InitProducerIdRequest | AddOffsetsToTxnRequest | EndTxnRequest):
        found = body.transactional_id
        return None if found is None else str(found)
    return None


def needs(body: Struct, view: ClusterView) -> Needs:
    if isinstance(body, ListTransactionsRequest):
        return Needs(brokers=True)  # asked each time: brokers come and go
    shape = _SHAPES.get(type(body))
    if shape is not None:
        names = {_topic_name(body, t, shape, view) for t in getattr(body, shape.topics)}
        return Needs(topics=tuple(sorted(n for n in names if n and n not in view.topics)))
    group = group_of(body)
    if group is not None and group not in view.coordinators:
        return Needs(group=group)
    transactional_id = transaction_of(body)
    if transactional_id is not None and transactional_id not in view.txn_coordinators:
        return Needs(transactional_id=transactional_id)
    topic = _described_topic(body)
    if topic is not None and topic not in view.topics:
        return Needs(topics=(topic,))
    return Needs()


def split(body: Struct, view: ClusterView) -> list[tuple[int | None, Struct]]:
    """``body`` as one request per destination, in first-seen order (None: any broker).
    A view of one broker sends everything to the bootstrap connection: the address it
    advertises may not be the one we reached it at (a proxy in front, a port forward)."""
    if len(view.brokers) <= 1:
        return [(None, body)]
    if isinstance(body, ListTransactionsRequest):  # every broker lists its own
        return [(node, body) for node in sorted(view.brokers)]
    shape = _SHAPES.get(type(body))
    if shape is not None:
        return _split_partitions(body, shape, view)
    group = group_of(body)
    if group is not None:
        node = view.coordinators.get(group)
        return [(node if node in view.brokers else None, body)]
    transactional_id = transaction_of(body)
    if transactional_id is not None:
        node = view.txn_coordinators.get(transactional_id)
        return [(node if node in view.brokers else None, body)]
    return [(_config_node(body, view), body)]


def merge(body: Struct, answers: Sequence[Struct]) -> Struct:
    """The answers of :func:`split`'s parts as one response, topics and partitions in
    the order ``body`` asked for them (Kafka answers in request order)."""
    if len(answers) == 1:
        return answers[0]
    if isinstance(body, ListTransactionsRequest):
        return _merge_listed([a for a in answers if isinstance(a, ListTransactionsResponse)])
    shape = _SHAPES[type(body)]
    order = list(
        dict.fromkeys(  # a partition asked twice is answered as the broker answered it
            (getattr(t, shape.name), getattr(p, shape.index))
            for t in getattr(body, shape.topics)
            for p in getattr(t, shape.partitions)
        )
    )
    topics: dict[Any, Any] = {}
    parts: dict[tuple[Any, int], list[Any]] = {}
    for answer in answers:
        for topic in getattr(answer, shape.answer_topics):
            key = getattr(topic, shape.answer_name) or getattr(topic, "topic_id", None)
            topics.setdefault(key, topic)
            for partition in getattr(topic, shape.answer_partitions):
                parts.setdefault((key, getattr(partition, shape.answer_index)), []).append(
                    partition
                )
    ids = {
        getattr(t, shape.name): getattr(t, "topic_id", None) for t in getattr(body, shape.topics)
    }
    merged: list[Any] = []
    for name in dict.fromkeys(name for name, _ in order):
        key = name if name in topics else ids.get(name)
        if key not in topics:
            continue
        found = tuple(p for n, i in order if n == name for p in parts.get((key, i), ()))
        merged.append(dataclasses.replace(topics[key], **{shape.answer_partitions: found}))
    return dataclasses.replace(answers[0], **{shape.answer_topics: tuple(merged)})


def stale(answer: Struct) -> bool:
    """Every error code in ``answer`` is one of :data:`STALE` (ignoring a top-level
    NONE, as a Fetch's session error): the broker did nothing for any of it."""
    codes = list(_error_codes(answer, top=True))
    return bool(codes) and all(code in STALE for code in codes)


# --- internals ---------------------------------------------------------------------------


def _merge_listed(answers: Sequence[ListTransactionsResponse]) -> ListTransactionsResponse:
    """Every broker's listed transactions, in broker order; the first error any broker
    answered (Kafka's admin client fails the call on one)."""
    errors = [a.error_code for a in answers if a.error_code != ErrorCode.NONE]
    return dataclasses.replace(
        answers[0],
        error_code=errors[0] if errors else ErrorCode.NONE,
        transaction_states=tuple(t for a in answers for t in a.transaction_states),
    )


def _topic_name(body: Struct, topic: Any, shape: _Shape, view: ClusterView) -> str:
    name = str(getattr(topic, shape.name) or "")
    if not name and isinstance(body, FetchRequest):
        return view.names.get(topic.topic_id, "")
    return name


def _split_partitions(
    body: Struct, shape: _Shape, view: ClusterView
) -> list[tuple[int | None, Struct]]:
    by_node: dict[int | None, dict[int, list[Any]]] = {}
    topics = getattr(body, shape.topics)
    for position, topic in enumerate(topics):
        name = _topic_name(body, topic, shape, view)
        for partition in getattr(topic, shape.partitions):
            node = view.node_of(name, getattr(partition, shape.index))
            by_node.setdefault(node, {}).setdefault(position, []).append(partition)
    if len(by_node) <= 1:
        return [(next(iter(by_node), None), body)]
    parts: list[tuple[int | None, Struct]] = []
    for node, chosen in by_node.items():
        kept = tuple(
            dataclasses.replace(topics[i], **{shape.partitions: tuple(ps)})
            for i, ps in chosen.items()
        )
        parts.append((node, dataclasses.replace(body, **{shape.topics: kept})))
    return parts


def _described_topic(body: Struct) -> str | None:
    """The topic a DescribeConfigs of one topic asks about."""
    if isinstance(body, DescribeConfigsRequest) and len(body.resources) == 1:
        resource = body.resources[0]
        if resource.resource_type == _RESOURCE_TOPIC and resource.resource_name:
            return str(resource.resource_name)
    return None


def _config_node(body: Struct, view: ClusterView) -> int | None:
    topic = _described_topic(body)
    if topic is not None:
        return view.node_of(topic, 0)
    if not isinstance(body, DescribeConfigsRequest | IncrementalAlterConfigsRequest):
        return None
    for resource in body.resources:
        if resource.resource_type == _RESOURCE_BROKER and resource.resource_name.isdigit():
            node = int(resource.resource_name)
            return node if node in view.brokers else None
    return None


def _error_codes(value: Any, *, top: bool = False) -> Iterable[int]:
    if isinstance(value, tuple):
        for item in value:
            yield from _error_codes(item)
        return
    if not isinstance(value, Struct):
        return
    for item in dataclasses.fields(value):
        found = getattr(value, item.name)
        if item.name == "error_code" and isinstance(found, int):
            if not (top and found == ErrorCode.NONE):
                yield found
        elif isinstance(found, tuple | Struct):
            yield from _error_codes(found)
