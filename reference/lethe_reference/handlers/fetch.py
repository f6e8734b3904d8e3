"""Fetch (key 1), v4-17: ``KafkaApis.handleFetchRequest`` over :mod:`.partition_ops`.

Theory of operation
-------------------
1. **Partitions.** v13+ names topics by id: an id the broker does not know is
   UNKNOWN_TOPIC_ID (100) for its partitions. A consumer without READ on a
   topic (:mod:`.authz`) gets TOPIC_AUTHORIZATION_FAILED (29) for its
   partitions, before existence is checked. A replica's fetch needs
   CLUSTER_ACTION on the CLUSTER instead; without it every partition is 29,
   unknown ids included (``KafkaApis.handleFetchRequest``; an in-process
   cluster's fetcher asks as ANONYMOUS, so under an authorizer ANONYMOUS
   needs CLUSTER_ACTION, as a Kafka broker's PLAINTEXT inter-broker listener
   would). The fetch-session cache
   (:mod:`.partition_ops.fetch_session`) decides which partitions this request
   reads: the request's (sessionless or full), the session's (incremental), or
   none (a session error, answered at top level with session id 0).
2. **Reads.** Known partitions are read in order within the response budget
   ``min(max_bytes, fetch.max.bytes)`` (:func:`~.partition_ops.read.read_partitions`);
   unknown ones are answered with their error, HW -1, no records.
3. **Answer now or wait.** Kafka answers at once when ``max_wait_ms <= 0``,
   nothing is readable, any partition failed or diverged, or at least
   ``min(min_bytes, max_bytes)`` bytes were read. Otherwise the request is
   parked as :class:`DelayedFetch` in ``broker.purgatories.fetch`` under every
   partition's watch key for ``max_wait_ms``; an append re-checks it
   (:func:`~.partition_ops.read.fetch_satisfied`) and completion or expiry
   reads the partitions again.
4. **Response.** Read partitions first, then the erroneous ones; the session
   context filters an incremental response; consecutive partitions of one topic
   share a topic entry. Topics configured with ``compression.type=zstd``
   answer UNSUPPORTED_COMPRESSION_TYPE (76) below v10.

Isolation: ``isolation_level`` 1 reads up to the last stable offset, 0 up to the
HW; a request from a replica (``replica_id`` or ``replica_state.replica_id`` >= 0)
reads up to the LEO. In an in-process cluster the leader then records the
follower's fetch offset and ``LogStartOffset``
(:func:`~lethe_reference.cluster.membership.on_replica_fetch`: ISR, HW, low
watermark, delayed operations re-checked); a single broker has no followers.
``preferred_read_replica`` is always -1 (no rack-aware replica selector, Kafka's default).

KIP-87 (lethe extension, catalog KIP87-PRD-6..9): on a topic with
``tombstone.flag.enable``, a consumer's fetch that does not carry the tagged
field ``tombstone_flag_aware`` (tag 10087, flexible versions; no version below
12 can carry it) gets flagged tombstones with null values
(:func:`~lethe_reference.storage.tombstone_view.null_flagged_values`), as the
KIP's migration plan down-converts for old consumers. A flag-aware consumer
and every replica get the bytes as stored; a topic without the flag is never
touched, so a stock client sees exactly what Kafka would send.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.fetch import (
    AbortedTransaction,
    EpochEndOffset,
    FetchableTopicResponse,
    FetchRequest,
    FetchResponse,
    PartitionData,
)
from lethe_formats.protocol.schema import ZERO_UUID
from lethe_formats.storage.kafka_uuid import KafkaUuid

from lethe_reference import faults
from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.cluster.membership import on_replica_fetch
from lethe_reference.handlers.authz import authorize, authorize_cluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.partition_ops.common import partition_exists, watch_key
from lethe_reference.handlers.partition_ops.fetch_session import (
    FetchContext,
    FetchSessionCache,
    PartitionKey,
    RequestedPartition,
)
from lethe_reference.handlers.partition_ops.read import (
    PartitionRead,
    fetch_satisfied,
    read_partitions,
)
from lethe_reference.purgatory import Deferred
from lethe_reference.storage.log_reads import FetchIsolation
from lethe_reference.storage.tombstone_view import null_flagged_values

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["DelayedFetch", "error_response", "fetch_sessions", "handle"]

_SESSIONS = "partition_ops.fetch_sessions"
#: From this version a consumer's Fetch carries client metadata (rack id) and Kafka
#: lets a follower answer it (``FetchParams.fetchOnlyLeader``).
_CLIENT_METADATA_FROM = 11
TopicPartition = tuple[str, int]
Work = list[tuple[TopicPartition, RequestedPartition]]
Keyed = list[tuple[PartitionKey, PartitionData]]
Readable = tuple[PartitionKey, TopicPartition, RequestedPartition]


def fetch_sessions(broker: Broker) -> FetchSessionCache:
    """The broker's fetch-session cache (created on first use)."""
    cache = broker.extensions.get(_SESSIONS)
    if not isinstance(cache, FetchSessionCache):
        cache = broker.extensions[_SESSIONS] = FetchSessionCache()
    return cache


def _error_data(partition: int, code: ErrorCode) -> PartitionData:
    """``FetchResponse.partitionResponse``: the error, HW -1, empty records
    (``MemoryRecords.EMPTY``, not null: a real Kafka 4.0.0 sends length 0 for a
    partition refused with 29), aborted transactions the schema's empty list;
    unlike a failed read, which sends null aborted transactions."""
    return PartitionData(partition_index=partition, error_code=code, high_watermark=-1, records=b"")


def _partition_data(partition: int, read: PartitionRead) -> PartitionData:
    diverging = EpochEndOffset(*read.diverging_epoch) if read.diverging_epoch else EpochEndOffset()
    aborted = None
    if read.aborted_transactions is not None:
        aborted = tuple(
            AbortedTransaction(t.producer_id, t.first_offset) for t in read.aborted_transactions
        )
    return PartitionData(
        partition_index=partition,
        error_code=read.error,
        high_watermark=read.high_watermark,
        last_stable_offset=read.last_stable_offset,
        log_start_offset=read.log_start_offset,
        diverging_epoch=diverging,
        aborted_transactions=aborted,
        records=read.records,
    )


def _requested(
    request: FetchRequest, version: int, broker: Broker
) -> list[tuple[PartitionKey, RequestedPartition]]:
    found = []
    for topic in request.topics:
        name = _name(broker, topic.topic_id) if version >= 13 else topic.topic
        topic_id = topic.topic_id if version >= 13 else ZERO_UUID
        for p in topic.partitions:
            requested = RequestedPartition(
                p.fetch_offset,
                p.partition_max_bytes,
                p.current_leader_epoch,
                p.last_fetched_epoch,
                p.log_start_offset,
            )
            found.append((PartitionKey(topic_id, name, p.partition), requested))
    return found


def _name(broker: Broker, topic_id: uuid.UUID) -> str | None:
    info = broker.metadata.by_id(KafkaUuid(topic_id.bytes))
    return None if info is None else info.name


def _forgotten(request: FetchRequest, version: int, broker: Broker) -> list[PartitionKey]:
    keys = []
    for topic in request.forgotten_topics_data:
        name = _name(broker, topic.topic_id) if version >= 13 else topic.topic
        topic_id = topic.topic_id if version >= 13 else ZERO_UUID
        keys += [PartitionKey(topic_id, name, partition) for partition in topic.partitions]
    return keys


def _isolation(request: FetchRequest) -> FetchIsolation:
    """``FetchIsolation.of``."""
    if request.replica_id >= 0 or request.replica_state.replica_id >= 0:
        return FetchIsolation.LOG_END
    if request.isolation_level == 1:
        return FetchIsolation.TXN_COMMITTED
    return FetchIsolation.HIGH_WATERMARK


@dataclass
class _Plan:
    """Everything needed to (re)build the response of one fetch."""

    broker: Broker
    version: int
    context: FetchContext
    isolation: FetchIsolation
    max_bytes: int
    min_bytes: int
    max_wait_ms: int
    #: False for a consumer's v11+ fetch, which a follower may answer (``fetchOnlyLeader``)
    leader_only: bool = True
    #: KIP-87: a consumer that did not say it reads the tombstone flag
    nulls_flagged_values: bool = False
    readable: list[tuple[PartitionKey, TopicPartition, RequestedPartition]] = field(
        default_factory=list
    )
    erroneous: Keyed = field(default_factory=list)

    @property
    def work(self) -> Work:
        return [(tp, requested) for _, tp, requested in self.readable]

    def read(self) -> list[PartitionRead]:
        return read_partitions(
            self.broker,
            self.work,
            self.max_bytes,
            isolation=self.isolation,
            leader_only=self.leader_only,
        )

    def respond(self, reads: list[PartitionRead]) -> FetchResponse:
        keyed: Keyed = [
            (key, _partition_data(key.partition, self._as_seen(topic, r)))
            for (key, (topic, _), _), r in zip(self.readable, reads, strict=True)
        ]
        error, session_id, selected = self.context.respond(
            keyed + self.erroneous, self.broker.clock.now_ms()
        )
        return FetchResponse(
            error_code=error, session_id=session_id, responses=self._topics(selected)
        )

    def _as_seen(self, topic: str, read: PartitionRead) -> PartitionRead:
        """KIP-87 down-conversion for a consumer that does not know the flag."""
        if not self.nulls_flagged_values or not read.records:
            return read
        if topic not in self.broker.metadata:
            return read
        if not self.broker.log_config(topic).tombstone_flag_enable:
            return read
        return replace(read, records=null_flagged_values(bytes(read.records)))

    def _topics(self, selected: Keyed) -> tuple[FetchableTopicResponse, ...]:
        topics: list[tuple[PartitionKey, list[PartitionData]]] = []
        for key, selected_data in selected:
            data = selected_data
            if self.version < 10 and key.topic is not None and _zstd(self.broker, key.topic):
                data = _error_data(key.partition, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE)
            if topics and topics[-1][0] == PartitionKey(key.topic_id, key.topic, -1):
                topics[-1][1].append(data)
            else:
                topics.append((PartitionKey(key.topic_id, key.topic, -1), [data]))
        return tuple(
            FetchableTopicResponse(
                topic=key.topic or "", topic_id=key.topic_id, partitions=tuple(parts)
            )
            for key, parts in topics
        )


def _zstd(broker: Broker, topic: str) -> bool:
    return topic in broker.metadata and broker.log_config(topic).compression_type == "zstd"


class DelayedFetch(Deferred[FetchResponse]):
    """A fetch waiting for ``min_bytes`` or ``max_wait_ms`` (``DelayedFetch``)."""

    def __init__(self, plan: _Plan) -> None:
        super().__init__()
        self.plan = plan

    def try_complete(self) -> FetchResponse | None:
        plan = self.plan
        if not fetch_satisfied(
            plan.broker,
            plan.work,
            plan.min_bytes,
            isolation=plan.isolation,
            leader_only=plan.leader_only,
        ):
            return None
        return plan.respond(plan.read())

    def on_expire(self) -> FetchResponse:
        return self.plan.respond(self.plan.read())


def _plan(broker: Broker, ctx: RequestContext, request: FetchRequest) -> _Plan:
    version = ctx.api_version
    context = fetch_sessions(broker).new_context(
        version=version,
        session_id=request.session_id,
        epoch=request.session_epoch,
        fetch_data=_requested(request, version, broker),
        forgotten=_forgotten(request, version, broker),
        now_ms=broker.clock.now_ms(),
    )
    max_bytes = min(request.max_bytes, broker.config.get_int("fetch.max.bytes"))
    plan = _Plan(
        broker,
        version,
        context,
        _isolation(request),
        max_bytes,
        min(request.min_bytes, max_bytes),
        request.max_wait_ms,
        leader_only=_replica_id(request) >= 0 or version < _CLIENT_METADATA_FROM,
        nulls_flagged_values=_nulls_flagged_values(broker, request),
    )
    consumer = _replica_id(request) < 0
    replica_denied = not consumer and not authorize_cluster(
        broker, ctx, AclOperation.CLUSTER_ACTION
    )
    for key, requested in context.partitions:
        topic = _name(broker, key.topic_id) if version >= 13 else key.topic
        if replica_denied:
            code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            plan.erroneous.append((key, _error_data(key.partition, code)))
        elif topic is None:
            plan.erroneous.append((key, _error_data(key.partition, ErrorCode.UNKNOWN_TOPIC_ID)))
        elif consumer and not authorize(broker, ctx, AclOperation.READ, ResourceType.TOPIC, topic):
            code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            plan.erroneous.append((key, _error_data(key.partition, code)))
        elif not partition_exists(broker, topic, key.partition):
            code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            plan.erroneous.append((key, _error_data(key.partition, code)))
        else:
            plan.readable.append((key, (topic, key.partition), requested))
    return plan


def _nulls_flagged_values(broker: Broker, request: FetchRequest) -> bool:
    """KIP-87: down-convert for a consumer that did not send ``tombstone_flag_aware``."""
    if faults.active(broker, "flagged-values-sent-to-unaware-consumers"):
        return False
    if faults.active(broker, "flagged-values-nulled-for-replicas"):
        return not request.tombstone_flag_aware
    return _replica_id(request) < 0 and not request.tombstone_flag_aware


def error_response(request: FetchRequest, code: ErrorCode, _message: str | None) -> FetchResponse:
    """``FetchRequest.getErrorResponse``: top-level error; every partition too below v13.

    The version is not passed to the builder, so partitions are always listed
    (v13+ clients read the top-level code first)."""
    topics = tuple(
        FetchableTopicResponse(
            topic=topic.topic,
            topic_id=topic.topic_id,
            partitions=tuple(_error_data(p.partition, code) for p in topic.partitions),
        )
        for topic in request.topics
    )
    return FetchResponse(error_code=code, session_id=request.session_id, responses=topics)


def _replica_id(request: FetchRequest) -> int:
    """The fetching replica (``ReplicaState`` from v15, ``ReplicaId`` before), -1 if none."""
    return max(request.replica_id, request.replica_state.replica_id)


def _record_follower_fetch(
    broker: Broker, request: FetchRequest, plan: _Plan, reads: list[PartitionRead]
) -> None:
    """A follower's fetch offsets and log start offsets, after the read (``fetchRecords``
    then ``updateFollowerFetchState``), so its answer carries the HW from before."""
    replica = _replica_id(request)
    if replica < 0:
        return
    for (_, (topic, partition), requested), read in zip(plan.readable, reads, strict=True):
        if read.error is ErrorCode.NONE:
            on_replica_fetch(
                broker,
                replica,
                (topic, partition),
                fetch_offset=requested.fetch_offset,
                log_start=requested.log_start_offset,
            )


@handles(ApiKey.FETCH, error_response=error_response)
def handle(
    broker: Broker, ctx: RequestContext, request: FetchRequest
) -> FetchResponse | Deferred[FetchResponse]:
    """Answer a Fetch, now or when data arrives (module docstring)."""
    plan = _plan(broker, ctx, request)
    reads = plan.read() if plan.readable else []
    _record_follower_fetch(broker, request, plan, reads)
    total = sum(len(r.records) for r in reads)
    failed = any(r.error is not ErrorCode.NONE or r.diverging_epoch for r in reads)
    if plan.max_wait_ms <= 0 or not plan.readable or total >= plan.min_bytes or failed:
        return plan.respond(reads)
    delayed = DelayedFetch(plan)
    keys = [watch_key(*tp) for _, tp, _ in plan.readable]
    broker.purgatories.fetch.watch(delayed, keys, broker.clock.now_ms() + plan.max_wait_ms)
    return delayed
