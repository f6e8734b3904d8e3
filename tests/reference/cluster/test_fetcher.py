"""The Fetch a follower sends (Kafka 4.0's ReplicaFetcherThread at Fetch v17, kafka-facts 2.2):
its id in ReplicaState, the leader epoch it follows, its LEO as fetch offset and its own log
start offset in LogStartOffset, the 500 ms long poll."""

from __future__ import annotations

import uuid
from pathlib import Path

from cluster_support import create, delete_in_loop, produce, running_cluster
from lethe_reference.cluster.fetcher import FETCH_VERSION, WAIT_MAX_MS, PartitionFetcher
from lethe_reference.cluster.membership import member_of


def test_a_follower_fetch_carries_its_id_epoch_leo_and_log_start_offset(tmp_path: Path) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 10)
        delete_in_loop(cluster, 1, "t", 4, 30_000)
        cluster.advance(500)  # the follower copies the leader's log start offset 4

        def build() -> tuple[object, ...]:
            member = member_of(cluster.broker(2))
            assert member is not None
            fetcher = member.fetchers[("t", 0)]
            assert isinstance(fetcher, PartitionFetcher)
            log = cluster.broker(2).log("t", 0)
            assert log is not None
            request = fetcher.request(log, uuid.UUID(int=7))
            part = request.topics[0].partitions[0]
            return (
                request.replica_state.replica_id,
                request.max_wait_ms,
                part.current_leader_epoch,
                part.fetch_offset,
                part.log_start_offset,
                request.topics[0].topic_id,
            )

        assert cluster.call(build) == (2, WAIT_MAX_MS, 0, 10, 4, uuid.UUID(int=7))
        assert FETCH_VERSION == 17
