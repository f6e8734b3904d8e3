"""Kafka's compression codecs: gzip, snappy, lz4, zstd, written as Kafka 4.0 writes them.

Theory of operation
-------------------
A compressed batch (v2) or wrapper message (v0/v1) stores its records as one
compressed stream; :func:`decompress` and :func:`compress` convert that stream.
Codec ids are those of attribute bits 0-2: 0 none, 1 gzip, 2 snappy, 3 lz4,
4 zstd. Ids 5-7 are undefined (UnsupportedCompressionError), and zstd needs
magic 2 (KIP-110): Kafka refuses it in v0/v1 messages.

**Writing.** :func:`compress` writes, byte for byte, what Kafka 4.0's own
writers (``Compression.wrapForOutput`` at each codec's default level) write
when its broker recompresses a batch or its cleaner rewrites one, so a
segment lethe writes is the segment Kafka would have written:

    gzip    GZIPOutputStream: 1F 8B 08 00 | mtime 0 | XFL 0 | OS 0xFF (Java 16+)
            | raw deflate, zlib level 6 (Deflater.DEFAULT_COMPRESSION),
            memLevel 8 | CRC-32 | ISIZE
    snappy  snappy-java's SnappyOutputStream (xerial framing):
            82 'SNAPPY' 00 | version 1 | min version 1 | { length int32be | block }*
            with a block per 32 KiB of input
    lz4     Lz4BlockOutputStream: see :mod:`lethe_formats.lz4frame`
    zstd    zstd-jni's ZstdOutputStreamNoFinalizer at level 3: a streamed frame
            without content size or checksum (FHD 0x00, window log 21), its
            data flushed as one block sequence and closed by an empty last
            block, as Kafka's flush-then-close does

Clients frame differently in one case: librdkafka writes snappy as one raw
block (``snappy_framing="raw"``), while the Java client and the broker write
the xerial framing, the default here. (librdkafka's gzip says OS 3; that byte
is never read.) fixtures/kafka-codecs holds the evidence: Kafka's
writers run on sample inputs, and batches a real Kafka 4.0.0 broker
recompressed on produce and rewrote in its cleaner; lethe's output equals
them byte for byte, except snappy blocks of some inputs, where snappy-java's
native compressor picks other matches than cramjam's (same framing, and both
decode the same).

Determinism: fixtures are regenerated and compared byte for byte, so output
depends only on the input: fixed levels, no time or host in any header.
gzip runs the stdlib's zlib, as the JDK does (a zlib-ng build would deflate
differently).

**Reading.** :func:`decompress` reads as Kafka's readers do, refusing what
they refuse (:class:`DecompressionError`, answered UNKNOWN_SERVER_ERROR on
Produce) and accepting what they accept:

    gzip    GZIPInputStream: magic and method 8 checked; CRC-32 and ISIZE
            checked; further members read; bytes after the last member that
            are not a gzip header ignored
    snappy  SnappyInputStream: xerial framing if the stream starts with its
            magic, else one raw block (librdkafka)
    lz4     Lz4BlockInputStream: see :mod:`lethe_formats.lz4frame` (dependent
            blocks refused; magic 0's header checksum not checked)
    zstd    ZstdInputStream: any valid frame(s)

:class:`Compressed` is the Construct form used by the record schemas: the rest
of a stream is one compressed block holding a subcon.

Every failure becomes a FormatError whose position is relative to ``data``
(callers re-anchor it with ``FormatError.at``).
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import IO, Any

import cramjam
from construct import Construct, SizeofError
from construct.core import evaluate

from lethe_formats import lz4frame
from lethe_formats.errors import (
    CorruptRecordError,
    DecompressionError,
    FormatError,
    InvalidRecordError,
    UnsupportedCompressionError,
)
from lethe_formats.lz4frame import xxh32
from lethe_formats.model import Compression
from lethe_formats.primitives import AnySubconstruct, field_name, relocate, remaining

__all__ = [
    "SNAPPY_FRAMINGS",
    "XERIAL_MAGIC",
    "Compressed",
    "check_stream_header",
    "compress",
    "decompress",
    "kafka_frame_header",
    "resolve_codec",
    "xxh32",
]

Buffer = bytes | bytearray | memoryview

#: Header of snappy-java's stream format (SnappyCodec.MAGIC_HEADER + padding).
XERIAL_MAGIC = b"\x82SNAPPY\x00"
#: "xerial": the Java client's and Kafka's own framing (default); "raw": librdkafka's.
SNAPPY_FRAMINGS = ("xerial", "raw")
_XERIAL_VERSION = 1
_XERIAL_MIN_COMPATIBLE = 1
_XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", _XERIAL_VERSION, _XERIAL_MIN_COMPATIBLE)
_XERIAL_BLOCK = 32 * 1024
#: What java.util.zip.GZIPOutputStream writes: no flags, mtime 0, XFL 0, OS 255.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
_GZIP_LEVEL = 6
_GZIP_MEM_LEVEL = 8
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
    """Uncompressed bytes of a compressed record block, read as Kafka reads it.

    ``max_size`` bounds the result (checked ahead of time where the format
    states the size: raw snappy, lz4 blocks; after the codec otherwise).
    """
    resolved = resolve_codec(codec, magic)
    raw = bytes(data)
    if resolved is Compression.NONE:
        out = raw
    elif resolved is Compression.SNAPPY:
        out = _snappy_decompress(raw, max_size)
    elif resolved is Compression.LZ4:
        out = lz4frame.read_frame(raw, magic=magic, max_size=max_size)
    elif resolved is Compression.GZIP:
        out = _gzip_decompress(raw)
    else:
        out = _run(cramjam.zstd.decompress, raw, resolved, 0)
    if max_size is not None and len(out) > max_size:
        raise CorruptRecordError(
            f"{resolved.dump_name} data expands beyond {max_size} bytes", position=0, field=_FIELD
        )
    return out


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZSTD_SKIPPABLE = b"\x2a\x4d\x18"  # bytes 1-3 of 0x184D2A5?, little-endian


def kafka_frame_header(codec: Compression | int, *, magic: int = 2) -> bytes:
    """The first bytes Kafka's writer puts before any data (non-empty input):
    gzip's 10-byte member header, the 16-byte xerial header, LZ4's magic, FLG,
    BD and HC, zstd's magic and frame and window descriptors."""
    resolved = resolve_codec(codec, magic)
    if resolved is Compression.GZIP:
        return _GZIP_HEADER
    if resolved is Compression.SNAPPY:
        return _XERIAL_HEADER
    if resolved is Compression.LZ4:
        return lz4frame.write_frame(b"", magic=magic)[:7]
    if resolved is Compression.ZSTD:
        return _zstd_compress(b"\0")[:6]
    return b""


def check_stream_header(codec: Compression | int, head: Buffer, *, magic: int = 2) -> None:
    """Raise the DecompressionError Kafka's reader raises on the first bytes of a
    compressed stream (``head``: at least its first 16 bytes, or all of it):
    the LZ4 frame descriptor, gzip's magic and method, zstd's frame magic.
    A check for every batch of a segment, where :func:`decompress` is too slow."""
    resolved = resolve_codec(codec, magic)
    data = bytes(head[:16])
    if resolved is Compression.LZ4:
        lz4frame.check_header(data, magic=magic)
    elif resolved is Compression.GZIP:
        if data[:2] != b"\x1f\x8b":
            raise DecompressionError("Not in GZIP format", position=0, field=_FIELD)
        if data[2:3] != b"\x08":
            raise DecompressionError("Unsupported compression method", position=2, field=_FIELD)
    elif resolved is Compression.ZSTD:
        skippable = data[1:4] == _ZSTD_SKIPPABLE and data[0] & 0xF0 == 0x50
        if data[:4] != _ZSTD_MAGIC and not skippable:
            raise DecompressionError("Unknown frame descriptor", position=0, field=_FIELD)


def compress(
    codec: Compression | int, data: Buffer, *, magic: int = 2, snappy_framing: str = "xerial"
) -> bytes:
    """Deterministic compressed block of ``data``, as Kafka's own writer writes it
    (snappy: as librdkafka writes it with ``snappy_framing="raw"``)."""
    resolved = resolve_codec(codec, magic)
    raw = bytes(data)
    if resolved is Compression.NONE:
        return raw
    if resolved is Compression.GZIP:
        return _gzip_compress(raw)
    if resolved is Compression.SNAPPY:
        return _snappy_compress(raw, snappy_framing)
    if resolved is Compression.LZ4:
        return lz4frame.write_frame(raw, magic=magic)
    return _zstd_compress(raw)


def _run(function: object, data: bytes, codec: Compression, position: int) -> bytes:
    try:
        return bytes(function(data))  # type: ignore[operator]
    except Exception as error:
        raise DecompressionError(
            f"corrupt {codec.dump_name} data: {error}", position=position, field=_FIELD
        ) from None


# --- gzip ------------------------------------------------------------------------------


def _gzip_compress(data: bytes) -> bytes:
    deflater = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS, _GZIP_MEM_LEVEL)
    body = deflater.compress(data) + deflater.flush()
    trailer = struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)
    return _GZIP_HEADER + body + trailer


def _gzip_refuse(message: str, position: int) -> DecompressionError:
    return DecompressionError(message, position=position, field=_FIELD)


def _gzip_decompress(data: bytes) -> bytes:
    """Members in turn, as GZIPInputStream reads them; trailing non-gzip bytes ignored."""
    out = bytearray()
    pos = 0
    while True:
        if len(data) - pos < 2 or data[pos : pos + 2] != b"\x1f\x8b":
            raise _gzip_refuse("Not in GZIP format", pos)
        if len(data) - pos < 3 or data[pos + 2] != 8:
            raise _gzip_refuse("Unsupported compression method", pos + 2)
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += inflater.decompress(data[pos:])
        except zlib.error as error:
            text = str(error)
            trailer = "incorrect data check" in text or "incorrect length check" in text
            if trailer:  # the member's last 8 bytes (CRC-32, ISIZE)
                raise _gzip_refuse("Corrupt GZIP trailer", max(pos, len(data) - 8)) from None
            raise _gzip_refuse(f"corrupt gzip data: {text}", pos) from None
        if not inflater.eof:
            raise _gzip_refuse("Unexpected end of ZLIB input stream", len(data))
        pos = len(data) - len(inflater.unused_data)
        if not inflater.unused_data.startswith(b"\x1f\x8b\x08"):
            return bytes(out)  # Java reads another member only after a gzip header


# --- zstd ------------------------------------------------------------------------------


def _zstd_compress(data: bytes) -> bytes:
    """A stream as ZstdOutputStreamNoFinalizer writes it under Kafka: the data,
    flushed (Kafka's stream is flushed before it is closed), then the end of
    the frame; empty input is a single-segment frame of size 0."""
    stream = cramjam.zstd.Compressor(level=_ZSTD_LEVEL)
    out = b""
    if data:
        stream.compress(data)
        out = bytes(stream.flush())
    return out + bytes(stream.finish())


# --- snappy ---------------------------------------------------------------------------


def _snappy_compress(data: bytes, framing: str) -> bytes:
    if framing == "raw":
        return bytes(cramjam.snappy.compress_raw(data))
    if framing != "xerial":
        raise ValueError(f"snappy_framing must be 'xerial' or 'raw', not {framing!r}")
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
        raise DecompressionError(
            "xerial snappy header is truncated", position=len(data), field=_FIELD
        )
    out = bytearray()
    pos = len(_XERIAL_HEADER)
    while pos < len(data):
        if pos + 4 > len(data):
            raise DecompressionError(
                "xerial snappy block length is truncated", position=pos, field=_FIELD
            )
        (length,) = struct.unpack_from(">i", data, pos)
        if length < 0 or pos + 4 + length > len(data):
            raise DecompressionError(
                f"xerial snappy block length {length} exceeds the data",
                position=pos,
                field=_FIELD,
            )
        left = None if max_size is None else max_size - len(out)
        out += _snappy_block(data[pos + 4 : pos + 4 + length], pos + 4, left)
        pos += 4 + length
    return bytes(out)


# --- the Construct form ----------------------------------------------------------------


class Compressed(AnySubconstruct):
    """The rest of the stream is one block compressed with ``codec``; ``subcon``
    is parsed from the decompressed bytes and must consume all of them.

    ``codec`` and ``magic`` are ints or context lambdas. Faults inside the
    decompressed bytes have no file position: they are relocated to the start
    of the compressed block and keep their offset in the message. Building
    compresses deterministically; the context parameter ``snappy_framing``
    picks xerial (default) or raw snappy.
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
        framing = context._params.get("snappy_framing", "xerial")
        codec = evaluate(self.codec, context)
        magic = evaluate(self.magic, context)
        stream.write(compress(codec, inner.getvalue(), magic=magic, snappy_framing=framing))
        return built

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)
