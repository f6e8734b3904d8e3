"""Invalid segment, index and snapshot cases: one documented fault each.

Theory of operation
-------------------
Same method as :mod:`.authoring_invalid`: a valid case's bytes with one
patch (CRCs recomputed when the CRC is not the fault) or one field re-encoded.
Legacy faults follow ``AbstractLegacyRecordBatch`` / ``LegacyRecord``
(kafka-facts §3.4): message size below 14, CRC-32 mismatch, codec 5-7,
zstd in a magic 0/1 wrapper, a compressed inner message, a v1 wrapper offset
below its last inner offset, a wrapper with a null value or no inner messages.
(An inner magic that differs from the wrapper's is *not* a fault here: Kafka's
read path, ``AbstractLegacyRecordBatch.iterator``, builds its deep iterator with
``ensureMatchingMagic`` off.) Index faults follow
``OffsetIndex``/``TimeIndex.sanityCheck`` (length not a multiple of the entry
size; last offset below the base; last timestamp below the first),
``TransactionIndex`` (version above 0) and
``ProducerStateManager.readSnapshot`` (schema, then version, then CRC).
"""

from __future__ import annotations

import struct
import zlib

from lethe_conformance.formats.authoring_built import T0, legacy
from lethe_conformance.formats.authoring_built_files import v1_wrapper
from lethe_conformance.formats.authoring_cases import Authored, invalid, patched
from lethe_conformance.formats.authoring_wire import compress, crc32c, legacy_entry

__all__ = ["index_invalid", "segment_invalid", "snapshot_invalid"]


def _legacy_recrc(data: bytes) -> bytes:
    """``data`` with the IEEE CRC-32 of its first v0/v1 entry recomputed over
    that entry's bytes [16, end)."""
    end = 12 + struct.unpack_from(">i", data, 8)[0]
    crc = zlib.crc32(data[16:end]) & 0xFFFFFFFF
    return data[:12] + struct.pack(">I", crc) + data[16:]


def _wrapper(magic: int, value: bytes | None, *, offset: int = 2) -> bytes:
    return legacy_entry(
        offset=offset, magic=magic, attributes=1, timestamp=T0 if magic else None, value=value
    )


def _inner_v0(attributes: int = 0) -> bytes:
    return legacy_entry(offset=0, magic=0, attributes=attributes, key=b"k", value=b"v")


def segment_invalid(cases: dict[str, Authored]) -> list[Authored]:
    """Invalid ``log-segment`` cases; ``cases`` maps valid stems to cases."""
    v0 = cases["log-segment/valid/v0-plain"]
    v1 = cases["log-segment/valid/v1-timestamp-types"]
    mixed = cases["log-segment/valid/mixed-magics"]
    golden = cases["log-segment/valid/golden-codecs-0"]
    wrapper = cases["log-segment/valid/v1-gzip-wrapper"]
    second = len(legacy(0, 0, key=b"a", value=b"one")[0])
    v2_at = v2_start(mixed)
    flip_v0, flip_v0_change = patched(v0.data, second - 1, b"X")
    flip_v1, flip_v1_change = patched(v1.data, 35, b"Z")
    golden_flip, golden_change = patched(golden.data, golden.data.index(b"birch ember"), b"B")
    magic3, magic3_change = patched(mixed.data, v2_at + 16, b"\x03")
    small, small_change = patched(v1.data, 8, struct.pack(">i", 13))
    codec5, codec5_change = patched(v1.data, 17, b"\x05")
    zstd, zstd_change = patched(v1.data, 17, b"\x04")
    overrun, overrun_change = patched(v0.data, 18, struct.pack(">i", 1000))
    gzip_inner = compress("gzip", _inner_v0(attributes=1))
    bad_offset = v1_wrapper(1)[0]
    return [
        invalid(
            golden,
            "truncated",
            "Kafka segment whose last batch lost its last 10 bytes",
            golden.data[:-10],
            "truncated",
            "last 10 bytes removed",
        ),
        invalid(
            v0,
            "truncated-entry-header",
            "eight stray bytes after the last entry",
            v0.data + b"\x00" * 8,
            "truncated",
            "8 zero bytes appended",
            position=len(v0.data),
        ),
        invalid(
            mixed,
            "unknown-magic",
            "magic 3 in the third entry",
            magic3,
            "unknown-magic",
            magic3_change,
            position=v2_at + 16,
        ),
        invalid(
            v0,
            "crc-mismatch-v0",
            "v0 value byte changed, CRC left",
            flip_v0,
            "crc-mismatch",
            flip_v0_change,
            position=12,
        ),
        invalid(
            v1,
            "crc-mismatch-v1",
            "v1 key byte changed, CRC left",
            flip_v1,
            "crc-mismatch",
            flip_v1_change,
            position=12,
        ),
        invalid(
            golden,
            "crc-mismatch-v2",
            "payload byte of a Kafka batch changed, CRC left",
            golden_flip,
            "crc-mismatch",
            golden_change,
            position=17,
        ),
        invalid(
            v1,
            "size-too-small",
            "v1 message size 13, below the 14-byte minimum",
            small,
            "size-too-small",
            small_change,
            position=8,
        ),
        invalid(
            v1,
            "unknown-codec",
            "v1 message with compression id 5",
            _legacy_recrc(codec5),
            "unknown-codec",
            codec5_change + "; CRC recomputed",
            position=17,
        ),
        invalid(
            v1,
            "codec-not-allowed",
            "zstd in a v1 message",
            _legacy_recrc(zstd),
            "codec-not-allowed",
            zstd_change + "; CRC recomputed",
            position=17,
        ),
        invalid(
            v0,
            "length-overrun",
            "v0 key length past the end of the message",
            _legacy_recrc(overrun),
            "length-overrun",
            overrun_change + "; CRC recomputed",
            position=18,
        ),
        invalid(
            wrapper,
            "nested-compression",
            "inner message of a gzip wrapper is compressed",
            _wrapper(0, gzip_inner, offset=0),
            "nested-compression",
            "rebuild: v0 wrapper whose inner message has attributes 1 (gzip)",
        ),
        invalid(
            wrapper,
            "invalid-wrapper-offset",
            "v1 wrapper offset 1 below its last inner offset 2",
            bad_offset,
            "invalid-wrapper-offset",
            "rebuild: wrapper offset 52 -> 1",
        ),
        invalid(
            wrapper,
            "empty-wrapper-null-value",
            "gzip wrapper with a null value",
            _wrapper(1, None),
            "empty-wrapper",
            "rebuild: wrapper value -> null",
        ),
        invalid(
            wrapper,
            "empty-wrapper-no-inner",
            "gzip wrapper holding no messages",
            _wrapper(1, compress("gzip", b"")),
            "empty-wrapper",
            "rebuild: wrapper value -> gzip of nothing",
        ),
        invalid(
            wrapper,
            "corrupt-compressed-data",
            "wrapper value that is not gzip",
            _wrapper(1, b"not gzip data"),
            "corrupt-compressed-data",
            "rebuild: wrapper value -> 'not gzip data'",
        ),
    ]


def v2_start(mixed: Authored) -> int:
    """Where the v2 batch of ``mixed-magics`` starts (after its two legacy entries)."""
    first: int = struct.unpack_from(">i", mixed.data, 8)[0] + 12
    second: int = struct.unpack_from(">i", mixed.data, first + 8)[0] + 12
    return first + second


def index_invalid(cases: dict[str, Authored]) -> list[Authored]:
    """Invalid ``offset-index``, ``time-index`` and ``txn-index`` cases."""
    oi = cases["offset-index/valid/golden-codecs"]
    ti = cases["time-index/valid/golden-codecs"]
    txn = cases["txn-index/valid/golden-aborted"]
    last_oi, last_ti = len(oi.data) - 8, len(ti.data) - 12
    neg_oi, neg_oi_change = patched(oi.data, last_oi, struct.pack(">i", -1))
    early, early_change = patched(ti.data, last_ti, struct.pack(">q", T0))
    neg_ti, neg_ti_change = patched(ti.data, last_ti + 8, struct.pack(">i", -1))
    v1, v1_change = patched(txn.data, 0, struct.pack(">h", 1))
    return [
        invalid(
            oi,
            "partial-entry",
            "offset index with 4 trailing bytes",
            oi.data + b"\x00" * 4,
            "partial-entry",
            "4 zero bytes appended",
            position=len(oi.data),
        ),
        invalid(
            oi,
            "offset-before-base",
            "last offset index entry's relative offset -1",
            neg_oi,
            "offset-before-base",
            neg_oi_change,
            position=last_oi,
        ),
        invalid(
            ti,
            "partial-entry",
            "time index with 5 trailing bytes",
            ti.data + b"\x00" * 5,
            "partial-entry",
            "5 zero bytes appended",
            position=len(ti.data),
        ),
        invalid(
            ti,
            "timestamp-before-first",
            "last timestamp below the first",
            early,
            "timestamp-before-first",
            early_change,
            position=last_ti,
        ),
        invalid(
            ti,
            "timestamp-before-first-untrimmed",
            "zero-filled slot after the entries",
            ti.data + b"\x00" * 12,
            "timestamp-before-first",
            "12 zero bytes appended",
            position=len(ti.data),
        ),
        invalid(
            ti,
            "offset-before-base",
            "last time index entry's relative offset -1",
            neg_ti,
            "offset-before-base",
            neg_ti_change,
            position=last_ti + 8,
        ),
        invalid(
            txn,
            "unknown-version",
            "aborted transaction entry of version 1",
            v1,
            "unknown-version",
            v1_change,
            position=0,
        ),
    ]


def snapshot_invalid(cases: dict[str, Authored]) -> list[Authored]:
    """Invalid ``producer-snapshot`` cases from the two-producer golden snapshot."""
    snap = cases["producer-snapshot/valid/golden-two-producers"]
    data = snap.data
    flipped, flip_change = patched(data, 20, bytes([data[20] ^ 0x01]))
    v2, v2_change = patched(data, 0, struct.pack(">h", 2))
    negative, negative_change = patched(data, 6, struct.pack(">i", -1))
    negative = negative[:2] + struct.pack(">I", crc32c(negative[6:])) + negative[6:]
    return [
        invalid(
            snap,
            "crc-mismatch",
            "entry byte changed, CRC left",
            flipped,
            "crc-mismatch",
            flip_change,
            position=2,
        ),
        invalid(
            snap,
            "unknown-version",
            "snapshot version 2",
            v2,
            "unknown-version",
            v2_change,
            position=0,
        ),
        invalid(
            snap,
            "truncated",
            "second entry cut short",
            data[:-10],
            "truncated",
            "last 10 bytes removed",
        ),
        invalid(
            snap,
            "truncated-header",
            "file of 6 bytes",
            data[:6],
            "truncated",
            "cut to the first 6 bytes",
        ),
        invalid(
            snap,
            "negative-count",
            "entry count -1",
            negative,
            "negative-count",
            negative_change + "; CRC recomputed",
            position=6,
        ),
    ]
