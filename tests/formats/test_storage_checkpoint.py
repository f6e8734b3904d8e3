"""CheckpointFile reading rules, entry formatters and the atomic write, as Kafka has them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lethe_formats.errors import CheckpointError
from lethe_formats.storage.checkpoint import (
    CHECKPOINT_KINDS,
    EpochEntry,
    LeaderEpochCheckpoint,
    OffsetCheckpoint,
    TopicPartitionOffset,
    format_leader_epoch_checkpoint,
    format_offset_checkpoint,
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
    write_checkpoint_atomically,
    write_offset_checkpoint,
)
from lethe_formats.storage.java_text import CheckpointReadError

F = "/data/log-start-offset-checkpoint"


def offset_error(text: str | bytes) -> CheckpointReadError:
    with pytest.raises(CheckpointReadError) as info:
        read_offset_checkpoint(text, file=F)
    return info.value


def test_empty_file_reads_as_no_entries_and_no_version() -> None:
    assert read_offset_checkpoint("", file=F) == OffsetCheckpoint(None, ())


def test_eof_after_the_version_line_reads_as_no_entries() -> None:
    assert read_offset_checkpoint("0\n", file=F) == OffsetCheckpoint(0, ())


def test_a_version_that_is_not_an_int_is_a_malformed_line() -> None:
    error = offset_error("zero\n0\n")
    assert isinstance(error, CheckpointError)
    assert error.message == f"Malformed line in checkpoint file [{F}]: zero"
    assert (error.line, error.position, error.field) == (1, 0, "version")
    assert error.kafka_exception == "IOException" and error.marks_dir_offline


def test_an_unknown_version_is_rejected_with_kafkas_words() -> None:
    error = offset_error("1\n0\n")
    assert error.message == (
        f"Unrecognised version:1, expected version: 0 in checkpoint file at: {F}"
    )
    assert error.line == 1 and error.kafka_exception == "IOException"


def test_a_count_that_is_not_an_int_is_a_malformed_line() -> None:
    error = offset_error("0\ntwo\n")
    assert error.message == f"Malformed line in checkpoint file [{F}]: two"
    assert (error.line, error.position) == (2, 2)


def test_a_negative_count_is_javas_illegal_capacity_not_an_ioexception() -> None:
    error = offset_error("0\n-1\n")
    assert error.message == "Illegal Capacity: -1"
    assert error.kafka_exception == "IllegalArgumentException"
    assert not error.marks_dir_offline
    assert error.line == 2


def test_an_entry_with_two_fields_is_a_malformed_line() -> None:
    error = offset_error("0\n1\ngolden 0\n")
    assert error.message == f"Malformed line in checkpoint file [{F}]: golden 0"
    assert (error.line, error.position, error.kafka_exception) == (3, 4, "IOException")


def test_a_blank_entry_line_is_a_malformed_line() -> None:
    error = offset_error("0\n1\ngolden 0 1\n\n")
    assert error.message.startswith("Malformed line in checkpoint file [")
    assert error.line == 4


def test_leading_whitespace_makes_an_empty_first_field() -> None:
    error = offset_error("0\n1\n golden 0 1\n")
    assert error.message.startswith("Malformed line") and error.line == 3


def test_trailing_whitespace_and_tabs_are_accepted_as_java_split_drops_them() -> None:
    checkpoint = read_offset_checkpoint("0\n2\ngolden\t0  7 \nother 3 9\t\n", file=F)
    assert checkpoint.entries == (("golden", 0, 7), ("other", 3, 9))


def test_a_non_numeric_offset_is_a_number_format_exception_that_keeps_the_dir_online() -> None:
    error = offset_error("0\n1\ngolden 0 seven\n")
    assert isinstance(error, CheckpointError)
    assert error.message == 'For input string: "seven"'
    assert error.kafka_exception == "NumberFormatException"
    assert not error.marks_dir_offline
    assert (error.line, error.position) == (3, 4)


def test_partition_is_an_int_and_offset_a_long() -> None:
    assert offset_error("0\n1\ngolden 2147483648 0\n").kafka_exception == "NumberFormatException"
    big = read_offset_checkpoint("0\n1\ngolden 2147483647 9223372036854775807\n")
    assert big.entries == (("golden", 2**31 - 1, 2**63 - 1),)
    assert offset_error("0\n1\ngolden 0 9223372036854775808\n").message == (
        'For input string: "9223372036854775808"'
    )


def test_java_parse_int_accepts_a_sign_and_unicode_digits() -> None:
    checkpoint = read_offset_checkpoint("0\n1\ngolden +3 -\u0661\u0662\n")
    assert checkpoint.entries == (("golden", 3, -12),)


def test_fewer_entries_than_counted_is_rejected() -> None:
    error = offset_error("0\n3\ngolden 0 1\n")
    assert error.message == f"Expected [3] entries in checkpoint file [{F}], but found only [1]"
    assert error.line == 2 and error.kafka_exception == "IOException"


def test_extra_lines_beyond_the_count_are_rejected_too() -> None:
    error = offset_error("0\n1\ngolden 0 1\ngolden 1 2\n")
    assert error.message == f"Expected [1] entries in checkpoint file [{F}], but found only [2]"
    assert (error.line, error.position) == (4, 15)


def test_a_malformed_entry_wins_over_a_count_mismatch() -> None:
    assert offset_error("0\n5\ngolden x\n").message.startswith("Malformed line")


def test_cr_and_crlf_line_ends_are_accepted_like_buffered_reader() -> None:
    assert read_offset_checkpoint("0\r\n1\r\ngolden 0 5").entries == (("golden", 0, 5),)
    assert read_offset_checkpoint("0\r1\rgolden 0 5\r").entries == (("golden", 0, 5),)


def test_invalid_utf8_is_an_ioexception() -> None:
    error = offset_error(b"0\n1\ngold\xffen 0 1\n")
    assert error.kafka_exception == "IOException"
    assert error.position == 8


def test_leader_epoch_entries_are_epoch_and_start_offset() -> None:
    checkpoint = read_leader_epoch_checkpoint("0\n2\n0 0\n4 17\n")
    assert checkpoint == LeaderEpochCheckpoint(0, (EpochEntry(0, 0), EpochEntry(4, 17)))
    assert checkpoint.as_dict() == {0: 0, 4: 17}
    with pytest.raises(CheckpointReadError) as info:
        read_leader_epoch_checkpoint("0\n1\n0 1 2\n", file="lec")
    assert info.value.message == "Malformed line in checkpoint file [lec]: 0 1 2"
    with pytest.raises(CheckpointReadError) as info:
        read_leader_epoch_checkpoint("0\n1\nx 1\n")
    assert info.value.kafka_exception == "NumberFormatException"


def test_reading_a_path_names_the_file_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "recovery-point-offset-checkpoint"
    path.write_text("0\n1\nbad\n")
    with pytest.raises(CheckpointReadError) as info:
        CHECKPOINT_KINDS[path.name](path)
    assert info.value.file == str(path)
    assert str(path) in info.value.message


def test_dispatch_by_file_name_covers_the_five_checkpoint_files() -> None:
    assert set(CHECKPOINT_KINDS) == {
        "replication-offset-checkpoint",
        "recovery-point-offset-checkpoint",
        "log-start-offset-checkpoint",
        "cleaner-offset-checkpoint",
        "leader-epoch-checkpoint",
    }
    assert CHECKPOINT_KINDS["leader-epoch-checkpoint"]("0\n1\n0 3\n").entries == ((0, 3),)


def test_repeated_partition_keeps_the_last_value_like_a_hashmap() -> None:
    checkpoint = read_offset_checkpoint("0\n2\nt 0 1\nt 0 5\n")
    assert checkpoint.as_dict() == {("t", 0): 5}


def test_formatters_write_version_count_and_single_spaced_entries() -> None:
    assert format_offset_checkpoint([("foo", 0, 42), ("bar", 3, 7)]) == "0\n2\nfoo 0 42\nbar 3 7\n"
    assert format_offset_checkpoint({("foo", 0): 42}) == "0\n1\nfoo 0 42\n"
    assert format_offset_checkpoint([]) == "0\n0\n"
    assert format_leader_epoch_checkpoint([(0, 19)]) == "0\n1\n0 19\n"
    assert format_leader_epoch_checkpoint({2: 16}) == "0\n1\n2 16\n"


def test_formatter_refuses_a_topic_kafka_could_not_read_back() -> None:
    with pytest.raises(ValueError):
        format_offset_checkpoint([("two words", 0, 1)])
    with pytest.raises(ValueError):
        format_offset_checkpoint([("", 0, 1)])


TOPIC_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
TOPICS = st.text(alphabet=TOPIC_CHARS, min_size=1, max_size=249)
INT32 = st.integers(0, 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)


@given(st.lists(st.tuples(TOPICS, INT32, INT64), max_size=30))
def test_offset_checkpoint_round_trips(entries: list[tuple[str, int, int]]) -> None:
    text = format_offset_checkpoint(entries)
    checkpoint = read_offset_checkpoint(text)
    assert checkpoint == OffsetCheckpoint(0, tuple(TopicPartitionOffset(*e) for e in entries))
    assert format_offset_checkpoint(checkpoint.entries) == text


@given(st.lists(st.tuples(st.integers(-(2**31), 2**31 - 1), INT64), max_size=30))
def test_leader_epoch_checkpoint_round_trips(entries: list[tuple[int, int]]) -> None:
    text = format_leader_epoch_checkpoint(entries)
    expected = tuple(EpochEntry(*e) for e in entries)
    assert read_leader_epoch_checkpoint(text) == LeaderEpochCheckpoint(0, expected)


@given(st.binary(max_size=64))
def test_arbitrary_bytes_give_a_result_or_a_checkpoint_error(data: bytes) -> None:
    try:
        read_offset_checkpoint(data)
        read_leader_epoch_checkpoint(data)
    except CheckpointError as error:
        assert error.line is not None or error.field == "encoding"


def test_atomic_write_replaces_the_file_and_leaves_no_tmp(tmp_path: Path) -> None:
    path = tmp_path / "log-start-offset-checkpoint"
    path.write_text("0\n0\n")
    write_offset_checkpoint(path, [("golden-delrec", 0, 19), ("golden-delrec", 2, 30)])
    assert path.read_bytes() == b"0\n2\ngolden-delrec 0 19\ngolden-delrec 2 30\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log-start-offset-checkpoint"]


def test_atomic_write_fsyncs_the_tmp_file_and_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    path = tmp_path / "cleaner-offset-checkpoint"
    write_checkpoint_atomically(path, "0\n0\n")
    assert synced == [str(path) + ".tmp", str(tmp_path)]


def test_a_crash_before_the_rename_leaves_the_original_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "replication-offset-checkpoint"
    original = "0\n1\ngolden 0 40\n"
    path.write_text(original)

    def crash(src: object, dst: object) -> None:
        raise SystemExit("power lost before rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(SystemExit):
        write_offset_checkpoint(path, [("golden", 0, 41)])
    assert path.read_text() == original
    assert read_offset_checkpoint(path).entries == (("golden", 0, 40),)
    tmp = tmp_path / "replication-offset-checkpoint.tmp"
    assert tmp.read_text() == "0\n1\ngolden 0 41\n"  # staged, like Kafka leaves it

    monkeypatch.undo()
    write_offset_checkpoint(path, [("golden", 0, 42)])  # the next write recovers
    assert read_offset_checkpoint(path).entries == (("golden", 0, 42),)
    assert not tmp.exists()
