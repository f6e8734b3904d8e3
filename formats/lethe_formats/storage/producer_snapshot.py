"""The producer-state snapshot (``<20-digit offset>.snapshot``).

Theory of operation
-------------------
``ProducerStateManager`` writes the idempotent/transactional producer table at
every segment roll and at clean shutdown, so a restarting broker need not
replay the whole log. The file is a Kafka protocol ``Struct``
(``PID_SNAPSHOT_MAP_SCHEMA``), big-endian::

    +0   int16   version            1 (PRODUCER_SNAPSHOT_VERSION)
    +2   uint32  crc                CRC-32C of bytes [6, end of file)
    +6   int32   count              entries (ArrayOf: negative is invalid)
    +10  count x 46-byte entry:
         +0   int64  producer_id
         +8   int16  epoch
         +10  int32  last_sequence
         +14  int64  last_offset               -1: no batch metadata
         +22  int32  offset_delta              lastSeq - firstSeq of the last batch
         +26  int64  timestamp                 max timestamp of the last batch
         +34  int32  coordinator_epoch
         +38  int64  current_txn_first_offset  -1: no ongoing transaction

``readSnapshot`` order in Kafka 4.0 (the generated ``ProducerSnapshot``
message; checked against kafka-dump-log 4.0.0), reproduced by
:func:`read_producer_snapshot`; every failure of steps 1-2 is a
``CorruptSnapshotException("Snapshot failed schema validation: " + cause)``:

1. the version short; ``version != 1`` → cause ``Snapshot contained an
   unknown file version N`` (before anything else is read);
2. the message: a shortfall anywhere is a ``BufferUnderflowException`` without
   a message (cause ``null``); a negative count is ``non-nullable field
   producerEntries was serialized as null``; a count above the bytes left is
   ``Tried to allocate a collection of size N, but there are only R bytes
   remaining.``;
3. CRC-32C over everything after the crc field (trailing bytes included, which
   the message itself ignores) → ``Snapshot is corrupt (CRC is no longer
   valid). Stored crc: S. Computed crc: C``.

Entries keep the stored fields; properties derive what ``kafka-dump-log``
prints (``firstSequence`` = lastSequence − offsetDelta with Kafka's int32
wrap-around, ``OptionalLong.empty`` for −1), and :func:`kafka_dump_line`
renders an entry exactly as ``DumpLogSegments.dumpProducerIdSnapshot`` does.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass

from construct import Int16sb, Int32sb, Int32ub, PrefixedArray, Struct

from lethe_formats.crc import crc32c
from lethe_formats.errors import ChecksumError, FormatError
from lethe_formats.storage.fixed_entries import EntryLayout

__all__ = [
    "PRODUCER_SNAPSHOT_SCHEMA",
    "PRODUCER_SNAPSHOT_VERSION",
    "SNAPSHOT_ENTRY",
    "CorruptSnapshotError",
    "ProducerSnapshot",
    "ProducerSnapshotEntry",
    "SnapshotChecksumError",
    "encode_producer_snapshot",
    "kafka_dump_line",
    "read_producer_snapshot",
]

Buffer = bytes | bytearray | memoryview

PRODUCER_SNAPSHOT_VERSION = 1
HEADER_SIZE = 10  # version + crc + count
CRC_COVERAGE_START = 6
INT32_MAX = 2**31 - 1

SNAPSHOT_ENTRY = EntryLayout(
    "producer snapshot entry",
    (
        ("producer_id", "q"),
        ("epoch", "h"),
        ("last_sequence", "i"),
        ("last_offset", "q"),
        ("offset_delta", "i"),
        ("timestamp", "q"),
        ("coordinator_epoch", "i"),
        ("current_txn_first_offset", "q"),
    ),
)
#: Normative Construct schema (trailing bytes after the array are not part of it).
PRODUCER_SNAPSHOT_SCHEMA = Struct(
    "version" / Int16sb,
    "crc" / Int32ub,
    "producer_entries" / PrefixedArray(Int32sb, SNAPSHOT_ENTRY.entry_construct()),
)
_HEADER = struct.Struct(">hIi")


class CorruptSnapshotError(FormatError):
    """Kafka's ``CorruptSnapshotException``: the broker deletes the snapshot and
    rebuilds producer state from the log."""


class SnapshotChecksumError(CorruptSnapshotError, ChecksumError):
    """The stored CRC-32C does not match the bytes after it."""

    def __init__(self, stored: int, computed: int, **where: object) -> None:
        ChecksumError.__init__(self, stored, computed, **where)
        self.message = (
            "Snapshot is corrupt (CRC is no longer valid). "
            f"Stored crc: {stored}. Computed crc: {computed}"
        )
        self.args = (self.message,)


@dataclass(frozen=True, slots=True)
class ProducerSnapshotEntry:
    """One producer's state, fields as stored."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int

    @property
    def has_batch_metadata(self) -> bool:
        """Kafka keeps batch metadata only when ``last_offset >= 0``."""
        return self.last_offset >= 0

    @property
    def first_sequence(self) -> int:
        """``DefaultRecordBatch.decrementSequence(lastSeq, offsetDelta)``."""
        if self.last_sequence < self.offset_delta:
            return INT32_MAX - (self.offset_delta - self.last_sequence) + 1
        return self.last_sequence - self.offset_delta

    @property
    def ongoing_txn_first_offset(self) -> int | None:
        """``currentTxnFirstOffset`` as Kafka reads it (negative → none)."""
        return self.current_txn_first_offset if self.current_txn_first_offset >= 0 else None

    def as_row(self) -> tuple[int, ...]:
        return (
            self.producer_id,
            self.producer_epoch,
            self.last_sequence,
            self.last_offset,
            self.offset_delta,
            self.timestamp,
            self.coordinator_epoch,
            self.current_txn_first_offset,
        )


@dataclass(frozen=True, slots=True)
class ProducerSnapshot:
    """A whole ``.snapshot`` file."""

    version: int
    crc: int
    entries: tuple[ProducerSnapshotEntry, ...]


def _schema_error(detail: str, position: int, field: str, file: str | None) -> CorruptSnapshotError:
    return CorruptSnapshotError(
        f"Snapshot failed schema validation: {detail}", file=file, position=position, field=field
    )


def _underflow(position: int, field: str, file: str | None) -> CorruptSnapshotError:
    """Java's ``BufferUnderflowException`` has no message: Kafka prints ``null``."""
    return _schema_error("null", position, field, file)


def _read_header(data: memoryview, file: str | None) -> tuple[int, int, int]:
    if len(data) < 2:
        raise _underflow(0, "version", file)
    (version,) = struct.unpack_from(">h", data)
    if version != PRODUCER_SNAPSHOT_VERSION:
        raise _schema_error(
            f"Snapshot contained an unknown file version {version}", 0, "version", file
        )
    for name, start, size in (("crc", 2, 4), ("producer_entries", 6, 4)):
        if len(data) < start + size:
            raise _underflow(start, name, file)
    version, crc, count = _HEADER.unpack_from(data)
    if count < 0:
        raise _schema_error(
            "non-nullable field producerEntries was serialized as null",
            6,
            "producer_entries",
            file,
        )
    remaining = len(data) - HEADER_SIZE
    if count > remaining:
        raise _schema_error(
            f"Tried to allocate a collection of size {count}, but there are only "
            f"{remaining} bytes remaining.",
            6,
            "producer_entries",
            file,
        )
    return version, crc, count


def _read_entries(data: memoryview, count: int, file: str | None) -> list[ProducerSnapshotEntry]:
    size = SNAPSHOT_ENTRY.size
    available = (len(data) - HEADER_SIZE) // size
    if available < count:
        start = HEADER_SIZE + available * size
        offset_in_entry = 0
        for name, code in SNAPSHOT_ENTRY.fields:
            width = struct.calcsize(">" + code)
            if start + offset_in_entry + width > len(data):
                raise _underflow(
                    start + offset_in_entry, f"producer_entries[{available}].{name}", file
                )
            offset_in_entry += width
    body = data[HEADER_SIZE : HEADER_SIZE + count * size]
    return [ProducerSnapshotEntry(*row) for row in SNAPSHOT_ENTRY.iter_unpack(body)]


def read_producer_snapshot(data: Buffer, *, file: str | None = None) -> ProducerSnapshot:
    """Decode and verify a ``.snapshot`` file as ``ProducerStateManager.readSnapshot`` does.

    Raises :class:`CorruptSnapshotError` (schema, version) or
    :class:`SnapshotChecksumError` (CRC), each with the absolute byte position.
    """
    view = memoryview(data)
    version, stored_crc, count = _read_header(view, file)
    entries = _read_entries(view, count, file)
    computed = crc32c(view[CRC_COVERAGE_START:])
    if computed != stored_crc:
        raise SnapshotChecksumError(stored_crc, computed, file=file, position=2, field="crc")
    return ProducerSnapshot(version, stored_crc, tuple(entries))


def encode_producer_snapshot(
    entries: Iterable[ProducerSnapshotEntry], *, version: int = PRODUCER_SNAPSHOT_VERSION
) -> bytes:
    """Bytes of a ``.snapshot`` file with a correct CRC (``writeSnapshot``)."""
    rows = [entry.as_row() for entry in entries]
    try:
        body = struct.pack(">i", len(rows)) + b"".join(SNAPSHOT_ENTRY.pack(row) for row in rows)
        return struct.pack(">hI", version, crc32c(body)) + body
    except struct.error as exc:
        raise ValueError(f"snapshot field out of range: {exc}") from None


def _optional_long(value: int) -> str:
    return f"OptionalLong[{value}]" if value >= 0 else "OptionalLong.empty"


def kafka_dump_line(entry: ProducerSnapshotEntry) -> str:
    """The line ``kafka-dump-log`` prints for one snapshot entry (no newline).

    Without batch metadata the line ends in a space after ``lastTimestamp``,
    as Kafka's ``print`` calls leave it.
    """
    line = (
        f"producerId: {entry.producer_id} producerEpoch: {entry.producer_epoch} "
        f"coordinatorEpoch: {entry.coordinator_epoch} "
        f"currentTxnFirstOffset: {_optional_long(entry.current_txn_first_offset)} "
        f"lastTimestamp: {entry.timestamp} "
    )
    if entry.has_batch_metadata:
        line += (
            f"firstSequence: {entry.first_sequence} lastSequence: {entry.last_sequence} "
            f"lastOffset: {entry.last_offset} offsetDelta: {entry.offset_delta} "
            f"timestamp: {entry.timestamp}"
        )
    return line
