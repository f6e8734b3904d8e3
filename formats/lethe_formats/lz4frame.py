"""LZ4 frames as Kafka 4.0 writes and reads them (``Lz4BlockOutputStream`` and
``Lz4BlockInputStream`` in ``org.apache.kafka.common.compress``).

Theory of operation
-------------------
Kafka does not use the LZ4 library's frame code: it writes and reads the
frame itself around lz4-java's *block* compressor. Its writer always produces
one layout::

    04 22 4D 18 | FLG 0x60 | BD 0x40 | HC | { size u32le | block }* | 00 00 00 00

FLG 0x60 is version 01 with independent blocks and no block checksums, no
content size, no content checksum; BD 0x40 is 64 KiB blocks. Blocks are cut
at 64 KiB of input; a block whose compressed form is not smaller than its
input is stored as is, with bit 31 of its size set. At Kafka's default level
(9) the writer uses lz4-java's *fast* compressor, which is ``LZ4_compress_default``;
cramjam's ``compress_block`` runs the same C function, so the block bytes
match too (checked against Kafka's writer in fixtures/kafka-codecs).
HC, the header checksum, is byte 1 of XXH32 over FLG and BD; for magic 0
Kafka hashes the magic number as well (its pre-0.10 bug, kept for old
readers), and when reading magic 0 it skips HC without looking.

Kafka's reader is stricter than the LZ4 specification in some ways and
looser in others, and lethe reads exactly as it does (:func:`read_frame`):

- refused: fewer than 6 bytes, a wrong magic number, FLG reserved bits 0-1
  set (so a dictionary id is refused too), dependent blocks (FLG bit 5
  clear), a version other than 01, BD reserved bits set, a block size id
  outside 4-7, a wrong HC (magic 1 and 2), a block size above the maximum,
  a block or frame that ends early (including a missing end mark), a block
  that does not decompress, a wrong block checksum;
- accepted: any block size id 4-7, a content size (skipped, never compared),
  block checksums (verified), a content checksum (read, never verified),
  and any bytes after the end mark (never read).

Every refusal is a :class:`DecompressionError` carrying Kafka's own message;
on Produce Kafka answers each with UNKNOWN_SERVER_ERROR (fixtures/kafka-codecs/
cases.json records what a real Kafka 4.0.0 answered).
"""

from __future__ import annotations

import struct

import cramjam

from lethe_formats.errors import CorruptRecordError, DecompressionError

__all__ = ["LZ4_MAGIC", "check_header", "header_checksum", "read_frame", "write_frame", "xxh32"]

Buffer = bytes | bytearray | memoryview

LZ4_MAGIC = b"\x04\x22\x4d\x18"
_FLG = 0x60
_BD = 0x40
_BLOCK = 64 * 1024
_UNCOMPRESSED = 0x80000000
_FIELD = "records"
_U32 = struct.Struct("<I")
#: magic 4, FLG, BD, content size 8, HC
_MAX_HEADER = 15


# --- XXH32 -----------------------------------------------------------------------------

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_MASK = 0xFFFFFFFF


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32, the LZ4 frame checksum; run on header bytes and (rare) block checksums."""
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


def header_checksum(descriptor: bytes, *, magic: int) -> int:
    """The HC byte Kafka writes after ``descriptor`` (FLG, BD[, content size])."""
    hashed = LZ4_MAGIC + descriptor if magic == 0 else descriptor
    return (xxh32(hashed) >> 8) & 0xFF


# --- writing ---------------------------------------------------------------------------


def write_frame(data: bytes, *, magic: int = 2) -> bytes:
    """``data`` framed exactly as Kafka's Lz4BlockOutputStream frames it."""
    descriptor = bytes((_FLG, _BD))
    out = bytearray(LZ4_MAGIC + descriptor)
    out.append(header_checksum(descriptor, magic=magic))
    for start in range(0, len(data), _BLOCK):
        chunk = data[start : start + _BLOCK]
        block = bytes(cramjam.lz4.compress_block(chunk, store_size=False))
        if len(block) >= len(chunk):
            out += _U32.pack(len(chunk) | _UNCOMPRESSED) + chunk
        else:
            out += _U32.pack(len(block)) + block
    out += bytes(4)
    return bytes(out)


# --- reading ---------------------------------------------------------------------------


def _refuse(message: str, position: int) -> DecompressionError:
    return DecompressionError(message, position=position, field=_FIELD)


def _check_descriptor(flg: int, bd: int) -> None:
    """Kafka's FLG and BD validation, in its order, with its messages."""
    if flg & 0x03:
        raise _refuse("Reserved bits must be 0", 4)
    if not flg & 0x20:
        raise _refuse("Dependent block stream is unsupported", 4)
    if flg >> 6 != 1:
        raise _refuse(f"Version {flg >> 6} is unsupported", 4)
    if bd & 0x0F:
        raise _refuse("Reserved2 field must be 0", 5)
    if not 4 <= (bd >> 4) & 0x07 <= 7:
        raise _refuse("Block size value must be between 4 and 7", 5)
    if bd & 0x80:
        raise _refuse("Reserved3 field must be 0", 5)


def _read_header(frame: Buffer, magic: int) -> tuple[int, int, int]:
    """(FLG, maximum block size, position of the first block)."""
    if len(frame) < 6:
        raise _refuse("Stream ended prematurely", len(frame))
    if frame[:4] != LZ4_MAGIC:
        raise _refuse("Stream unsupported (invalid magic bytes)", 0)
    flg, bd = frame[4], frame[5]
    _check_descriptor(flg, bd)
    end = 6
    if flg & 0x08:
        if len(frame) - end < 8:
            raise _refuse("Stream ended prematurely", len(frame))
        end += 8
    if end >= len(frame):
        raise _refuse("Stream ended prematurely", len(frame))
    if magic != 0 and frame[end] != (xxh32(bytes(frame[4:end])) >> 8) & 0xFF:
        raise _refuse("Stream frame descriptor corrupted", end)
    return flg, 1 << (2 * ((bd >> 4) & 0x07) + 8), end + 1


def check_header(frame: Buffer, *, magic: int = 2) -> None:
    """Raise the DecompressionError Kafka's reader raises on opening ``frame``
    (magic, FLG, BD, HC), without reading a block: cheap enough for every batch."""
    _read_header(bytes(frame[:_MAX_HEADER]), magic)


def read_frame(frame: Buffer, *, magic: int = 2, max_size: int | None = None) -> bytes:
    """The data of an LZ4 frame, read as Kafka's Lz4BlockInputStream reads it.

    ``max_size`` bounds the output (lethe's own guard against expansion bombs;
    Kafka streams instead)."""
    flg, max_block, pos = _read_header(frame, magic)
    out = bytearray()
    buffer = bytearray(max_block)
    while True:
        if len(frame) - pos < 4:
            raise _refuse("Stream ended prematurely", pos)
        (size,) = _U32.unpack_from(frame, pos)
        compressed = not size & _UNCOMPRESSED
        size &= ~_UNCOMPRESSED
        if size == 0:
            return bytes(out)  # the end mark; a content checksum and anything after are not read
        if size > max_block:
            raise _refuse(f"Block size {size} exceeded max: {max_block}", pos)
        start = pos + 4
        if len(frame) - start < size:
            raise _refuse("Stream ended prematurely", pos)
        block = frame[start : start + size]
        out += _decode_block(block, buffer, start) if compressed else bytes(block)
        pos = start + size
        if flg & 0x10:
            if len(frame) - pos < 4 or _U32.unpack_from(frame, pos)[0] != xxh32(bytes(block)):
                raise _refuse("Block checksum mismatch", pos)
            pos += 4
        if max_size is not None and len(out) > max_size:
            raise CorruptRecordError(
                f"lz4 data expands beyond {max_size} bytes", position=start, field=_FIELD
            )


def _decode_block(block: Buffer, buffer: bytearray, position: int) -> bytes:
    try:
        size = cramjam.lz4.decompress_block_into(block, buffer)
    except Exception as error:
        raise _refuse(f"corrupt lz4 block: {error}", position) from None
    return bytes(buffer[:size])
