"""Record batches as the runner sends and reads them: raw bytes out, visible records in.

Sending. A Produce request carries a ``records`` blob that the broker appends
as it is, batch by batch, only rewriting the base offsets (and the partition
leader epoch, and for LogAppendTime topics the timestamps). So replaying a
fixture log is: cut each ``.log`` file into its entries and send every entry
in its own Produce request. Batch boundaries, attributes, codecs, producer ids
and timestamps survive; offsets are the broker's to assign. A producer always
sends a v2 batch with base offset 0 (Kafka refuses any other with
INVALID_RECORD, ``UnifiedLog.analyzeAndValidateRecords``), so
:func:`as_produced` zeroes that field; it lies outside the CRC, which
therefore stays valid::

    segment   | entry 0 | entry 1 | entry 2 | ...      (base offset int64 | length int32 | ...)
    produce   [ entry 0 ]  [ entry 1 ]  [ entry 2 ]    one request each, base offset 0

:func:`split_entries` cuts with ``lethe_formats.records.log.entry_bounds``, so
v0/v1 message sets and v2 batches are both handled and a torn entry is a
``FormatError`` naming its position, not a silent truncation.

Reading. :func:`visible_records` decodes a Fetch ``records`` blob the way a
consumer does: whole batches come back, even ones that start below the fetch
offset (a batch that straddles the log start offset is returned whole), so
records below the fetch offset are dropped, and control records are never
shown; under read_committed the response's aborted transactions
(``aborted``: producer id, first offset) hide their batches as Kafka's consumer
hides them (``CompletedFetch``): an aborted transaction of a producer starts
counting once a batch's last offset reaches its first offset, the producer's
transactional batches are skipped from then on, and its ABORT marker ends it;
each record keeps its own attributes byte (KIP-87's flag is bit 0). A torn last
entry is tolerated (the broker may cut the response at
``max_bytes``); any other damage is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lethe_formats.errors import FormatError, TruncatedError
from lethe_formats.model import Compression, ControlType, Header, LegacyMessage, Record, RecordBatch
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.control import control_type
from lethe_formats.records.log import entry_bounds
from lethe_formats.records.scan import read_log

_MAGIC_AT = 16
_V2 = 2

__all__ = [
    "FetchedRecord",
    "as_produced",
    "build_records",
    "fixture_entries",
    "split_entries",
    "visible_records",
]


@dataclass(frozen=True, slots=True)
class FetchedRecord:
    """One record as a consumer sees it."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    batch_base_offset: int
    #: The record's own attributes byte, 0-255 (bit 0: KIP-87's tombstone flag);
    #: 0 for magic 0/1 messages, which have none.
    attributes: int = 0


def split_entries(data: bytes, *, file: str | None = None) -> list[bytes]:
    """The log entries (v2 batches, v0/v1 messages) of ``data``, bytes untouched."""
    entries: list[bytes] = []
    position = 0
    while position < len(data):
        _, end = entry_bounds(data, position, file=file)
        entries.append(data[position:end])
        position = end
    return entries


def as_produced(entry: bytes) -> bytes:
    """``entry`` as a producer sends it: a v2 batch gets base offset 0 (bytes 0-7);
    v0/v1 messages are left alone (Kafka 4.0 refuses them whatever their offset)."""
    if len(entry) > _MAGIC_AT and entry[_MAGIC_AT] == _V2:
        return bytes(8) + entry[8:]
    return entry


def fixture_entries(partition_dir: Path) -> list[bytes]:
    """Every entry of a partition directory's ``.log`` files, in base-offset order."""
    logs = sorted(partition_dir.glob("*.log"), key=lambda path: int(path.stem))
    entries: list[bytes] = []
    for log in logs:
        entries.extend(split_entries(log.read_bytes(), file=str(log)))
    return entries


def build_records(
    records: Sequence[RecordSpec], *, compression: Compression = Compression.NONE
) -> bytes:
    """One v2 batch as a non-idempotent producer sends it (base offset 0)."""
    return build_batch(records, base_offset=0, compression=compression)


def visible_records(
    data: bytes | None,
    fetch_offset: int,
    aborted: Sequence[tuple[int, int]] | None = None,
) -> list[FetchedRecord]:
    """What a consumer at ``fetch_offset`` reads from a Fetch ``records`` blob; with
    ``aborted`` (read_committed: the response's ``(producer id, first offset)`` list),
    the aborted transactions' records are left out, as Kafka's consumer does."""
    if not data:
        return []
    out: list[FetchedRecord] = []
    hidden = _AbortedTransactions(aborted)
    try:
        for entry in read_log(data):
            if not hidden.skips(entry):
                out.extend(_records_of(entry))
    except TruncatedError:
        pass  # a partial last entry, cut at max_bytes: consumers skip it too
    return [record for record in out if record.offset >= fetch_offset]


class _AbortedTransactions:
    """Kafka's consumer-side read_committed filter (``CompletedFetch``), batch by batch."""

    def __init__(self, aborted: Sequence[tuple[int, int]] | None) -> None:
        self.active = aborted is not None
        self.pending = sorted(aborted or (), key=lambda pair: pair[1])
        self.producers: set[int] = set()

    def skips(self, entry: RecordBatch | LegacyMessage) -> bool:
        if not self.active or isinstance(entry, LegacyMessage) or entry.header.producer_id < 0:
            return False
        header = entry.header
        while self.pending and self.pending[0][1] <= header.last_offset:
            self.producers.add(self.pending.pop(0)[0])
        if header.is_control:
            if any(_is_abort(record) for record in entry.records[:1]):
                self.producers.discard(header.producer_id)
            return False  # control records are never shown anyway
        return header.is_transactional and header.producer_id in self.producers


def _is_abort(record: Record) -> bool:
    try:
        return control_type(record) == ControlType.ABORT
    except FormatError:
        return False


def _records_of(entry: RecordBatch | LegacyMessage) -> list[FetchedRecord]:
    if isinstance(entry, LegacyMessage):
        messages = entry.inner or (entry,)
        return [
            FetchedRecord(
                m.offset,
                -1 if m.timestamp is None else m.timestamp,
                m.key,
                m.value,
                (),
                entry.offset,
            )
            for m in messages
        ]
    if entry.header.is_control:
        return []
    base = entry.header.base_offset
    return [
        FetchedRecord(
            entry.offset_of(record),
            entry.timestamp_of(record),
            record.key,
            record.value,
            record.headers,
            base,
            record.attributes & 0xFF,
        )
        for record in entry.records
    ]
