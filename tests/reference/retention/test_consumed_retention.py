"""KIP-68 consumed retention as a pure rule: a log, its settings, a clock and one number.

Each test log holds one batch of two records per segment (segment.bytes equals
one batch), so segment i holds offsets 2i and 2i+1 and its upper bound (the
next base offset) is 2i+2; the last segment is the active one. Expected values
come from the catalog's decisions (fixtures/requirements/kip68.json) and
Kafka's shared deletion rules (kafka-facts.md 1.3, 5).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.clock import ManualClock
from lethe_reference.retention.consumed import (
    NO_COMMITTED_OFFSETS,
    MinCommittedOffsets,
    consumed_retention_ms,
    delete_consumed_segments,
    no_committed_offsets,
)
from lethe_reference.retention.pending import PendingDeletions
from lethe_reference.retention.policies import delete_old_segments
from lethe_reference.storage.log import LogStartOffsetIncrementReason, PartitionLog
from lethe_reference.storage.settings import StorageSettings

DAY = 86_400_000
NOW = 1_800_000_000_000


def batch(timestamp: int) -> bytes:
    specs = [RecordSpec(key=b"k%d" % i, value=b"v", timestamp=timestamp) for i in range(2)]
    return build_batch(specs, base_offset=0)


BATCH = len(batch(NOW))


@dataclass(frozen=True, slots=True)
class Settings(StorageSettings):
    """Storage settings plus the two KIP-68 topic configs (LogConfig has both)."""

    retention_commitoffset_enable: bool = True
    retention_commitoffset_ms: int = DAY


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


def make_log(
    tmp_path: Path, clock: ManualClock, timestamps: list[int], **settings: object
) -> PartitionLog:
    config = Settings(segment_bytes=BATCH, retention_ms=-1, **settings)  # type: ignore[arg-type]
    log = PartitionLog.create(
        tmp_path / "t-0", config, clock=clock, deleter=PendingDeletions(), durable=False
    )
    for timestamp in timestamps:
        log.append_as_leader(batch(timestamp), leader_epoch=0)
    log.update_high_watermark(log.log_end_offset)
    assert log.segments.base_offsets == [2 * i for i in range(len(timestamps))]
    return log


OLD = NOW - 2 * DAY


# --- the age limit (KIP68-CFG-4/5) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("enable", "consumed_ms", "retention_ms", "limit"),
    [
        (False, DAY, -1, None),  # disabled: the rule does nothing
        (True, DAY, -1, DAY),
        (True, 0, 7 * DAY, 0),
        (True, -2, 7 * DAY, 7 * DAY),  # -2: as retention.ms
        (True, -2, -1, None),  # -2 with unlimited retention.ms: never old enough
        (True, -1, -1, None),  # -1: the age limit is never reached
    ],
)
def test_the_age_limit_resolves_minus_two_and_minus_one(
    enable: bool, consumed_ms: int, retention_ms: int, limit: int | None
) -> None:
    settings = Settings(
        retention_ms=retention_ms,
        retention_commitoffset_enable=enable,
        retention_commitoffset_ms=consumed_ms,
    )
    assert consumed_retention_ms(settings) == limit


def test_settings_without_the_kip68_configs_get_no_consumed_retention() -> None:
    assert consumed_retention_ms(StorageSettings()) is None


# --- the min committed offset (KIP68-MCO-*) -------------------------------------------------


def test_the_min_committed_offset_is_the_lowest_over_every_group() -> None:
    offsets = MinCommittedOffsets.of_groups(
        [{("t", 0): 9, ("t", 1): 3}, {("t", 0): 4}, {("u", 0): 100}]
    )
    assert (offsets.get("t", 0), offsets.get("t", 1), offsets.get("u", 0)) == (4, 3, 100)


def test_a_partition_no_group_committed_for_has_no_min_committed_offset() -> None:
    offsets = MinCommittedOffsets.of_groups([{("t", 0): 9}])
    assert offsets.get("t", 1) is None
    assert NO_COMMITTED_OFFSETS.get("t", 0) is None
    assert no_committed_offsets() is NO_COMMITTED_OFFSETS


def test_unreadable_offsets_give_no_partition_a_min_committed_offset() -> None:
    offsets = MinCommittedOffsets.of_groups([{("t", 0): 9}], complete=False)
    assert offsets.get("t", 0) is None


# --- the rule (KIP68-RET-*) ------------------------------------------------------------------


def test_a_segment_goes_only_when_its_next_base_offset_is_committed(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = make_log(tmp_path, clock, [OLD, OLD, OLD])
    assert delete_consumed_segments(log, 3) == 1  # segment 0 ends at 2 <= 3; segment 2 at 4 > 3
    assert log.segments.base_offsets == [2, 4]
    assert delete_consumed_segments(log, 4) == 1  # segment 2's next base offset is 4
    assert log.segments.base_offsets == [4]
    assert log.log_start_offset == 4


def test_a_consumed_segment_goes_only_when_strictly_older_than_the_limit(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = make_log(tmp_path, clock, [NOW - DAY, NOW], retention_commitoffset_ms=DAY)
    assert delete_consumed_segments(log, 4) == 0  # now - largest timestamp == limit: kept
    clock.advance(1)
    assert delete_consumed_segments(log, 4) == 1
    assert log.segments.base_offsets == [2]


def test_segments_without_timestamps_age_by_file_mtime(tmp_path: Path, clock: ManualClock) -> None:
    log = make_log(tmp_path, clock, [-1, -1, NOW], retention_commitoffset_ms=DAY)
    for base, age in ((0, DAY + 1), (2, DAY)):
        segment = log.segments.get(base)
        assert segment is not None
        mtime_ns = (NOW - age) * 1_000_000
        os.utime(segment.log.path, ns=(mtime_ns, mtime_ns))
    delete_consumed_segments(log, 6)
    assert log.segments.base_offsets == [2, 4]  # segment 2's file is exactly DAY old: kept


def test_consumed_retention_deletes_a_prefix_only(tmp_path: Path, clock: ManualClock) -> None:
    log = make_log(tmp_path, clock, [OLD, NOW, OLD, OLD])
    delete_consumed_segments(log, 8)  # segment 2 is young: segments 4 and 6 stay behind it
    assert log.segments.base_offsets == [2, 4, 6]


def test_an_unconsumed_segment_stops_the_pass_however_old(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = make_log(tmp_path, clock, [OLD - 300 * DAY, OLD, OLD])
    delete_consumed_segments(log, 2)
    assert log.segments.base_offsets == [2, 4]
    assert log.log_start_offset == 2


def test_a_committed_offset_above_the_high_watermark_counts_as_the_high_watermark(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = make_log(tmp_path, clock, [OLD, OLD, OLD])
    log.update_high_watermark(2)
    delete_consumed_segments(log, 1_000)
    assert log.segments.base_offsets == [2, 4]
    assert log.log_start_offset == 2 == log.high_watermark


def test_a_consumed_old_active_segment_goes_and_a_new_one_starts_at_the_log_end(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = make_log(tmp_path, clock, [OLD, OLD])
    assert delete_consumed_segments(log, 4) == 2
    assert log.segments.base_offsets == [4]
    assert (log.log_start_offset, log.log_end_offset, log.active_segment.size) == (4, 4, 0)
    assert delete_consumed_segments(log, 4) == 0  # an empty last segment never goes


def test_deleted_segments_wait_as_deleted_files_for_file_delete_delay(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = make_log(tmp_path, clock, [OLD, OLD], file_delete_delay_ms=1000)
    delete_consumed_segments(log, 2)
    names = sorted(p.name for p in (tmp_path / "t-0").iterdir())
    assert "00000000000000000000.log.deleted" in names
    assert "00000000000000000000.log" not in names
    assert log.deleter is not None and isinstance(log.deleter, PendingDeletions)
    assert log.deleter.delete_due_files(NOW + 999) == []
    assert log.deleter.delete_due_files(NOW + 1000)
    assert not list((tmp_path / "t-0").glob("*.deleted"))


def test_no_min_committed_offset_means_no_consumed_retention(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = make_log(tmp_path, clock, [OLD, OLD])
    assert delete_consumed_segments(log, None) == 0
    assert log.segments.base_offsets == [0, 2]


def test_a_compact_only_topic_gets_no_consumed_retention(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = make_log(tmp_path, clock, [OLD, OLD], cleanup_policy=("compact",))
    assert delete_old_segments(log, 4) == 0
    assert log.segments.base_offsets == [0, 2]


def test_a_compact_delete_topic_gets_consumed_retention(tmp_path: Path, clock: ManualClock) -> None:
    log = make_log(tmp_path, clock, [OLD, OLD], cleanup_policy=("compact", "delete"))
    assert delete_old_segments(log, 2) == 1
    assert log.segments.base_offsets == [2]


# --- disabled, and the forced rules (KIP68-DISC-2, KIP68-RET-7, KIP68-RET-1) ----------------


@pytest.mark.parametrize(
    "settings",
    [
        {"retention_commitoffset_enable": False},
        {"retention_commitoffset_ms": -1},
    ],
    ids=["disabled", "never-old-enough"],
)
def test_with_consumed_retention_off_committed_offsets_delete_nothing(
    tmp_path: Path, clock: ManualClock, settings: dict[str, object]
) -> None:
    log = make_log(tmp_path, clock, [OLD, OLD, OLD], **settings)
    assert delete_old_segments(log, 6) == 0
    assert log.segments.base_offsets == [0, 2, 4]
    assert log.log_start_offset == 0


def test_disabled_a_retention_pass_deletes_what_it_deletes_without_the_extension(
    tmp_path: Path, clock: ManualClock
) -> None:
    timestamps = [OLD, OLD, NOW, NOW, NOW]
    plain = make_log(tmp_path / "a", clock, timestamps)
    plain.settings = StorageSettings(
        segment_bytes=BATCH, retention_ms=DAY, retention_bytes=2 * BATCH
    )
    disabled = make_log(tmp_path / "b", clock, timestamps)
    disabled.settings = Settings(
        segment_bytes=BATCH,
        retention_ms=DAY,
        retention_bytes=2 * BATCH,
        retention_commitoffset_enable=False,
    )
    assert delete_old_segments(plain) == delete_old_segments(disabled, 10) == 3
    assert plain.segments.base_offsets == disabled.segments.base_offsets == [6, 8]


def test_forced_retention_deletes_unconsumed_segments_with_consumed_retention_on(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = make_log(tmp_path, clock, [OLD, OLD, NOW])
    log.settings = Settings(segment_bytes=BATCH, retention_ms=DAY)
    assert delete_old_segments(log, 2) == 2  # consumed: segment 0; retention.ms: segment 2
    assert log.segments.base_offsets == [4]


def test_the_pass_runs_start_offset_breach_then_consumed_then_size_then_time(
    tmp_path: Path, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    log = make_log(tmp_path, clock, [OLD, OLD, OLD, OLD, NOW, NOW])
    log.settings = Settings(segment_bytes=BATCH, retention_ms=DAY, retention_bytes=2 * BATCH)
    log.maybe_increment_log_start_offset(2, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
    with caplog.at_level(logging.INFO, logger="lethe_reference.retention.deletable"):
        assert delete_old_segments(log, 4) == 4
    reasons = [r.getMessage().split(" due to ")[1].split(":")[0] for r in caplog.records]
    assert reasons == [
        "log start offset 2 breach",  # segment 0
        f"consumed log retention {DAY}ms breach below committed offset 4",  # segment 2
        f"log retention size {2 * BATCH} breach",  # segments 4 and 6: 2 batches remain
    ]
    assert log.segments.base_offsets == [8, 10]
