"""Byte-level encoders for authoring format cases, written with ``struct`` alone.

Theory of operation
-------------------
The format cases must not take their expected values from the decoders they
test, so the authoring scripts never import ``lethe_formats``. This module
re-states Kafka's layouts (kafka-facts §3.1-3.4) as plain ``struct`` packing:
each builder takes the field values and returns the bytes, and the caller
keeps the values it passed as the expected decoding.

A record is kept as an ordered list of named *parts* (``(name, bytes)``), so a
mutation can replace one field's encoding (an over-long varint, a negative
length) and re-assemble the rest unchanged::

    v2 record           length varint | attributes int8 | timestampDelta varlong
                        | offsetDelta varint | keyLength varint | key
                        | valueLength varint | value | headersCount varint
                        | { headerKeyLength varint | key | headerValueLength varint | value }*
    v2 batch            baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32
                        | magic int8 | crc uint32 (CRC-32C of the rest) | attributes int16
                        | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64
                        | producerId int64 | producerEpoch int16 | baseSequence int32
                        | recordsCount int32 | records (one compressed block if codec != 0)
    v0/v1 log entry     offset int64 | messageSize int32 | crc uint32 (IEEE CRC-32 of the rest)
                        | magic int8 | attributes int8 | [timestamp int64, v1]
                        | keyLength int32 | key | valueLength int32 | value

Compression uses the codec libraries directly (``gzip``, ``cramjam``).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import cramjam
import crc32c as _crc32c

__all__ = [
    "XERIAL_MAGIC",
    "BatchFields",
    "Part",
    "assemble_record",
    "batch_bytes",
    "compress",
    "crc32c",
    "legacy_entry",
    "record_parts",
    "uvarint",
    "varint",
    "varlong",
]

XERIAL_MAGIC = b"\x82SNAPPY\x00"
Part = tuple[str, bytes]


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), the v2 batch and producer-snapshot checksum."""
    return int(_crc32c.crc32c(data)) & 0xFFFFFFFF


def uvarint(value: int) -> bytes:
    """Unsigned base-128, low group first (Protobuf)."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def varint(value: int) -> bytes:
    """Zig-zag int32 varint: ``(n << 1) ^ (n >> 31)``."""
    return uvarint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def varlong(value: int) -> bytes:
    """Zig-zag int64 varlong: ``(n << 1) ^ (n >> 63)``."""
    return uvarint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def _sized(data: bytes | None) -> list[bytes]:
    return [varint(-1), b""] if data is None else [varint(len(data)), data]


def record_parts(
    *,
    attributes: int = 0,
    timestamp_delta: int = 0,
    offset_delta: int = 0,
    key: bytes | None = None,
    value: bytes | None = None,
    headers: Sequence[tuple[bytes, bytes | None]] = (),
) -> list[Part]:
    """The named fields of a v2 record body, in order (no length prefix)."""
    key_len, key_bytes = _sized(key)
    value_len, value_bytes = _sized(value)
    parts: list[Part] = [
        ("attributes", struct.pack(">b", attributes)),
        ("timestampDelta", varlong(timestamp_delta)),
        ("offsetDelta", varint(offset_delta)),
        ("keyLength", key_len),
        ("key", key_bytes),
        ("valueLength", value_len),
        ("value", value_bytes),
        ("headersCount", varint(len(headers))),
    ]
    for i, (hkey, hvalue) in enumerate(headers):
        hvalue_len, hvalue_bytes = _sized(hvalue)
        parts += [
            (f"headers[{i}].keyLength", varint(len(hkey))),
            (f"headers[{i}].key", hkey),
            (f"headers[{i}].valueLength", hvalue_len),
            (f"headers[{i}].value", hvalue_bytes),
        ]
    return parts


def assemble_record(parts: Sequence[Part], *, length: int | None = None) -> bytes:
    """Length varint (the body size unless ``length`` overrides it) + body."""
    body = b"".join(data for _, data in parts)
    return varint(len(body) if length is None else length) + body


@dataclass(frozen=True)
class BatchFields:
    """Header values of a v2 batch (the ones a writer chooses)."""

    base_offset: int = 0
    partition_leader_epoch: int = 0
    attributes: int = 0
    last_offset_delta: int = 0
    base_timestamp: int = 0
    max_timestamp: int = 0
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    records_count: int = 0
    overrides: dict[str, int] = field(default_factory=dict)


_AFTER_CRC = struct.Struct(">hiqqqhii")
_PREFIX = struct.Struct(">qiib")


def batch_bytes(fields: BatchFields, records_area: bytes) -> bytes:
    """A whole v2 batch; ``records_area`` is already compressed if the codec says so.

    ``fields.overrides`` may set ``batchLength``, ``magic`` or ``crc`` to a
    value other than the correct one (for invalid cases).
    """
    tail = (
        _AFTER_CRC.pack(
            fields.attributes,
            fields.last_offset_delta,
            fields.base_timestamp,
            fields.max_timestamp,
            fields.producer_id,
            fields.producer_epoch,
            fields.base_sequence,
            fields.records_count,
        )
        + records_area
    )
    over = fields.overrides
    crc = over.get("crc", crc32c(tail))
    length = over.get("batchLength", 4 + 1 + 4 + len(tail))
    head = _PREFIX.pack(
        fields.base_offset, length, fields.partition_leader_epoch, over.get("magic", 2)
    )
    return head + struct.pack(">I", crc) + tail


def _int32_sized(data: bytes | None) -> bytes:
    return struct.pack(">i", -1) if data is None else struct.pack(">i", len(data)) + data


def legacy_entry(
    *,
    offset: int,
    magic: int,
    attributes: int = 0,
    timestamp: int | None = None,
    key: bytes | None = None,
    value: bytes | None = None,
    crc: int | None = None,
) -> bytes:
    """One v0/v1 log entry; ``crc`` overrides the correct IEEE CRC-32."""
    body = struct.pack(">bb", magic, attributes)
    if magic >= 1:
        body += struct.pack(">q", -1 if timestamp is None else timestamp)
    body += _int32_sized(key) + _int32_sized(value)
    checksum = zlib.crc32(body) & 0xFFFFFFFF if crc is None else crc
    message = struct.pack(">I", checksum) + body
    return struct.pack(">qi", offset, len(message)) + message


def _xerial(data: bytes) -> bytes:
    out = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    for start in range(0, len(data), 32 * 1024):
        block = bytes(cramjam.snappy.compress_raw(data[start : start + 32 * 1024]))
        out += struct.pack(">i", len(block)) + block
    return out


#: Kafka's LZ4 frame header, FLG 0x60 (independent blocks, no checksums) and BD 0x40
#: (64 KiB blocks), then its HC byte: 0x82 is XXH32(60 40) >> 8; for magic 0 Kafka
#: hashes the magic number too, 0x1A (both as Kafka's writer wrote them, see
#: fixtures/kafka-codecs/writers.json).
_LZ4_HEADER = b"\x04\x22\x4d\x18\x60\x40"
_LZ4_HC = {0: 0x1A, 1: 0x82, 2: 0x82}


def _lz4(data: bytes, magic: int) -> bytes:
    out = _LZ4_HEADER + bytes([_LZ4_HC[magic]])
    for start in range(0, len(data), 64 * 1024):
        chunk = data[start : start + 64 * 1024]
        block = bytes(cramjam.lz4.compress_block(chunk, store_size=False))
        if len(block) >= len(chunk):
            out += struct.pack("<I", len(chunk) | 0x80000000) + chunk
        else:
            out += struct.pack("<I", len(block)) + block
    return out + bytes(4)


#: java.util.zip.GZIPOutputStream's member header: no flags, mtime 0, XFL 0, OS 255
#: (Java 16+; the Java console producer's batches in fixtures/golden/codecs).
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def _gzip(data: bytes) -> bytes:
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15, 8)
    body = deflater.compress(data) + deflater.flush()
    return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data))


def _zstd(data: bytes) -> bytes:
    stream = cramjam.zstd.Compressor(level=3)
    out = b""
    if data:
        stream.compress(data)
        out = bytes(stream.flush())
    return out + bytes(stream.finish())


def compress(codec: str, data: bytes, *, magic: int = 2) -> bytes:
    """``data`` compressed as Kafka's own writers store it: gzip (mtime 0, OS 255),
    xerial snappy (or librdkafka's raw snappy), Kafka's LZ4 frame, a streamed zstd frame."""
    if codec == "gzip":
        return _gzip(data)
    if codec == "snappy-raw":
        return bytes(cramjam.snappy.compress_raw(data))
    if codec == "snappy-xerial":
        return _xerial(data)
    if codec == "lz4":
        return _lz4(data, magic)
    if codec == "zstd":
        return _zstd(data)
    raise ValueError(f"unknown codec {codec!r}")
