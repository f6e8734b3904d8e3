"""Offset commits and fetches, durability through __consumer_offsets, partition choice."""

from __future__ import annotations

from pathlib import Path

import pytest
from group_support import GROUP, Harness, done
from lethe_formats.coordinator import OffsetCommitKey, OffsetCommitValue
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import RecordBatch
from lethe_formats.records.scan import read_log
from lethe_reference.cluster.group import (
    AppendError,
    CommitOffset,
    GroupConfig,
    GroupCoordinator,
    OffsetCommitRequest,
    Pending,
    SyncResult,
    partition_for,
)
from lethe_reference.cluster.group.support import java_string_hash

NONE, OFFSET_METADATA_TOO_LARGE, NOT_COORDINATOR, ILLEGAL_GENERATION = 0, 12, 16, 22
UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS, GROUP_ID_NOT_FOUND = 25, 27, 69
TP0, TP1 = ("orders", 0), ("orders", 1)


def simple_commit(group: str, offsets: dict[tuple[str, int], CommitOffset]) -> OffsetCommitRequest:
    """kafka-python's assign() + commit(): generation -1, no member id."""
    return OffsetCommitRequest(group, offsets)


def test_partition_of_the_golden_groups() -> None:
    # fixtures/golden/README.md and case.json: abs(Java hashCode) % 50.
    assert partition_for("golden-billing", 50) == 17
    assert partition_for("golden-audit", 50) == 41
    assert partition_for("golden-stream", 50) == 14


def test_java_string_hash_edge_cases() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("polygenelubricants") == -(2**31)  # Integer.MIN_VALUE
    assert partition_for("polygenelubricants", 50) == 0  # Kafka's Utils.abs(MIN_VALUE) is 0
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00  # UTF-16 surrogates


def test_simple_commit_creates_an_empty_group_and_fetch_returns_it() -> None:
    h = Harness()
    errors = h.coordinator.commit_offsets(
        simple_commit("audit", {TP0: CommitOffset(5, "audit-p0"), TP1: CommitOffset(1, None)})
    )
    assert errors == {TP0: NONE, TP1: NONE}
    fetched = h.coordinator.fetch_offsets("audit", [TP0, TP1, ("orders", 2)])
    assert [(f.offset, f.metadata, f.leader_epoch) for f in fetched.offsets.values()] == [
        (5, "audit-p0", -1),
        (1, "", -1),
        (-1, "", -1),
    ]
    assert h.coordinator.fetch_offsets("audit").offsets.keys() == {TP0, TP1}
    listed = h.coordinator.list_groups()
    assert [(g.group_id, g.protocol_type, g.state) for g in listed] == [("audit", "", "Empty")]


def test_unknown_group_fetch_answers_minus_one_without_error() -> None:
    fetched = Harness().coordinator.fetch_offsets("nobody", [TP0])
    assert fetched.error_code == NONE
    assert fetched.offsets[TP0].offset == -1


def test_commit_checks_generation_and_member() -> None:
    h = Harness()
    member = h.new_member("a")
    done(h.join("a", member))
    request = OffsetCommitRequest(GROUP, {TP0: CommitOffset(3)}, member, 1)
    assert h.coordinator.commit_offsets(request) == {TP0: REBALANCE_IN_PROGRESS}  # not synced yet
    assert isinstance(done(h.sync(member, 1, {member: b""})), SyncResult)
    assert h.coordinator.commit_offsets(request) == {TP0: NONE}
    stale = OffsetCommitRequest(GROUP, {TP0: CommitOffset(4)}, member, 0)
    assert h.coordinator.commit_offsets(stale) == {TP0: ILLEGAL_GENERATION}
    stranger = OffsetCommitRequest(GROUP, {TP0: CommitOffset(4)}, "stranger", 1)
    assert h.coordinator.commit_offsets(stranger) == {TP0: UNKNOWN_MEMBER_ID}
    anonymous = simple_commit(GROUP, {TP0: CommitOffset(4)})
    assert h.coordinator.commit_offsets(anonymous) == {TP0: UNKNOWN_MEMBER_ID}
    assert h.coordinator.fetch_offsets(GROUP, [TP0]).offsets[TP0].offset == 3


def test_commit_with_a_generation_to_an_unknown_group_depends_on_the_version() -> None:
    h = Harness()
    v9 = OffsetCommitRequest("nope", {TP0: CommitOffset(1)}, "m", 3, api_version=9)
    v8 = OffsetCommitRequest("nope", {TP0: CommitOffset(1)}, "m", 3, api_version=8)
    assert h.coordinator.commit_offsets(v9) == {TP0: GROUP_ID_NOT_FOUND}
    assert h.coordinator.commit_offsets(v8) == {TP0: ILLEGAL_GENERATION}
    assert h.coordinator.list_groups() == []


def test_oversized_metadata_fails_only_its_partition() -> None:
    h = Harness(GroupConfig(offset_metadata_max_bytes=4))
    errors = h.coordinator.commit_offsets(
        simple_commit("g2", {TP0: CommitOffset(1, "12345"), TP1: CommitOffset(2, "1234")})
    )
    assert errors == {TP0: OFFSET_METADATA_TOO_LARGE, TP1: NONE}
    assert h.coordinator.committed("g2").keys() == {TP1}


def test_commit_records_are_kafkas_offset_commit_records_in_one_batch() -> None:
    h = Harness()
    h.coordinator.commit_offsets(
        simple_commit("g3", {TP0: CommitOffset(7, "m\x00", 2), TP1: CommitOffset(8)})
    )
    ((partition, data),) = h.batches
    assert partition == partition_for("g3", 50)
    (batch,) = read_log(data)
    assert isinstance(batch, RecordBatch)
    header = batch.header
    assert (header.producer_id, header.base_sequence, header.records_count) == (-1, 0, 2)
    first = h.written()[0]
    assert first.key == OffsetCommitKey("g3", "orders", 0)
    assert first.value == OffsetCommitValue(7, "m\x00", h.clock.now_ms(), leader_epoch=2)


def test_retention_time_writes_a_v1_value_with_expire_timestamp() -> None:
    h = Harness()
    h.coordinator.commit_offsets(
        OffsetCommitRequest("g4", {TP0: CommitOffset(1)}, retention_time_ms=60_000)
    )
    value = h.written()[0].value
    assert (value.version, value.expire_timestamp) == (1, h.clock.now_ms() + 60_000)


def test_failed_append_is_reported_as_kafka_maps_it() -> None:
    def refuse(partition: int, batch: bytes) -> None:
        raise AppendError(6)  # NOT_LEADER_OR_FOLLOWER

    clock = Harness().clock
    coordinator = GroupCoordinator(clock, refuse)
    coordinator.load(partition_for("g5", 50), [])
    errors = coordinator.commit_offsets(simple_commit("g5", {TP0: CommitOffset(1)}))
    assert errors == {TP0: NOT_COORDINATOR}
    assert coordinator.fetch_offsets("g5", [TP0]).offsets[TP0].offset == -1
    assert coordinator.list_groups() == []  # the simple group creation was reverted


def test_failed_assignment_write_sends_members_back_to_rejoin() -> None:
    h = Harness()
    member = h.new_member("a")
    done(h.join("a", member))
    h.fail_with = 19  # NOT_ENOUGH_REPLICAS
    assert done(h.sync(member, 1, {member: b"x"})) == SyncResult(15)  # COORDINATOR_NOT_AVAILABLE
    assert h.coordinator.describe_group(GROUP).state == "PreparingRebalance"


def _records(batches: list[tuple[int, bytes]], partition: int) -> list[object]:
    out = []
    for owner, data in batches:
        if owner == partition:
            for batch in read_log(data):
                assert isinstance(batch, RecordBatch)
                out.extend(batch.records)
    return out


def test_restart_reloads_committed_offsets_and_the_stable_group() -> None:
    h = Harness()
    member = h.new_member("a")
    done(h.join("a", member))
    done(h.sync(member, 1, {member: b"assignment"}))
    h.coordinator.commit_offsets(
        OffsetCommitRequest(GROUP, {TP0: CommitOffset(3, "x"), TP1: CommitOffset(9)}, member, 1)
    )
    h.coordinator.commit_offsets(OffsetCommitRequest(GROUP, {TP0: CommitOffset(4)}, member, 1))
    partition = partition_for(GROUP, 50)
    restarted = GroupCoordinator(h.clock, lambda p, b: None, h.config)
    restarted.load(partition, _records(h.batches, partition))  # type: ignore[arg-type]
    assert restarted.committed(GROUP) == h.coordinator.committed(GROUP)
    assert restarted.fetch_offsets(GROUP, [TP0]).offsets[TP0].offset == 4
    described = restarted.describe_group(GROUP)
    assert (described.state, [m.assignment for m in described.members]) == (
        "Stable",
        [b"assignment"],
    )
    assert restarted.heartbeat(GROUP, member, 1) == NONE  # no rejoin needed
    restarted.tick(h.clock.now_ms() + 10_000)
    assert restarted.describe_group(GROUP).state == "Empty"  # its session ran out


def test_golden_consumer_offsets_partitions_load_as_kafka_left_them() -> None:
    root: Path = fixtures_root() / "golden" / "consumer-offsets"
    coordinator = GroupCoordinator(Harness().clock, lambda p, b: None)
    for partition in (14, 17, 41):
        log = root / f"__consumer_offsets-{partition}" / "00000000000000000000.log"
        records = [
            r for b in read_log(log.read_bytes()) if isinstance(b, RecordBatch) for r in b.records
        ]
        coordinator.load(partition, records)
    offsets = {
        group: {tp: o.offset for tp, o in coordinator.committed(group).items()}
        for group in ("golden-billing", "golden-audit", "golden-stream")
    }
    # From dump.txt --offsets-decoder: the last commit per partition wins.
    assert offsets["golden-billing"] == {
        ("golden-orders", 0): 3,
        ("golden-orders", 1): 9,
        ("golden-orders", 2): 2,
    }
    assert offsets["golden-audit"] == {
        ("golden-orders", 0): 5,
        ("golden-orders", 1): 1,
        ("golden-orders", 2): 8,
    }
    assert offsets["golden-stream"] == {("golden-orders", 0): 4, ("golden-orders", 2): 6}
    billing = coordinator.describe_group("golden-billing")
    assert (billing.state, billing.protocol_type, billing.members) == ("Empty", "consumer", ())


def test_member_without_join_reply_in_unloaded_partition() -> None:
    h = Harness(GroupConfig(group_initial_rebalance_delay_ms=1_000))
    member = h.new_member("a")
    pending = h.join("a", member)
    assert isinstance(pending, Pending)
    h.coordinator.load(partition_for(GROUP, 50), [])  # reloading drops the in-memory state
    assert pending.done and pending.result().error_code == NOT_COORDINATOR


@pytest.mark.parametrize("bad", ["", "x" * 10])
def test_fetch_checks_group_id_and_ownership(bad: str) -> None:
    h = Harness(GroupConfig(offsets_topic_num_partitions=1))
    h.coordinator.unload(0)
    expected = 24 if bad == "" else NOT_COORDINATOR
    assert h.coordinator.fetch_offsets(bad).error_code == expected
