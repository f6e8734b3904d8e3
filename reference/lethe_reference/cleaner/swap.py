"""Putting cleaned segments into a live log, crash-safely (``LocalLog.replaceSegments``).

Theory of operation
-------------------
A :class:`~.algorithm.CleanedSegment` becomes part of the log in the steps
Kafka takes, each of which the loader can finish or undo after a crash
(kafka-facts 1.4; :mod:`lethe_reference.storage.loader`)::

    1. write   00000000000000000000.log.cleaned (+ .index/.timeindex[/.txnindex].cleaned)
               fsync, mtime := the replaced group's last segment's mtime
       crash -> the loader deletes every .cleaned file: the old segments stand
    2. rename  *.cleaned -> *.swap, highest base offset first
       crash -> a .swap at or above the lowest .cleaned is deleted (unfinished)
    3. the new segment enters the segment map; each replaced segment leaves it
       (unless it has the new segment's base offset: the map entry is simply
       overwritten) and its files are renamed *.deleted and handed to the
       deleter, which removes them file.delete.delay.ms later; so is the
       producer snapshot named after a segment that is gone for good
       (<base>.snapshot -> <base>.snapshot.deleted, ``deleteProducerSnapshots``)
       crash -> the loader completes the swap: every ordinary file inside the
       .swap segment's offset range goes, the .swap suffix is dropped
    4. rename  *.swap -> the plain names; fsync the directory

The cleaned segment's ``.txnindex`` exists only when it keeps an aborted
transaction (Kafka creates that file lazily, on the first entry).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from lethe_formats.storage.filenames import FileKind, segment_file_name
from lethe_formats.storage.txn_index import encode_txn_index

from lethe_reference.cleaner.algorithm import CleanedSegment
from lethe_reference.storage.log import DELETED_SUFFIX, PartitionLog
from lethe_reference.storage.segment import LogSegment

__all__ = ["CLEANED_SUFFIX", "SWAP_SUFFIX", "replace_segments", "write_cleaned_segment"]

CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"


def write_cleaned_segment(log: PartitionLog, cleaned: CleanedSegment) -> LogSegment:
    """Step 1: the ``.cleaned`` files, flushed, with the group's mtime."""
    directory = log.directory
    contents = {
        FileKind.LOG: cleaned.log,
        FileKind.INDEX: cleaned.offset_index,
        FileKind.TIME_INDEX: cleaned.time_index,
    }
    if cleaned.aborted:
        contents[FileKind.TXN_INDEX] = encode_txn_index(cleaned.aborted)
    stale = directory / segment_file_name(cleaned.base_offset, FileKind.TXN_INDEX, CLEANED_SUFFIX)
    stale.unlink(missing_ok=True)
    for kind, data in contents.items():
        path = directory / segment_file_name(cleaned.base_offset, kind, CLEANED_SUFFIX)
        _write(path, data, durable=log.durable)
        seconds = cleaned.last_modified_ms / 1000
        os.utime(path, (seconds, seconds))
    return LogSegment.open(
        directory,
        cleaned.base_offset,
        log.settings,
        now_ms=log.clock.now_ms(),
        suffix=CLEANED_SUFFIX,
    )


def _write(path: Path, data: bytes, *, durable: bool) -> None:
    with open(path, "wb") as out:
        out.write(data)
        if durable:
            out.flush()
            os.fsync(out.fileno())


def replace_segments(
    log: PartitionLog, new: Sequence[LogSegment], old: Sequence[LogSegment]
) -> None:
    """Steps 2-4 for ``new`` (``.cleaned``) replacing ``old`` (module docstring)."""
    fresh = sorted(new, key=lambda s: s.base_offset)
    doomed = sorted(
        (s for s in old if log.segments.get(s.base_offset) is s), key=lambda s: s.base_offset
    )
    for segment in reversed(fresh):
        segment.change_file_suffixes(CLEANED_SUFFIX, SWAP_SUFFIX)
        log.segments.add(segment)
    first_base = fresh[0].base_offset
    replaced = {segment.base_offset for segment in fresh}
    for segment in doomed:
        if segment.base_offset != first_base:
            log.segments.remove(segment.base_offset)
        segment.change_file_suffixes(segment.suffix, DELETED_SUFFIX)
        if segment.base_offset not in replaced:
            log.retire_snapshot(segment)
    if log.deleter is None:
        for segment in doomed:
            segment.delete_files()
    elif doomed:
        due = log.clock.now_ms() + log.settings.file_delete_delay_ms
        log.deleter.schedule(doomed, due)
    for segment in fresh:
        segment.change_file_suffixes(SWAP_SUFFIX, "")
    if log.durable:
        _fsync_dir(log.directory)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
