"""The audit benchmark's log dir: several topics and partitions of ~1 KiB records, Kafka's layout.

Theory of operation
-------------------
``lethe audit`` reads whole log dirs, so the benchmark needs one: ``TOPICS``
x ``PARTITIONS`` partition dirs whose ``.log`` files together hold at least
``--size-gib`` GiB, rolled at ``SEGMENT_BYTES`` (so there are many more
segments than cores and Spark has tasks to balance), with the ``.index`` /
``.timeindex`` files a broker writes (an entry per batch: every batch is
larger than ``index.interval.bytes``) and the root checkpoints.

Building 2 GiB record by record in Python would take many minutes, so each
topic has ``TEMPLATES`` distinct batches built once with
``lethe_formats.records.builder.build_batch`` (``RECORDS_PER_BATCH`` records
of a ~1 KiB JSON-like value, keyed ``user-NNNNNNN``; topic ``users`` has a
tombstone every 16th record, topic ``clicks`` is lz4-compressed as producers
often send it) and the log is written by appending templates in turn with the
8-byte base offset rewritten. That is valid Kafka data: the v2 CRC covers the
bytes from the attributes on, not the base offset (kafka-facts 3.1)::

    base offset (8, rewritten) | length (4) | epoch (4) | magic (1) | crc (4) | attributes...
                                                                      ^ CRC-32C from here

The dir is reused while its sidecar ``audit-logdir.json`` (generator version
and size) matches; ``benchmarks/data/`` is git-ignored.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from lethe_formats.model import Compression, OffsetIndexEntry, TimeIndexEntry
from lethe_formats.records import RecordSpec, build_batch
from lethe_formats.storage.checkpoint import write_offset_checkpoint
from lethe_formats.storage.index import encode_offset_index, encode_time_index

GENERATOR_VERSION = 2
GIB = 1024**3
MIB = 1024**2
TOPICS = ("orders", "payments", "clicks", "users")
PARTITIONS = 4
SEGMENT_BYTES = 48 * MIB
TEMPLATES = 64
RECORDS_PER_BATCH = 32
BASE_TIMESTAMP = 1_700_000_000_000
NAME = "audit-logdir"


@dataclass(frozen=True, slots=True)
class LogDir:
    """A generated log dir and what it holds."""

    path: str
    log_bytes: int
    segments: int
    records: int
    batches: int
    min_bytes: int
    generator_version: int = GENERATOR_VERSION


def _value(topic: str, index: int) -> bytes:
    """~1 KiB of JSON: field names and words repeat, ids and a hex digest do not (lz4 ~2x)."""
    head = b'{"topic":"%s","seq":%09d,"amount":%d.%02d,"note":"' % (
        topic.encode(),
        index,
        index % 9973,
        index % 100,
    )
    words = (b"lorem ipsum dolor sit amet %05d " % (index % 65_521)) * 8
    digest = b"".join(
        hashlib.sha256(b"%s/%d/%d" % (topic.encode(), index, part)).hexdigest().encode()
        for part in range(10)
    )
    return (head + words + digest)[:1000] + b'"}'


def templates(topic: str, number: int) -> list[bytes]:
    """``TEMPLATES`` batches of partition ``number`` of ``topic`` (base offset 0)."""
    built = []
    compression = Compression.LZ4 if topic == "clicks" else Compression.NONE
    for batch in range(TEMPLATES):
        first = batch * RECORDS_PER_BATCH
        specs = [
            RecordSpec(
                key=b"user-%07d" % ((first + i) * 7919 % 1_000_003),
                value=None
                if topic == "users" and (first + i) % 16 == 0
                else _value(topic, first + i),
                timestamp=BASE_TIMESTAMP + 10 * (first + i),
            )
            for i in range(RECORDS_PER_BATCH)
        ]
        built.append(
            build_batch(
                specs,
                base_offset=0,
                compression=compression,
                producer_id=1000 + number,
                producer_epoch=0,
                base_sequence=first,
                partition_leader_epoch=0,
            )
        )
    return built


def _segments(part: Path, batches: list[bytes], target: int) -> Iterator[tuple[int, int, int]]:
    """Write the partition; yields (segment bytes, records, batches) per segment."""
    offset = written = 0
    turn = 0
    while written < target:
        base, size, count = offset, 0, 0
        index: list[OffsetIndexEntry] = []
        times: list[TimeIndexEntry] = []
        with open(part / f"{base:020d}.log", "wb") as log:
            while size < SEGMENT_BYTES and written + size < target:
                batch = bytearray(batches[turn % len(batches)])
                struct.pack_into(">q", batch, 0, offset)
                last = offset + RECORDS_PER_BATCH - 1
                index.append(OffsetIndexEntry(last - base, size))
                (max_ts,) = struct.unpack_from(">q", batch, 35)
                if not times or max_ts > times[-1].timestamp:
                    times.append(TimeIndexEntry(max_ts, last - base))
                log.write(batch)
                size += len(batch)
                count += 1
                offset = last + 1
                turn += 1
        (part / f"{base:020d}.index").write_bytes(encode_offset_index(index))
        (part / f"{base:020d}.timeindex").write_bytes(encode_time_index(times))
        written += size
        yield size, count * RECORDS_PER_BATCH, count


def _generate(root: Path, min_bytes: int) -> LogDir:
    root.mkdir(parents=True)
    per_partition = -(-min_bytes // (len(TOPICS) * PARTITIONS))
    ends: dict[tuple[str, int], int] = {}
    totals = [0, 0, 0, 0]
    for topic in TOPICS:
        for number in range(PARTITIONS):
            part = root / f"{topic}-{number}"
            part.mkdir()
            records = 0
            for size, count, batches in _segments(part, templates(topic, number), per_partition):
                totals[0] += size
                totals[1] += 1
                totals[2] += count
                totals[3] += batches
                records += count
            ends[(topic, number)] = records
    for name in ("recovery-point-offset-checkpoint", "replication-offset-checkpoint"):
        write_offset_checkpoint(root / name, dict(sorted(ends.items())))
    write_offset_checkpoint(root / "log-start-offset-checkpoint", [])
    return LogDir(str(root.resolve()), totals[0], totals[1], totals[2], totals[3], min_bytes)


def ensure_logdir(data_dir: Path, min_bytes: int) -> LogDir:
    """The log dir under ``data_dir``, generated unless a matching one is there."""
    root, sidecar = data_dir / NAME, data_dir / f"{NAME}.json"
    if sidecar.exists() and root.exists():
        known = json.loads(sidecar.read_text())
        if (
            known.get("generator_version") == GENERATOR_VERSION
            and known.get("min_bytes") == min_bytes
        ):
            return LogDir(**known)
    if root.exists():
        for path in sorted(root.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        root.rmdir()
    made = _generate(root, min_bytes)
    sidecar.write_text(json.dumps(asdict(made), indent=1) + "\n")
    return made
