"""The periodic expiration job: expired offsets, then Empty groups without offsets removed.

Expected behaviour from Kafka 4.0 (GroupCoordinatorShard.cleanupGroupMetadata,
OffsetMetadataManager.cleanupExpiredOffsets, ClassicGroup.offsetExpirationCondition) and
the real run of fixtures/golden/consumer-groups (the random console group vanished at the
first run after its consumer left, with a GroupMetadata tombstone).
"""

from __future__ import annotations

from group_support import GROUP, Harness, done
from lethe_formats.coordinator import GroupMetadataKey, OffsetCommitKey
from lethe_formats.coordinator.consumer_protocol import ConsumerSubscription, encode_subscription
from lethe_formats.fixtures import fixtures_root
from lethe_reference.clock import ManualClock
from lethe_reference.cluster.group import (
    CommitOffset,
    GroupConfig,
    JoinResult,
    LeaveMember,
    OffsetCommitRequest,
)

INTERVAL = 600_000
RETENTION = 7 * 24 * 3600 * 1000


def harness(**changes: int) -> Harness:
    return Harness(GroupConfig(group_initial_rebalance_delay_ms=0, **changes))


def joined_and_left(h: Harness, topics: tuple[str, ...] = ("orders",), commit: bool = False) -> str:
    """A consumer that joins, syncs, maybe commits ``orders-0`` at 5, then leaves."""
    meta = encode_subscription(ConsumerSubscription(topics))
    member = h.new_member("console-consumer")
    done(h.join("console-consumer", member, protocols=(("range", meta),)))
    done(h.sync(member, 1, {member: b""}))
    if commit:
        request = OffsetCommitRequest(GROUP, {("orders", 0): CommitOffset(5)}, member, 1)
        assert h.coordinator.commit_offsets(request) == {("orders", 0): 0}
    h.coordinator.leave_group(GROUP, [LeaveMember(member)])
    assert h.coordinator.describe_group(GROUP).state == "Empty"
    return member


def tombstones(h: Harness, since: int) -> list[object]:
    """Keys of the null-value records written in batches ``since`` onwards."""
    keys = []
    for record in h.written()[since:]:
        assert record.value is None
        keys.append(record.key)
    return keys


def listed(h: Harness) -> list[str]:
    return [g.group_id for g in h.coordinator.list_groups()]


def test_empty_group_without_offsets_stays_listed_until_the_next_run() -> None:
    h = harness()
    joined_and_left(h)
    before = len(h.written())
    h.advance(INTERVAL - 1)  # the job of the partition runs INTERVAL after its load
    assert listed(h) == [GROUP]
    assert len(h.written()) == before
    h.advance(1)
    assert listed(h) == []
    assert tombstones(h, before) == [GroupMetadataKey(GROUP)]
    described = h.coordinator.describe_group(GROUP)
    assert (described.state, described.exists) == ("Dead", False)


def test_run_repeats_every_interval() -> None:
    h = harness()
    h.advance(INTERVAL)  # a first run with nothing to do writes nothing
    assert h.batches == []
    joined_and_left(h)
    h.advance(INTERVAL - 1)
    assert listed(h) == [GROUP]
    h.advance(1)
    assert listed(h) == []  # the second run, INTERVAL after the first


def test_stable_group_is_never_removed_by_the_job() -> None:
    h = harness(offsets_retention_check_interval_ms=5_000)
    meta = encode_subscription(ConsumerSubscription(("orders",)))
    member = h.new_member("a")
    done(h.join("a", member, protocols=(("range", meta),)))
    done(h.sync(member, 1, {member: b""}))
    for _ in range(4):
        h.advance(4_000)
        assert h.coordinator.heartbeat(GROUP, member, 1) == 0
    assert listed(h) == [GROUP]
    assert h.coordinator.describe_group(GROUP).state == "Stable"
    assert h.written()[-1].value is not None  # no tombstone was written


def test_empty_group_with_offsets_waits_for_the_retention_after_it_became_empty() -> None:
    h = harness(offsets_retention_ms=3 * INTERVAL)
    joined_and_left(h, commit=True)
    left_at = h.clock.now_ms()
    before = len(h.written())
    h.advance(2 * INTERVAL)  # two runs: the offset is younger than the retention
    assert listed(h) == [GROUP]
    assert len(h.written()) == before
    h.advance(INTERVAL)  # third run: 3 * INTERVAL after the group became Empty
    assert h.clock.now_ms() - left_at == 3 * INTERVAL
    assert listed(h) == []
    assert tombstones(h, before) == [OffsetCommitKey(GROUP, "orders", 0), GroupMetadataKey(GROUP)]
    assert h.coordinator.fetch_offsets(GROUP).offsets == {}


def test_tombstones_of_one_run_are_one_batch() -> None:
    h = harness(offsets_retention_ms=INTERVAL)
    joined_and_left(h, commit=True)
    batches = len(h.batches)
    h.advance(INTERVAL)
    assert len(h.batches) == batches + 1
    assert h.batches[-1][0] == h.coordinator.partition_for(GROUP)


def test_simple_group_offsets_age_from_their_commit() -> None:
    h = harness(offsets_retention_ms=INTERVAL + 1)
    commit = OffsetCommitRequest("audit", {("orders", 0): CommitOffset(3)})
    assert h.coordinator.commit_offsets(commit) == {("orders", 0): 0}
    h.advance(INTERVAL // 2)
    later = OffsetCommitRequest("audit", {("orders", 1): CommitOffset(4)})
    assert h.coordinator.commit_offsets(later) == {("orders", 1): 0}
    before = len(h.written())
    h.advance(INTERVAL // 2)  # first run: neither is INTERVAL + 1 old
    assert len(h.written()) == before
    h.advance(INTERVAL)  # second run: both old enough
    assert tombstones(h, before) == [
        OffsetCommitKey("audit", "orders", 0),
        OffsetCommitKey("audit", "orders", 1),
        GroupMetadataKey("audit"),
    ]
    assert "audit" not in listed(h)


def test_offset_with_an_expire_timestamp_expires_then_even_in_a_fresh_group() -> None:
    h = harness()
    commit = OffsetCommitRequest(
        "audit", {("orders", 0): CommitOffset(3)}, retention_time_ms=INTERVAL // 2
    )
    assert h.coordinator.commit_offsets(commit) == {("orders", 0): 0}
    before = len(h.written())
    h.advance(INTERVAL)
    assert tombstones(h, before) == [
        OffsetCommitKey("audit", "orders", 0),
        GroupMetadataKey("audit"),
    ]


def test_stable_group_expires_only_offsets_of_topics_it_does_not_subscribe() -> None:
    h = harness(offsets_retention_ms=20_000, offsets_retention_check_interval_ms=20_000)
    old = OffsetCommitRequest(GROUP, {("gone", 0): CommitOffset(1), ("orders", 0): CommitOffset(2)})
    assert h.coordinator.commit_offsets(old) == {("gone", 0): 0, ("orders", 0): 0}
    meta = encode_subscription(ConsumerSubscription(("orders",)))
    member = h.new_member("a")
    done(h.join("a", member, protocols=(("range", meta),)))
    done(h.sync(member, 1, {member: b""}))
    before = len(h.written())
    for _ in range(5):  # heartbeats keep it Stable until the run at 20 s
        h.advance(4_000)
        h.coordinator.heartbeat(GROUP, member, 1)
    assert h.coordinator.describe_group(GROUP).state == "Stable"
    assert tombstones(h, before) == [OffsetCommitKey(GROUP, "gone", 0)]
    fetched = h.coordinator.fetch_offsets(GROUP).offsets
    assert list(fetched) == [("orders", 0)]


def test_failed_write_keeps_the_group_and_the_next_run_retries() -> None:
    h = harness()
    joined_and_left(h)
    h.fail_with = 6  # NOT_LEADER_OR_FOLLOWER
    h.advance(INTERVAL)
    assert listed(h) == [GROUP]
    h.fail_with = None
    h.advance(INTERVAL)
    assert listed(h) == []


def test_reloaded_empty_group_is_removed_interval_after_the_load() -> None:
    h = harness()
    joined_and_left(h)
    partition = h.coordinator.partition_for(GROUP)
    records = h.records()
    h.advance(INTERVAL // 2)
    h.coordinator.load(partition, records)  # the timer restarts at the load
    assert listed(h) == [GROUP]
    h.advance(INTERVAL // 2)
    assert listed(h) == [GROUP]
    h.advance(INTERVAL // 2)
    assert listed(h) == []


def test_tombstone_batch_is_the_one_kafka_wrote() -> None:
    """Kafka 4.0.0's cleanup of ``console-consumer-31582`` wrote offset 3 of
    ``__consumer_offsets-0`` (fixtures/golden/consumer-groups/kafka, dump.txt: CreateTime
    1795814593116, 94 bytes at position 596). lethe's batch for the same run is the same
    bytes once the log has set the base offset (3) and the leader epoch (0)."""
    log = fixtures_root() / "golden" / "consumer-groups" / "kafka" / "__consumer_offsets-0"
    kafka = (log / "00000000000000000000.log").read_bytes()[596 : 596 + 94]
    written_at = 1_795_814_593_116
    h = Harness(
        GroupConfig(group_initial_rebalance_delay_ms=0),
        clock=ManualClock(written_at - INTERVAL),
    )
    group = "console-consumer-31582"
    assert h.coordinator.partition_for(group) == 0
    first = h.join("console-consumer", group_id=group)
    assert isinstance(first, JoinResult)
    done(h.join("console-consumer", first.member_id, group_id=group))
    member = first.member_id
    h.coordinator.leave_group(group, [LeaveMember(member)])
    h.advance(INTERVAL)
    partition, ours = h.batches[-1]
    placed = (3).to_bytes(8, "big") + ours[8:12] + (0).to_bytes(4, "big") + ours[16:]
    assert (partition, placed) == (0, kafka)
