"""Helpers of the storage tests: golden batches as a producer would send them, logs.

Expected values in these tests come from the golden files Kafka 4.0 wrote
(fixtures/golden, see its README.md) and from kafka-facts.md, never from
running lethe.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lethe_formats.fixtures import fixtures_root
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.clock import ManualClock
from lethe_reference.storage.log import PartitionLog, SegmentDeleter
from lethe_reference.storage.settings import LogSettings, StorageSettings

__all__ = [
    "DELREC_AT_MS",
    "GOLDEN",
    "as_client_batch",
    "case_json",
    "client_batch",
    "delrec_log",
    "delrec_produced_batches",
    "golden_batches",
]

GOLDEN = fixtures_root() / "golden"
#: When DeleteRecords ran in the golden delete-records case (case.json ``at_ms``).
DELREC_AT_MS = 1795289205425
DELREC_SETTINGS = StorageSettings(segment_bytes=700, index_interval_bytes=100)


def delrec_produced_batches() -> dict[int, list[bytes]]:
    """The golden delete-records producer's batches, rebuilt from case.json.

    One batch per partition per produce round (case.json notes "one batch per
    partition"), idempotent producer 0 epoch 0, sequence = offset. The rebuilt
    batches of the retained segments are byte-identical to Kafka's (asserted
    in test_delete_records_golden), which vouches for the deleted ones.
    """
    sent: dict[int, list[bytes]] = {0: [], 1: [], 2: []}
    counts = dict.fromkeys(sent, 0)
    for step in case_json("delete-records")["steps"]:
        if step["op"] != "produce":
            continue
        by_partition: dict[int, list[RecordSpec]] = {}
        for record in step["records"]:
            spec = RecordSpec(
                key=record["key"].encode(),
                value=record["value"].encode(),
                timestamp=record["timestamp"],
            )
            by_partition.setdefault(record["partition"], []).append(spec)
        for partition, specs in sorted(by_partition.items()):
            sent[partition].append(
                build_batch(
                    specs,
                    base_offset=0,
                    producer_id=0,
                    producer_epoch=0,
                    base_sequence=counts[partition],
                )
            )
            counts[partition] += len(specs)
    return sent


def case_json(case: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((GOLDEN / case / "case.json").read_text("utf-8"))
    return result


def golden_batches(directory: Path) -> Iterator[bytes]:
    """Raw entries of every ``.log`` in ``directory``, in offset order."""
    for log_file in sorted(directory.glob("*.log")):
        data = log_file.read_bytes()
        position = 0
        while position < len(data):
            (length,) = struct.unpack_from(">i", data, position + 8)
            yield data[position : position + 12 + length]
            position += 12 + length


def as_client_batch(batch: bytes) -> bytes:
    """The batch as a producer sends it: baseOffset 0, partitionLeaderEpoch -1
    (neither is covered by the CRC, so nothing else changes)."""
    copy = bytearray(batch)
    struct.pack_into(">q", copy, 0, 0)
    struct.pack_into(">i", copy, 12, -1)
    return bytes(copy)


def client_batch(
    timestamps: list[int], *, keys: list[bytes | None] | None = None, **options: Any
) -> bytes:
    """A producer batch of ``len(timestamps)`` records with values b"v<i>"."""
    keys = keys if keys is not None else [b"k%d" % i for i in range(len(timestamps))]
    specs = [
        RecordSpec(key=key, value=b"v%d" % i, timestamp=ts)
        for i, (key, ts) in enumerate(zip(keys, timestamps, strict=True))
    ]
    return build_batch(specs, base_offset=0, **options)


def delrec_log(
    tmp_path: Path,
    partition: int,
    clock: ManualClock,
    *,
    settings: LogSettings = DELREC_SETTINGS,
    deleter: SegmentDeleter | None = None,
) -> PartitionLog:
    """A log holding the golden delete-records partition's retained batches,
    produced again through the leader path (epoch 0), HW at the LEO."""
    source = GOLDEN / "delete-records" / f"golden-delrec-{partition}"
    start = int(sorted(source.glob("*.log"))[0].stem)
    log = PartitionLog.create(
        tmp_path / source.name,
        settings,
        clock=clock,
        start_offset=start,
        deleter=deleter,
        durable=False,
    )
    for batch in golden_batches(source):
        log.append_as_leader(as_client_batch(batch), leader_epoch=0)
    log.update_high_watermark(log.log_end_offset)
    return log
