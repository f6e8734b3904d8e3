"""How the cleaner reads and rewrites batches: chunks, buffers, header fields, producers.

kafka-facts 3.5 (one offset index entry per append when more than
index.interval.bytes were appended since the last), 4.2 (cleanInto reads
I/O-buffer chunks, grows the buffers for a larger batch, fails on a torn one),
4.3 (rebuilt header fields; LogAppendTime keeps maxTimestamp), 4.5
(producer.id.expiration.ms); catalog KIP534-HZN-6/7, KIP534-TXN-7.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from lethe_formats.errors import FormatError
from lethe_formats.model import BatchHeader, Compression, RecordBatch, TimestampType
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.scan import read_log
from lethe_formats.storage.index import read_offset_index
from lethe_reference.cleaner.algorithm import CleanParams, SourceSegment, clean_log
from lethe_reference.cleaner.filter import LastRecord
from lethe_reference.cleaner.producers import scan_producers

T0 = 1_800_000_000_000


def _batch(offset: int, *pairs: tuple[bytes, bytes | None], **kw: object) -> bytes:
    specs = [RecordSpec(k, v, timestamp=T0 + offset + i) for i, (k, v) in enumerate(pairs)]
    return build_batch(specs, base_offset=offset, **kw)  # type: ignore[arg-type]


def _params(uncleanable: int, **kw: object) -> CleanParams:
    base: dict[str, object] = {
        "first_dirty_offset": 0,
        "first_uncleanable_offset": uncleanable,
        "now_ms": T0,
        "delete_retention_ms": 1000,
        "segment_bytes": 1 << 30,
        "max_index_bytes": 1 << 20,
        "index_interval_bytes": 0,
        "max_message_bytes": 1048588,
    }
    return CleanParams(**(base | kw))  # type: ignore[arg-type]


def _three() -> list[SourceSegment]:
    data = b"".join(_batch(o, (b"k%d" % o, b"v")) for o in range(3))
    return [SourceSegment(0, data, 0, file="0.log"), SourceSegment(3, b"", 0)]


def _index_offsets(index: bytes) -> list[int]:
    return [e.relative_offset for e in read_offset_index(index)]


def test_one_chunk_is_one_append_with_no_index_entry_at_position_0() -> None:
    cleaned = clean_log(_three(), _params(3)).segments[0]
    assert cleaned.offset_index == b""


def test_small_io_buffer_appends_each_batch_and_indexes_each_later_append() -> None:
    size = len(_batch(0, (b"k0", b"v")))
    cleaned = clean_log(_three(), _params(3, io_buffer_bytes=size)).segments[0]
    assert _index_offsets(cleaned.offset_index) == [1, 2]


def test_batch_larger_than_the_buffer_grows_the_buffers() -> None:
    big = _batch(0, (b"k", b"x" * 500))
    segments = [SourceSegment(0, big, 0), SourceSegment(1, b"", 0)]
    cleaned = clean_log(segments, _params(1, io_buffer_bytes=64, max_message_bytes=100)).segments[0]
    assert cleaned.log == big


def test_torn_batch_is_reported_with_file_and_position() -> None:
    whole = _batch(0, (b"a", b"v")) + _batch(1, (b"b", b"v"))
    torn = whole[:-5]
    segments = [
        SourceSegment(0, torn, 0, file="00000000000000000000.log"),
        SourceSegment(2, b"", 0),
    ]
    with pytest.raises(FormatError) as caught:
        clean_log(segments, _params(2))
    assert caught.value.file == "00000000000000000000.log"
    assert caught.value.position == len(_batch(0, (b"a", b"v")))


def _rebuilt(header_kw: Mapping[str, object]) -> BatchHeader:
    # a, b in one batch, b overwritten later: the batch is rebuilt with a only
    first = _batch(0, (b"a", b"1"), (b"b", b"1"), **header_kw)
    later = _batch(2, (b"b", b"2"))
    segments = [SourceSegment(0, first + later, 0), SourceSegment(3, b"", 0)]
    cleaned = clean_log(segments, _params(3)).segments[0]
    batch = next(b for b in read_log(cleaned.log) if isinstance(b, RecordBatch))
    assert [r.key for r in batch.records] == [b"a"]
    return batch.header


def test_rebuilt_batch_keeps_its_header_fields() -> None:
    kw = {
        "compression": Compression.GZIP,
        "producer_id": 9,
        "producer_epoch": 3,
        "base_sequence": 40,
        "partition_leader_epoch": 7,
    }
    header = _rebuilt(kw)
    assert header.compression is Compression.GZIP
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (9, 3, 40)
    assert header.partition_leader_epoch == 7
    assert header.last_offset == 1  # forced to the original batch's last offset
    assert header.max_timestamp == T0  # recomputed from the kept record (a)


def test_rebuilt_log_append_time_batch_keeps_its_max_timestamp() -> None:
    header = _rebuilt({"timestamp_type": TimestampType.LOG_APPEND_TIME, "log_append_time": T0 + 99})
    assert header.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert header.max_timestamp == T0 + 99


def _headers(*batches: bytes) -> list[BatchHeader]:
    return [b.header for b in read_log(b"".join(batches)) if isinstance(b, RecordBatch)]


def test_producer_is_active_until_expiration() -> None:
    headers = _headers(_batch(0, (b"a", b"1"), producer_id=4, producer_epoch=0, base_sequence=0))
    alive = scan_producers(headers, now_ms=T0 + 99, expiration_ms=100, log_start_offset=0)
    assert alive.active == {4: LastRecord(0, 0)}
    gone = scan_producers(headers, now_ms=T0 + 100, expiration_ms=100, log_start_offset=0)
    assert gone.active == {}


def test_producer_below_the_log_start_offset_is_not_active() -> None:
    headers = _headers(_batch(0, (b"a", b"1"), producer_id=4, producer_epoch=0, base_sequence=0))
    scan = scan_producers(headers, now_ms=T0, expiration_ms=10**9, log_start_offset=1)
    assert scan.active == {}


def test_open_transaction_sets_the_first_unstable_offset() -> None:
    txn = {"producer_id": 4, "producer_epoch": 0, "base_sequence": 0, "is_transactional": True}
    headers = _headers(_batch(0, (b"x", b"1")), _batch(1, (b"a", b"1"), **txn))
    scan = scan_producers(headers, now_ms=T0, expiration_ms=1, log_start_offset=0)
    assert scan.first_unstable_offset == 1
    assert 4 in scan.active  # an open transaction never expires
