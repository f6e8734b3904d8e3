"""When a log rolls to a new segment (kafka-facts 3.6; UnifiedLog.maybeRoll, LocalLog.roll)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.clock import ManualClock
from lethe_reference.storage.errors import InvalidRecordError
from lethe_reference.storage.log import PartitionLog
from lethe_reference.storage.settings import StorageSettings
from storage_support import client_batch


class _FixedJitter(random.Random):
    """A random source whose ``randrange`` always answers ``value``."""

    def __init__(self, value: int) -> None:
        super().__init__(0)
        self.value = value
        self.bounds: list[int] = []

    def randrange(self, *args: int, **_kw: object) -> int:  # type: ignore[override]
        self.bounds.append(args[0])
        return self.value


def _log(tmp_path: Path, clock: ManualClock, **settings: object) -> PartitionLog:
    rng = settings.pop("rng", None)
    config = StorageSettings(**settings)  # type: ignore[arg-type]
    return PartitionLog.create(
        tmp_path / "t-0",
        config,
        clock=clock,
        rng=rng,
        durable=False,  # type: ignore[arg-type]
    )


def test_segment_ms_rolls_after_the_first_batch_timestamp(
    tmp_path: Path, clock: ManualClock
) -> None:
    t = clock.now_ms() - 10_000
    log = _log(tmp_path, clock, segment_ms=1000)
    for ts in (t, t + 1000, t + 1001):
        log.append_as_leader(client_batch([ts]), leader_epoch=0)
    assert log.segments.base_offsets == [0, 2]


def test_segment_jitter_shortens_segment_ms(tmp_path: Path, clock: ManualClock) -> None:
    """A random jitter in [0, min(segment.jitter.ms, segment.ms)) per segment."""
    t = clock.now_ms() - 10_000
    rng = _FixedJitter(300)
    log = _log(tmp_path, clock, segment_ms=1000, segment_jitter_ms=5000, rng=rng)
    for ts in (t, t + 700, t + 701):
        log.append_as_leader(client_batch([ts]), leader_epoch=0)
    assert log.segments.base_offsets == [0, 2]
    assert rng.bounds == [1000, 1000]  # min(jitter, segment.ms), once per segment


def test_a_roll_flushes_and_advances_the_recovery_point(tmp_path: Path, clock: ManualClock) -> None:
    size = len(client_batch([clock.now_ms()]))
    log = _log(tmp_path, clock, segment_bytes=2 * size)
    for _ in range(3):
        log.append_as_leader(client_batch([clock.now_ms()]), leader_epoch=0)
    assert log.segments.base_offsets == [0, 2]
    assert log.recovery_point == 2
    first = log.segments.get(0)
    assert first is not None and first.state.time_index.entries  # final time index entry


def test_a_full_index_rolls(tmp_path: Path, clock: ManualClock) -> None:
    """segment.index.bytes=24: the time index (2 slots) is full after one entry."""
    log = _log(tmp_path, clock, segment_index_bytes=24, index_interval_bytes=0)
    now = clock.now_ms()
    for ts in (now - 3, now - 2, now - 1):
        log.append_as_leader(client_batch([ts]), leader_epoch=0)
    assert log.segments.base_offsets == [0, 2]


def test_an_offset_that_cannot_be_relative_rolls(tmp_path: Path, clock: ManualClock) -> None:
    log = _log(tmp_path, clock)
    far = 2**31 + 5
    spec = [RecordSpec(b"k", b"v", timestamp=clock.now_ms())]
    log.append_as_follower(build_batch(spec, base_offset=0, partition_leader_epoch=0))
    log.append_as_follower(build_batch(spec, base_offset=far, partition_leader_epoch=0))
    assert log.segments.base_offsets == [0, far]
    assert log.log_end_offset == far + 1


def test_a_follower_append_below_the_log_end_is_refused(tmp_path: Path, clock: ManualClock) -> None:
    log = _log(tmp_path, clock)
    spec = [RecordSpec(b"k", b"v", timestamp=clock.now_ms())]
    log.append_as_follower(build_batch(spec, base_offset=0))
    with pytest.raises(InvalidRecordError):
        log.append_as_follower(build_batch(spec, base_offset=0))


def test_rolling_an_empty_active_segment_replaces_it(tmp_path: Path, clock: ManualClock) -> None:
    log = _log(tmp_path, clock)
    log.append_as_leader(client_batch([clock.now_ms()]), leader_epoch=0)
    first = log.roll()
    second = log.roll()
    assert log.segments.base_offsets == [0, 1]
    assert first is not second
    assert sorted(p.name for p in log.directory.glob("*.deleted")) == []  # deleted at once
    assert (log.directory / "00000000000000000001.log").exists()
