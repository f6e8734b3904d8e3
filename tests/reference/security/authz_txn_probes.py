"""The transaction APIs sent by a principal without any right, and Kafka 4.0's answer
(read from KafkaApis of the 4.0 branch: the checks come first, before any state).

* AddPartitionsToTxn v3 (a client): WRITE on the transactional id, else every
  partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED (``errorResponseForTransaction``);
* AddOffsetsToTxn, EndTxn: WRITE on the transactional id, else 53;
* WriteTxnMarkers: CLUSTER_ACTION, else every partition CLUSTER_AUTHORIZATION_FAILED;
* TxnOffsetCommit: WRITE on the transactional id, else every partition 53;
* DescribeTransactions: DESCRIBE on each id, else 53 for it;
* ListTransactions: only ids the principal may DESCRIBE are listed (none), error 0.

Verified on a real Kafka 4.0.0 on 2026-11-27 (KRaft, StandardAuthorizer,
allow.everyone.if.no.acl.found=false, a SASL_PLAINTEXT listener with PLAIN): these seven
probes sent as ``alice`` with lethe's protocol client gave exactly these summaries.
"""

from __future__ import annotations

from typing import Any

from authz_table import CAF, GROUP, TOPIC, TXN, TXN_AF, Probe, World, same
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages import add_offsets_to_txn as aot
from lethe_formats.protocol.messages import add_partitions_to_txn as apt
from lethe_formats.protocol.messages import describe_transactions as dt
from lethe_formats.protocol.messages import end_txn as et
from lethe_formats.protocol.messages import list_transactions as lt
from lethe_formats.protocol.messages import txn_offset_commit as toc
from lethe_formats.protocol.messages import write_txn_markers as wtm

__all__ = ["TXN_PROBES"]


def _add_partitions(_: World) -> apt.AddPartitionsToTxnRequest:
    return apt.AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=TXN,
        v3_and_below_producer_id=0,
        v3_and_below_producer_epoch=0,
        v3_and_below_topics=(apt.AddPartitionsToTxnTopic(TOPIC, (0,)),),
    )


def _partitions_added(r: apt.AddPartitionsToTxnResponse, _: World) -> Any:
    return [
        (t.name, p.partition_index, p.partition_error_code)
        for t in r.results_by_topic_v3_and_below
        for p in t.results_by_partition
    ]


def _markers(_: World) -> wtm.WriteTxnMarkersRequest:
    topic = wtm.WritableTxnMarkerTopic(TOPIC, (0,))
    return wtm.WriteTxnMarkersRequest((wtm.WritableTxnMarker(0, 0, True, (topic,), 0),))


def _markers_written(r: wtm.WriteTxnMarkersResponse, _: World) -> Any:
    return [
        (m.producer_id, t.name, p.partition_index, p.error_code)
        for m in r.markers
        for t in m.topics
        for p in t.partitions
    ]


def _txn_offsets(_: World) -> toc.TxnOffsetCommitRequest:
    partition = toc.TxnOffsetCommitRequestPartition(0, 1, -1, None)
    topics = (toc.TxnOffsetCommitRequestTopic(TOPIC, (partition,)),)
    return toc.TxnOffsetCommitRequest(TXN, GROUP, 0, 0, topics=topics)


def _txn_offsets_committed(r: toc.TxnOffsetCommitResponse, _: World) -> Any:
    return [(t.name, p.partition_index, p.error_code) for t in r.topics for p in t.partitions]


def _described(r: dt.DescribeTransactionsResponse, _: World) -> Any:
    return [(s.transactional_id, s.error_code) for s in r.transaction_states]


def _listed(r: lt.ListTransactionsResponse, _: World) -> Any:
    return r.error_code, r.transaction_states


TXN_PROBES: tuple[Probe, ...] = (
    Probe(
        "add partitions to txn",
        ApiKey.ADD_PARTITIONS_TO_TXN,
        3,
        "handleAddPartitionsToTxnRequest: WRITE on the transactional id (v0-3)",
        _add_partitions,
        _partitions_added,
        same([(TOPIC, 0, TXN_AF)]),
    ),
    Probe(
        "add offsets to txn",
        ApiKey.ADD_OFFSETS_TO_TXN,
        3,
        "handleAddOffsetsToTxnRequest: WRITE on the transactional id, then READ on the group",
        lambda _: aot.AddOffsetsToTxnRequest(TXN, 0, 0, GROUP),
        lambda r, _: r.error_code,
        same(TXN_AF),
    ),
    Probe(
        "end txn",
        ApiKey.END_TXN,
        3,
        "handleEndTxnRequest: WRITE on the transactional id",
        lambda _: et.EndTxnRequest(TXN, 0, 0, True),
        lambda r, _: (r.error_code, r.producer_id, r.producer_epoch),
        same((TXN_AF, -1, -1)),
    ),
    Probe(
        "write txn markers",
        ApiKey.WRITE_TXN_MARKERS,
        1,
        "handleWriteTxnMarkersRequest: CLUSTER_ACTION on the cluster",
        _markers,
        _markers_written,
        same([(0, TOPIC, 0, CAF)]),
    ),
    Probe(
        "txn offset commit",
        ApiKey.TXN_OFFSET_COMMIT,
        3,
        "handleTxnOffsetCommitRequest: WRITE on the transactional id, then READ on the group",
        _txn_offsets,
        _txn_offsets_committed,
        same([(TOPIC, 0, TXN_AF)]),
    ),
    Probe(
        "describe transactions",
        ApiKey.DESCRIBE_TRANSACTIONS,
        0,
        "handleDescribeTransactionsRequest: DESCRIBE on each transactional id",
        lambda _: dt.DescribeTransactionsRequest((TXN,)),
        _described,
        same([(TXN, TXN_AF)]),
    ),
    Probe(
        "list transactions",
        ApiKey.LIST_TRANSACTIONS,
        1,
        "handleListTransactionsRequest: only ids the principal may DESCRIBE",
        lambda _: lt.ListTransactionsRequest(),
        _listed,
        same((0, ())),
    ),
)
