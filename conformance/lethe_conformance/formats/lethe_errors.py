"""The suite's error ids for lethe's typed decoding errors.

Theory of operation
-------------------
lethe raises :class:`~lethe_formats.errors.FormatError` subclasses that name
the field and carry Kafka's wording; the format suite names faults with
stable ids (``fixtures/formats/README.md``). :func:`error_id` maps one to the
other by class first, then by the field and wording, in this order:

1. ``ChecksumError`` (batch, message or snapshot CRC) → ``crc-mismatch``;
   ``VarintError`` → ``varint-too-long``; ``UnsupportedMagicError`` →
   ``unknown-magic``; ``UnsupportedCompressionError`` → ``unknown-codec``,
   or ``codec-not-allowed`` for zstd below magic 2;
2. text files (``CheckpointReadError``): Kafka's message or exception class
   (malformed line, unrecognised version, ``Illegal Capacity``, entry count,
   NumberFormatException, invalid topic id);
3. snapshots (``CorruptSnapshotError``): version, negative array size, or a
   buffer underflow / short array (``truncated``);
4. control records: key or marker value too short, or a negative version;
5. records and batches, by wording: failures of the codec library
   (field ``records``) → ``corrupt-compressed-data``; legacy wrapper rules;
   "records still remaining" / "left unread" → ``trailing-bytes``; negative
   sizes and counts → ``negative-length``; a size under the format minimum
   → ``size-too-small``;
6. running out of bytes: ``TruncatedError`` (the input ends; but a legacy
   key or value running past its complete message is ``length-overrun``),
   ``CorruptIndexError`` for a transaction index version → ``unknown-version``;
   in a ``record`` case the record's own length reaching past the input is also
   ``truncated``; in a ``record-batch`` case, data ending exactly at the end
   of the batch where another record should start is
   ``record-count-mismatch``; any other length reaching past its enclosing
   structure is ``length-overrun``.

An error no rule matches keeps its class name (``lethe:ClassName``), so the
runner shows it as a wrong error id rather than hiding it.
"""

from __future__ import annotations

import re

from lethe_formats.errors import (
    ChecksumError,
    CorruptIndexError,
    FormatError,
    TruncatedError,
    UnsupportedCompressionError,
    UnsupportedMagicError,
    VarintError,
)
from lethe_formats.storage.index_problems import IndexProblem
from lethe_formats.storage.java_text import CheckpointReadError
from lethe_formats.storage.producer_snapshot import CorruptSnapshotError

__all__ = ["error_id", "index_problem_id"]

_TEXT = [
    ("Malformed line", "malformed-checkpoint-line"),
    ("Unrecognised version", "unknown-version"),
    ("Unrecognized version", "unknown-version"),
    ("Illegal Capacity", "negative-count"),
    ("entries in checkpoint file", "checkpoint-count-mismatch"),
    ("Invalid topic ID", "zero-topic-id"),
]
_SNAPSHOT = [
    ("unknown file version", "unknown-version"),
    ("cannot be negative", "negative-count"),  # Kafka 3.x's Struct schema
    ("producerEntries was serialized as null", "negative-count"),  # 4.0's generated message
    ("BufferUnderflowException", "truncated"),
    ("bytes available", "truncated"),
    ("bytes remaining", "truncated"),
    ("schema validation: null", "truncated"),
]
_CONTROL = [
    (r"Invalid control record key size|control record key is null", "control-key-too-short"),
    (
        r"Invalid end transaction marker size|end transaction marker is null",
        "end-txn-marker-too-short",
    ),
    (r"Invalid version found", "negative-control-version"),
]
_RECORD = [
    (r"no inner records|with null value \(magic", "empty-wrapper"),
    (r"invalid wrapper offset", "invalid-wrapper-offset"),
    (r"must not be compressed", "nested-compression"),
    (
        r"records still remaining|bytes left unread|bytes after the (batch|record)$",
        "trailing-bytes",
    ),
    (r"Invalid negative|Found invalid .* -\d+$|is smaller than the minimum 0$", "negative-length"),
    (r"is smaller than the minimum \d+$", "size-too-small"),
]


def _first(rules: list[tuple[str, str]], message: str) -> str | None:
    for pattern, name in rules:
        if re.search(pattern, message):
            return name
    return None


def _classified(error: FormatError) -> str | None:
    if isinstance(error, ChecksumError):
        return "crc-mismatch"
    if isinstance(error, VarintError):
        return "varint-too-long"
    if isinstance(error, UnsupportedMagicError):
        return "unknown-magic"
    if isinstance(error, UnsupportedCompressionError):
        return "codec-not-allowed" if "not allowed" in error.message else "unknown-codec"
    if isinstance(error, CheckpointReadError):
        if error.kafka_exception == "NumberFormatException":
            return "invalid-number"
        return _first([(re.escape(p), n) for p, n in _TEXT], error.message)
    if (
        isinstance(error, CorruptIndexError)
        and "Unexpected aborted transaction version" in error.message
    ):
        return "unknown-version"
    if isinstance(error, CorruptSnapshotError):
        return _first([(re.escape(p), n) for p, n in _SNAPSHOT], error.message)
    return None


def _ran_out(kind: str, error: FormatError) -> str | None:
    """ids for "claims N bytes, only M left" and "data ends inside X"."""
    if not re.search(r"claims \d+ bytes, only \d+ left|data ends inside", error.message):
        return None
    inside_message = kind == "log-segment" and error.field in ("key", "value")
    if isinstance(error, TruncatedError) and not inside_message:
        return "truncated"
    if kind == "record" and error.field == "length":
        return "truncated"
    if kind == "record-batch" and error.message.endswith("data ends inside records.length"):
        return "record-count-mismatch"
    return "length-overrun"


def error_id(kind: str, error: FormatError) -> str:
    """The suite's error id for ``error`` raised while decoding a ``kind`` input."""
    found = _classified(error)
    if found is None and kind == "control-record":
        found = _first(_CONTROL, error.message)
    if found is None and error.field == "records" and kind in ("record-batch", "log-segment"):
        found = "corrupt-compressed-data"
    found = found or _first(_RECORD, error.message) or _ran_out(kind, error)
    if found is None and isinstance(error, TruncatedError):
        found = "truncated"
    return found or f"lethe:{type(error).__name__}"


def index_problem_id(problem: IndexProblem) -> str:
    """The id of an index sanity-check failure (Kafka's wording)."""
    message = problem.message
    if "neither positive nor a multiple" in message:
        return "partial-entry"
    if "less than the first timestamp" in message:
        return "timestamp-before-first"
    if "less than the base offset" in message or "less than the first offset" in message:
        return "offset-before-base"
    return f"lethe:index:{problem.field}"
