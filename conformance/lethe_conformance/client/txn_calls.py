"""Transactions through the protocol: one function per request a transactional producer
sends, each at the version a transaction-version-1 client uses.

Theory of operation
-------------------
Like :mod:`.calls`, thin builders: the caller names what to send, the typed
response comes back unjudged. The producer's state (id, epoch, sequences, what
the transaction already holds) lives in
:class:`~lethe_conformance.client.transactional.TransactionalProducer`; these
functions read it to fill the requests. A transactional client talks to two
coordinators::

    FindCoordinator(key_type 1, transactional id) -> the transaction coordinator
        InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, DescribeTransactions
    FindCoordinator(key_type 0, group)            -> the group coordinator
        TxnOffsetCommit
    the partition's leader                        -> Produce (with the transactional id)

On a cluster reached by address, :class:`~lethe_conformance.client.routed.RoutedConnection`
finds both coordinators (:mod:`.routing`); on one broker every request goes to it.

Versions: AddPartitionsToTxn in its client form (v0-3: one transaction,
``v3_and_below_*`` fields; v4+ is the brokers' batched, verify-only form),
Produce at most v11 and EndTxn at most v4 (:data:`TV1_MAX_VERSIONS`), unless
the caller asks for a version. ListTransactions and DescribeTransactions are
the admin client's.
"""

from __future__ import annotations

from collections.abc import Sequence

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages.add_offsets_to_txn import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
)
from lethe_formats.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnTopic,
)
from lethe_formats.protocol.messages.describe_transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)
from lethe_formats.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from lethe_formats.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from lethe_formats.protocol.messages.list_transactions import (
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from lethe_formats.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
    TxnOffsetCommitResponse,
)
from lethe_formats.protocol.messages.write_txn_markers import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)

from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.client.transactional import TV1_MAX_VERSIONS, TransactionalProducer

__all__ = [
    "add_offsets_to_txn",
    "add_partitions_results",
    "add_partitions_to_txn",
    "describe_transactions",
    "end_txn",
    "init_producer_id",
    "list_transactions",
    "transactional_produce",
    "txn_offset_commit",
    "write_txn_markers",
]


def _tv1(conn: KafkaConnection, api_key: int, version: int | None) -> int:
    """The version to send: the caller's, else the highest both sides speak, capped at
    what a transaction-version-1 client sends."""
    if version is not None:
        return version
    return min(conn.version_for(api_key), TV1_MAX_VERSIONS.get(api_key, 1 << 15))


def init_producer_id(
    conn: KafkaConnection, producer: TransactionalProducer, *, version: int | None = None
) -> InitProducerIdResponse:
    """InitProducerId for the producer's transactional id (producer id and epoch -1: a
    producer starting, as ``initTransactions`` sends it)."""
    request = InitProducerIdRequest(
        transactional_id=producer.transactional_id,
        transaction_timeout_ms=producer.transaction_timeout_ms,
    )
    return conn.call(request, InitProducerIdResponse, version=version)


def add_partitions_to_txn(
    conn: KafkaConnection,
    producer: TransactionalProducer,
    partitions: Sequence[tuple[str, int]],
    *,
    version: int | None = None,
) -> AddPartitionsToTxnResponse:
    """AddPartitionsToTxn in the client form (v0-3), partitions grouped by topic."""
    chosen = _tv1(conn, ApiKey.ADD_PARTITIONS_TO_TXN, version)
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    request = AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=producer.transactional_id,
        v3_and_below_producer_id=producer.producer_id,
        v3_and_below_producer_epoch=producer.producer_epoch,
        v3_and_below_topics=tuple(
            AddPartitionsToTxnTopic(name=t, partitions=tuple(ps)) for t, ps in by_topic.items()
        ),
    )
    return conn.call(request, AddPartitionsToTxnResponse, version=chosen)


def add_partitions_results(answer: AddPartitionsToTxnResponse) -> list[tuple[str, int, int]]:
    """``(topic, partition, error code)`` of a client-form answer, in answer order."""
    return [
        (topic.name, result.partition_index, result.partition_error_code)
        for topic in answer.results_by_topic_v3_and_below
        for result in topic.results_by_partition
    ]


def transactional_produce(
    conn: KafkaConnection,
    producer: TransactionalProducer,
    topic: str,
    partition: int,
    records: bytes,
    *,
    acks: int = -1,
    timeout_ms: int = 30_000,
    version: int | None = None,
) -> ProduceResponse:
    """Produce of a transactional batch: the request names the transactional id (the
    broker checks it against its ACLs and, from v12, adds the partition itself)."""
    chosen = _tv1(conn, ApiKey.PRODUCE, version)
    data = TopicProduceData(topic, (PartitionProduceData(partition, records),))
    request = ProduceRequest(
        transactional_id=producer.transactional_id,
        acks=acks,
        timeout_ms=timeout_ms,
        topic_data=(data,),
    )
    return conn.call(request, ProduceResponse, version=chosen)


def add_offsets_to_txn(
    conn: KafkaConnection,
    producer: TransactionalProducer,
    group: str,
    *,
    version: int | None = None,
) -> AddOffsetsToTxnResponse:
    """AddOffsetsToTxn: the group's offsets partition joins the transaction."""
    request = AddOffsetsToTxnRequest(
        transactional_id=producer.transactional_id,
        producer_id=producer.producer_id,
        producer_epoch=producer.producer_epoch,
        group_id=group,
    )
    return conn.call(request, AddOffsetsToTxnResponse, version=version)


def txn_offset_commit(
    conn: KafkaConnection,
    producer: TransactionalProducer,
    group: str,
    rows: Sequence[tuple[str, int, int]],
    *,
    version: int | None = None,
) -> TxnOffsetCommitResponse:
    """TxnOffsetCommit of ``(topic, partition, offset)`` rows for ``group``, outside group
    membership (generation -1, no member id), as ``sendOffsetsToTransaction`` with a
    group id alone sends it."""
    by_topic: dict[str, list[tuple[int, int]]] = {}
    for topic, partition, offset in rows:
        by_topic.setdefault(topic, []).append((partition, offset))
    topics = tuple(
        TxnOffsetCommitRequestTopic(
            name=t,
            partitions=tuple(
                TxnOffsetCommitRequestPartition(
                    partition_index=p, committed_offset=o, committed_metadata=""
                )
                for p, o in parts
            ),
        )
        for t, parts in by_topic.items()
    )
    request = TxnOffsetCommitRequest(
        transactional_id=producer.transactional_id,
        group_id=group,
        producer_id=producer.producer_id,
        producer_epoch=producer.producer_epoch,
        topics=topics,
    )
    return conn.call(request, TxnOffsetCommitResponse, version=version)


def end_txn(
    conn: KafkaConnection,
    producer: TransactionalProducer,
    *,
    commit: bool,
    version: int | None = None,
) -> EndTxnResponse:
    """EndTxn: commit or abort the producer's transaction."""
    chosen = _tv1(conn, ApiKey.END_TXN, version)
    request = EndTxnRequest(
        transactional_id=producer.transactional_id,
        producer_id=producer.producer_id,
        producer_epoch=producer.producer_epoch,
        committed=commit,
    )
    return conn.call(request, EndTxnResponse, version=chosen)


def describe_transactions(
    conn: KafkaConnection, transactional_ids: Sequence[str], *, version: int | None = None
) -> DescribeTransactionsResponse:
    request = DescribeTransactionsRequest(transactional_ids=tuple(transactional_ids))
    return conn.call(request, DescribeTransactionsResponse, version=version)


def list_transactions(
    conn: KafkaConnection,
    *,
    states: Sequence[str] = (),
    producer_ids: Sequence[int] = (),
    version: int | None = None,
) -> ListTransactionsResponse:
    """ListTransactions, filtered by state names and producer ids (empty: no filter)."""
    request = ListTransactionsRequest(
        state_filters=tuple(states), producer_id_filters=tuple(producer_ids)
    )
    return conn.call(request, ListTransactionsResponse, version=version)


def write_txn_markers(
    conn: KafkaConnection,
    marker: tuple[int, int, bool, int],
    partitions: Sequence[tuple[str, int]],
) -> WriteTxnMarkersResponse:
    """WriteTxnMarkers as a coordinator sends it to a leader: one marker, ``marker`` being
    (producer id, producer epoch, committed, coordinator epoch), on ``partitions``."""
    producer_id, producer_epoch, committed, coordinator_epoch = marker
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    request = WriteTxnMarkersRequest(
        markers=(
            WritableTxnMarker(
                producer_id=producer_id,
                producer_epoch=producer_epoch,
                transaction_result=committed,
                topics=tuple(WritableTxnMarkerTopic(t, tuple(ps)) for t, ps in by_topic.items()),
                coordinator_epoch=coordinator_epoch,
            ),
        )
    )
    return conn.call(request, WriteTxnMarkersResponse)
