"""Checksums used by Kafka's record formats.

Magic 2 batches use CRC-32C (Castagnoli) over attributes..end of batch; magic
0/1 messages use the IEEE CRC-32 (zlib's) over magic..end of value. Both run in
C: ``crc32c`` (hardware-accelerated where the CPU allows) and ``zlib``.
"""

from __future__ import annotations

import zlib

from crc32c import crc32c as _crc32c

__all__ = ["crc32", "crc32c"]

Buffer = bytes | bytearray | memoryview


def crc32c(data: Buffer) -> int:
    """CRC-32C of ``data`` as an unsigned 32-bit int (what v2 batches store)."""
    return int(_crc32c(data))


def crc32(data: Buffer) -> int:
    """IEEE CRC-32 of ``data`` as an unsigned 32-bit int (what v0/v1 messages store)."""
    return zlib.crc32(data) & 0xFFFFFFFF
