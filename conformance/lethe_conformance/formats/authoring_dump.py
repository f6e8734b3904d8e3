"""Reading ``kafka-dump-log`` output (golden ``dump.txt``) to cross-check authored values.

Theory of operation
-------------------
Each golden ``dump.txt`` holds, per file, a ``### bin/kafka-dump-log.sh
--files <path> ...`` line followed by the tool's verbatim output
(kafka-facts §3.7). :func:`sections` splits it by file; :func:`check_batches`
then holds a decoded segment (tagged values from :mod:`.authoring_read`) to
every fact Kafka printed about it:

* batch lines: ``baseOffset lastOffset count baseSequence lastSequence
  producerId producerEpoch partitionLeaderEpoch isTransactional isControl
  deleteHorizonMs position CreateTime|LogAppendTime size magic compresscodec
  crc isvalid``;
* record lines (``| offset: ...``): offset, timestamp, key and value sizes,
  sequence, header keys, the key and payload text (only when the bytes are
  UTF-8, as Kafka's StringDecoder replaces anything else), and for control
  records ``endTxnMarker: COMMIT|ABORT coordinatorEpoch: N``.

Any mismatch raises ``AssertionError``: the authoring script then refuses to
write the case.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import Any

from lethe_conformance.formats.authoring_read import CODEC_NAMES
from lethe_conformance.formats.tagged import tag_bytes_to_bytes

__all__ = ["check_batches", "index_lines", "sections"]

_COMMAND = re.compile(r"^### bin/kafka-dump-log\.sh --files (\S+)")
_PAIR = re.compile(r"(\w+): (\S+)")
_RECORD_HEAD = re.compile(
    r"^\| offset: (-?\d+) (CreateTime|LogAppendTime): (-?\d+) keySize: (-?\d+) "
    r"valueSize: (-?\d+) sequence: (-?\d+) headerKeys: \[(.*?)\]"
)
INT32_MAX = 2**31 - 1


def sections(dump: Path) -> dict[str, list[str]]:
    """Output lines per dumped file path (stderr sections dropped)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in dump.read_bytes().decode("utf-8", "replace").split("\n"):
        match = _COMMAND.match(line)
        if match:
            current = out.setdefault(match.group(1), [])
        elif line.startswith("###"):
            current = None
        elif current is not None and line:
            current.append(line)
    return out


def index_lines(lines: list[str]) -> list[dict[str, str]]:
    """``offset: N position: P`` / ``timestamp: T offset: N`` lines as dicts."""
    return [dict(_PAIR.findall(line)) for line in lines if not line.startswith("Dumping")]


def _wrap(sequence: int, delta: int) -> int:
    total = sequence + delta
    return total - INT32_MAX - 1 if total > INT32_MAX else total


def _expect(what: str, printed: str, computed: object) -> None:
    assert printed == str(computed), f"{what}: Kafka printed {printed}, authored {computed}"


def _check_header(batch: dict[str, Any], line: str, position: int) -> None:
    printed = dict(_PAIR.findall(line))
    attributes = batch["attributes"]
    base = int(batch["baseOffset"])
    horizon = f"OptionalLong[{batch['baseTimestamp']}]" if attributes & 0x40 else None
    ts_type = "LogAppendTime" if attributes & 0x08 else "CreateTime"
    seq = batch["baseSequence"]
    assert attributes & ~0x7F == 0, "unused attribute bits set"
    for name, value in {
        "baseOffset": base,
        "lastOffset": base + batch["lastOffsetDelta"],
        "count": batch["recordsCount"],
        "baseSequence": seq,
        "lastSequence": -1 if seq == -1 else _wrap(seq, batch["lastOffsetDelta"]),
        "producerId": batch["producerId"],
        "producerEpoch": batch["producerEpoch"],
        "partitionLeaderEpoch": batch["partitionLeaderEpoch"],
        "isTransactional": "true" if attributes & 0x10 else "false",
        "isControl": "true" if attributes & 0x20 else "false",
        "deleteHorizonMs": horizon or "OptionalLong.empty",
        "position": position,
        ts_type: batch["maxTimestamp"],
        "size": batch["batchLength"] + 12,
        "magic": 2,
        "compresscodec": CODEC_NAMES[attributes & 0x07],
        "crc": batch["crc"],
        "isvalid": "true",
    }.items():
        _expect(name, printed[name], value)


def _text(tag: dict[str, str] | None) -> str | None:
    return None if tag is None or "utf8" not in tag else tag["utf8"]


def _tail(batch: dict[str, Any], record: dict[str, Any]) -> str | None:
    """What Kafka prints after ``headerKeys: [...]`` (None when not comparable)."""
    key, value = record["key"], record["value"]
    if batch["attributes"] & 0x20:
        key_bytes = tag_bytes_to_bytes(key)
        value_bytes = tag_bytes_to_bytes(value)
        (kind,) = struct.unpack_from(">h", key_bytes, 2)
        (epoch,) = struct.unpack_from(">i", value_bytes, 2)
        return f" endTxnMarker: {('ABORT', 'COMMIT')[kind]} coordinatorEpoch: {epoch}"
    if (key is not None and _text(key) is None) or (value is not None and _text(value) is None):
        return None
    tail = "" if key is None else f" key: {_text(key)}"
    return tail + ("" if value is None else f" payload: {_text(value)}")


def _check_record(batch: dict[str, Any], record: dict[str, Any], line: str) -> None:
    match = _RECORD_HEAD.match(line)
    assert match, f"not a record line: {line}"
    offset, ts_type, ts, key_size, value_size, seq, header_keys = match.groups()
    base_seq = batch["baseSequence"]
    timestamp = (
        int(batch["maxTimestamp"])
        if batch["attributes"] & 0x08
        else int(batch["baseTimestamp"]) + int(record["timestampDelta"])
    )
    _expect("offset", offset, int(batch["baseOffset"]) + record["offsetDelta"])
    _expect(
        "timestamp type", ts_type, "LogAppendTime" if batch["attributes"] & 0x08 else "CreateTime"
    )
    _expect("timestamp", ts, timestamp)
    for name, tag, printed in (
        ("keySize", record["key"], key_size),
        ("valueSize", record["value"], value_size),
    ):
        _expect(name, printed, -1 if tag is None else len(tag_bytes_to_bytes(tag)))
    _expect("sequence", seq, -1 if base_seq == -1 else _wrap(base_seq, record["offsetDelta"]))
    keys = ",".join(_text(h["key"]) or "?" for h in record["headers"])
    _expect("headerKeys", header_keys, keys)
    tail = _tail(batch, record)
    if tail is not None:
        _expect("key/payload", line[match.end() :], tail)


def check_batches(batches: list[dict[str, Any]], positions: list[int], lines: list[str]) -> None:
    """Hold decoded batches (at ``positions``) to a segment's dump lines."""
    body = [line for line in lines if not line.startswith(("Dumping", "Log starting"))]
    headers = [i for i, line in enumerate(body) if line.startswith("baseOffset:")]
    assert len(headers) == len(batches), f"{len(headers)} batches printed, {len(batches)} read"
    bounds = [*headers, len(body)]
    for n, batch in enumerate(batches):
        _check_header(batch, body[bounds[n]], positions[n])
        record_lines = body[bounds[n] + 1 : bounds[n + 1]]
        assert len(record_lines) == len(batch["records"]), "record count"
        for record, line in zip(batch["records"], record_lines, strict=True):
            _check_record(batch, record, line)
