"""Crash-safe replacement of a small file, the way Kafka writes its checkpoints.

Theory of operation
-------------------
``CheckpointFile.write`` (and ``PartitionMetadataFile``, and
``PropertiesUtils.writePropertiesFile``) never modify the target in place::

    1. write everything to  <path>.tmp   (truncating any stale .tmp)
    2. flush + fsync the .tmp            (FileDescriptor.sync)
    3. rename .tmp -> <path>             (Files.move ATOMIC_MOVE; POSIX rename)
    4. fsync the parent directory        (Utils.flushDir) so the rename is durable

A crash before step 3 leaves the old file intact (and a stale ``.tmp`` that the
next write truncates, exactly as Kafka leaves it); a crash after step 3 leaves
the new file. There is never a moment where the target is partially written.
If any step fails the ``.tmp`` is left behind, like Kafka's ``CheckpointFile``.

:func:`write_in_place_synced` is the other pattern Kafka uses, for
``.kafka_cleanshutdown`` only: write the target directly and fsync it.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fsync_directory", "tmp_path_for", "write_atomically", "write_in_place_synced"]


def tmp_path_for(path: str | os.PathLike[str]) -> Path:
    """``<path>.tmp``: the name Kafka uses for the staging file."""
    target = Path(path)
    return target.with_name(target.name + ".tmp")


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """fsync a directory so a rename inside it survives power loss (POSIX only)."""
    if os.name != "posix":  # Kafka skips this on Windows too
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` with ``data`` via ``<path>.tmp``, fsync, rename, fsync dir."""
    target = Path(path)
    tmp = tmp_path_for(target)
    with open(tmp, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, target)
    fsync_directory(target.parent if str(target.parent) else ".")


def write_in_place_synced(path: str | os.PathLike[str], data: bytes) -> None:
    """Overwrite ``path`` directly and fsync it (``CleanShutdownFileHandler.write``)."""
    with open(path, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
