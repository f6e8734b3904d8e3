"""The cleaner reproduces Kafka 4.0's compaction of the golden case byte for byte.

Inputs are the golden segments Kafka wrote before a cleaning; expected outputs
are the segment files Kafka wrote after it (fixtures/golden/compaction).
"""

from __future__ import annotations

import pytest
from cleaner_support import (
    DELETE_RETENTION_MS,
    INDEX_INTERVAL_BYTES,
    PASS1_NOW_MS,
    PASS1_PRODUCERS,
    PASS2_NOW_MS,
    PASS2_PRODUCERS,
    SEGMENT_BYTES,
    SEGMENT_INDEX_BYTES,
    partition_dir,
    pass2_input_segments,
    source_segments,
)
from lethe_reference.cleaner.algorithm import CleanParams, CleanResult, clean_log
from lethe_reference.cleaner.filter import LastRecord


def _params(
    first_dirty: int, uncleanable: int, now: int, producers: dict[int, LastRecord]
) -> CleanParams:
    return CleanParams(
        first_dirty_offset=first_dirty,
        first_uncleanable_offset=uncleanable,
        now_ms=now,
        delete_retention_ms=DELETE_RETENTION_MS,
        segment_bytes=SEGMENT_BYTES,
        max_index_bytes=SEGMENT_INDEX_BYTES,
        index_interval_bytes=INDEX_INTERVAL_BYTES,
        max_message_bytes=1048588,
        active_producers=producers,
    )


def _first_pass() -> CleanResult:
    # pass0's active segment is 15, so Kafka cleaned [0, 15) (log-cleaner.log).
    return clean_log(source_segments("pass0"), _params(0, 15, PASS1_NOW_MS, PASS1_PRODUCERS))


def _second_pass() -> CleanResult:
    # pass1's cleaner checkpoint is 15; segment 18 was active (log-cleaner.log: [15, 18)).
    return clean_log(pass2_input_segments(), _params(15, 18, PASS2_NOW_MS, PASS2_PRODUCERS))


def test_first_cleaning_merges_segments_0_to_13_into_one_segment_at_base_0() -> None:
    result = _first_pass()
    assert [s.base_offset for s in result.segments] == [0]
    assert result.segments[0].replaces == (0, 4, 7, 10, 13)


def test_first_cleaning_end_offset_is_kafkas_cleaner_checkpoint() -> None:
    # pass1/cleaner-offset-checkpoint: "golden-compact 0 15"
    assert _first_pass().end_offset == 15


@pytest.mark.parametrize("suffix", [".log", ".index", ".timeindex"])
def test_first_cleaning_writes_kafkas_bytes(suffix: str) -> None:
    cleaned = _first_pass().segments[0]
    produced = {
        ".log": cleaned.log,
        ".index": cleaned.offset_index,
        ".timeindex": cleaned.time_index,
    }
    expected = (partition_dir("pass1") / f"00000000000000000000{suffix}").read_bytes()
    assert produced[suffix] == expected


def test_first_cleaning_keeps_messages_kafka_kept() -> None:
    # log-cleaner.log: "Start size: ... (15 messages)", "End size: ... (8 messages)"
    result = _first_pass()
    assert (result.messages_read, result.messages_written) == (15, 8)


def test_second_cleaning_groups_head_and_dirty_segments() -> None:
    result = _second_pass()
    assert [s.replaces for s in result.segments] == [(0, 15, 16)]
    # pass2/cleaner-offset-checkpoint: "golden-compact 0 18"
    assert result.end_offset == 18


@pytest.mark.parametrize("suffix", [".log", ".index", ".timeindex"])
def test_second_cleaning_past_the_horizon_writes_kafkas_bytes(suffix: str) -> None:
    cleaned = _second_pass().segments[0]
    produced = {
        ".log": cleaned.log,
        ".index": cleaned.offset_index,
        ".timeindex": cleaned.time_index,
    }
    expected = (partition_dir("pass2") / f"00000000000000000000{suffix}").read_bytes()
    assert produced[suffix] == expected


def test_second_cleaning_keeps_messages_kafka_kept() -> None:
    # log-cleaner.log, second round: 11 messages in, 6 out
    result = _second_pass()
    assert (result.messages_read, result.messages_written) == (11, 6)


def test_cleaning_one_ms_before_the_horizon_keeps_the_tombstones() -> None:
    # Tombstones at 6 (user-02), 7 (user-03), 12 (user-05), 14 (user-06) are the latest
    # of their keys; before the horizon they stay: 11 records read, only 9 (overwritten
    # by 16) dropped.
    before = clean_log(pass2_input_segments(), _params(15, 18, 1795289305712 - 1, PASS2_PRODUCERS))
    assert before.messages_written == 10
