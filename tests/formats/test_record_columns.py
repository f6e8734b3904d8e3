"""The C column walker (lethe_formats.records.columns) against Kafka's layouts and lethe's decoder.

Expected values come from the Construct decoder (``decode_log``, itself held
to Kafka's golden files), from the batch header bytes as kafka-facts 3.1 lays
them out, and from the ``xxhash`` package (the reference XXH64 library).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import cramjam
import pytest
import xxhash
from crc32c import crc32c
from lethe_formats.compression import decompress
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import Compression, ControlType, Header, RecordBatch, TimestampType
from lethe_formats.records import RecordSpec, build_batch, build_end_txn_marker_batch
from lethe_formats.records.columns import (
    AVAILABLE,
    BATCH_FIELDS,
    RECORD_FIELDS,
    key_hash,
    row_layout,
    walk_rows,
    xxh64,
)
from lethe_formats.records.log import decode_log

ROOT = fixtures_root()


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _section(codec: int, section: memoryview) -> bytes:
    return decompress(Compression(codec), section, magic=2)


def _rows(raw: bytes, kind: str) -> list[dict[str, int]]:
    fields = BATCH_FIELDS if kind == "batch" else RECORD_FIELDS
    offsets, size = row_layout(kind)
    return [
        {
            name: struct.unpack_from("=" + code, raw, start + offsets[name])[0]
            for name, code in fields
        }
        for start in range(0, len(raw), size)
    ]


def _walk(
    data: bytes, position: int = 0, **options: Any
) -> tuple[int, list[dict[str, int]], list[dict[str, int]]]:
    settings: dict[str, Any] = {"crc32c": crc32c, "decompress": _section, "max_records": 1 << 30}
    settings.update(options)
    next_position, batches, records = walk_rows(data, position, **settings)
    return next_position, _rows(batches, "batch"), _rows(records, "record")


def _batch(count: int = 3, base: int = 100, **options: Any) -> bytes:
    specs = [
        RecordSpec(
            key=None if i == 1 else b"key-%d" % i,
            value=None if i == 2 else b"v" * (10 + i),
            headers=(Header(b"h", b"x"),) * i,
            timestamp=1_700_000_000_000 + 7 * i,
        )
        for i in range(count)
    ]
    return build_batch(specs, base_offset=base, **options)


# --- XXH64 --------------------------------------------------------------------


@pytest.mark.parametrize("length", [0, 1, 3, 4, 7, 8, 15, 16, 31, 32, 33, 63, 64, 100, 1000])
def test_xxh64_equals_the_reference_library(length: int) -> None:
    data = bytes((i * 37 + 11) % 256 for i in range(length))
    assert xxh64(data) == xxhash.xxh64_intdigest(data)
    assert xxh64(data, 1234) == xxhash.xxh64_intdigest(data, 1234)
    assert key_hash(data) == _signed(xxhash.xxh64_intdigest(data))


def test_key_hash_of_a_null_key_is_none_and_of_an_empty_key_a_value() -> None:
    assert key_hash(None) is None
    assert key_hash(b"") == _signed(0xEF46DB3751D8E999)  # XXH64("") with seed 0


# --- the walker over real logs ----------------------------------------------------


def _fixture_logs() -> list[Path]:
    return sorted(
        path
        for base in (ROOT / "golden", ROOT / "logs")
        for path in base.rglob("*.log")
        if path.name[:1].isdigit() and path.stat().st_size
    )


def _expected(entry: RecordBatch) -> tuple[dict[str, int], list[dict[str, Any]]]:
    h = entry.header
    batch = {
        "base_offset": h.base_offset,
        "size": h.batch_length + 12,
        "partition_leader_epoch": h.partition_leader_epoch,
        "crc": h.crc,
        "attributes": h.attributes,
        "last_offset_delta": h.last_offset_delta,
        "base_timestamp": h.base_timestamp,
        "max_timestamp": h.max_timestamp,
        "producer_id": h.producer_id,
        "producer_epoch": h.producer_epoch,
        "base_sequence": h.base_sequence,
        "records_count": h.records_count,
    }
    records = [
        {
            "offset": entry.offset_of(r),
            "timestamp": entry.timestamp_of(r),
            "key_hash": 0 if r.key is None else _signed(xxhash.xxh64_intdigest(r.key)),
            "key_size": -1 if r.key is None else len(r.key),
            "value_size": -1 if r.value is None else len(r.value),
            "headers_count": len(r.headers),
            "attributes": r.attributes,
        }
        for r in entry.records
    ]
    return batch, records


def test_walked_rows_equal_the_decoded_entries_of_every_fixture_segment() -> None:
    walked_batches = 0
    for path in _fixture_logs():
        data = path.read_bytes()
        entries = decode_log(data, file=str(path))
        position, index = 0, 0
        while index < len(entries):
            after, batches, records = _walk(data, position)
            for batch in batches:
                entry = entries[index]
                assert isinstance(entry, RecordBatch), path
                expected_batch, expected_records = _expected(entry)
                assert batch["position"] == position, path
                assert {k: batch[k] for k in expected_batch} == expected_batch, path
                mine = [r for r in records if r["batch"] == batches.index(batch)]
                assert [{k: r[k] for k in expected_records[0]} for r in mine] == expected_records
                position += batch["size"]
                index += 1
                walked_batches += 1
            assert after == position, path
            if index < len(entries):  # left to the full path: legacy or control
                entry = entries[index]
                assert not isinstance(entry, RecordBatch) or entry.header.is_control, path
                header = entry.header if isinstance(entry, RecordBatch) else entry
                position += header.size_in_bytes
                index += 1
        assert position == len(data), path
    assert walked_batches > 100


# --- where it stops -------------------------------------------------------------


def test_a_control_batch_is_left_to_the_full_path() -> None:
    marker = build_end_txn_marker_batch(
        base_offset=3,
        producer_id=7,
        producer_epoch=0,
        control_type=ControlType.COMMIT,
        coordinator_epoch=0,
        timestamp=1,
    )
    data = _batch(base=0) + marker + _batch(base=4)
    after, batches, records = _walk(data)
    assert after == len(_batch(base=0)) and len(batches) == 1 and len(records) == 3
    after, batches, _ = _walk(data, after + len(marker))
    assert after == len(data) and [b["base_offset"] for b in batches] == [4]


def test_a_crc_mismatch_stops_before_the_batch() -> None:
    bad = bytearray(_batch(base=3))
    bad[-1] ^= 0x01
    data = _batch(base=0) + bytes(bad)
    after, batches, _ = _walk(data)
    assert after == len(_batch(base=0)) and len(batches) == 1


def _with_crc(batch: bytearray) -> bytes:
    struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
    return bytes(batch)


def test_an_undecodable_section_with_a_good_crc_takes_back_the_batch_rows() -> None:
    broken = bytearray(_batch(base=3))
    struct.pack_into(">i", broken, 57, 4)  # recordsCount 4 over a section of 3 records
    data = _batch(base=0) + _with_crc(broken)
    after, batches, records = _walk(data)
    assert after == len(_batch(base=0))
    assert [b["base_offset"] for b in batches] == [0]
    assert [r["offset"] for r in records] == [0, 1, 2]


def test_trailing_bytes_after_the_last_record_stop_the_walk() -> None:
    one = bytearray(_batch(base=0))
    struct.pack_into(">i", one, 57, 2)  # a record's worth of bytes remains
    after, batches, _ = _walk(_with_crc(one))
    assert (after, batches) == (0, [])


@pytest.mark.parametrize("tail", [1, 30, 60, 61, 70])
def test_a_torn_tail_is_left_to_the_full_path(tail: int) -> None:
    whole = _batch(base=0)
    data = whole + _batch(base=3)[:tail]
    after, batches, _ = _walk(data)
    assert after == len(whole) and len(batches) == 1


def test_a_legacy_message_set_is_left_to_the_full_path() -> None:
    legacy = (ROOT / "logs" / "legacy-v1").rglob("*.log")
    data = next(path for path in sorted(legacy) if path.stat().st_size).read_bytes()
    assert _walk(data)[:2] == (0, [])


def test_compressed_batches_go_through_decompress_or_stop_without_it() -> None:
    data = _batch(base=0, compression=Compression.LZ4) + _batch(
        base=3, compression=Compression.ZSTD
    )
    after, batches, records = _walk(data)
    assert after == len(data) and [b["attributes"] & 7 for b in batches] == [3, 4]
    assert [r["offset"] for r in records] == [0, 1, 2, 3, 4, 5]
    assert _walk(data, decompress=None)[:2] == (0, [])

    def refuse(codec: int, section: memoryview) -> bytes:
        raise ValueError("corrupt")

    assert _walk(data, decompress=refuse)[:2] == (0, [])
    assert _walk(data, decompress=lambda c, s: cramjam.lz4.decompress(s))[0] == len(
        _batch(base=0, compression=Compression.LZ4)
    )


def test_an_unknown_codec_stops_the_walk() -> None:
    batch = bytearray(_batch(base=0))
    struct.pack_into(">h", batch, 21, 7)
    assert _walk(_with_crc(batch))[:2] == (0, [])


def test_max_records_ends_the_call_between_batches() -> None:
    data = b"".join(_batch(base=3 * i) for i in range(4))
    after, batches, records = _walk(data, max_records=4)
    assert len(batches) == 2 and len(records) == 6 and after == 2 * len(_batch(base=0))


def test_log_append_time_gives_every_record_the_max_timestamp() -> None:
    data = _batch(base=0, timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=42)
    _, batches, records = _walk(data)
    assert batches[0]["max_timestamp"] == 42
    assert [r["timestamp"] for r in records] == [42, 42, 42]


def test_keys_sizes_and_headers_of_the_records() -> None:
    _, _, records = _walk(_batch(base=10))
    assert [r["key_size"] for r in records] == [5, -1, 5]
    assert [r["value_size"] for r in records] == [10, 11, -1]
    assert [r["headers_count"] for r in records] == [0, 1, 2]
    assert records[0]["key_hash"] == _signed(xxhash.xxh64_intdigest(b"key-0"))
    assert [r["offset"] for r in records] == [10, 11, 12]


def test_the_walker_is_built_here() -> None:
    """CI builds the C extension; the audit's speed depends on it."""
    assert AVAILABLE
