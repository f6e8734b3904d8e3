"""A minimal, independent v2 batch reader for authoring cases from Kafka's files.

Theory of operation
-------------------
Valid cases taken from the golden segments need their expected decoding.
Running lethe's decoders would make the suite check lethe against itself, so
the authoring script reads the bytes with this second, deliberately plain
reader (``struct``, ``gzip`` and ``cramjam`` only; layout in
:mod:`.authoring_wire`) and then *cross-checks every value it can* against
what Kafka itself printed for the same bytes (``kafka-dump-log`` lines in
``dump.txt``) and what the clients read back (``case.json``); see
:mod:`.authoring_golden`. A disagreement stops authoring.

Values come out already in the cases' tagged JSON (int64 as strings, bytes
tagged). The reader is strict and simple: any inconsistency is an
``AssertionError`` (authoring input is trusted Kafka output, so a failure
means the script is wrong, not the data).
"""

from __future__ import annotations

import gzip
import struct
from typing import Any

import cramjam

from lethe_conformance.formats.authoring_wire import XERIAL_MAGIC, crc32c
from lethe_conformance.formats.tagged import bytes_value, int64

__all__ = ["CODEC_NAMES", "decompress", "read_batch", "read_record"]

CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
_HEADER = struct.Struct(">qiibIhiqqqhii")


def _uvarint(data: bytes, pos: int, max_bytes: int) -> tuple[int, int]:
    result = 0
    for i in range(max_bytes):
        byte = data[pos + i]
        result |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return result, pos + i + 1
    raise AssertionError(f"varint at {pos} longer than {max_bytes} bytes")


def _varint(data: bytes, pos: int, max_bytes: int = 5) -> tuple[int, int]:
    raw, pos = _uvarint(data, pos, max_bytes)
    return (raw >> 1) ^ -(raw & 1), pos


def _sized(data: bytes, pos: int) -> tuple[bytes | None, int]:
    size, pos = _varint(data, pos)
    if size < 0:
        return None, pos
    assert pos + size <= len(data), "length past the end"
    return data[pos : pos + size], pos + size


def read_record(data: bytes, pos: int) -> tuple[dict[str, Any], int]:
    """One v2 record at ``pos``: (tagged value, end position)."""
    length, pos = _varint(data, pos)
    end = pos + length
    body = data[:end]
    (attributes,) = struct.unpack_from(">b", body, pos)
    timestamp_delta, at = _varint(body, pos + 1, 10)
    offset_delta, at = _varint(body, at)
    key, at = _sized(body, at)
    value, at = _sized(body, at)
    count, at = _varint(body, at)
    headers = []
    for _ in range(count):
        hkey, at = _sized(body, at)
        assert hkey is not None, "null header key"
        hvalue, at = _sized(body, at)
        headers.append({"key": bytes_value(hkey), "value": bytes_value(hvalue)})
    assert at == end, f"record ends at {at}, declared end {end}"
    record = {
        "attributes": attributes,
        "timestampDelta": int64(timestamp_delta),
        "offsetDelta": offset_delta,
        "key": bytes_value(key),
        "value": bytes_value(value),
        "headers": headers,
    }
    return record, end


def _xerial(data: bytes) -> bytes:
    pos = len(XERIAL_MAGIC) + 8
    out = b""
    while pos < len(data):
        (size,) = struct.unpack_from(">i", data, pos)
        out += bytes(cramjam.snappy.decompress_raw(data[pos + 4 : pos + 4 + size]))
        pos += 4 + size
    return out


def decompress(codec: int, data: bytes) -> bytes:
    """The records area of a compressed batch, decompressed."""
    if codec == 0:
        return data
    if codec == 1:
        return gzip.decompress(data)
    if codec == 2:
        if data.startswith(XERIAL_MAGIC):
            return _xerial(data)
        return bytes(cramjam.snappy.decompress_raw(data))
    if codec == 3:
        return bytes(cramjam.lz4.decompress(data))
    if codec == 4:
        return bytes(cramjam.zstd.decompress(data))
    raise AssertionError(f"codec {codec}")


def read_batch(data: bytes, pos: int = 0) -> tuple[dict[str, Any], int]:
    """The v2 batch at ``pos``: (tagged value, end position); checks the CRC."""
    fields = _HEADER.unpack_from(data, pos)
    (base_offset, length, epoch, magic, crc, attributes, last_delta) = fields[:7]
    (base_ts, max_ts, producer_id, producer_epoch, base_seq, count) = fields[7:]
    assert magic == 2, f"magic {magic} at {pos}"
    end = pos + 12 + length
    assert end <= len(data), "batch past the end"
    assert crc32c(data[pos + 21 : end]) == crc, f"crc of the batch at {pos}"
    area = decompress(attributes & 0x07, data[pos + 61 : end])
    records = []
    at = 0
    for _ in range(count):
        record, at = read_record(area, at)
        records.append(record)
    assert at == len(area), "bytes after the last record"
    batch = {
        "baseOffset": int64(base_offset),
        "batchLength": length,
        "partitionLeaderEpoch": epoch,
        "magic": magic,
        "crc": crc,
        "attributes": attributes,
        "lastOffsetDelta": last_delta,
        "baseTimestamp": int64(base_ts),
        "maxTimestamp": int64(max_ts),
        "producerId": int64(producer_id),
        "producerEpoch": producer_epoch,
        "baseSequence": base_seq,
        "recordsCount": count,
        "records": records,
    }
    return batch, end
