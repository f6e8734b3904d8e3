"""Index and checkpoint files through the Kaitai specs, into lethe's model values.

Theory of operation
-------------------
The index specs (``.index`` 8-byte, ``.timeindex`` 12-byte, ``.txnindex``
34-byte entries) read ``size / entry size`` whole entries and leave any
partial tail in ``trailing``; this module turns entries into
:class:`OffsetIndexEntry` / :class:`TimeIndexEntry` / :class:`AbortedTxn` and
applies what Kafka does with a tail: ``.index`` and ``.timeindex`` must be a
whole number of entries (``sanityCheck`` → CorruptIndexException), while the
transaction index iterator only reads while 34 bytes remain, so a partial
tail there is ignored. A ``.txnindex`` version above 0 fails the spec's
``valid`` rule and becomes a :class:`CorruptIndexError` at that entry.

The checkpoint specs only split UTF-8 text at ``\\n``. Kafka reads with
``BufferedReader.readLine`` and parses with ``Integer.parseInt`` /
``Long.parseLong`` and ``\\s+`` splits, so here each Kaitai line is further
split at ``\\r`` (a lone ``\\r`` also ends a line in Java; ``\\r\\n`` is one
terminator), numbers are parsed strictly (optional sign, decimal digits,
range-checked: Python's ``int()`` would also take blanks and ``_``), and
``CheckpointFile``'s checks are applied in its order: version, count line,
each entry's field count, then the number of entries. Errors carry the
1-based line and its absolute byte position.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from typing import Any

from kaitaistruct import KaitaiStream, ValidationFailedError

from lethe_formats.errors import CheckpointError, CorruptIndexError, FormatError
from lethe_formats.ksy.adapter_records import KAITAI_ERRORS, Buffer
from lethe_formats.ksy.compiler import KaitaiSpecs
from lethe_formats.model import AbortedTxn, OffsetIndexEntry, TimeIndexEntry

__all__ = [
    "decode_leader_epoch_checkpoint",
    "decode_offset_checkpoint",
    "decode_offset_index",
    "decode_partition_metadata",
    "decode_time_index",
    "decode_txn_index",
]

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_JAVA_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]+")
_TXN_ENTRY_SIZE = 34


def _parse(klass: Any, data: Buffer, file: str | None, error: type[FormatError]) -> Any:
    try:
        return klass(KaitaiStream(io.BytesIO(bytes(data))))
    except ValidationFailedError as failure:
        position = failure.io.pos() if failure.io is not None else None
        raise error(str(failure), file=file, position=position, field=failure.src_path) from None
    except KAITAI_ERRORS as failure:
        raise error(f"does not parse: {failure}", file=file, position=0, field="file") from None


def _whole_entries(parsed: Any, size: int, data: Buffer, file: str | None) -> None:
    if parsed.trailing:
        raise CorruptIndexError(
            f"index is {len(data)} bytes, not a multiple of the {size}-byte entry",
            file=file,
            position=len(data) - len(parsed.trailing),
            field="entries",
        )


def decode_offset_index(
    specs: KaitaiSpecs, data: Buffer, *, file: str | None = None
) -> list[OffsetIndexEntry]:
    """Entries of a ``.index`` file (offsets relative to the segment's base offset)."""
    parsed = _parse(specs.offset_index, data, file, CorruptIndexError)
    _whole_entries(parsed, 8, data, file)
    return [OffsetIndexEntry(e.relative_offset, e.position) for e in parsed.entries]


def decode_time_index(
    specs: KaitaiSpecs, data: Buffer, *, file: str | None = None
) -> list[TimeIndexEntry]:
    """Entries of a ``.timeindex`` file (offsets relative to the segment's base offset)."""
    parsed = _parse(specs.time_index, data, file, CorruptIndexError)
    _whole_entries(parsed, 12, data, file)
    return [TimeIndexEntry(e.timestamp, e.relative_offset) for e in parsed.entries]


def decode_txn_index(
    specs: KaitaiSpecs, data: Buffer, *, file: str | None = None
) -> list[AbortedTxn]:
    """Aborted transactions of a ``.txnindex`` file; a partial tail is ignored like Kafka."""
    try:
        parsed = specs.txn_index(KaitaiStream(io.BytesIO(bytes(data))))
    except ValidationFailedError as failure:
        at = failure.io.pos() - 2 if failure.io is not None else 0
        raise CorruptIndexError(
            f"unexpected aborted transaction version: {failure}",
            file=file,
            position=at,
            field=f"entries[{at // _TXN_ENTRY_SIZE}].version",
        ) from None
    except KAITAI_ERRORS as failure:
        raise CorruptIndexError(
            f"does not parse: {failure}", file=file, position=0, field="file"
        ) from None
    return [
        AbortedTxn(e.version, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset)
        for e in parsed.entries
    ]


# --- text files --------------------------------------------------------------------


def _decode_error(data: Buffer, file: str | None, failure: Exception) -> CheckpointError:
    try:
        bytes(data).decode("utf-8")
    except UnicodeDecodeError as bad:
        return CheckpointError(
            f"invalid UTF-8: {bad.reason}", file=file, position=bad.start, field="encoding"
        )
    return CheckpointError(f"does not parse: {failure}", file=file, position=0, field="file")


def _java_lines(kaitai_lines: list[str]) -> list[tuple[int, int, str]]:
    """(1-based number, byte position, text) of each line as readLine() returns them."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for text in kaitai_lines:
        body = text[:-1] if text.endswith("\r") else text
        for part in body.split("\r"):
            out.append((len(out) + 1, pos, part))
            pos += len(part.encode("utf-8")) + 1
        pos += len(text) - len(body)  # the '\r' of a "\r\n" pair
    return out


def _text_lines(klass: Any, data: Buffer, file: str | None, fields: tuple[str, ...]) -> list[str]:
    try:
        parsed = klass(KaitaiStream(io.BytesIO(bytes(data))))
    except KAITAI_ERRORS as failure:
        raise _decode_error(data, file, failure) from None
    lines: list[str] = []
    for name in fields:
        value = getattr(parsed, name, None)
        if isinstance(value, list):
            lines.extend(value)
        elif value is not None:
            lines.append(value)
    return lines


def _java_int(text: str, bounds: tuple[int, int]) -> int | None:
    """``Integer.parseInt`` / ``Long.parseLong``: None where Java throws."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isdecimal():
        return None
    value = int(text)
    return value if bounds[0] <= value <= bounds[1] else None


def _malformed(
    line: tuple[int, int, str], file: str | None, field: str, why: str
) -> CheckpointError:
    number, pos, text = line
    return CheckpointError(
        f"Malformed line in checkpoint file: {text!r} ({why})",
        file=file,
        position=pos,
        field=field,
        line=number,
    )


def _checkpoint(
    specs: KaitaiSpecs, data: Buffer, file: str | None, version: int, parts: int
) -> list[tuple[tuple[int, int, str], list[str]]]:
    """CheckpointFile.read up to the entry split: [(line, its fields)]."""
    fields = ("version_line", "count_line", "entry_lines")
    lines = _java_lines(_text_lines(specs.checkpoint, data, file, fields))
    if not lines:
        return []
    found = _java_int(lines[0][2], _INT32)
    if found is None:
        raise _malformed(lines[0], file, "version", "version is not an int")
    if found != version:
        raise CheckpointError(
            f"Unrecognised version:{found}, expected version: {version}",
            file=file,
            position=0,
            field="version",
            line=1,
        )
    if len(lines) == 1:
        return []
    expected = _java_int(lines[1][2], _INT32)
    if expected is None:
        raise _malformed(lines[1], file, "count", "count is not an int")
    if expected < 0:
        raise CheckpointError(
            f"negative entry count {expected}",
            file=file,
            position=lines[1][1],
            field="count",
            line=2,
        )
    entries = []
    for line in lines[2:]:
        split = _JAVA_WHITESPACE.split(line[2])
        while len(split) > 1 and split[-1] == "":
            split.pop()
        if len(split) != parts:
            raise _malformed(line, file, "entry", f"{len(split)} fields, expected {parts}")
        entries.append((line, split))
    if len(entries) != expected:
        raise CheckpointError(
            f"Expected [{expected}] entries in checkpoint file, but found only [{len(entries)}]",
            file=file,
            position=lines[1][1],
            field="count",
            line=2,
        )
    return entries


def _number(
    line: tuple[int, int, str], text: str, bounds: tuple[int, int], field: str, file: str | None
) -> int:
    value = _java_int(text, bounds)
    if value is None:
        raise _malformed(line, file, field, f'NumberFormatException: For input string: "{text}"')
    return value


def decode_offset_checkpoint(
    specs: KaitaiSpecs, data: Buffer, *, file: str | None = None, version: int = 0
) -> list[tuple[str, int, int]]:
    """(topic, partition, offset) entries of an offset checkpoint, in file order."""
    out = []
    for line, (topic, partition, offset) in _checkpoint(specs, data, file, version, 3):
        out.append(
            (
                topic,
                _number(line, partition, _INT32, "partition", file),
                _number(line, offset, _INT64, "offset", file),
            )
        )
    return out


def decode_leader_epoch_checkpoint(
    specs: KaitaiSpecs, data: Buffer, *, file: str | None = None, version: int = 0
) -> list[tuple[int, int]]:
    """(epoch, start offset) entries of a ``leader-epoch-checkpoint``, in file order."""
    out = []
    for line, (epoch, start) in _checkpoint(specs, data, file, version, 2):
        out.append(
            (
                _number(line, epoch, _INT32, "epoch", file),
                _number(line, start, _INT64, "startOffset", file),
            )
        )
    return out


def decode_partition_metadata(
    specs: KaitaiSpecs, data: Buffer, *, file: str | None = None
) -> tuple[int, str]:
    """(version, topic id text) of ``partition.metadata``; extra lines are ignored like Kafka."""
    fields = ("version_line", "topic_id_line")
    lines = _java_lines(_text_lines(specs.partition_metadata, data, file, fields))
    values = []
    for index, key in enumerate(("version", "topic_id")):
        if index >= len(lines):
            raise CheckpointError(
                f"missing {key} line", file=file, position=len(data), field=key, line=index + 1
            )
        parts = re.split(r":[ \t\n\x0b\f\r]+", lines[index][2], maxsplit=1)
        if len(parts) != 2 or parts[0] != key:
            raise _malformed(lines[index], file, key, f"expected '{key}: <value>'")
        values.append(parts[1])
    version = _java_int(values[0], _INT32)
    if version is None:
        raise _malformed(lines[0], file, "version", "version is not an int")
    if version < 0:
        raise CheckpointError(
            f"Unrecognized version of partition metadata file: {version}",
            file=file,
            position=0,
            field="version",
            line=1,
        )
    if not _is_kafka_uuid(values[1]):
        raise _malformed(lines[1], file, "topic_id", "not a non-zero base64 Uuid")
    return version, values[1]


def _is_kafka_uuid(text: str) -> bool:
    """URL-safe base64 (padding optional) of 16 bytes, not all zero."""
    if len(text) > 24 or re.fullmatch(r"[A-Za-z0-9_-]*={0,2}", text) is None:
        return False
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return False
    return len(raw) == 16 and any(raw)
