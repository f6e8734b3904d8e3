"""Turn one resolved :class:`~.spec.BatchSpec` into log bytes with lethe_formats' builders.

Which builder a batch goes to::

    control marker          -> build_end_txn_marker_batch (one COMMIT/ABORT record)
    v2, no records          -> build_empty_batch          (count 0, baseTimestamp -1)
    v2 with records         -> build_batch                (horizon, gaps, KIP-87 bit, ...)
    v0 / v1                 -> build_legacy_message_set   (plain entries or one wrapper)

Codec names map to the attribute codec plus, for snappy, the framing:
``snappy`` (or ``snappy-xerial``) is the xerial stream framing Kafka's own
writers and the Java client write, ``snappy-raw`` the raw block librdkafka
writes (all have codec id 2 on disk). Every other codec is written as Kafka
4.0's writer writes it (lethe_formats.compression).
"""

from __future__ import annotations

from lethe_formats.model import NO_TIMESTAMP, Compression, Header
from lethe_formats.records.builder import (
    RecordSpec,
    build_batch,
    build_empty_batch,
    build_end_txn_marker_batch,
    build_legacy_message_set,
)

from lethe_tools.fixturegen.spec import BatchSpec, RecordData

__all__ = ["CODECS", "encode_batch", "record_spec"]

#: Spec codec name -> (codec id, snappy framing).
CODECS: dict[str, tuple[Compression, str]] = {
    "none": (Compression.NONE, "xerial"),
    "gzip": (Compression.GZIP, "xerial"),
    "snappy": (Compression.SNAPPY, "xerial"),
    "snappy-xerial": (Compression.SNAPPY, "xerial"),
    "snappy-raw": (Compression.SNAPPY, "raw"),
    "lz4": (Compression.LZ4, "xerial"),
    "zstd": (Compression.ZSTD, "xerial"),
}


def record_spec(record: RecordData) -> RecordSpec:
    return RecordSpec(
        key=record.key,
        value=record.value,
        headers=tuple(Header(key, value) for key, value in record.headers),
        timestamp=record.timestamp if record.timestamp is not None else NO_TIMESTAMP,
        kip87_tombstone=record.kip87_tombstone,
    )


def encode_batch(batch: BatchSpec) -> bytes:
    """The bytes of one append; raises ValueError/FormatError if a builder refuses."""
    compression, framing = CODECS[batch.codec]
    if batch.magic < 2:
        return build_legacy_message_set(
            [record_spec(r) for r in batch.records],
            magic=batch.magic,
            base_offset=batch.base_offset,
            compression=compression,
            timestamp_type=batch.timestamp_type,
            log_append_time=batch.log_append_time,
            snappy_framing=framing,
        )
    if batch.control is not None:
        return build_end_txn_marker_batch(
            base_offset=batch.base_offset,
            producer_id=batch.producer_id,
            producer_epoch=batch.producer_epoch,
            control_type=batch.control.control_type,
            coordinator_epoch=batch.control.coordinator_epoch,
            timestamp=batch.control.timestamp,
            partition_leader_epoch=batch.partition_leader_epoch,
            delete_horizon_ms=batch.delete_horizon_ms,
        )
    if batch.is_empty:
        assert batch.max_timestamp is not None  # enforced by rules._max_timestamp
        return build_empty_batch(
            base_offset=batch.base_offset,
            last_offset_delta=batch.last_offset_delta,
            max_timestamp=batch.max_timestamp,
            producer_id=batch.producer_id,
            producer_epoch=batch.producer_epoch,
            base_sequence=batch.base_sequence,
            partition_leader_epoch=batch.partition_leader_epoch,
            timestamp_type=batch.timestamp_type,
            is_transactional=batch.transactional,
        )
    return build_batch(
        [record_spec(r) for r in batch.records],
        base_offset=batch.base_offset,
        compression=compression,
        timestamp_type=batch.timestamp_type,
        log_append_time=batch.log_append_time,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        partition_leader_epoch=batch.partition_leader_epoch,
        is_transactional=batch.transactional,
        delete_horizon_ms=batch.delete_horizon_ms,
        offset_deltas=batch.offset_deltas,
        last_offset_delta=batch.last_offset_delta,
        snappy_framing=framing,
    )
