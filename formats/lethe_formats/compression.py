"""Kafka's compression codecs over cramjam: gzip, snappy, lz4 (frame), zstd.

Theory of operation
-------------------
A compressed batch (v2) or wrapper message (v0/v1) stores its records as one
compressed block; :func:`decompress` and :func:`compress` convert that block.
Codec ids are those of attribute bits 0-2: 0 none, 1 gzip, 2 snappy, 3 lz4,
4 zstd. Ids 5-7 are undefined (UnsupportedCompressionError), and zstd needs
magic 2 (KIP-110): Kafka refuses it in v0/v1 messages.

Snappy comes in two framings, and readers must take both::

    raw (librdkafka):  one snappy block, preceded by its uncompressed length
    xerial (Java):     82 'S' 'N' 'A' 'P' 'P' 'Y' 00 | version int32 (1)
                       | min compatible version int32 (1)
                       | { block length int32 | raw snappy block }*

:func:`decompress` detects the xerial magic; :func:`compress` writes raw by
default (``snappy_framing="xerial"`` writes 32 KiB blocks as snappy-java does).

LZ4 is the LZ4 *frame* format. Historical quirk: Kafka before 0.10 computed
the frame header checksum (HC byte) over the magic number as well as the
descriptor, which is wrong per the LZ4 frame spec. Kafka still writes that
broken checksum for magic 0 and ignores the HC byte when reading magic 0
(``KafkaLZ4BlockOutputStream``/``KafkaLZ4BlockInputStream``). We do the same:
for magic 0, :func:`decompress` replaces the HC byte by the correct one before
cramjam sees it (so both broken and correct headers are accepted) and
:func:`compress` writes the broken one. Magic 1 and 2 use the correct HC.

Determinism: fixtures are regenerated and compared byte for byte, so the
output of :func:`compress` must not depend on time or host. cramjam's gzip
header has mtime 0, XFL 0 and OS 255 (unknown); its lz4 frame, raw snappy and
zstd outputs depend only on the input and the fixed default levels we pass.

:class:`Compressed` is the Construct form used by the record schemas: the rest
of a stream is one compressed block holding a subcon.

Every failure of a codec library becomes a CorruptRecordError whose position
is relative to ``data`` (callers re-anchor it with ``FormatError.at``).
"""

from __future__ import annotations

import io
import struct
from typing import IO, Any

import cramjam
from construct import Construct, SizeofError
from construct.core import evaluate

from lethe_formats.errors import (
    CorruptRecordError,
    FormatError,
    InvalidRecordError,
    UnsupportedCompressionError,
)
from lethe_formats.model import Compression
from lethe_formats.primitives import AnySubconstruct, field_name, relocate, remaining

__all__ = ["XERIAL_MAGIC", "Compressed", "compress", "decompress", "resolve_codec", "xxh32"]

Buffer = bytes | bytearray | memoryview

#: Header of snappy-java's stream format (SnappyCodec.MAGIC_HEADER + padding).
XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_VERSION = 1
_XERIAL_MIN_COMPATIBLE = 1
_XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", _XERIAL_VERSION, _XERIAL_MIN_COMPATIBLE)
_XERIAL_BLOCK = 32 * 1024
_LZ4_MAGIC = b"\x04\x22\x4d\x18"
_GZIP_LEVEL = 6
_LZ4_LEVEL = 4
_ZSTD_LEVEL = 3
_FIELD = "records"


def resolve_codec(codec: Compression | int, magic: int) -> Compression:
    """The codec for id ``codec`` in a ``magic`` entry, or UnsupportedCompressionError."""
    try:
        resolved = Compression(codec)
    except ValueError:
        raise UnsupportedCompressionError(
            f"Unknown compression type id: {int(codec)}", position=0, field="attributes"
        ) from None
    if resolved is Compression.ZSTD and magic < 2:
        raise UnsupportedCompressionError(
            f"zstd is not allowed for magic {magic} (needs magic 2)",
            position=0,
            field="attributes",
        )
    return resolved


def decompress(
    codec: Compression | int, data: Buffer, *, magic: int = 2, max_size: int | None = None
) -> bytes:
    """Uncompressed bytes of a compressed record block.

    ``max_size`` bounds the result (checked ahead of time where the format
    states the size: raw snappy; after the codec otherwise).
    """
    resolved = resolve_codec(codec, magic)
    raw = bytes(data)
    if resolved is Compression.NONE:
        out = raw
    elif resolved is Compression.SNAPPY:
        out = _snappy_decompress(raw, max_size)
    else:
        if resolved is Compression.LZ4 and magic == 0:
            raw = _fix_lz4_header_checksum(raw)
        module = {
            Compression.GZIP: cramjam.gzip,
            Compression.LZ4: cramjam.lz4,
            Compression.ZSTD: cramjam.zstd,
        }[resolved]
        out = _run(module.decompress, raw, resolved, 0)
    if max_size is not None and len(out) > max_size:
        raise CorruptRecordError(
            f"{resolved.dump_name} data expands beyond {max_size} bytes", position=0, field=_FIELD
        )
    return out


def compress(
    codec: Compression | int, data: Buffer, *, magic: int = 2, snappy_framing: str = "raw"
) -> bytes:
    """Deterministic compressed block of ``data`` as a Kafka producer would write it."""
    resolved = resolve_codec(codec, magic)
    raw = bytes(data)
    if resolved is Compression.NONE:
        return raw
    if resolved is Compression.GZIP:
        return bytes(cramjam.gzip.compress(raw, level=_GZIP_LEVEL))
    if resolved is Compression.SNAPPY:
        return _snappy_compress(raw, snappy_framing)
    if resolved is Compression.LZ4:
        frame = _lz4_kafka_frame(raw)
        return _break_lz4_header_checksum(frame) if magic == 0 else frame
    return bytes(cramjam.zstd.compress(raw, level=_ZSTD_LEVEL))


def _run(function: object, data: bytes, codec: Compression, position: int) -> bytes:
    try:
        return bytes(function(data))  # type: ignore[operator]
    except Exception as error:
        raise CorruptRecordError(
            f"corrupt {codec.dump_name} data: {error}", position=position, field=_FIELD
        ) from None


# --- snappy ---------------------------------------------------------------------------


def _snappy_compress(data: bytes, framing: str) -> bytes:
    if framing == "raw":
        return bytes(cramjam.snappy.compress_raw(data))
    if framing != "xerial":
        raise ValueError(f"snappy_framing must be 'raw' or 'xerial', not {framing!r}")
    out = bytearray(_XERIAL_HEADER)
    for start in range(0, len(data), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(data[start : start + _XERIAL_BLOCK]))
        out += struct.pack(">i", len(block)) + block
    return bytes(out)


def _snappy_decompress(data: bytes, max_size: int | None) -> bytes:
    if data.startswith(XERIAL_MAGIC):
        return _xerial_decompress(data, max_size)
    return _snappy_block(data, 0, max_size)


def _snappy_block(block: bytes, position: int, max_size: int | None) -> bytes:
    if max_size is not None:
        try:
            size = int(cramjam.snappy.decompress_raw_len(block))
        except Exception:
            size = 0
        if size > max_size:
            raise CorruptRecordError(
                f"snappy block claims {size} bytes, more than {max_size}",
                position=position,
                field=_FIELD,
            )
    return _run(cramjam.snappy.decompress_raw, block, Compression.SNAPPY, position)


def _xerial_decompress(data: bytes, max_size: int | None) -> bytes:
    if len(data) < len(_XERIAL_HEADER):
        raise CorruptRecordError(
            "xerial snappy header is truncated", position=len(data), field=_FIELD
        )
    out = bytearray()
    pos = len(_XERIAL_HEADER)
    while pos < len(data):
        if pos + 4 > len(data):
            raise CorruptRecordError(
                "xerial snappy block length is truncated", position=pos, field=_FIELD
            )
        (length,) = struct.unpack_from(">i", data, pos)
        if length < 0 or pos + 4 + length > len(data):
            raise CorruptRecordError(
                f"xerial snappy block length {length} exceeds the data",
                position=pos,
                field=_FIELD,
            )
        left = None if max_size is None else max_size - len(out)
        out += _snappy_block(data[pos + 4 : pos + 4 + length], pos + 4, left)
        pos += 4 + length
    return bytes(out)


# --- lz4 frame header checksum ---------------------------------------------------------

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_MASK = 0xFFFFFFFF


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 (the LZ4 frame checksum); only ever run on a few header bytes."""
    length = len(data)
    pos = 0
    if length >= 16:
        lanes = [
            (seed + _P1 + _P2) & _MASK,
            (seed + _P2) & _MASK,
            seed & _MASK,
            (seed - _P1) & _MASK,
        ]
        while pos + 16 <= length:
            for i in range(4):
                (word,) = struct.unpack_from("<I", data, pos + 4 * i)
                lanes[i] = (_rotl((lanes[i] + word * _P2) & _MASK, 13) * _P1) & _MASK
            pos += 16
        acc = _rotl(lanes[0], 1) + _rotl(lanes[1], 7) + _rotl(lanes[2], 12) + _rotl(lanes[3], 18)
    else:
        acc = seed + _P5
    acc = (acc + length) & _MASK
    while pos + 4 <= length:
        (word,) = struct.unpack_from("<I", data, pos)
        acc = (_rotl((acc + word * _P3) & _MASK, 17) * _P4) & _MASK
        pos += 4
    while pos < length:
        acc = (_rotl((acc + data[pos] * _P5) & _MASK, 11) * _P1) & _MASK
        pos += 1
    acc ^= acc >> 15
    acc = (acc * _P2) & _MASK
    acc ^= acc >> 13
    acc = (acc * _P3) & _MASK
    return acc ^ (acc >> 16)


#: Kafka's frame descriptor: FLG version 01, independent blocks, no checksums; BD 64 KiB
_LZ4_KAFKA_FLG = 0x60
_LZ4_KAFKA_BD = 0x40
_LZ4_KAFKA_BLOCK = 64 * 1024
_LZ4_UNCOMPRESSED = 0x80000000


def _lz4_kafka_frame(data: bytes) -> bytes:
    """An LZ4 frame as Kafka's ``Lz4BlockOutputStream`` writes one: independent 64 KiB
    blocks (Kafka's reader refuses dependent ones: "Dependent block stream is
    unsupported"), no block or content checksum, a block stored uncompressed when
    compressing does not make it smaller, and the end mark."""
    out = bytearray(_LZ4_MAGIC)
    out += bytes([_LZ4_KAFKA_FLG, _LZ4_KAFKA_BD, 0])
    for start in range(0, len(data), _LZ4_KAFKA_BLOCK):
        chunk = data[start : start + _LZ4_KAFKA_BLOCK]
        packed = bytes(cramjam.lz4.compress_block(chunk, compression=_LZ4_LEVEL, store_size=False))
        if len(packed) < len(chunk):
            out += struct.pack("<I", len(packed)) + packed
        else:
            out += struct.pack("<I", len(chunk) | _LZ4_UNCOMPRESSED) + chunk
    out += b"\x00\x00\x00\x00"
    return _fix_lz4_header_checksum(bytes(out))


def _lz4_descriptor_end(frame: bytes) -> int:
    """Offset of the HC byte: magic(4) FLG BD [content size 8] [dict id 4]."""
    if len(frame) < 7 or not frame.startswith(_LZ4_MAGIC):
        raise CorruptRecordError("not an lz4 frame", position=0, field=_FIELD)
    flg = frame[4]
    end = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    if end >= len(frame):
        raise CorruptRecordError("lz4 frame header is truncated", position=0, field=_FIELD)
    return end


def _with_checksum(frame: bytes, start: int) -> bytes:
    end = _lz4_descriptor_end(frame)
    checksum = (xxh32(frame[start:end]) >> 8) & 0xFF
    return frame[:end] + bytes([checksum]) + frame[end + 1 :]


def _fix_lz4_header_checksum(frame: bytes) -> bytes:
    """The frame with a correct HC byte (the descriptor hash, per the spec)."""
    return _with_checksum(frame, 4)


def _break_lz4_header_checksum(frame: bytes) -> bytes:
    """The frame with Kafka's magic-0 HC byte (hash including the magic number)."""
    return _with_checksum(frame, 0)


# --- the Construct form ----------------------------------------------------------------


class Compressed(AnySubconstruct):
    """The rest of the stream is one block compressed with ``codec``; ``subcon``
    is parsed from the decompressed bytes and must consume all of them.

    ``codec`` and ``magic`` are ints or context lambdas. Faults inside the
    decompressed bytes have no file position: they are relocated to the start
    of the compressed block and keep their offset in the message. Building
    compresses deterministically; the context parameter ``snappy_framing``
    picks raw or xerial snappy.
    """

    def __init__(
        self, subcon: Construct[Any, Any], codec: Any, magic: Any, *, leftover: str
    ) -> None:
        super().__init__(subcon)
        self.codec = codec
        self.magic = magic
        self.leftover = leftover

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> Any:
        start = stream.tell()
        codec = evaluate(self.codec, context)
        try:
            plain = decompress(codec, stream.read(), magic=evaluate(self.magic, context))
        except FormatError as error:
            raise error.at(offset=start) from None
        inner = io.BytesIO(plain)
        try:
            obj = self.subcon._parsereport(inner, context, path)
            left = remaining(inner)
            if left:
                raise InvalidRecordError(
                    f"{self.leftover} ({left} bytes)", position=inner.tell(), field=field_name(path)
                )
        except FormatError as error:
            note = f"at byte {error.position} of the decompressed data"
            raise relocate(error, start, note) from None
        return obj

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        inner = io.BytesIO()
        built = self.subcon._build(obj, inner, context, path)
        framing = context._params.get("snappy_framing", "raw")
        codec = evaluate(self.codec, context)
        magic = evaluate(self.magic, context)
        stream.write(compress(codec, inner.getvalue(), magic=magic, snappy_framing=framing))
        return built

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)
