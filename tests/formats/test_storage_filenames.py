"""Segment file names and partition directory names, as LogFileUtils/LocalLog make them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lethe_formats.errors import FormatError
from lethe_formats.fixtures import fixtures_root
from lethe_formats.storage.filenames import (
    FileKind,
    FileNameError,
    PartitionDirKind,
    PartitionDirName,
    SegmentFileName,
    parse_partition_dir_name,
    parse_segment_file_name,
    partition_dir_name,
    segment_file_name,
)


def test_names_are_the_base_offset_padded_to_twenty_digits() -> None:
    assert segment_file_name(0, ".log") == "00000000000000000000.log"
    assert segment_file_name(42, FileKind.TIME_INDEX) == "00000000000000000042.timeindex"
    assert segment_file_name(2**63 - 1, "txnindex") == "09223372036854775807.txnindex"
    assert segment_file_name(16, ".index", ".deleted") == "00000000000000000016.index.deleted"


def test_every_golden_segment_file_parses_and_renames_to_itself() -> None:
    names = {
        p.name
        for p in (fixtures_root() / "golden").rglob("0*")
        if p.suffix in (".log", ".index", ".timeindex", ".txnindex", ".snapshot")
    }
    assert len(names) > 30
    for name in names:
        assert parse_segment_file_name(name).name == name


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("00000000000000000024.snapshot", SegmentFileName(24, FileKind.SNAPSHOT)),
        ("00000000000000000000.log.cleaned", SegmentFileName(0, FileKind.LOG, ".cleaned")),
        ("00000000000000000007.timeindex.swap", SegmentFileName(7, FileKind.TIME_INDEX, ".swap")),
        (
            "00000000000000000009.txnindex.deleted",
            SegmentFileName(9, FileKind.TXN_INDEX, ".deleted"),
        ),
    ],
)
def test_parse_gives_offset_kind_and_extra_suffix(name: str, expected: SegmentFileName) -> None:
    assert parse_segment_file_name(name) == expected


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("42.log", "base offset"),
        ("000000000000000000042.log", "base offset"),
        ("99999999999999999999.log", "base offset"),
        ("00000000000000000000.checkpoint", "suffix"),
        ("00000000000000000000.log.tmp", "suffix"),
        ("leader-epoch-checkpoint", "file name"),
        ("00000000000000000000", "file name"),
        ("0000000000000000000a.log", "file name"),
    ],
)
def test_non_conforming_names_are_a_clear_error(name: str, field: str) -> None:
    with pytest.raises(FileNameError) as info:
        parse_segment_file_name(name)
    assert isinstance(info.value, FormatError)
    assert (info.value.file, info.value.field) == (name, field)


def test_building_a_name_rejects_what_kafka_cannot_have() -> None:
    with pytest.raises(ValueError):
        segment_file_name(-1, ".log")
    with pytest.raises(ValueError):
        segment_file_name(0, ".log", ".tmp")
    with pytest.raises(ValueError):
        segment_file_name(0, ".checkpoint")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("golden-delrec-0", PartitionDirName("golden-delrec", 0)),
        ("__consumer_offsets-41", PartitionDirName("__consumer_offsets", 41)),
        (
            "golden-delrec-2.6a0b9f1c2d3e4f5a6b7c8d9e0f1a2b3c-delete",
            PartitionDirName(
                "golden-delrec", 2, PartitionDirKind.DELETE, "6a0b9f1c2d3e4f5a6b7c8d9e0f1a2b3c"
            ),
        ),
        ("t-1.abc-future", PartitionDirName("t", 1, PartitionDirKind.FUTURE, "abc")),
        ("t.x-7.abc-stray", PartitionDirName("t.x", 7, PartitionDirKind.STRAY, "abc")),
    ],
)
def test_partition_directories_parse_like_parse_topic_partition_name(
    name: str, expected: PartitionDirName
) -> None:
    assert parse_partition_dir_name(name) == expected
    assert expected.name == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "nodash",
        "-0",
        "topic-",
        "topic-x",
        "topic-1-delete",
        "topic-1.-delete",
        "a b-1.c-delete",
    ],
)
def test_bad_partition_directories_are_rejected_with_kafkas_explanation(name: str) -> None:
    with pytest.raises(FileNameError) as info:
        parse_partition_dir_name(name)
    assert "is not in the form of topic-partition or topic-partition.uniqueId-delete" in (
        info.value.message
    )


def test_delete_directory_name_is_capped_at_255_characters() -> None:
    name = partition_dir_name("t" * 300, 12, PartitionDirKind.DELETE)
    assert len(name) == 255 and name.endswith("-delete")
    parsed = parse_partition_dir_name(name)
    assert parsed.partition == 12 and parsed.unique_id is not None
    assert len(parsed.unique_id) == 32 and int(parsed.unique_id, 16) >= 0


@given(
    st.integers(0, 2**63 - 1),
    st.sampled_from(list(FileKind)),
    st.sampled_from(["", ".deleted", ".cleaned", ".swap"]),
)
def test_segment_names_round_trip(offset: int, kind: FileKind, extra: str) -> None:
    assert parse_segment_file_name(segment_file_name(offset, kind, extra)) == SegmentFileName(
        offset, kind, extra
    )
