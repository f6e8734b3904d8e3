"""Three reference brokers replicating in one process (KIP-107's replication rules).

Expected values come from Kafka's rules (kafka-facts 1.2, 2.2; catalog KIP107-ERR-4,
LWM-1, LWM-4, LWM-5, PUR-2..5): followers fetch with a 500 ms long poll
(``replica.fetch.wait.max.ms``), copy the leader's log start offset from each fetch
response and report their own in the next fetch; the leader's low watermark is the
minimum over itself and every live replica; a DeleteRecords waits for it.
"""

from __future__ import annotations

from pathlib import Path

from cluster_support import (
    connect,
    create,
    delete_in_loop,
    offsets,
    produce,
    produce_in_loop,
    result_of,
    running_cluster,
    segment_bases,
)
from lethe_conformance.client import calls
from lethe_reference.purgatory import Deferred

NONE, NOT_LEADER, TIMED_OUT = 0, 6, 7


def done(deferred: Deferred[object]) -> bool:
    """Whether a parked request was answered (a function, so checks can flip)."""
    return deferred.done


def test_a_produce_to_the_leader_is_replicated_and_acknowledged_by_the_isr(tmp_path: Path) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        assert produce(cluster, 1, "t", 10) == 0
        assert offsets(cluster, 1, "t") == (0, 10, 10)
        assert [offsets(cluster, n, "t")[2] for n in (2, 3)] == [10, 10]
        cluster.advance(500)  # the followers' long polls expire: they learn the HW
        assert [offsets(cluster, n, "t") for n in (2, 3)] == [(0, 10, 10), (0, 10, 10)]


def test_metadata_lists_every_broker_and_the_partition_replicas_and_isr(tmp_path: Path) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        with connect(cluster, 2) as conn:
            answer = calls.metadata(conn, ["t"])
        assert [b.node_id for b in answer.brokers] == [1, 2, 3]
        partition = answer.topics[0].partitions[0]
        assert (partition.leader_id, partition.leader_epoch) == (1, 0)
        assert (partition.replica_nodes, partition.isr_nodes) == ((1, 2, 3), (1, 2, 3))


def test_delete_records_on_a_follower_is_not_leader_or_follower(tmp_path: Path) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 10)
        with connect(cluster, 2) as conn:
            answer = calls.delete_records(conn, [("t", 0, 5)])
        assert result_of(answer) == (NOT_LEADER, -1)
        assert offsets(cluster, 2, "t")[0] == 0


def test_delete_records_waits_for_the_followers_to_adopt_and_report_the_new_start(
    tmp_path: Path,
) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 10)
        waiting = delete_in_loop(cluster, 1, "t", 5, 30_000)
        assert isinstance(waiting, Deferred)
        assert offsets(cluster, 1, "t")[0] == 5
        cluster.advance(499)
        assert not done(waiting)
        assert [offsets(cluster, n, "t")[0] for n in (2, 3)] == [0, 0]
        cluster.advance(1)  # long polls expire: followers adopt 5 and report it at once
        assert [offsets(cluster, n, "t")[0] for n in (2, 3)] == [5, 5]
        assert done(waiting)
        assert result_of(waiting.result()) == (NONE, 5)


def test_a_paused_follower_makes_delete_records_time_out_with_the_low_watermark_on_arrival(
    tmp_path: Path,
) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 10)
        cluster.pause_fetching(3, "t", 0)
        waiting = delete_in_loop(cluster, 1, "t", 5, 2_000)
        cluster.advance(1_999)
        assert not done(waiting)
        cluster.advance(1)
        assert result_of(waiting.result()) == (TIMED_OUT, 0)
        assert offsets(cluster, 2, "t")[0] == 5  # the other follower did adopt it


def test_the_low_watermark_counts_a_live_follower_out_of_the_isr_but_not_a_stopped_one(
    tmp_path: Path,
) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 10)
        cluster.pause_fetching(3, "t", 0)
        produce(cluster, 1, "t", 2, acks=1)  # 3 falls behind the leader's LEO
        assert offsets(cluster, 1, "t") == (0, 10, 12)  # the HW waits for the ISR
        cluster.advance(46_000)  # > replica.lag.time.max.ms: 3 leaves the ISR
        state = cluster.partition_state("t", 0)
        assert state is not None and state.isr == (1, 2)
        assert offsets(cluster, 1, "t") == (0, 12, 12)
        waiting = delete_in_loop(cluster, 1, "t", 5, 1_000)
        cluster.advance(1_000)
        assert result_of(waiting.result()) == (TIMED_OUT, 0)
        cluster.stop_broker(3)
        answer = delete_in_loop(cluster, 1, "t", 5, 1_000)
        assert result_of(answer) == (NONE, 5)


def test_a_waiting_delete_records_whose_leader_moves_waits_for_its_timeout(
    tmp_path: Path,
) -> None:
    """Kafka 4.0 re-checks no waiting DeleteRecords on a leader change
    (completeDelayedOperationsWhenNotPartitionLeader leaves that purgatory out; seen
    on Apache Kafka 4.0.0): the former leader answers at TimeoutMs, REQUEST_TIMED_OUT
    with the low watermark of the request's arrival, and refuses a new one."""
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 10)
        cluster.pause_fetching(3, "t", 0)
        waiting = delete_in_loop(cluster, 1, "t", 5, 30_000)
        state = cluster.move_leader("t", 0, 2)
        assert (state.leader, state.leader_epoch) == (2, 1)
        cluster.advance(29_999)
        assert not done(waiting)
        cluster.advance(1)
        assert done(waiting)
        assert result_of(waiting.result()) == (TIMED_OUT, 0)
        assert result_of(delete_in_loop(cluster, 1, "t", 5, 30_000)) == (NOT_LEADER, -1)


def test_a_follower_deletes_its_segments_wholly_below_the_leaders_log_start_offset(
    tmp_path: Path,
) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t", {"segment.bytes": "100"})
        for _ in range(3):
            produce(cluster, 1, "t", 2)  # about 80 bytes a batch: one segment each
        bases = segment_bases(cluster, 3, "t")
        assert bases == [0, 2, 4]
        answer = delete_in_loop(cluster, 1, "t", 4, 30_000)
        cluster.advance(31_000)  # adoption, then the first retention pass (30 s delay)
        assert result_of(answer.result()) == (NONE, 4)
        bases = segment_bases(cluster, 3, "t")
        assert bases == [4]
        assert offsets(cluster, 3, "t")[0] == 4


def produce_error(answer: object) -> int:
    code: int = answer.responses[0].partition_responses[0].error_code  # type: ignore[attr-defined]
    return code


def test_an_acks_all_produce_waits_for_a_stalled_in_sync_follower_until_it_leaves_the_isr(
    tmp_path: Path,
) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 10)
        cluster.pause_fetching(3, "t", 0)
        waiting = produce_in_loop(cluster, 1, "t", 2, acks=-1, timeout_ms=60_000)
        assert isinstance(waiting, Deferred)
        cluster.advance(30_000)
        assert not done(waiting)
        cluster.advance(16_000)  # the ISR check after replica.lag.time.max.ms drops 3
        assert done(waiting)
        assert produce_error(waiting.result()) == NONE
        assert offsets(cluster, 1, "t") == (0, 12, 12)


def test_an_acks_all_produce_times_out_while_the_isr_has_not_got_the_records(
    tmp_path: Path,
) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 10)
        cluster.pause_fetching(3, "t", 0)
        waiting = produce_in_loop(cluster, 1, "t", 2, acks=-1, timeout_ms=5_000)
        cluster.advance(5_000)
        assert produce_error(waiting.result()) == TIMED_OUT
        answer = produce_in_loop(cluster, 1, "t", 2, acks=1, timeout_ms=5_000)
        assert produce_error(answer) == NONE  # acks=1: the leader's append is enough


def test_a_follower_answers_a_consumer_fetch_from_v11_up_to_its_own_high_watermark(
    tmp_path: Path,
) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 10)
        with connect(cluster, 2) as conn:
            before = calls.fetch(conn, "t", 0, 0, version=11).responses[0].partitions[0]
            assert (before.error_code, before.high_watermark, before.records) == (NONE, 0, b"")
            cluster.advance(500)  # the follower learns HW 10 from its next fetch answer
            after = calls.fetch(conn, "t", 0, 0, version=12).responses[0].partitions[0]
            assert (after.error_code, after.high_watermark) == (NONE, 10)
            assert after.records
            old = calls.fetch(conn, "t", 0, 0, version=10).responses[0].partitions[0]
            assert old.error_code == NOT_LEADER


def test_a_restarted_follower_catches_up_and_rejoins_the_isr(tmp_path: Path) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 10)
        cluster.stop_broker(3)
        state = cluster.partition_state("t", 0)
        assert state is not None and state.isr == (1, 2)
        produce(cluster, 1, "t", 5)  # acks=-1: the ISR is 1 and 2 now
        cluster.start_broker(3)
        assert offsets(cluster, 3, "t")[2] == 15
        state = cluster.partition_state("t", 0)
        assert state is not None and state.isr == (1, 2, 3)


def test_metadata_follows_elections_and_lists_a_stopped_brokers_replica_offline(
    tmp_path: Path,
) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        cluster.move_leader("t", 0, 2)
        cluster.stop_broker(3)
        with connect(cluster, 1) as conn:
            answer = calls.metadata(conn, ["t"])
        assert [b.node_id for b in answer.brokers] == [1, 2]
        partition = answer.topics[0].partitions[0]
        assert (partition.leader_id, partition.leader_epoch) == (2, 1)
        assert (partition.replica_nodes, partition.isr_nodes) == ((1, 2, 3), (1, 2))
        assert partition.offline_replicas == (3,)


def test_a_follower_back_after_records_past_its_end_were_deleted_restarts_at_the_leaders_start(
    tmp_path: Path,
) -> None:
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 10)
        cluster.stop_broker(3)
        produce(cluster, 1, "t", 10)
        answer = delete_in_loop(cluster, 1, "t", 15, 30_000)
        cluster.advance(500)  # the live follower adopts 15; the stopped one does not count
        assert result_of(answer.result()) == (NONE, 15)
        cluster.start_broker(3)  # fetches at 10 < 15: out of range, restarts at 15
        assert offsets(cluster, 3, "t")[0::2] == (15, 20)
        # the batch holding 15 starts at 10: the empty replica restarts at 10 to take it
        # whole, then raises its log start offset to the leader's 15
        assert segment_bases(cluster, 3, "t") == [10]
        state = cluster.partition_state("t", 0)
        assert state is not None and state.isr == (1, 2, 3)


def test_a_new_leader_starts_its_epoch_at_its_log_end_offset(tmp_path: Path) -> None:
    """``Partition.makeLeader``: the elected replica writes ``(new epoch, LEO)`` to its
    leader-epoch-checkpoint at once, before any append (as the golden
    leader-epoch-restarts case shows for a single node); its next batch carries it."""
    with running_cluster(tmp_path) as cluster:
        create(cluster, "t")
        produce(cluster, 1, "t", 4)
        state = cluster.move_leader("t", 0, 2)
        assert (state.leader, state.leader_epoch) == (2, 1)
        path = cluster.base_dir / "broker-2" / "t-0" / "leader-epoch-checkpoint"
        assert path.read_text("utf-8") == "0\n2\n0 0\n1 4\n"
        assert produce(cluster, 2, "t", 1) == 4
        log = cluster.broker(2).log("t", 0)
        assert log is not None
        assert log.epoch_cache.epoch_for_offset(4) == 1
