"""Fixture log dirs for the check tests, and what each check must find, computed without the audit.

Fixtures: copies of golden log dirs written by Kafka 4.0, changed in one
known way each, plus partitions built with ``lethe_formats.records.builder``
(all under one root, so one decode covers them)::

    ROOT/compact-dirty     compaction/pass0, cleaner-offset-checkpoint above its end
    ROOT/txn-dirty         transactions/pass0, cleaner-offset-checkpoint above its end
    ROOT/delrec-moved      delete-records, golden-delrec 1 start moved to 32 (a segment's base)
    ROOT/crc-and-index     codecs, one byte flipped in batch 0, an .index entry moved
    ROOT/gap               codecs, its gzip batch (offsets 6..10) cut out of segment 0
    ROOT/orders            consumer-offsets + golden-orders-0/1/2 built (3 one-batch segments each)
    ROOT/quiet             quiet-orders-0 built the same way, no group ever committed for it

The Spark side (:func:`make_env`): the root is decoded into tables once and
unioned with the shared audit of fixtures/golden + fixtures/logs (conftest's
``audit_out``), so every check test runs its query on one set of tables
without another job run.

Expectations come from lethe_formats' single-process decoders (decode_log,
entry_bounds, index, txnindex and checkpoint readers, coordinator decoding)
following each check's written definition, never from the audit.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import GOLDEN
from lethe_formats.coordinator import OffsetCommitKey, OffsetCommitValue, decode_record
from lethe_formats.crc import crc32c
from lethe_formats.model import LegacyMessage, RecordBatch
from lethe_formats.records import RecordSpec, build_batch, decode_log
from lethe_formats.records.log import entry_bounds
from lethe_formats.storage.checkpoint import read_offset_checkpoint, write_offset_checkpoint
from lethe_formats.storage.index import read_offset_index, read_time_index
from lethe_formats.storage.txn_index import read_txn_index

HIGH_CLEANER_OFFSET = 1_000_000
ORDERS_TS = 1_700_000_000_000
ORDER_SEGMENTS = {0: [3, 3, 4], 1: [1, 5, 6], 2: [2, 3, 3]}  # records per segment
CUT_BATCH = 1  # index of the gzip batch of golden codecs segment 0 (offsets 6..10)


# ---------------------------------------------------------------- reading


def partition_dirs(logdir: Path) -> list[Path]:
    return sorted(p for p in logdir.iterdir() if p.is_dir())


def live_logs(part: Path) -> list[Path]:
    return sorted(part.glob("[0-9]" * 20 + ".log"))


def batches(log: Path) -> list[RecordBatch | LegacyMessage]:
    return decode_log(log.read_bytes(), file=str(log), verify_crc=False)


def positions(log: Path) -> list[int]:
    """Start of every entry of a segment, by walking the size fields."""
    data, found, at = log.read_bytes(), [], 0
    while at < len(data):
        found.append(at)
        at = entry_bounds(data, at)[1]
    return found


def checkpoint(logdir: Path, name: str) -> dict[tuple[str, int], int]:
    path = logdir / name
    return read_offset_checkpoint(path.read_bytes()).as_dict() if path.exists() else {}


def log_start(logdir: Path, part: Path) -> int:
    topic, _, number = part.name.rpartition("-")
    first = int(live_logs(part)[0].stem)
    return max(
        first, checkpoint(logdir, "log-start-offset-checkpoint").get((topic, int(number)), first)
    )


# ---------------------------------------------------------------- building


def _copy(case: Path, to: Path) -> Path:
    shutil.copytree(case, to, ignore=shutil.ignore_patterns("dump.txt", "case.json"))
    return to


def _set_checkpoint(logdir: Path, name: str, changes: dict[tuple[str, int], int]) -> None:
    entries = checkpoint(logdir, name)
    entries.update(changes)
    write_offset_checkpoint(logdir / name, entries)


def _flip_first_batch(part: Path) -> None:
    log = live_logs(part)[0]
    data = bytearray(log.read_bytes())
    data[positions(log)[0] + 50] ^= 0x01  # low byte of batch 0's producerId (bytes 43..50)
    log.write_bytes(bytes(data))


def _move_index_entry(part: Path) -> None:
    index = live_logs(part)[1].with_suffix(".index")
    data = bytearray(index.read_bytes())
    (position,) = struct.unpack_from(">i", data, 4)
    struct.pack_into(">i", data, 4, position + 3)  # entry 0 now points 3 bytes into its batch
    index.write_bytes(bytes(data))


def _cut_batch(part: Path) -> None:
    log = live_logs(part)[0]
    data = log.read_bytes()
    starts = positions(log)
    end = starts[CUT_BATCH + 1] if len(starts) > CUT_BATCH + 1 else len(data)
    log.write_bytes(data[: starts[CUT_BATCH]] + data[end:])


def _orders(part: Path, counts: list[int]) -> None:
    part.mkdir()
    offset = 0
    for segment, count in enumerate(counts):
        specs = [
            RecordSpec(
                key=f"order-{offset + i}".encode(),
                value=b"x" * 900,
                timestamp=ORDERS_TS + 60_000 * segment + i,
            )
            for i in range(count)
        ]
        batch = build_batch(specs, base_offset=offset, partition_leader_epoch=0)
        (part / f"{offset:020d}.log").write_bytes(batch)
        offset += count


def build_root(root: Path) -> dict[str, Path]:
    """Every fixture log dir of the module docstring under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    dirs = {
        "compact-dirty": _copy(GOLDEN / "compaction" / "pass0", root / "compact-dirty"),
        "txn-dirty": _copy(GOLDEN / "transactions" / "pass0", root / "txn-dirty"),
        "delrec-moved": _copy(GOLDEN / "delete-records", root / "delrec-moved"),
        "crc-and-index": _copy(GOLDEN / "codecs", root / "crc-and-index"),
        "gap": _copy(GOLDEN / "codecs", root / "gap"),
        "orders": _copy(GOLDEN / "consumer-offsets", root / "orders"),
    }
    cleaner = "cleaner-offset-checkpoint"
    _set_checkpoint(dirs["compact-dirty"], cleaner, {("golden-compact", 0): HIGH_CLEANER_OFFSET})
    _set_checkpoint(dirs["txn-dirty"], cleaner, {("golden-txn", 0): HIGH_CLEANER_OFFSET})
    _set_checkpoint(dirs["delrec-moved"], "log-start-offset-checkpoint", {("golden-delrec", 1): 32})
    _flip_first_batch(dirs["crc-and-index"] / "golden-codecs-0")
    _move_index_entry(dirs["crc-and-index"] / "golden-codecs-0")
    _cut_batch(dirs["gap"] / "golden-codecs-0")
    for number, counts in ORDER_SEGMENTS.items():
        _orders(dirs["orders"] / f"golden-orders-{number}", counts)
    quiet = root / "quiet"
    quiet.mkdir()
    _set_checkpoint(quiet, "replication-offset-checkpoint", {("quiet-orders", 0): 10})
    _orders(quiet / "quiet-orders-0", ORDER_SEGMENTS[0])
    dirs["quiet"] = quiet
    return dirs


# ---------------------------------------------------------------- expectations


@dataclass(frozen=True, slots=True)
class Below:
    file: str
    offset: int
    records: int
    bytes: int


def record_offsets(entry: RecordBatch | LegacyMessage) -> list[int]:
    """Offsets of an entry's records (a legacy wrapper's inner messages)."""
    if isinstance(entry, RecordBatch):
        return [entry.offset_of(r) for r in entry.records]
    return [m.offset for m in entry.inner] or [entry.offset]


def entry_range(entry: RecordBatch | LegacyMessage) -> tuple[int, int]:
    """(base offset, last offset) as Kafka's batch view gives them."""
    if isinstance(entry, RecordBatch):
        return entry.header.base_offset, entry.header.last_offset
    offsets = record_offsets(entry)
    return offsets[0], entry.offset


def below_log_start(logdir: Path) -> list[Below]:
    """Batches starting below the log start offset: records below it, bytes when whole."""
    found = []
    for part in partition_dirs(logdir):
        if not live_logs(part):
            continue
        start = log_start(logdir, part)
        for log in live_logs(part):
            for entry in batches(log):
                base, last = entry_range(entry)
                if base >= start:
                    continue
                below = sum(1 for offset in record_offsets(entry) if offset < start)
                full = entry.header if isinstance(entry, RecordBatch) else entry
                size = full.size_in_bytes if last < start else 0
                found.append(Below(str(log), base, below, size))
    return sorted(found, key=lambda b: (b.file, b.offset))


def logdirs(root: Path) -> list[Path]:
    """Log dirs below ``root``: folders holding meta.properties, a root checkpoint or a
    partition dir (``<topic>-<n>``) with segments (the audit's rule, discover.py)."""
    marks = ("meta.properties", "log-start-offset-checkpoint", "recovery-point-offset-checkpoint")
    marked = {p.parent for m in marks for p in root.rglob(m)}
    segments = root.rglob("[0-9]" * 20 + ".log")
    holding = {p.parent.parent for p in segments if re.fullmatch(r".+-\d+", p.parent.name)}
    return sorted(marked | holding)


def reclaimable_segments(logdir: Path) -> dict[str, int]:
    """file -> size of live segments whose next segment starts at or below the log start."""
    found = {}
    for part in partition_dirs(logdir):
        start = log_start(logdir, part)
        logs = live_logs(part)
        for log, following in itertools.pairwise(logs):
            if int(following.stem) <= start:
                found[str(log)] = log.stat().st_size
    return found


def tombstones_past_horizon(logdir: Path, now_ms: int) -> set[tuple[str, int]]:
    """(file, offset) of non-control null-value records whose batch horizon is <= now."""
    found = set()
    for part in partition_dirs(logdir):
        for log in live_logs(part):
            for entry in batches(log):
                if not isinstance(entry, RecordBatch):
                    continue
                horizon = entry.header.delete_horizon_ms
                if entry.header.is_control or horizon is None or horizon > now_ms:
                    continue
                found |= {(str(log), entry.offset_of(r)) for r in entry.records if r.value is None}
    return found


def tombstones_without_horizon(logdir: Path) -> set[tuple[str, int]]:
    """(file, offset) of magic-2 tombstones without horizon below the cleaner checkpoint entry."""
    found = set()
    cleaner = checkpoint(logdir, "cleaner-offset-checkpoint")
    for part in partition_dirs(logdir):
        topic, _, number = part.name.rpartition("-")
        end = cleaner.get((topic, int(number)))
        if end is None:
            continue
        for log in live_logs(part):
            for entry in batches(log):
                if not isinstance(entry, RecordBatch) or entry.header.is_control:
                    continue
                if entry.header.delete_horizon_ms is None:
                    found |= {
                        (str(log), entry.offset_of(r))
                        for r in entry.records
                        if r.value is None and entry.offset_of(r) < end
                    }
    return found


def markers_past_horizon(logdir: Path, now_ms: int) -> set[tuple[str, int]]:
    found = set()
    for part in partition_dirs(logdir):
        for log in live_logs(part):
            for entry in batches(log):
                if not isinstance(entry, RecordBatch):
                    continue
                horizon = entry.header.delete_horizon_ms
                if entry.header.is_control and horizon is not None and horizon <= now_ms:
                    found.add((str(log), entry.header.base_offset))
    return found


def compaction_violations(logdir: Path) -> set[tuple[str, int, str]]:
    """(file, offset, kind) compaction should have removed from the cleaned part."""
    found: set[tuple[str, int, str]] = set()
    cleaner = checkpoint(logdir, "cleaner-offset-checkpoint")
    for part in partition_dirs(logdir):
        topic, _, number = part.name.rpartition("-")
        end = cleaner.get((topic, int(number)))
        if end is None or not live_logs(part):
            continue
        start = log_start(logdir, part)
        aborted = [
            t for f in sorted(part.glob("*.txnindex")) for t in read_txn_index(f.read_bytes())
        ]
        last: dict[bytes, int] = {}
        data: list[tuple[str, int, bytes]] = []
        for log in live_logs(part):
            for entry in batches(log):
                assert isinstance(entry, RecordBatch)
                if entry.header.is_control:
                    continue
                for record in entry.records:
                    offset = entry.offset_of(record)
                    if not start <= offset < end:
                        continue
                    pid = entry.header.producer_id
                    if entry.header.is_transactional and any(
                        t.producer_id == pid and t.first_offset <= offset < t.last_offset
                        for t in aborted
                    ):
                        found.add((str(log), offset, "aborted"))
                    elif record.key is not None:
                        data.append((str(log), offset, record.key))
                        last[record.key] = max(last.get(record.key, -1), offset)
        found |= {(f, o, "shadowed") for f, o, key in data if o < last[key]}
    return found


def min_committed(co_logdir: Path) -> dict[tuple[str, int], int]:
    """(topic, partition) -> min over groups of the latest non-tombstone commit, capped at HW."""
    latest: dict[tuple[str, str, int], tuple[int, int | None]] = {}
    for part in partition_dirs(co_logdir):
        if not part.name.startswith("__consumer_offsets-"):
            continue
        for log in live_logs(part):
            for entry in batches(log):
                assert isinstance(entry, RecordBatch)
                if entry.header.is_control or entry.header.is_transactional:
                    continue
                for record in entry.records:
                    decoded = decode_record(record)
                    if not isinstance(decoded.key, OffsetCommitKey):
                        continue
                    key = (decoded.key.group, decoded.key.topic, decoded.key.partition)
                    value = decoded.value
                    offset = value.offset if isinstance(value, OffsetCommitValue) else None
                    seen = entry.offset_of(record)
                    if key not in latest or latest[key][0] < seen:
                        latest[key] = (seen, offset)
    minimum: dict[tuple[str, int], int] = {}
    for (_, topic, number), (_, offset) in latest.items():
        if offset is not None:
            minimum[(topic, number)] = min(offset, minimum.get((topic, number), offset))
    hw = checkpoint(co_logdir, "replication-offset-checkpoint")
    return {tp: min(o, hw[tp]) if tp in hw else o for tp, o in minimum.items()}


def consumed_segments(
    logdir: Path, minimum: dict[tuple[str, int], int], now_ms: int
) -> dict[str, int]:
    """file -> size of the prefix of segments consumed by every group and older than now."""
    found = {}
    for part in partition_dirs(logdir):
        topic, _, number = part.name.rpartition("-")
        if (topic, int(number)) not in minimum:
            continue
        logs = live_logs(part)
        end = max(b.header.last_offset + 1 for b in batches(logs[-1]) if isinstance(b, RecordBatch))
        nexts = [int(log.stem) for log in logs[1:]] + [end]
        for log, next_base in zip(logs, nexts, strict=True):
            newest = max(b.header.max_timestamp for b in batches(log) if isinstance(b, RecordBatch))
            if not (next_base <= minimum[(topic, int(number))] and now_ms - newest > 0):
                break
            found[str(log)] = log.stat().st_size
    return found


def _crc_failures(log: Path) -> Iterator[tuple[str, str, int]]:
    data = log.read_bytes()
    for at, entry in zip(positions(log), batches(log), strict=True):
        if not isinstance(entry, RecordBatch):
            continue
        stored = struct.unpack_from(">I", data, at + 17)[0]
        if crc32c(data[at + 21 : at + 12 + entry.header.batch_length]) != stored:
            yield ("crc", str(log), entry.header.base_offset)


def _index_errors(log: Path) -> Iterator[tuple[str, str, int]]:
    index = log.with_suffix(".index")
    if not index.exists():
        return
    ranges = {at: entry_range(e) for at, e in zip(positions(log), batches(log), strict=True)}
    base = int(log.stem)
    end = max((last for _, last in ranges.values()), default=None)
    for entry in read_offset_index(index.read_bytes()):
        offset = base + entry.relative_offset
        hit = ranges.get(entry.position)
        # Kafka indexes an append (one or more batches) by its last offset at its start
        if hit is None or offset < hit[1] or (end is not None and offset > end):
            yield ("offset index", str(index), offset)


def _max_timestamp(entry: RecordBatch | LegacyMessage) -> int:
    if isinstance(entry, RecordBatch):
        return entry.header.max_timestamp
    return -1 if entry.timestamp is None else entry.timestamp


def _time_errors(log: Path) -> Iterator[tuple[str, str, int]]:
    index = log.with_suffix(".timeindex")
    entries = batches(log)
    if not index.exists() or not entries:
        return
    lasts = {entry_range(b)[1] for b in entries}
    largest = max(_max_timestamp(b) for b in entries)
    for entry in read_time_index(index.read_bytes()):
        offset = int(log.stem) + entry.relative_offset
        if offset not in lasts or entry.timestamp > largest:
            yield ("time index", str(index), offset)


def _gaps(part: Path, cleaned_to: int) -> Iterator[tuple[str, str, int]]:
    previous: int | None = None
    for log in live_logs(part):
        for entry in batches(log):
            base, last = entry_range(entry)
            between = previous is not None and base > previous + 1 and base - 1 >= cleaned_to
            inside = (
                isinstance(entry, RecordBatch)
                and entry.header.records_count < last - base + 1
                and last >= cleaned_to
            )
            if between or inside:
                yield ("gap", str(log), base)
            previous = last


def integrity(logdir: Path) -> set[tuple[str, str, int]]:
    """(kind, file, offset) of crc, offset index, time index and gap findings of a log dir."""
    found: set[tuple[str, str, int]] = set()
    cleaner = checkpoint(logdir, "cleaner-offset-checkpoint")
    for part in partition_dirs(logdir):
        topic, _, number = part.name.rpartition("-")
        for log in live_logs(part):
            found |= set(_crc_failures(log)) | set(_index_errors(log)) | set(_time_errors(log))
        found |= set(_gaps(part, cleaner.get((topic, int(number)), -1)))
    return found


def under(rows: list[dict[str, Any]], logdir: Path) -> list[dict[str, Any]]:
    """The finding rows whose file is inside ``logdir``."""
    prefix = str(logdir.resolve()) + os.sep
    return [row for row in rows if str(row["file"]).startswith(prefix)]


# ---------------------------------------------------------------- the Spark side


@dataclass
class Env:
    """The fixture root decoded once, unioned with the shared audit of golden + logs."""

    dirs: dict[str, Path]
    out: Path
    tables: dict[str, Any]
    logs: Any
    audit: Any  # the JobResult of the shared audit (its findings come from run_all)

    def context(self, now_ms: int, options: Any = None) -> Any:
        from lethe_tools.audit.checks.context import CheckContext
        from lethe_tools.audit.checks.model import AuditOptions

        return CheckContext(self.tables, self.logs, now_ms, options or AuditOptions())


def rows(frame: Any) -> list[dict[str, Any]]:
    return [row.asDict() for row in frame.collect()]


_ENV: dict[str, Env] = {}


def make_env(spark: Any, audit_out: tuple[Path, Any], tmp: Path) -> Env:
    """Build the fixture root, write its tables once (no checks), union with the shared audit.

    Memoised per process: test modules each ask for it, the work happens once.
    """
    if "env" in _ENV:
        return _ENV["env"]
    from lethe_tools.audit.checks.frames import live_logs
    from lethe_tools.audit.job import read_back, write_tables

    dirs = build_root(tmp / "root")
    out = tmp / "out"
    write_tables(spark, [str(tmp / "root")], str(out), lambda text: None)
    mine, shared = read_back(spark, str(out)), read_back(spark, str(audit_out[0]))
    tables = {name: mine[name].unionByName(shared[name]) for name in mine}
    env = Env(dirs, out, tables, live_logs(tables).cache(), audit_out[1])
    _ENV["env"] = env
    return env
