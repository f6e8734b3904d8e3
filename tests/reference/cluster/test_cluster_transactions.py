"""A transaction over partitions led by different brokers of an in-process cluster.

Kafka 4.0's coordinator (the leader of the transactional id's
``__transaction_state`` partition) sends WriteTxnMarkers to the leader of every
partition of the transaction, so each leader appends the COMMIT marker right
after the transaction's data; here the coordinator reaches the other brokers
of the same process directly. FindCoordinator on any broker names the
coordinator.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cluster_support import START_MS, connect, running_cluster
from lethe_conformance.client import calls
from lethe_formats.model import RecordBatch
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
)
from lethe_formats.protocol.messages.end_txn import EndTxnRequest
from lethe_formats.protocol.messages.find_coordinator import (
    KEY_TYPE_TRANSACTION,
    FindCoordinatorRequest,
)
from lethe_formats.protocol.messages.init_producer_id import InitProducerIdRequest
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.scan import read_log
from lethe_reference.embedded_cluster import EmbeddedCluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import dispatch

TOPIC, TID = "spread", "cluster-tx"


def _on(cluster: EmbeddedCluster, node: int, api_key: ApiKey, version: int, request: Any) -> Any:
    ctx = RequestContext(int(api_key), version, 1, "test", 1)
    return cluster.call(lambda: dispatch(cluster.broker(node), ctx, request))


def _coordinator(cluster: EmbeddedCluster) -> int:
    request = FindCoordinatorRequest(key_type=KEY_TYPE_TRANSACTION, coordinator_keys=(TID,))
    for _ in range(3):  # the first lookup creates __transaction_state
        found = _on(cluster, 1, ApiKey.FIND_COORDINATOR, 4, request).coordinators[0]
        if found.error_code == 0:
            return int(found.node_id)
    raise AssertionError(f"no coordinator: {found}")


def _batches(cluster: EmbeddedCluster, node: int, partition: int) -> list[RecordBatch]:
    def read() -> list[RecordBatch]:
        folder = cluster.broker(node).log_dir / f"{TOPIC}-{partition}"
        return [
            b
            for path in sorted(folder.glob("*.log"))
            for b in read_log(path.read_bytes())
            if isinstance(b, RecordBatch)
        ]

    return cluster.call(read)


def test_commit_writes_a_marker_on_every_leader(tmp_path: Path) -> None:
    with running_cluster(tmp_path) as cluster:
        with connect(cluster, 1) as conn:
            created = calls.create_topic(conn, TOPIC, 3, {}, replication_factor=1)
        assert created.topics[0].error_code == 0
        leaders = {p: cluster.partition_state(TOPIC, p).leader for p in range(3)}  # type: ignore[union-attr]
        assert len(set(leaders.values())) > 1  # spread over brokers
        node = _coordinator(cluster)
        init = _on(
            cluster, node, ApiKey.INIT_PRODUCER_ID, 4,
            InitProducerIdRequest(transactional_id=TID, transaction_timeout_ms=60000),
        )  # fmt: skip
        assert init.error_code == 0
        producer = (init.producer_id, init.producer_epoch)
        add = AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=TID,
            v3_and_below_producer_id=producer[0],
            v3_and_below_producer_epoch=producer[1],
            v3_and_below_topics=(AddPartitionsToTxnTopic(TOPIC, (0, 1, 2)),),
        )
        added = _on(cluster, node, ApiKey.ADD_PARTITIONS_TO_TXN, 3, add)
        assert {
            r.partition_error_code
            for r in added.results_by_topic_v3_and_below[0].results_by_partition
        } == {0}
        for partition, leader in leaders.items():
            batch = build_batch(
                [RecordSpec(b"k", b"v", (), START_MS)], base_offset=0, producer_id=producer[0],
                producer_epoch=producer[1], base_sequence=0, is_transactional=True,
            )  # fmt: skip
            data = (TopicProduceData(TOPIC, (PartitionProduceData(partition, batch),)),)
            answer = _on(cluster, leader, ApiKey.PRODUCE, 9, ProduceRequest(TID, 1, 30000, data))
            assert answer.responses[0].partition_responses[0].error_code == 0
        end = _on(cluster, node, ApiKey.END_TXN, 3, EndTxnRequest(TID, *producer, True))
        assert end.error_code == 0
        for partition, leader in leaders.items():
            batches = _batches(cluster, leader, partition)
            assert [(b.header.base_offset, b.header.is_control) for b in batches] == [
                (0, False), (1, True),
            ]  # fmt: skip
            assert batches[1].header.producer_id == producer[0]
