"""Failures the runner causes from outside a broker's process, on its files.

Theory of operation
-------------------
A broker the runner launched cannot be made to throw on cue, but its disk can
be made to fail as a real disk does: the runner changes the files under the
broker, and the broker meets the failure at its next write. Kafka's own tests
(``LogDirFailureTest``) do it this way, and so does the runner here::

    log-dir-offline   the log dir holding the named partitions is renamed away
                      (``<dir>.failed``, kept for a post-mortem) and an empty
                      FILE takes its place. The broker's next write under it (a
                      checkpoint: Kafka writes the log start offset checkpoint
                      of every live dir each ``log.flush.start.offset.checkpoint.
                      interval.ms``) meets ENOTDIR, and the broker takes the dir
                      offline: KAFKA_STORAGE_ERROR for its partitions.

Kafka halts when the metadata log dir or every log dir failed
(``ReplicaManager.handleLogDirFailure``, ``LogManager.handleLogDirFailure``),
so a broker that must survive gets two data dirs and its metadata log apart:
the launcher's ``[failures.log-dir-offline]`` settings. Which dir holds a
partition is the broker's choice (Kafka: the dir with the fewest logs), so the
runner looks: the named partitions must share one dir that holds no other
partition of their topic, else the moment cannot be made (:class:`ControlError`
naming the placement).

The runner waits for the broker to notice (the op, scenarios/ops/failures.py);
this module only changes files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lethe_conformance.targets.base import ControlError

__all__ = ["FAILED_SUFFIX", "fail_log_dir", "partition_dirs"]

#: Where the failed dir's contents go: beside it, for a post-mortem
FAILED_SUFFIX = ".failed"


def partition_dirs(log_dirs: Sequence[Path], topic: str) -> dict[int, Path]:
    """Partition number -> the log dir holding ``topic``'s folder of it."""
    found: dict[int, Path] = {}
    prefix = f"{topic}-"
    for log_dir in log_dirs:
        if not log_dir.is_dir():
            continue
        for child in log_dir.iterdir():
            number = child.name[len(prefix) :]
            if child.name.startswith(prefix) and number.isdigit() and child.is_dir():
                found[int(number)] = log_dir
    return found


def fail_log_dir(log_dirs: Sequence[Path], topic: str, partitions: Sequence[int]) -> Path:
    """Replace the log dir holding ``topic``'s ``partitions`` with a file (module
    docstring); returns that dir. ControlError when the placement does not allow it."""
    where = partition_dirs(log_dirs, topic)
    missing = [p for p in partitions if p not in where]
    if missing:
        raise ControlError(
            f"log-dir-offline: no folder of {topic}-{missing[0]} in "
            f"{', '.join(str(d) for d in log_dirs)}"
        )
    chosen = {where[p] for p in partitions}
    if len(chosen) != 1:
        raise ControlError(
            f"log-dir-offline: the broker placed {topic} partitions {sorted(partitions)} in "
            f"{len(chosen)} different log dirs; the failure takes one dir"
        )
    target = chosen.pop()
    others = sorted(p for p, d in where.items() if d == target and p not in partitions)
    if others:
        raise ControlError(
            f"log-dir-offline: {target} also holds {topic} partitions {others}, which the "
            "scenario expects to stay online; the broker placed them with the failing ones"
        )
    failed = target.with_name(target.name + FAILED_SUFFIX)
    try:
        target.rename(failed)
        target.write_bytes(b"")
    except OSError as error:
        raise ControlError(
            f"log-dir-offline: cannot replace {target} with a file: {error}"
        ) from None
    return target
