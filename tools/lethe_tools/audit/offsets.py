"""Committed consumer offsets: rows of the ``offsets`` table from ``__consumer_offsets`` records.

Theory of operation
-------------------
The group coordinator keeps committed offsets as records of its own topic,
``__consumer_offsets``; the record key's leading int16 is the record type::

    key   type 0/1 | group | topic | partition         OffsetCommitKey
    value version 0-4 | offset | [leaderEpoch v3+] | metadata | commitTimestamp
                      | [expireTimestamp v1 only]       OffsetCommitValue (null = deleted)

Decoding is ``lethe_formats.coordinator``'s (every key and value version
Kafka writes); this module only turns its dataclasses into table rows while a
segment task walks the partition's records (:mod:`lethe_tools.audit.decode`),
so the log is read once. Record types 2-8 (group metadata, KIP-848 state) are
not offset commits and give no row; a type the coordinator does not know is
skipped as Kafka's loader skips it. A key or value that does not decode is a
problem row (``stage="offsets"``) anchored at its batch, because a record
inside a batch has no file position of its own (it may be compressed).
"""

from __future__ import annotations

from lethe_formats.coordinator import (
    OffsetCommitKey,
    OffsetCommitValue,
    UnknownRecordTypeError,
    decode_key,
    decode_value,
)
from lethe_formats.errors import FormatError
from lethe_formats.model import BatchHeader, Record, RecordBatch

__all__ = ["CONSUMER_OFFSETS_TOPIC", "OffsetRow", "offset_rows"]

CONSUMER_OFFSETS_TOPIC = "__consumer_offsets"

#: One row of the ``offsets`` table, in schema order (schemas.OFFSETS).
OffsetRow = tuple[
    str,
    int,
    int,
    int,
    bool,
    int,
    int,
    str,
    str,
    int,
    bool,
    int | None,
    int | None,
    int | None,
    str | None,
    int | None,
    int | None,
]


def _row(
    where: tuple[str, int],
    batch: RecordBatch,
    record: Record,
    key: OffsetCommitKey,
    value: OffsetCommitValue | None,
) -> OffsetRow:
    header = batch.header
    common = (
        *where,
        batch.offset_of(record),
        batch.timestamp_of(record),
        header.is_transactional,
        header.producer_id,
        key.version,
        key.group,
        key.topic,
        key.partition,
    )
    if value is None:
        return (*common, True, None, None, None, None, None, None)
    return (
        *common,
        False,
        value.version,
        value.offset,
        value.leader_epoch if value.version >= 3 else None,
        value.metadata,
        value.commit_timestamp,
        value.expire_timestamp if value.version == 1 else None,
    )


def offset_rows(
    file: str, coordinator_partition: int, header: BatchHeader, records: tuple[Record, ...]
) -> tuple[list[OffsetRow], list[FormatError]]:
    """Offset-commit rows of one batch, and the errors of records that did not decode."""
    rows: list[OffsetRow] = []
    errors: list[FormatError] = []
    if header.is_control:
        return rows, errors
    batch = RecordBatch(header, records)
    for record in records:
        try:
            key = decode_key(record.key)
            if not isinstance(key, OffsetCommitKey):
                continue
            value = decode_value(key.version, record.value)
        except UnknownRecordTypeError:
            continue
        except FormatError as error:
            error.message = f"record at offset {batch.offset_of(record)}: {error.message}"
            errors.append(error)
            continue
        if value is not None and not isinstance(value, OffsetCommitValue):
            continue
        rows.append(_row((file, coordinator_partition), batch, record, key, value))
    return rows, errors
