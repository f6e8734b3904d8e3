"""A follower holding records its new leader never had is cut back to the leader's end of
that epoch (KIP-101/279; Kafka 4.0's truncation on fetch: ``LastFetchedEpoch`` in the
follower's Fetch, ``DivergingEpoch`` in the leader's answer, computed as
OffsetForLeaderEpoch computes it; ``AbstractFetcherThread.getOffsetTruncationState``)."""

from __future__ import annotations

from pathlib import Path

from cluster_support import create, offsets, produce, running_cluster
from lethe_formats.model import RecordBatch
from lethe_formats.records.scan import read_log
from lethe_reference.embedded_cluster import EmbeddedCluster


def batches(
    cluster: EmbeddedCluster, node: int, topic: str
) -> list[tuple[int, int, list[bytes | None]]]:
    """(base offset, leader epoch, values) of every batch in broker ``node``'s replica."""

    def read() -> list[tuple[int, int, list[bytes | None]]]:
        log = cluster.broker(node).log(topic, 0)
        assert log is not None
        out = []
        for segment in log.segments:
            data = segment.log.path.read_bytes()
            for entry in read_log(data):
                assert isinstance(entry, RecordBatch)
                out.append(
                    (
                        entry.header.base_offset,
                        entry.header.partition_leader_epoch,
                        [r.value for r in entry.records],
                    )
                )
        return out

    return cluster.call(read)


def epochs(cluster: EmbeddedCluster, node: int, topic: str) -> list[tuple[int, int]]:
    def read() -> list[tuple[int, int]]:
        log = cluster.broker(node).log(topic, 0)
        assert log is not None
        return [(e.epoch, e.start_offset) for e in log.epoch_cache.entries]

    return cluster.call(read)


def test_a_divergent_tail_is_truncated_to_the_new_leaders_epoch_end(tmp_path: Path) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        assert produce(cluster, 1, "t", 5) == 0  # offsets 0-4 at epoch 0 on every replica
        assert offsets(cluster, 2, "t")[2] == 5
        cluster.pause_fetching(2, "t", 0)
        cluster.pause_fetching(3, "t", 0)
        assert produce(cluster, 1, "t", 3, acks=1) == 5  # 5-7 only on broker 1, epoch 0
        assert offsets(cluster, 1, "t")[2] == 8
        moved = cluster.move_leader("t", 0, 2)  # broker 2 leads at epoch 1 from offset 5
        assert (moved.leader, moved.leader_epoch) == (2, 1)
        cluster.resume_fetching(3, "t", 0)
        assert produce(cluster, 2, "t", 2) == 5  # 5-6 at epoch 1
        cluster.advance(1000)
        leader = batches(cluster, 2, "t")
        assert [(b, e) for b, e, _ in leader] == [(0, 0), (5, 1)]
        # broker 1 fetched with LastFetchedEpoch 0 from offset 8; the leader's epoch 0
        # ends at 5, so it cut 5-7 and fetched epoch 1's records after them
        assert batches(cluster, 1, "t") == leader
        assert batches(cluster, 3, "t") == leader
        assert epochs(cluster, 1, "t") == [(0, 0), (1, 5)]
        assert offsets(cluster, 1, "t") == (0, 7, 7)
