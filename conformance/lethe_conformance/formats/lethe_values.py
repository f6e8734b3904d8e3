"""lethe's decoded values (``lethe_formats.model`` and friends) as the cases' tagged JSON.

Theory of operation
-------------------
The format cases spell every decoded value in tagged JSON with Kafka's field
names (``fixtures/formats/README.md``). lethe's decoders return frozen
dataclasses that keep the stored fields under Python names; each function
here maps one of them field by field. Only the in-process lethe adapter uses
this module: it is the one place, with :mod:`.lethe_adapter`, where the
conformance kit touches ``lethe_formats``.
"""

from __future__ import annotations

from typing import Any

from lethe_formats.model import (
    AbortedTxn,
    LegacyMessage,
    OffsetIndexEntry,
    Record,
    RecordBatch,
    TimeIndexEntry,
)
from lethe_formats.storage.checkpoint import LeaderEpochCheckpoint, OffsetCheckpoint
from lethe_formats.storage.partition_metadata import PartitionMetadata
from lethe_formats.storage.producer_snapshot import ProducerSnapshot

from lethe_conformance.formats.tagged import bytes_value, int64

__all__ = [
    "batch_value",
    "checkpoint_value",
    "legacy_value",
    "offset_index_value",
    "partition_metadata_value",
    "record_value",
    "snapshot_value",
    "time_index_value",
    "txn_index_value",
]


def record_value(record: Record) -> dict[str, Any]:
    return {
        "attributes": record.attributes,
        "timestampDelta": int64(record.timestamp_delta),
        "offsetDelta": record.offset_delta,
        "key": bytes_value(record.key),
        "value": bytes_value(record.value),
        "headers": [
            {"key": bytes_value(h.key), "value": bytes_value(h.value)} for h in record.headers
        ],
    }


def batch_value(batch: RecordBatch) -> dict[str, Any]:
    h = batch.header
    return {
        "baseOffset": int64(h.base_offset),
        "batchLength": h.batch_length,
        "partitionLeaderEpoch": h.partition_leader_epoch,
        "magic": h.magic,
        "crc": h.crc,
        "attributes": h.attributes,
        "lastOffsetDelta": h.last_offset_delta,
        "baseTimestamp": int64(h.base_timestamp),
        "maxTimestamp": int64(h.max_timestamp),
        "producerId": int64(h.producer_id),
        "producerEpoch": h.producer_epoch,
        "baseSequence": h.base_sequence,
        "recordsCount": h.records_count,
        "records": [record_value(r) for r in batch.records],
    }


def legacy_value(message: LegacyMessage) -> dict[str, Any]:
    return {
        "offset": int64(message.offset),
        "messageSize": message.message_size,
        "crc": message.crc,
        "magic": message.magic,
        "attributes": message.attributes,
        "timestamp": None if message.timestamp is None else int64(message.timestamp),
        "key": bytes_value(message.key),
        "value": bytes_value(message.value),
        "inner": [legacy_value(inner) for inner in message.inner],
    }


def offset_index_value(entries: tuple[OffsetIndexEntry, ...]) -> dict[str, Any]:
    return {
        "entries": [{"relativeOffset": e.relative_offset, "position": e.position} for e in entries]
    }


def time_index_value(entries: tuple[TimeIndexEntry, ...]) -> dict[str, Any]:
    return {
        "entries": [
            {"timestamp": int64(e.timestamp), "relativeOffset": e.relative_offset} for e in entries
        ]
    }


def txn_index_value(entries: tuple[AbortedTxn, ...]) -> dict[str, Any]:
    return {
        "entries": [
            {
                "version": e.version,
                "producerId": int64(e.producer_id),
                "firstOffset": int64(e.first_offset),
                "lastOffset": int64(e.last_offset),
                "lastStableOffset": int64(e.last_stable_offset),
            }
            for e in entries
        ]
    }


def snapshot_value(snapshot: ProducerSnapshot) -> dict[str, Any]:
    return {
        "version": snapshot.version,
        "crc": snapshot.crc,
        "entries": [
            {
                "producerId": int64(e.producer_id),
                "producerEpoch": e.producer_epoch,
                "lastSequence": e.last_sequence,
                "lastOffset": int64(e.last_offset),
                "offsetDelta": e.offset_delta,
                "timestamp": int64(e.timestamp),
                "coordinatorEpoch": e.coordinator_epoch,
                "currentTxnFirstOffset": int64(e.current_txn_first_offset),
            }
            for e in snapshot.entries
        ],
    }


def checkpoint_value(checkpoint: OffsetCheckpoint | LeaderEpochCheckpoint) -> dict[str, Any]:
    if isinstance(checkpoint, OffsetCheckpoint):
        entries = [
            {"topic": e.topic, "partition": e.partition, "offset": int64(e.offset)}
            for e in checkpoint.entries
        ]
    else:
        entries = [
            {"epoch": e.epoch, "startOffset": int64(e.start_offset)} for e in checkpoint.entries
        ]
    return {"version": checkpoint.version, "entries": entries}


def partition_metadata_value(metadata: PartitionMetadata) -> dict[str, Any]:
    return {"version": metadata.version, "topicId": str(metadata.topic_id)}
