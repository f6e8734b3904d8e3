"""Checkpoint files as ``key: value`` lines and as JSON (shared by dump and checkpoint).

Theory of operation
-------------------
kafka-dump-log does not dump checkpoints, so lethe picks a layout in its
style, one fact per ``key: value`` pair, stable for scripts::

    version: 0
    entries: 2
    topic: golden-delrec partition: 0 offset: 19      offset checkpoints
    epoch: 0 startOffset: 19                           leader-epoch-checkpoint

An empty file (which Kafka reads as "no entries") prints ``<path> is empty.``
like an empty index. The JSON form is one object::

    {"type": "checkpoint", "path": P, "kind": "offsets", "version": 0,
     "entries": [{"topic": T, "partition": N, "offset": O}, ...]}

with ``"kind": "leader-epoch"`` and ``{"epoch": E, "start_offset": O}``
entries for the other format; ``version`` is null for an empty file. The
``entries`` list is exactly what ``lethe checkpoint write --from-json`` takes.
"""

from __future__ import annotations

from typing import Any

from lethe_formats.errors import printable
from lethe_formats.storage.checkpoint import LeaderEpochCheckpoint, OffsetCheckpoint

Checkpoint = OffsetCheckpoint | LeaderEpochCheckpoint

__all__ = ["checkpoint_json", "checkpoint_kind_name", "checkpoint_lines"]


def checkpoint_kind_name(checkpoint: Checkpoint) -> str:
    return "offsets" if isinstance(checkpoint, OffsetCheckpoint) else "leader-epoch"


def checkpoint_lines(path: str, checkpoint: Checkpoint) -> list[str]:
    if checkpoint.version is None:
        return [f"{printable(path)} is empty."]
    lines = [f"version: {checkpoint.version}", f"entries: {len(checkpoint.entries)}"]
    if isinstance(checkpoint, OffsetCheckpoint):
        lines += [
            f"topic: {printable(e.topic)} partition: {e.partition} offset: {e.offset}"
            for e in checkpoint.entries
        ]
    else:
        lines += [f"epoch: {e.epoch} startOffset: {e.start_offset}" for e in checkpoint.entries]
    return lines


def checkpoint_json(path: str, checkpoint: Checkpoint) -> dict[str, Any]:
    entries: list[dict[str, Any]]
    if isinstance(checkpoint, OffsetCheckpoint):
        entries = [
            {"topic": e.topic, "partition": e.partition, "offset": e.offset}
            for e in checkpoint.entries
        ]
    else:
        entries = [{"epoch": e.epoch, "start_offset": e.start_offset} for e in checkpoint.entries]
    return {
        "type": "checkpoint",
        "path": path,
        "kind": checkpoint_kind_name(checkpoint),
        "version": checkpoint.version,
        "entries": entries,
    }
