"""Startup recovery: torn tails cut at the right byte, indexes rebuilt as Kafka builds them.

The partitions are Kafka's own golden delete-records directories (p0 has
segments 16, 24, 32, each two 279-282-byte batches; its HW and LEO are 40).
Kafka's rules (LogLoader / LogSegment.recover, kafka-facts 3.5): without the
clean-shutdown marker every segment from the one holding the recovery point
is rescanned with CRC checks; the first invalid entry and everything after it
is cut; later segments are deleted; indexes are rebuilt.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lethe_reference.clock import ManualClock
from lethe_reference.storage import log_reads
from lethe_reference.storage.loader import LoadParams, load_log
from lethe_reference.storage.log import PartitionLog
from lethe_reference.storage.settings import StorageSettings
from storage_support import GOLDEN

SETTINGS = StorageSettings(segment_bytes=700, index_interval_bytes=100)
P0 = GOLDEN / "delete-records" / "golden-delrec-0"
UNCLEAN = LoadParams(recovery_point=0, log_start_offset=19, had_clean_shutdown=False)
CLEAN = LoadParams(recovery_point=40, log_start_offset=19, had_clean_shutdown=True)


@pytest.fixture
def p0(tmp_path: Path) -> Path:
    target = tmp_path / P0.name
    shutil.copytree(P0, target)
    return target


def _load(directory: Path, params: LoadParams, clock: ManualClock) -> PartitionLog:
    return load_log(directory, SETTINGS, params, clock=clock, durable=False)


def _name(base: int, suffix: str) -> str:
    return f"{base:020d}{suffix}"


def _flip_byte(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_torn_tail_is_cut_at_the_last_whole_batch(p0: Path, clock: ManualClock) -> None:
    active = p0 / _name(32, ".log")
    whole = active.read_bytes()
    active.write_bytes(whole + whole[:100])  # a batch torn after 100 bytes
    log = _load(p0, UNCLEAN, clock)
    assert active.read_bytes() == whole
    assert log.log_end_offset == 40
    assert log.segments.base_offsets == [16, 24, 32]


def test_recover_returns_the_number_of_bytes_cut(p0: Path, clock: ManualClock) -> None:
    log = _load(p0, CLEAN, clock)
    segment = log.active_segment
    segment.log.append(b"\x00" * 37)
    segment.state.size += 37
    assert segment.recover() == 37
    assert segment.size == 558


def _first_batch_size(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[8:12], "big") + 12


def test_a_bad_crc_cuts_there_and_deletes_the_later_segments(p0: Path, clock: ManualClock) -> None:
    """Segment 24 holds batches 24..27 and 28..31; damage the second one's records."""
    first = _first_batch_size(p0 / _name(24, ".log"))
    _flip_byte(p0 / _name(24, ".log"), first + 100)
    log = _load(p0, UNCLEAN, clock)
    assert log.segments.base_offsets == [16, 24]
    assert (p0 / _name(24, ".log")).stat().st_size == first
    assert log.log_end_offset == 28
    assert not (p0 / _name(32, ".log")).exists()
    log.update_high_watermark(40)  # clamped to the LEO
    assert log.high_watermark == 28
    assert log_reads.read(log, 27, 1 << 20).records[:8] == (24).to_bytes(8, "big")


def test_segments_below_the_recovery_point_are_not_rescanned(p0: Path, clock: ManualClock) -> None:
    _flip_byte(p0 / _name(16, ".log"), 100)
    params = LoadParams(recovery_point=32, log_start_offset=19, had_clean_shutdown=False)
    log = _load(p0, params, clock)
    assert log.segments.base_offsets == [16, 24, 32]
    assert log.segments.get(16) is not None
    assert (p0 / _name(16, ".log")).stat().st_size == 558


def test_the_clean_shutdown_marker_skips_recovery(p0: Path, clock: ManualClock) -> None:
    _flip_byte(p0 / _name(24, ".log"), 100)
    log = _load(p0, CLEAN, clock)
    assert log.segments.base_offsets == [16, 24, 32]
    assert log.log_end_offset == 40
    assert log.recovery_point == 40


def test_a_torn_active_tail_is_cut_even_after_a_clean_shutdown(
    p0: Path, clock: ManualClock
) -> None:
    active = p0 / _name(32, ".log")
    whole = active.read_bytes()
    active.write_bytes(whole + b"\x00\x00\x00")
    log = _load(p0, CLEAN, clock)
    assert active.read_bytes() == whole
    assert log.log_end_offset == 40


@pytest.mark.parametrize("damage", ["missing", "partial entry"])
def test_a_missing_or_broken_offset_index_is_rebuilt_as_kafka_wrote_it(
    p0: Path, clock: ManualClock, damage: str
) -> None:
    index, time_index = p0 / _name(16, ".index"), p0 / _name(16, ".timeindex")
    if damage == "missing":
        index.unlink()
        time_index.unlink()
    else:
        index.write_bytes(index.read_bytes() + b"\x01\x02\x03")
    log = _load(p0, CLEAN, clock)
    log.close()
    assert index.read_bytes() == (P0 / index.name).read_bytes()
    assert time_index.read_bytes() == (P0 / time_index.name).read_bytes()


def test_an_orphan_index_is_deleted(p0: Path, clock: ManualClock) -> None:
    orphan = p0 / _name(8, ".index")
    orphan.write_bytes(b"")
    _load(p0, CLEAN, clock)
    assert not orphan.exists()


def test_stray_deleted_and_cleaned_files_are_removed(p0: Path, clock: ManualClock) -> None:
    stray = [p0 / _name(0, ".log.deleted"), p0 / _name(8, ".log.cleaned")]
    for path in stray:
        path.write_bytes(b"x")
    log = _load(p0, CLEAN, clock)
    assert not any(path.exists() for path in stray)
    assert log.segments.base_offsets == [16, 24, 32]


def test_a_finished_swap_replaces_the_segments_it_covers(p0: Path, clock: ManualClock) -> None:
    """Segment 24's batches moved into 16.swap: 16 and 24 are replaced, 32 stays."""
    merged = (p0 / _name(16, ".log")).read_bytes() + (p0 / _name(24, ".log")).read_bytes()
    (p0 / _name(16, ".log.swap")).write_bytes(merged)
    log = _load(p0, UNCLEAN, clock)
    assert log.segments.base_offsets == [16, 32]
    assert (p0 / _name(16, ".log")).read_bytes() == merged
    assert not list(p0.glob("*.swap"))
    assert log.log_end_offset == 40


def test_a_log_start_offset_beyond_the_log_end_drops_every_segment(
    p0: Path, clock: ManualClock
) -> None:
    params = LoadParams(recovery_point=0, log_start_offset=50, had_clean_shutdown=False)
    log = _load(p0, params, clock)
    assert log.segments.base_offsets == [50]
    assert (log.log_start_offset, log.log_end_offset) == (50, 50)
    assert log.epoch_cache.entries == ()


def test_without_checkpoints_the_log_starts_at_its_first_segment(
    p0: Path, clock: ManualClock
) -> None:
    log = _load(p0, LoadParams(), clock)
    assert (log.log_start_offset, log.recovery_point, log.log_end_offset) == (16, 0, 40)
    # recovery assigns only epochs above the cached ones: the checkpoint's 0 19 stays
    assert log.epoch_cache.entries == ((0, 19),)


@pytest.mark.parametrize(
    "garbage",
    [b"\x00" * 3, b"\xff" * 64, bytes(range(256)) * 3, b"\x00" * 8 + b"\x7f\xff\xff\xff" + b"\x02"],
    ids=["3-zero-bytes", "ff-run", "byte-ramp", "huge-length"],
)
def test_a_garbage_segment_is_emptied_never_served(
    tmp_path: Path, clock: ManualClock, garbage: bytes
) -> None:
    directory = tmp_path / "t-0"
    directory.mkdir()
    (directory / _name(0, ".log")).write_bytes(garbage)
    (directory / _name(0, ".index")).write_bytes(garbage)
    (directory / _name(0, ".timeindex")).write_bytes(garbage)
    log = _load(directory, LoadParams(), clock)
    assert (log.log_start_offset, log.log_end_offset) == (0, 0)
    assert (directory / _name(0, ".log")).stat().st_size == 0
    assert log_reads.read(log, 0, 100).records == b""


SEGMENT_24 = (P0 / _name(24, ".log")).read_bytes()
BOUNDARIES = {0, _first_batch_size(P0 / _name(24, ".log")), len(SEGMENT_24)}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(position=st.integers(0, len(SEGMENT_24) - 1), mask=st.integers(1, 255))
def test_any_flipped_byte_is_cut_at_a_batch_boundary(
    tmp_path: Path, clock: ManualClock, position: int, mask: int
) -> None:
    """Recovery never raises; what survives is a whole-batch prefix of the original."""
    directory = tmp_path / f"t-{position}-{mask}"
    directory.mkdir()
    damaged = bytearray(SEGMENT_24)
    damaged[position] ^= mask
    (directory / _name(24, ".log")).write_bytes(bytes(damaged))
    log = _load(directory, LoadParams(log_start_offset=24), clock)
    kept = (directory / _name(24, ".log")).read_bytes()
    assert len(kept) in BOUNDARIES
    assert kept == bytes(damaged)[: len(kept)]  # truncated, never rewritten
    assert log.log_end_offset >= 24


def test_truncating_a_segment_removes_whole_batches_from_the_offset_on(
    p0: Path, clock: ManualClock
) -> None:
    """LogSegment.truncateTo: the batch holding the offset goes with everything after it."""
    log = _load(p0, CLEAN, clock)
    segment = log.segments.get(24)
    assert segment is not None
    first = _first_batch_size(p0 / _name(24, ".log"))
    assert segment.truncate_to(28, now_ms=clock.now_ms()) == len(SEGMENT_24) - first
    assert segment.size == first
    assert segment.state.max_timestamp_and_offset_so_far.offset == 27
    assert segment.truncate_to(26, now_ms=clock.now_ms()) == first
    assert (segment.size, segment.state.offset_index.entries) == (0, ())
    assert segment.truncate_to(26, now_ms=clock.now_ms()) == 0
