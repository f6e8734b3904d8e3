"""``partition.metadata``: the topic id of a partition directory.

Theory of operation
-------------------
Two lines, written by ``PartitionMetadata.encode`` *without* a trailing
newline, through the same ``.tmp`` + fsync + rename as checkpoints::

    version: 0\\n
    topic_id: IdvB5LqtQrSQL2tqHWQmVg          <- no newline at end of file

``PartitionMetadataReadBuffer.read`` reads exactly two lines (anything after
is ignored) and splits each on ``:\\s+`` with limit 2; the key must be
``version`` then ``topic_id``. Failures, all ``IOException`` (the log dir goes
offline), worded as Kafka words them:

* missing line, wrong key, no ``:\\s+`` → ``Malformed line in partition metadata
  file [f]: <line or null>``; a non-int version or an unparsable topic id gives
  the same message (Kafka wraps the NumberFormatException/IllegalArgument);
* version < 0 → ``Unrecognized version of partition metadata file (f): N``.
  Versions above 0 are accepted, for downgrade tolerance;
* the all-zero Uuid → ``Invalid topic ID in partition metadata file (f)``.

The topic id is a :class:`~.kafka_uuid.KafkaUuid`: ``str(uuid)`` is Kafka's
22-character URL-safe base64, ``uuid.raw`` the 16 bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from lethe_formats.storage.atomic import write_atomically
from lethe_formats.storage.checkpoint import Source, load_text
from lethe_formats.storage.java_text import (
    CheckpointReadError,
    JavaLine,
    JavaNumberFormatError,
    java_parse_int,
    java_read_lines,
    java_split,
)
from lethe_formats.storage.kafka_uuid import KafkaUuid, KafkaUuidError

__all__ = [
    "CURRENT_VERSION",
    "PARTITION_METADATA_FILE",
    "PartitionMetadata",
    "format_partition_metadata",
    "read_partition_metadata",
    "write_partition_metadata",
]

CURRENT_VERSION = 0
PARTITION_METADATA_FILE = "partition.metadata"
_SEPARATOR = ":[ \\t\\n\\x0b\\f\\r]+"


@dataclass(frozen=True, slots=True)
class PartitionMetadata:
    """Version and topic id of one partition directory."""

    version: int
    topic_id: KafkaUuid

    @property
    def topic_id_bytes(self) -> bytes:
        return self.topic_id.raw

    def encode(self) -> str:
        return format_partition_metadata(self.topic_id, self.version)


def _where(file: str | None) -> str:
    return file if file is not None else "<partition.metadata>"


def _malformed(
    line: JavaLine | None, number: int, file: str | None, field: str
) -> CheckpointReadError:
    shown = line.text if line is not None else "null"
    return CheckpointReadError(
        f"Malformed line in partition metadata file [{_where(file)}]: {shown}",
        file=file,
        line=number,
        position=line.position if line is not None else None,
        field=field,
    )


def _value(line: JavaLine | None, number: int, key: str, file: str | None) -> str:
    if line is None:
        raise _malformed(None, number, file, key)
    parts = java_split(line.text, _SEPARATOR, limit=2)
    if len(parts) != 2 or parts[0] != key:
        raise _malformed(line, number, file, key)
    return parts[1]


def read_partition_metadata(source: Source, *, file: str | None = None) -> PartitionMetadata:
    """Read ``partition.metadata`` (path, bytes or text) with Kafka's rules."""
    text, name = load_text(source, file)
    lines = list(java_read_lines(text))[:2]
    first = lines[0] if lines else None
    second = lines[1] if len(lines) > 1 else None
    version_text = _value(first, 1, "version", name)
    try:
        version = java_parse_int(version_text)
    except JavaNumberFormatError:
        raise _malformed(first, 1, name, "version") from None
    if version < CURRENT_VERSION:
        raise CheckpointReadError(
            f"Unrecognized version of partition metadata file ({_where(name)}): {version}",
            file=name,
            line=1,
            position=0,
            field="version",
        )
    id_text = _value(second, 2, "topic_id", name)
    try:
        topic_id = KafkaUuid.from_string(id_text)
    except KafkaUuidError:
        raise _malformed(second, 2, name, "topic_id") from None
    if topic_id.is_zero:
        raise CheckpointReadError(
            f"Invalid topic ID in partition metadata file ({_where(name)})",
            file=name,
            line=2,
            position=second.position if second is not None else None,
            field="topic_id",
        )
    return PartitionMetadata(version, topic_id)


def format_partition_metadata(topic_id: KafkaUuid | str, version: int = CURRENT_VERSION) -> str:
    """``version: N\\ntopic_id: <id>`` with no trailing newline (``PartitionMetadata.encode``)."""
    uuid = topic_id if isinstance(topic_id, KafkaUuid) else KafkaUuid.from_string(topic_id)
    return f"version: {version}\ntopic_id: {uuid}"


def write_partition_metadata(
    path: str | os.PathLike[str], topic_id: KafkaUuid | str, version: int = CURRENT_VERSION
) -> None:
    """Write atomically (``.tmp``, fsync, rename, fsync dir), as ``PartitionMetadataFile`` does."""
    write_atomically(path, format_partition_metadata(topic_id, version).encode("utf-8"))
