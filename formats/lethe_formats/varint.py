"""Zig-zag varints as Kafka writes them (ByteUtils.java), bounded like Kafka.

A varint is the Protobuf encoding of ``(n << 1) ^ (n >> 31)`` (``>> 63`` for a
varlong): 7 bits a byte, low group first, high bit set on every byte but the
last. Kafka refuses a varint of more than 5 bytes and a varlong of more than 10,
and so do we: a corrupt length can never make a reader loop or allocate without
bound. These plain functions serve the fast path and the builders; the
Construct schemas wrap the same rules in ``primitives``.
"""

from __future__ import annotations

from lethe_formats.errors import TruncatedError, VarintError

__all__ = [
    "VARINT_MAX_BYTES",
    "VARLONG_MAX_BYTES",
    "encode_uvarint",
    "encode_varint",
    "encode_varlong",
    "read_varint",
    "read_varlong",
    "zigzag_decode",
    "zigzag_encode",
]

VARINT_MAX_BYTES = 5
VARLONG_MAX_BYTES = 10

Buffer = bytes | bytearray | memoryview


def zigzag_encode(value: int, bits: int) -> int:
    """Map a signed ``bits``-wide int to the unsigned zig-zag form."""
    return ((value << 1) ^ (value >> (bits - 1))) & ((1 << bits) - 1)


def zigzag_decode(raw: int) -> int:
    """Inverse of :func:`zigzag_encode` (width-independent)."""
    return (raw >> 1) ^ -(raw & 1)


def _read_unsigned(data: Buffer, pos: int, max_bytes: int, field: str) -> tuple[int, int]:
    result = 0
    shift = 0
    end = len(data)
    for i in range(max_bytes):
        if pos + i >= end:
            raise TruncatedError(f"data ends inside {field}", position=pos, field=field)
        byte = data[pos + i]
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos + i + 1
        shift += 7
    raise VarintError(f"{field} is longer than {max_bytes} bytes", position=pos, field=field)


def read_varint(data: Buffer, pos: int, field: str = "varint") -> tuple[int, int]:
    """Decode a zig-zag varint (int32) at ``pos``; return (value, next position)."""
    raw, nxt = _read_unsigned(data, pos, VARINT_MAX_BYTES, field)
    if raw > 0xFFFFFFFF:
        raise VarintError(f"{field} does not fit in 32 bits", position=pos, field=field)
    return zigzag_decode(raw), nxt


def read_varlong(data: Buffer, pos: int, field: str = "varlong") -> tuple[int, int]:
    """Decode a zig-zag varlong (int64) at ``pos``; return (value, next position)."""
    raw, nxt = _read_unsigned(data, pos, VARLONG_MAX_BYTES, field)
    if raw > 0xFFFFFFFFFFFFFFFF:
        raise VarintError(f"{field} does not fit in 64 bits", position=pos, field=field)
    return zigzag_decode(raw), nxt


def _encode_unsigned(raw: int) -> bytes:
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def encode_uvarint(value: int) -> bytes:
    """Kafka's unsigned varint (low 7-bit group first) of a 32-bit value."""
    if not 0 <= value <= 0xFFFFFFFF:
        raise ValueError(f"unsigned varint out of range: {value}")
    return _encode_unsigned(value)


def encode_varint(value: int) -> bytes:
    """Zig-zag varint of a signed 32-bit value."""
    if not -(1 << 31) <= value < (1 << 31):
        raise ValueError(f"varint out of int32 range: {value}")
    return _encode_unsigned(zigzag_encode(value, 32))


def encode_varlong(value: int) -> bytes:
    """Zig-zag varlong of a signed 64-bit value."""
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"varlong out of int64 range: {value}")
    return _encode_unsigned(zigzag_encode(value, 64))
