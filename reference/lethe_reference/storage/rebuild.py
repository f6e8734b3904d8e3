"""The two cases where Kafka re-encodes a producer's batch instead of patching it.

Theory of operation
-------------------
``LogValidator`` assigns offsets in place unless it cannot (the comment on
``validateMessagesAndAssignOffsetsCompressed``):

1. the topic's ``compression.type`` names a codec other than the batch's
   (``producer`` keeps the producer's codec; ``uncompressed`` means none);
2. a compressed batch's inner offset deltas are not 0, 1, ..., n-1 ("some
   older clients do not implement the V1 internal offsets correctly").

Then ``MemoryRecordsBuilder`` writes a new batch: offsets from the log end
offset with deltas 0..n-1, ``baseTimestamp`` = the first record's timestamp,
every record keeping its key, value, headers and timestamp, record attributes
0 (``DefaultRecord.writeTo`` writes the byte as 0; KIP-87 extension: the bits
of ``record_attribute_mask`` are copied instead, see below), the producer
id/epoch/sequence and transactional flag of the original, the
topic's timestamp type, and ``maxTimestamp`` = the largest record timestamp or
the log append time. Snappy is written in the xerial framing, as the Java
library Kafka uses writes it. The compressed bytes may differ from Java's
(other compressor), which no client can observe: only the records matter.

KIP-87 (lethe extension, catalog KIP87-BIT-4/5): with ``tombstone.flag.enable``
the validator passes ``record_attribute_mask = 0x01`` so each record's tombstone
bit survives the rebuild; with the flag off the mask is 0 and the byte is
written as Kafka writes it::

    record attributes   Kafka / flag off   flag on
    in place (patch)    kept as sent       kept as sent
    rebuilt             0x00               sent & 0x01
"""

from __future__ import annotations

from lethe_formats.model import (
    NO_TIMESTAMP,
    BatchHeader,
    Compression,
    Record,
    RecordBatch,
    TimestampType,
)
from lethe_formats.records.attributes import batch_attributes
from lethe_formats.records.batch import encode_batch

__all__ = ["needs_rebuild", "rebuild_batch", "target_codec"]

_CODECS = {
    "uncompressed": Compression.NONE,
    "gzip": Compression.GZIP,
    "snappy": Compression.SNAPPY,
    "lz4": Compression.LZ4,
    "zstd": Compression.ZSTD,
}


def target_codec(source: Compression, compression_type: str) -> Compression:
    """``BrokerCompressionType.targetCompression``: ``producer`` keeps ``source``."""
    if compression_type == "producer":
        return source
    try:
        return _CODECS[compression_type]
    except KeyError:
        raise ValueError(f"unknown compression.type {compression_type!r}") from None


def needs_rebuild(header: BatchHeader, records: tuple[Record, ...], compression_type: str) -> bool:
    """True in the two cases of the module docstring."""
    source = header.compression
    if target_codec(source, compression_type) is not source:
        return True
    if source is Compression.NONE:
        return False
    return any(record.offset_delta != index for index, record in enumerate(records))


def rebuild_batch(
    batch: RecordBatch,
    *,
    base_offset: int,
    leader_epoch: int,
    log_append_time: int | None,
    target_compression: str,
    record_attribute_mask: int = 0,
) -> bytes:
    """A new batch holding ``batch``'s records, as ``MemoryRecordsBuilder`` writes it;
    ``record_attribute_mask``: record attribute bits copied (KIP-87), 0 as in Kafka."""
    old = batch.header
    stamps = [batch.timestamp_of(record) for record in batch.records]
    base_timestamp = stamps[0] if stamps else NO_TIMESTAMP
    records = tuple(
        Record(
            record.attributes & record_attribute_mask,
            stamp - base_timestamp,
            index,
            record.key,
            record.value,
            record.headers,
        )
        for index, (record, stamp) in enumerate(zip(batch.records, stamps, strict=True))
    )
    kind = TimestampType.CREATE_TIME if log_append_time is None else TimestampType.LOG_APPEND_TIME
    header = BatchHeader(
        base_offset=base_offset,
        batch_length=0,
        partition_leader_epoch=leader_epoch,
        magic=2,
        crc=0,
        attributes=batch_attributes(
            compression=target_codec(old.compression, target_compression),
            timestamp_type=kind,
            transactional=old.is_transactional,
        ),
        last_offset_delta=len(records) - 1,
        base_timestamp=base_timestamp,
        max_timestamp=max(stamps, default=NO_TIMESTAMP)
        if log_append_time is None
        else log_append_time,
        producer_id=old.producer_id,
        producer_epoch=old.producer_epoch,
        base_sequence=old.base_sequence,
        records_count=len(records),
    )
    return encode_batch(RecordBatch(header, records), snappy_framing="xerial")
