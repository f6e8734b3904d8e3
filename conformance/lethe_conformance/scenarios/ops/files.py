"""``check_files``: the target's log directory, read with lethe_formats.

Only for targets with the ``log-dir`` capability. Per partition folder
(``<topic>-<partition>``):

``segments``               base offsets of the live ``<20 digits>.log`` files
``files_present/absent``   glob patterns that must (not) match, e.g. ``*.deleted``
``first_offset_on_disk``   offset of the first record physically in the first
                           live segment (records below the log start offset
                           stay on disk until a whole segment goes, KIP107-DEL-8)
``leader_epoch_checkpoint`` the partition's ``leader-epoch-checkpoint`` entries
``directory``              ``live`` (the folder exists), ``deleted`` (no live folder,
                           renamed ``<topic>-<partition>.<32 hex>-delete`` as Kafka
                           deletes a partition's log) or ``gone`` (neither); other
                           checks apply only to a live folder
``txn_index``              the aborted-transaction entries of the live segments'
                           ``.txnindex`` files, in segment order
``batches``                every batch of the live segments, oldest first, each
                           compared on the header fields it lists (the delete
                           horizon bit and value, offsets kept, crc: see
                           :mod:`.batches`)

Root checkpoints are read strictly (version, count line, field counts: the
reader Kafka's ``CheckpointFile`` is), and only this scenario's topics are
compared: ``entries`` must be exactly the file's entries for them, ``absent``
partitions must not be listed. A file that cannot be read is a mismatch, a
wrong answer of the target.
``text`` compares a whole checkpoint file exactly (for a log dir the scenario
owns, capability own-log-dir).
``root_files_present`` / ``root_files_absent`` are glob patterns at the log dir
root, e.g. a checkpoint's ``.tmp`` that a torn write left behind.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lethe_formats.errors import FormatError
from lethe_formats.model import LegacyMessage
from lethe_formats.records.scan import read_log
from lethe_formats.storage.checkpoint import read_leader_epoch_checkpoint, read_offset_checkpoint
from lethe_formats.storage.txn_index import read_txn_index

from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import Expectations, RunContext
from lethe_conformance.scenarios.model import int64
from lethe_conformance.scenarios.ops.batches import FoundBatch, judge_batches
from lethe_conformance.scenarios.ops.log_dir import fill_symbols
from lethe_conformance.scenarios.ops.registry import op
from lethe_conformance.targets.base import LOG_DIR, CapabilityMissingError

__all__ = ["check_files", "directory_state", "live_segments"]

_LIVE_LOG = re.compile(r"^(\d{20})\.log$")


def live_segments(folder: Path) -> list[int]:
    """Base offsets of the live segments in a partition folder, ascending."""
    found = (_LIVE_LOG.match(path.name) for path in folder.iterdir())
    return sorted(int(m.group(1)) for m in found if m)


@op("check_files")
def check_files(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    log_dir = ctx.target.capabilities.log_dir
    if log_dir is None:
        raise CapabilityMissingError(ctx.target.name, LOG_DIR)
    exp = Expectations()
    expect = data["expect"]
    for index, entry in enumerate(expect.get("partitions", ())):
        _check_partition(ctx, exp, f"{path}.expect.partitions[{index}]", log_dir, entry)
    for index, entry in enumerate(expect.get("checkpoints", ())):
        _check_checkpoint(ctx, exp, f"{path}.expect.checkpoints[{index}]", log_dir, entry)
    _check_root(ctx, exp, f"{path}.expect", log_dir, expect)
    return exp.mismatches


def _check_root(
    ctx: RunContext, exp: Expectations, path: str, log_dir: Path, expect: Mapping[str, Any]
) -> None:
    """``root_files_present`` / ``root_files_absent``: glob patterns at the log dir root
    (a checkpoint's ``.tmp`` left by a torn write, KIP107-CKP-7)."""
    for pattern in expect.get("root_files_present", ()):
        if not any(log_dir.glob(fill_symbols(ctx, pattern))):
            exp.missing(f"{path}.root_files_present", f"a file matching {pattern!r}")
    for pattern in expect.get("root_files_absent", ()):
        matches = sorted(p.name for p in log_dir.glob(fill_symbols(ctx, pattern)))
        exp.equal(f"{path}.root_files_absent ({pattern})", [], matches)


def _check_partition(
    ctx: RunContext, exp: Expectations, path: str, log_dir: Path, entry: Mapping[str, Any]
) -> None:
    folder = log_dir / f"{ctx.topic(entry['topic'])}-{entry['partition']}"
    if "directory" in entry:
        state = directory_state(log_dir, ctx.topic(entry["topic"]), entry["partition"])
        if not exp.equal(f"{path}.directory", entry["directory"], state) or state != "live":
            return
    if not folder.is_dir():
        exp.missing(path, f"partition folder {entry['topic']}-{entry['partition']}")
        return
    segments = live_segments(folder)
    if "segments" in entry:
        exp.equal(f"{path}.segments", [int64(s) for s in entry["segments"]], segments)
    for pattern in entry.get("files_present", ()):
        if not any(folder.glob(pattern)):
            exp.missing(f"{path}.files_present", f"a file matching {pattern!r}")
    for pattern in entry.get("files_absent", ()):
        matches = sorted(p.name for p in folder.glob(pattern))
        exp.equal(f"{path}.files_absent ({pattern})", [], matches)
    if "first_offset_on_disk" in entry:
        first = _first_offset(folder, segments)
        exp.equal(f"{path}.first_offset_on_disk", int64(entry["first_offset_on_disk"]), first)
    if "leader_epoch_checkpoint" in entry:
        wanted = [(e[0], int64(e[1])) for e in entry["leader_epoch_checkpoint"]]
        exp.equal(
            f"{path}.leader_epoch_checkpoint", wanted, _epochs(folder / "leader-epoch-checkpoint")
        )
    if "txn_index" in entry:
        txns = _wanted_txns(entry["txn_index"], ctx.value)
        exp.equal(f"{path}.txn_index", txns, _txns(folder, segments))
    if "batches" in entry:
        found = _batches(folder, segments)
        if isinstance(found, str):
            exp.equal(f"{path}.batches", "readable segments", found)
        else:
            judge_batches(ctx, exp, f"{path}.batches", entry["batches"], found)


def directory_state(log_dir: Path, topic: str, partition: int) -> str:
    """``live``, ``deleted`` (only a ``-delete`` rename is left) or ``gone``."""
    if (log_dir / f"{topic}-{partition}").is_dir():
        return "live"
    renamed = re.compile(rf"^{re.escape(topic)}-{partition}\.[0-9a-f]{{32}}-delete$")
    if any(renamed.match(p.name) and p.is_dir() for p in log_dir.iterdir()):
        return "deleted"
    return "gone"


_TXN_FIELDS = ("segment", "producer_id", "first_offset", "last_offset", "last_stable_offset")


def _txn_line(segment: int, producer: int, first: int, last: int, lso: int) -> str:
    return f"segment {segment}: producer {producer} [{first}, {last}] lso {lso}"


def _wanted_txns(rows: list[Mapping[str, Any]], value: Callable[[Any], int]) -> list[str]:
    """The expected entries; a ``{"ref"}`` value (a captured producer id) is resolved."""
    return [_txn_line(*(value(r[f]) for f in _TXN_FIELDS)) for r in rows]


def _txns(folder: Path, segments: list[int]) -> list[str]:
    """The aborted-transaction entries of the live segments' ``.txnindex`` files, in order."""
    rows: list[str] = []
    for base in segments:
        index = folder / f"{base:020d}.txnindex"
        if not index.exists():
            continue
        try:
            entries = read_txn_index(index.read_bytes(), file=str(index), strict=True)
        except (OSError, FormatError) as error:
            return [f"unreadable: {error}"]
        rows.extend(
            _txn_line(base, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset)
            for e in entries
        )
    return rows


def _batches(folder: Path, segments: list[int]) -> list[FoundBatch] | str:
    """Every entry of the live segments in offset order, or why they do not read."""
    found: list[FoundBatch] = []
    for base in segments:
        log = folder / f"{base:020d}.log"
        try:
            found.extend(FoundBatch(e, base) for e in read_log(log.read_bytes(), file=str(log)))
        except (OSError, FormatError) as error:
            return f"unreadable segment: {error}"
    return found


def _first_offset(folder: Path, segments: list[int]) -> int | str | None:
    if not segments:
        return None
    log = folder / f"{segments[0]:020d}.log"
    try:
        for entry in read_log(log.read_bytes(), file=str(log)):
            if isinstance(entry, LegacyMessage):
                return (entry.inner[0] if entry.inner else entry).offset
            if entry.records:
                return entry.offset_of(entry.records[0])
    except (OSError, FormatError) as error:
        return f"unreadable segment: {error}"
    return None


def _epochs(file: Path) -> list[tuple[int, int]] | str:
    try:
        return [(e.epoch, e.start_offset) for e in read_leader_epoch_checkpoint(file).entries]
    except (OSError, FormatError) as error:
        return f"unreadable: {error}"


def _check_checkpoint(
    ctx: RunContext, exp: Expectations, path: str, log_dir: Path, entry: Mapping[str, Any]
) -> None:
    file = log_dir / entry["file"]
    if "text" in entry:
        _check_text(ctx, exp, f"{path}.text", file, entry["text"])
    try:
        checkpoint = read_offset_checkpoint(file)
    except (OSError, FormatError) as error:
        exp.equal(path, f"a readable {entry['file']}", f"unreadable: {error}")
        return
    ours = set(ctx.topics.values())
    listed = {(e.topic, e.partition): e.offset for e in checkpoint.entries if e.topic in ours}
    if "entries" in entry:
        wanted = {
            (ctx.topic(e["topic"]), e["partition"]): int64(e["offset"]) for e in entry["entries"]
        }
        exp.equal(f"{path}.entries", _named(ctx, wanted), _named(ctx, listed))
    for index, absent in enumerate(entry.get("absent", ())):
        key = (ctx.topic(absent["topic"]), absent["partition"])
        if key in listed:
            exp.equal(
                f"{path}.absent[{index}]", "no entry", f"{absent['topic']} {key[1]} {listed[key]}"
            )


def _check_text(ctx: RunContext, exp: Expectations, path: str, file: Path, text: str) -> None:
    """The whole file, byte for byte (as UTF-8 text, no newline translation)."""
    try:
        with file.open(encoding="utf-8", newline="") as handle:
            got = handle.read()
    except (OSError, UnicodeDecodeError) as error:
        got = f"unreadable: {error}"
    exp.equal(path, fill_symbols(ctx, text), got)


def _named(ctx: RunContext, entries: dict[tuple[str, int], int]) -> list[str]:
    """Entries as sorted 'symbol partition offset' lines, for readable mismatches."""
    return sorted(f"{ctx.symbol(t)} {p} {o}" for (t, p), o in entries.items())
