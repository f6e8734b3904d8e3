"""FileRegion: a segment slice read on demand (``FileRecords.slice``), readable after the
segment's file is deleted and closed, refused once the file was truncated under it
(``FileRecords.writeTo``: "has been truncated during write")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lethe_reference.storage.file_records import REGION_MIN_BYTES, SegmentFile
from lethe_reference.storage.file_region import FileRegion, TruncatedRegionError

DATA = bytes(range(256)) * 512  # 128 KiB


def _segment(tmp_path: Path) -> SegmentFile:
    file = SegmentFile(tmp_path / "00000000000000000000.log")
    file.append(DATA)
    return file


def test_a_large_slice_is_a_region_and_a_small_one_bytes(tmp_path: Path) -> None:
    file = _segment(tmp_path)
    region = file.region(100, 40_000)
    assert isinstance(region, FileRegion)
    assert (region.position, len(region)) == (100, 40_000)
    assert bytes(region) == DATA[100:40_100] == file.read(100, 40_000)
    small = file.region(100, REGION_MIN_BYTES - 1)
    assert small == DATA[100 : 100 + REGION_MIN_BYTES - 1]
    past_end = file.region(len(DATA) - 50_000, 80_000)  # cut at the end, as read() is
    assert bytes(past_end) == DATA[-50_000:]
    file.close()


def test_a_region_outlives_its_segment_file_deleted_and_closed(tmp_path: Path) -> None:
    file = _segment(tmp_path)
    region = file.region(0, len(DATA))
    assert isinstance(region, FileRegion)
    file.close()
    os.unlink(file.path)
    assert not file.path.exists()
    region.check()
    assert bytes(region) == DATA


def test_a_truncated_region_refuses_to_be_read_or_sent(tmp_path: Path) -> None:
    file = _segment(tmp_path)
    region = file.region(1000, 100_000)
    assert isinstance(region, FileRegion)
    file.truncate_to(50_000)
    with pytest.raises(TruncatedRegionError, match="truncated during write: old size 100000"):
        region.check()
    with pytest.raises(TruncatedRegionError, match="new size 49000"):
        bytes(region)
    file.close()


def test_close_releases_the_descriptor_once(tmp_path: Path) -> None:
    file = _segment(tmp_path)
    region = file.region(0, 64 * 1024)
    assert isinstance(region, FileRegion)
    fd = region.fileno()
    region.close()
    region.close()
    with pytest.raises(OSError):
        os.fstat(fd)
    with pytest.raises(ValueError, match="closed"):
        bytes(region)
    file.close()
