"""Hand-built valid cases: legacy segments, control records, indexes, snapshots.

Theory of operation
-------------------
Like :mod:`.authoring_built`, every case here is built from field values with
``struct`` and the values are the expectation. Legacy (magic 0/1) segments
are the only way to cover v0/v1 at all (Kafka 4.0 no longer writes them);
control records cover types the golden data has no example of; the index
and snapshot cases pin Kafka's reading rules:

* ``.index`` / ``.timeindex``: only Kafka's ``sanityCheck`` decides validity
  (it looks at the last entry, not at the order of the others), and entries
  end at the first slot after slot 0 whose relative offset is 0 (a
  preallocated, untrimmed tail, as ``kafka-dump-log`` reads it);
* ``.txnindex``: a partial trailing entry is ignored, a negative version is
  accepted (Kafka rejects only versions above 0);
* ``.snapshot``: the CRC covers bytes after the entry array too, which the
  schema itself ignores.
"""

from __future__ import annotations

import struct
from typing import Any

from lethe_conformance.formats.authoring_built import (
    T0,
    batch_expected,
    legacy,
    record_expected,
)
from lethe_conformance.formats.authoring_cases import Authored, valid
from lethe_conformance.formats.authoring_wire import (
    BatchFields,
    assemble_record,
    batch_bytes,
    crc32c,
    record_parts,
)
from lethe_conformance.formats.tagged import int64

__all__ = ["built_control_records", "built_indexes", "built_segments", "v1_wrapper"]

_BUILT = "built by hand with struct from the documented layout"


def _absolute(expected: dict[str, Any], offset: int) -> dict[str, Any]:
    return expected | {"offset": int64(offset)}


def v1_wrapper(
    wrapper_offset: int, codec: str = "gzip", attributes: int = 1
) -> tuple[bytes, dict[str, Any]]:
    """A v1 compressed wrapper over three inner messages stored with relative offsets 0-2."""
    inner = [
        legacy(rel, 1, timestamp=T0 + rel, key=f"k{rel}".encode(), value=f"v{rel}".encode())
        for rel in range(3)
    ]
    base = 0 if wrapper_offset == 0 else wrapper_offset - 2
    resolved = [(raw, _absolute(e, base + rel)) for rel, (raw, e) in enumerate(inner)]
    return legacy(
        wrapper_offset, 1, attributes=attributes, timestamp=T0 + 2, inner=resolved, codec=codec
    )


def _segment(name: str, description: str, entries: list[tuple[bytes, dict[str, Any]]]) -> Authored:
    return valid(
        f"log-segment/{name}",
        description,
        b"".join(raw for raw, _ in entries),
        {"entries": [e for _, e in entries]},
        provenance=f"{_BUILT} (kafka-facts 3.4)",
    )


def _v2(base_offset: int) -> tuple[bytes, dict[str, Any]]:
    specs: list[dict[str, Any]] = [
        {"offset_delta": i, "timestamp_delta": i, "key": b"k", "value": b"v2"} for i in range(2)
    ]
    fields = BatchFields(
        base_offset=base_offset,
        last_offset_delta=1,
        base_timestamp=T0,
        max_timestamp=T0 + 1,
        records_count=2,
    )
    data = batch_bytes(fields, b"".join(assemble_record(record_parts(**s)) for s in specs))
    return data, batch_expected(fields, [record_expected(**s) for s in specs], data)


def built_segments() -> list[Authored]:
    """``log-segment`` valid cases with v0/v1 messages."""
    v0_inner = [legacy(o, 0, key=b"k", value=f"m{o}".encode()) for o in (10, 11, 12)]
    return [
        _segment("empty", "empty segment file", []),
        _segment(
            "v0-plain",
            "three v0 messages: key and value, null key, null value",
            [
                legacy(0, 0, key=b"a", value=b"one"),
                legacy(1, 0, key=None, value=b"two"),
                legacy(2, 0, key=b"c", value=None),
            ],
        ),
        _segment(
            "v1-timestamp-types",
            "v1 messages with CreateTime, LogAppendTime and no timestamp",
            [
                legacy(0, 1, timestamp=T0, key=b"a", value=b"create"),
                legacy(1, 1, attributes=0x08, timestamp=T0 + 5, key=b"b", value=b"append"),
                legacy(2, 1, timestamp=-1, key=b"c", value=b"none"),
            ],
        ),
        _segment(
            "v0-gzip-wrapper",
            "v0 gzip wrapper whose inner offsets are absolute",
            [
                legacy(12, 0, attributes=1, inner=v0_inner),
            ],
        ),
        _segment(
            "v1-gzip-wrapper",
            "v1 gzip wrapper: inner offsets relative to the wrapper's last offset",
            [
                v1_wrapper(52),
            ],
        ),
        _segment(
            "v1-wrapper-offset-zero",
            "v1 wrapper with offset 0 (librdkafka): inner base is 0",
            [
                v1_wrapper(0),
            ],
        ),
        _segment(
            "v1-snappy-xerial-wrapper",
            "v1 snappy wrapper in xerial framing",
            [
                v1_wrapper(7, codec="snappy-xerial", attributes=2),
            ],
        ),
        _segment(
            "mixed-magics",
            "segment upgraded from v0 through v1 to v2",
            [
                legacy(0, 0, key=b"k", value=b"v0"),
                legacy(1, 1, timestamp=T0, key=b"k", value=b"v1"),
                _v2(2),
            ],
        ),
    ]


def _control_key(kind: int, version: int = 0) -> bytes:
    return struct.pack(">hh", version, kind)


def _control_case(
    name: str, description: str, key: bytes, value: bytes | None, expected: dict[str, Any]
) -> Authored:
    data = assemble_record(record_parts(key=key, value=value))
    return valid(
        f"control-record/{name}",
        description,
        data,
        expected,
        provenance=f"{_BUILT} (kafka-facts 3.3)",
    )


def built_control_records() -> list[Authored]:
    """``control-record`` valid cases built by hand."""
    marker = struct.pack(">hi", 0, 17)
    return [
        _control_case(
            "leader-change",
            "LEADER_CHANGE control record: no end-txn marker",
            _control_key(2),
            b"\x00\x00",
            {"keyVersion": 0, "type": 2, "typeName": "LEADER_CHANGE", "endTxnMarker": None},
        ),
        _control_case(
            "unknown-type",
            "control type 99 reads as UNKNOWN",
            _control_key(99),
            b"",
            {"keyVersion": 0, "type": 99, "typeName": "UNKNOWN", "endTxnMarker": None},
        ),
        _control_case(
            "key-version-above-zero",
            "control key version 3 is read as version 0",
            _control_key(1, version=3),
            marker,
            {
                "keyVersion": 3,
                "type": 1,
                "typeName": "COMMIT",
                "endTxnMarker": {"version": 0, "coordinatorEpoch": 17},
            },
        ),
        _control_case(
            "marker-extra-bytes",
            "marker value version 1 with extra bytes after the epoch",
            _control_key(0),
            struct.pack(">hi", 1, 9) + b"\x01\x02",
            {
                "keyVersion": 0,
                "type": 0,
                "typeName": "ABORT",
                "endTxnMarker": {"version": 1, "coordinatorEpoch": 9},
            },
        ),
    ]


def _fixed(
    kind: str, name: str, description: str, data: bytes, expected: dict[str, Any]
) -> Authored:
    return valid(
        f"{kind}/{name}", description, data, expected, provenance=f"{_BUILT} (kafka-facts 3.5)"
    )


def _offset_index(rows: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack(">ii", *row) for row in rows)


def _txn(version: int, pid: int, first: int, last: int, lso: int) -> bytes:
    return struct.pack(">hqqqq", version, pid, first, last, lso)


def _txn_value(version: int, pid: int, first: int, last: int, lso: int) -> dict[str, Any]:
    return {
        "version": version,
        "producerId": int64(pid),
        "firstOffset": int64(first),
        "lastOffset": int64(last),
        "lastStableOffset": int64(lso),
    }


def _snapshot_with_tail() -> tuple[bytes, dict[str, Any]]:
    entry = (5, 1, 9, 300, 2, T0, 3, -1)
    body = struct.pack(">i", 1) + struct.pack(">qhiqiqiq", *entry) + b"\x00\x00\x00\x07"
    crc = crc32c(body)
    value = {
        "version": 1,
        "crc": crc,
        "entries": [
            {
                "producerId": "5",
                "producerEpoch": 1,
                "lastSequence": 9,
                "lastOffset": "300",
                "offsetDelta": 2,
                "timestamp": int64(T0),
                "coordinatorEpoch": 3,
                "currentTxnFirstOffset": "-1",
            }
        ],
    }
    return struct.pack(">hI", 1, crc) + body, value


def built_indexes() -> list[Authored]:
    """Index, transaction index and snapshot valid cases built by hand."""

    def oi(rows: list[tuple[int, int]]) -> dict[str, Any]:
        return {"entries": [{"relativeOffset": r, "position": p} for r, p in rows]}

    snapshot, snapshot_value = _snapshot_with_tail()
    time_rows = [(T0 + 100, 1), (T0 + 50, 2), (T0 + 200, 3)]
    return [
        _fixed(
            "offset-index",
            "untrimmed-zero-tail",
            "preallocated index: entries end at the zero slots",
            _offset_index([(3, 0), (7, 4096), (0, 0), (0, 0)]),
            oi([(3, 0), (7, 4096)]),
        ),
        _fixed(
            "offset-index",
            "order-not-checked",
            "offsets out of order pass Kafka's sanity check",
            _offset_index([(5, 0), (3, 100), (9, 200)]),
            oi([(5, 0), (3, 100), (9, 200)]),
        ),
        _fixed(
            "time-index",
            "order-not-checked",
            "timestamps out of order between first and last pass",
            b"".join(struct.pack(">qi", *r) for r in time_rows),
            {"entries": [{"timestamp": int64(t), "relativeOffset": r} for t, r in time_rows]},
        ),
        _fixed("time-index", "empty", "empty time index", b"", {"entries": []}),
        _fixed("txn-index", "empty", "empty transaction index", b"", {"entries": []}),
        _fixed(
            "txn-index",
            "partial-tail-ignored",
            "a partial trailing entry is ignored",
            _txn(0, 3, 10, 14, 15) + b"\x00" * 20,
            {"entries": [_txn_value(0, 3, 10, 14, 15)]},
        ),
        _fixed(
            "txn-index",
            "negative-version-accepted",
            "version -1 is accepted; only versions above 0 fail",
            _txn(-1, 3, 10, 14, 15),
            {"entries": [_txn_value(-1, 3, 10, 14, 15)]},
        ),
        _fixed(
            "producer-snapshot",
            "crc-covers-trailing-bytes",
            "bytes after the entries are covered by the CRC and otherwise ignored",
            snapshot,
            snapshot_value,
        ),
    ]
