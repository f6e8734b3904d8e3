"""Packed column rows of a segment's plain magic-2 batches (C), and the key hash they carry.

Theory of operation
-------------------
Tools that turn whole logs into tables (``lethe audit``) need a handful of
numbers per record, never the record itself. :func:`walk_rows` hands a
buffer to the C walker ``_ccolumns.walk``, which writes one fixed-size row
per batch and per record into two byte strings and stops, *before* the entry,
at the first one it does not take (legacy, control, torn, CRC mismatch,
undecodable, or after ``max_records`` rows); the caller decodes that entry
with :mod:`lethe_formats.records.scan`, the one place with the error
messages, and calls :func:`walk_rows` again after it::

    position --walk--> (next, batch rows, record rows)    next = position: nothing taken

:data:`BATCH_FIELDS` and :data:`RECORD_FIELDS` name each row field and its
type code (struct letters, native order); their byte offsets and the row
sizes come from the compiled structs (:func:`row_layout`), so a reader such as
``numpy.dtype`` never guesses the C compiler's padding.

The walker exists only where the C extension was built; :data:`AVAILABLE`
says so, and callers keep their record-by-record path for the rest.

Key hash: XXH64 with seed 0 of the key bytes, read as a signed 64-bit integer
(the type of a Parquet/Spark ``bigint``), ``None`` for a null key. 64 bits
keep accidental collisions improbable for billions of distinct keys per
partition while the hash of a short key costs a few nanoseconds in C.
:func:`key_hash` gives the same value in Python (C when built).
"""

from __future__ import annotations

import importlib
import struct
from collections.abc import Callable
from types import ModuleType
from typing import Any

_ccolumns: ModuleType | None
try:
    _ccolumns = importlib.import_module("lethe_formats.records._ccolumns")
except ImportError:  # pragma: no cover - the pure-Python install
    _ccolumns = None

__all__ = [
    "AVAILABLE",
    "BATCH_FIELDS",
    "RECORD_FIELDS",
    "key_hash",
    "row_layout",
    "walk_rows",
    "xxh64",
]

AVAILABLE = _ccolumns is not None

#: (field, struct type code) of a batch row; ``crc`` is the stored unsigned CRC.
BATCH_FIELDS: tuple[tuple[str, str], ...] = (
    ("position", "q"),
    ("base_offset", "q"),
    ("base_timestamp", "q"),
    ("max_timestamp", "q"),
    ("producer_id", "q"),
    ("crc", "q"),
    ("size", "i"),  # batch length + 12
    ("last_offset_delta", "i"),
    ("partition_leader_epoch", "i"),
    ("base_sequence", "i"),
    ("records_count", "i"),
    ("attributes", "h"),
    ("producer_epoch", "h"),
)

#: (field, struct type code) of a record row; sizes are -1 for null, ``batch``
#: indexes the batch rows of the same call, key_hash is 0 for a null key.
RECORD_FIELDS: tuple[tuple[str, str], ...] = (
    ("offset", "q"),
    ("timestamp", "q"),
    ("key_hash", "q"),
    ("key_size", "i"),
    ("value_size", "i"),
    ("headers_count", "i"),
    ("batch", "i"),
    ("attributes", "i"),
)


def row_layout(kind: str) -> tuple[dict[str, int], int]:
    """({field: byte offset}, row size) of the C rows ``kind`` ("batch" or "record")."""
    if _ccolumns is None:
        raise RuntimeError("the C column walker is not built")
    layout: dict[str, tuple[dict[str, int], int]] = _ccolumns.layout()
    return layout[kind]


def walk_rows(
    data: Any,
    position: int,
    *,
    crc32c: Callable[[Any], int],
    decompress: Callable[[int, memoryview], bytes] | None,
    max_records: int,
) -> tuple[int, bytes, bytes]:
    """(next position, batch rows, record rows) of the plain batches from ``position``.

    ``decompress(codec, section)`` returns a compressed batch's records
    section; an exception from it leaves that batch to the caller. ``None``
    leaves every compressed batch to the caller.
    """
    if _ccolumns is None:
        raise RuntimeError("the C column walker is not built")
    result: tuple[int, bytes, bytes] = _ccolumns.walk(
        data, position, crc32c, decompress, max_records
    )
    return result


_M64 = (1 << 64) - 1
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & _M64


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M64, 31) * _P1) & _M64


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of ``data`` as an unsigned 64-bit integer (the pure-Python definition)."""
    length, pos = len(data), 0
    if length >= 32:
        lanes = [(seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed & _M64, (seed - _P1) & _M64]
        while pos + 32 <= length:
            words = struct.unpack_from("<4Q", data, pos)
            lanes = [_round(lane, word) for lane, word in zip(lanes, words, strict=True)]
            pos += 32
        acc = (
            _rotl(lanes[0], 1) + _rotl(lanes[1], 7) + _rotl(lanes[2], 12) + _rotl(lanes[3], 18)
        ) & _M64
        for lane in lanes:
            acc = ((acc ^ _round(0, lane)) * _P1 + _P4) & _M64
    else:
        acc = (seed + _P5) & _M64
    acc = (acc + length) & _M64
    while pos + 8 <= length:
        (word,) = struct.unpack_from("<Q", data, pos)
        acc = (_rotl(acc ^ _round(0, word), 27) * _P1 + _P4) & _M64
        pos += 8
    if pos + 4 <= length:
        (word,) = struct.unpack_from("<I", data, pos)
        acc = (_rotl(acc ^ (word * _P1 & _M64), 23) * _P2 + _P3) & _M64
        pos += 4
    while pos < length:
        acc = (_rotl(acc ^ (data[pos] * _P5 & _M64), 11) * _P1) & _M64
        pos += 1
    acc = ((acc ^ (acc >> 33)) * _P2) & _M64
    acc = ((acc ^ (acc >> 29)) * _P3) & _M64
    return acc ^ (acc >> 32)


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def key_hash(key: bytes | None) -> int | None:
    """XXH64 (seed 0) of ``key`` as a signed 64-bit integer; ``None`` for a null key."""
    if key is None:
        return None
    if _ccolumns is not None:
        hashed: int = _ccolumns.hash_key(key)
        return hashed
    return _signed(xxh64(key))
