"""Invalid record, batch and control-record cases: one documented fault each.

Theory of operation
-------------------
Every invalid case starts from a valid case's bytes and changes exactly one
thing. Two kinds of change are used, and the case's ``mutation.change`` says
which:

* a **patch**: bytes at a position replaced (a flipped payload byte, a
  different magic); when the patched field is covered by the batch CRC and
  the fault is *not* the CRC, the CRC is recomputed, so the only fault left
  is the one named;
* a **rebuild**: the origin's field values re-encoded with one field's
  encoding replaced (an over-long varint, a negative length), lengths and
  CRC recomputed around it.

``position`` is given where the fault is one field: the byte offset, within
the case's input, where that field starts.
"""

from __future__ import annotations

import struct
from typing import Any

from lethe_conformance.formats.authoring_cases import Authored, invalid, patched
from lethe_conformance.formats.authoring_wire import (
    BatchFields,
    Part,
    assemble_record,
    batch_bytes,
    crc32c,
    record_parts,
    varint,
)

__all__ = [
    "OVERLONG_VARINT",
    "OVERLONG_VARLONG",
    "batch_invalid",
    "control_invalid",
    "record_invalid",
    "recrc",
]

#: offset 2, encoded in six bytes (Kafka allows five).
OVERLONG_VARINT = b"\x84\x80\x80\x80\x80\x00"
#: timestamp delta 7, encoded in eleven bytes (Kafka allows ten).
OVERLONG_VARLONG = b"\x8e" + b"\x80" * 9 + b"\x00"


def recrc(batch: bytes) -> bytes:
    """A v2 batch with its CRC-32C recomputed over bytes [21, end)."""
    return batch[:17] + struct.pack(">I", crc32c(batch[21:])) + batch[21:]


def _replace(parts: list[Part], name: str, raw: bytes) -> list[Part]:
    assert any(n == name for n, _ in parts), name
    return [(n, raw if n == name else b) for n, b in parts]


def _where(parts: list[Part], name: str, start: int) -> int:
    """Byte offset of part ``name`` in a record whose body starts at ``start``."""
    for part, raw in parts:
        if part == name:
            return start
        start += len(raw)
    raise KeyError(name)


PLAIN: dict[str, Any] = {
    "timestamp_delta": 7,
    "offset_delta": 2,
    "key": b"user-1",
    "value": b"v1",
    "headers": [(b"trace", b"abc")],
}


def record_invalid(plain: Authored) -> list[Authored]:
    """Invalid ``record`` cases derived from ``record/plain``."""
    parts = record_parts(**PLAIN)
    body = sum(len(b) for _, b in parts)
    start = len(varint(body))
    data = plain.data
    assert data == assemble_record(parts)

    def rebuilt(name: str, raw: bytes, error: str, what: str, description: str) -> Authored:
        new = _replace(parts, name, raw)
        return invalid(
            plain,
            f"{error}-{what}",
            description,
            assemble_record(new),
            error,
            f"rebuild: {name} encoded as {raw.hex()}",
            position=_where(new, name, start),
        )

    extra = assemble_record([*parts, ("extra", b"\x00")])
    return [
        rebuilt(
            "offsetDelta",
            OVERLONG_VARINT,
            "varint-too-long",
            "offset-delta",
            "offset delta varint of six bytes",
        ),
        rebuilt(
            "timestampDelta",
            OVERLONG_VARLONG,
            "varint-too-long",
            "timestamp-delta",
            "timestamp delta varlong of eleven bytes",
        ),
        invalid(
            plain,
            "varint-too-long-length",
            "record length varint of six bytes",
            b"\x80\x80\x80\x80\x80\x00" + data[start:],
            "varint-too-long",
            "length varint replaced by a six-byte encoding",
            position=0,
        ),
        invalid(
            plain,
            "truncated",
            "record missing its last byte",
            data[:-1],
            "truncated",
            "last byte removed",
        ),
        rebuilt(
            "headers[0].keyLength",
            varint(-1),
            "negative-length",
            "header-key",
            "header key length -1",
        ),
        rebuilt("headersCount", varint(-1), "negative-length", "headers-count", "headers count -1"),
        invalid(
            plain,
            "negative-length-record",
            "record length -1",
            varint(-1) + data[start:],
            "negative-length",
            "length varint -> -1",
            position=0,
        ),
        rebuilt(
            "keyLength",
            varint(100),
            "length-overrun",
            "key",
            "key length runs past the end of the record",
        ),
        invalid(
            plain,
            "length-overrun-headers-count",
            "headers count larger than the bytes left",
            assemble_record(_replace(parts, "headersCount", varint(60))),
            "length-overrun",
            "rebuild: headersCount encoded as 60",
        ),
        invalid(
            plain,
            "trailing-bytes",
            "record length one byte longer than its fields",
            extra,
            "trailing-bytes",
            "rebuild: one zero byte appended inside the declared length",
        ),
    ]


TWO: list[dict[str, Any]] = [
    {
        "timestamp_delta": 0,
        "offset_delta": 0,
        "key": b"a",
        "value": b"first",
        "headers": [(b"h", b"1")],
    },
    {"timestamp_delta": 12, "offset_delta": 1, "key": b"b", "value": b"second"},
]


def _two_fields(built: Authored) -> BatchFields:
    e: dict[str, Any] = built.case["expected"]
    return BatchFields(
        base_offset=int(e["baseOffset"]),
        last_offset_delta=e["lastOffsetDelta"],
        base_timestamp=int(e["baseTimestamp"]),
        max_timestamp=int(e["maxTimestamp"]),
        records_count=e["recordsCount"],
    )


def _rebuilt_batch(built: Authored, name: str, raw: bytes) -> tuple[bytes, int]:
    """``built-two-records`` with part ``name`` of its first record replaced:
    (batch bytes, absolute position of that part)."""
    first = _replace(record_parts(**TWO[0]), name, raw)
    area = assemble_record(first) + assemble_record(record_parts(**TWO[1]))
    data = batch_bytes(_two_fields(built), area)
    body = sum(len(b) for _, b in first)
    return data, _where(first, name, 61 + len(varint(body)))


def _overrun_batch(built: Authored) -> bytes:
    """``built-two-records`` whose second record claims one byte more than is left."""
    second = record_parts(**TWO[1])
    claimed = sum(len(b) for _, b in second) + 1
    area = assemble_record(record_parts(**TWO[0])) + assemble_record(second, length=claimed)
    return batch_bytes(_two_fields(built), area)


def batch_invalid(none: Authored, gzip: Authored, built: Authored) -> list[Authored]:
    """Invalid ``record-batch`` cases from a golden plain batch, a golden gzip
    batch and the hand-built two-record batch."""
    at = none.data.index(b"delta indigo")
    flipped, flip = patched(none.data, at, b"D")
    bad_crc, crc_change = patched(
        gzip.data, 17, struct.pack(">I", int.from_bytes(gzip.data[17:21], "big") ^ 1)
    )
    b = built.data
    codec5, codec5_change = patched(b, 21, struct.pack(">h", 5))
    too_small, small_change = patched(b, 8, struct.pack(">i", 48))
    negative, negative_change = patched(b, 8, struct.pack(">i", -1))
    magic3, magic_change = patched(b, 16, b"\x03")
    count3, count3_change = patched(b, 57, struct.pack(">i", 3))
    count1, count1_change = patched(b, 57, struct.pack(">i", 1))
    middle = 61 + (len(gzip.data) - 61) // 2
    garbled, garble_change = patched(gzip.data, middle, b"\xff" * 8)
    overlong, overlong_at = _rebuilt_batch(built, "offsetDelta", OVERLONG_VARINT)
    neg_key, neg_key_at = _rebuilt_batch(built, "headers[0].keyLength", varint(-1))
    overrun = _overrun_batch(built)
    return [
        invalid(
            none,
            "crc-mismatch",
            "payload byte changed, CRC left as it was",
            flipped,
            "crc-mismatch",
            flip,
            position=17,
        ),
        invalid(
            gzip,
            "crc-mismatch-stored",
            "stored CRC of a gzip batch off by one bit",
            bad_crc,
            "crc-mismatch",
            crc_change,
            position=17,
        ),
        invalid(
            none,
            "truncated",
            "batch missing its last byte",
            none.data[:-1],
            "truncated",
            "last byte removed",
        ),
        invalid(
            none,
            "truncated-header",
            "data ends inside the batch header",
            none.data[:40],
            "truncated",
            "cut to the first 40 bytes",
        ),
        invalid(
            built, "unknown-magic", "magic 3", magic3, "unknown-magic", magic_change, position=16
        ),
        invalid(
            built,
            "unknown-codec",
            "compression id 5",
            recrc(codec5),
            "unknown-codec",
            codec5_change + "; CRC recomputed",
            position=21,
        ),
        invalid(
            built,
            "size-too-small",
            "batch length 48, below the 49-byte minimum",
            too_small,
            "size-too-small",
            small_change,
            position=8,
        ),
        invalid(
            built,
            "size-too-small-negative",
            "batch length -1",
            negative,
            "size-too-small",
            negative_change,
            position=8,
        ),
        invalid(
            gzip,
            "corrupt-compressed-data",
            "gzip stream overwritten in the middle",
            recrc(garbled),
            "corrupt-compressed-data",
            garble_change + "; CRC recomputed",
        ),
        invalid(
            built,
            "record-count-mismatch",
            "record count 3 for two records",
            recrc(count3),
            "record-count-mismatch",
            count3_change + "; CRC recomputed",
        ),
        invalid(
            built,
            "trailing-bytes",
            "record count 1 for two records",
            recrc(count1),
            "trailing-bytes",
            count1_change + "; CRC recomputed",
        ),
        invalid(
            built,
            "varint-too-long",
            "six-byte offset delta varint in the first record of a batch",
            overlong,
            "varint-too-long",
            f"rebuild: first record's offsetDelta encoded as {OVERLONG_VARINT.hex()}",
            position=overlong_at,
        ),
        invalid(
            built,
            "negative-length",
            "header key length -1 in the first record of a batch",
            neg_key,
            "negative-length",
            "rebuild: first record's header key length encoded as -1",
            position=neg_key_at,
        ),
        invalid(
            built,
            "length-overrun",
            "last record's length runs past the end of the batch",
            overrun,
            "length-overrun",
            "rebuild: second record's length one more than its body",
        ),
    ]


def _control_record(key: bytes, value: bytes | None) -> bytes:
    return assemble_record(record_parts(key=key, value=value))


def control_invalid(commit: Authored) -> list[Authored]:
    """Invalid ``control-record`` cases derived from the golden COMMIT record."""
    assert commit.data == _control_record(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00")
    marker = b"\x00\x00\x00\x00\x00\x00"
    return [
        invalid(
            commit,
            "control-key-too-short",
            "control key of three bytes",
            _control_record(b"\x00\x00\x00", marker),
            "control-key-too-short",
            "rebuild: key 00000001 -> 000000",
        ),
        invalid(
            commit,
            "negative-control-version-key",
            "control key version -1",
            _control_record(b"\xff\xff\x00\x01", marker),
            "negative-control-version",
            "rebuild: key version 0 -> -1",
        ),
        invalid(
            commit,
            "end-txn-marker-too-short",
            "COMMIT marker value of five bytes",
            _control_record(b"\x00\x00\x00\x01", marker[:5]),
            "end-txn-marker-too-short",
            "rebuild: value 000000000000 -> 0000000000",
        ),
        invalid(
            commit,
            "negative-control-version-marker",
            "COMMIT marker value version -1",
            _control_record(b"\x00\x00\x00\x01", b"\xff\xff" + marker[2:]),
            "negative-control-version",
            "rebuild: marker version 0 -> -1",
        ),
    ]
