"""``meta.properties``: which cluster, node and directory a log dir belongs to.

Theory of operation
-------------------
A Java Properties file (syntax in :mod:`.java_properties`) with these keys,
interpreted as Kafka 4.0's ``MetaProperties.Builder(Properties)`` does:

==============  ==============================================================
``version``     0 or 1, default 0; trimmed, then ``Integer.parseInt``
``cluster.id``  any string; **required in v1**
``broker.id``   v0 only, optional, int
``node.id``     v1 only, **required**, int (not trimmed)
``directory.id`` optional, a Kafka Uuid (see :mod:`.kafka_uuid`)
==============  ==============================================================

Each rule violation is a ``RuntimeException`` with Kafka's wording, raised here
as :class:`~.java_text.CheckpointReadError` (``kafka_exception="RuntimeException"``,
``line`` of the offending key): ``Invalid meta.properties version string 'x'``,
``Unknown meta.properties version number N``, ``Failed to find node.id``,
``Unable to read node.id as a base-10 number.``, ``Unable to read directory.id
as a Uuid: ...``, ``cluster.id was not found.``. A broker puts such a directory
in ``errorLogDirs`` and starts with it offline. (Later Kafka adds version 2;
4.0 does not know it.) Unknown keys are kept and ignored, as Kafka does.

Files are read as ISO-8859-1 (``Properties.load(InputStream)``) and written as
UTF-8 through ``.tmp`` + fsync + rename (``PropertiesUtils.writePropertiesFile``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from lethe_formats.storage.atomic import write_atomically
from lethe_formats.storage.java_properties import (
    JavaProperties,
    JavaPropertiesError,
    format_java_properties,
    java_date_comment,
    java_hash_order,
    parse_java_properties,
)
from lethe_formats.storage.java_text import (
    CheckpointReadError,
    JavaNumberFormatError,
    java_parse_int,
)
from lethe_formats.storage.kafka_uuid import KafkaUuid, KafkaUuidError

__all__ = [
    "META_PROPERTIES_FILE",
    "MetaProperties",
    "format_meta_properties",
    "meta_properties_items",
    "read_meta_properties",
    "write_meta_properties",
]

META_PROPERTIES_FILE = "meta.properties"
Source = os.PathLike[str] | bytes | bytearray | str


@dataclass(frozen=True, slots=True)
class MetaProperties:
    """The values Kafka takes from the file, plus the raw entries and comments.

    ``node_id`` holds ``broker.id`` for version 0 (as Kafka's ``nodeId()`` does).
    """

    version: int
    cluster_id: str | None
    node_id: int | None
    directory_id: KafkaUuid | None
    properties: tuple[tuple[str, str], ...] = ()
    comments: tuple[str, ...] = ()


def _load(source: Source, file: str | None) -> tuple[str, str | None]:
    if isinstance(source, os.PathLike):
        path = Path(source)
        return path.read_bytes().decode("latin-1"), file if file is not None else str(path)
    if isinstance(source, bytes | bytearray):
        return bytes(source).decode("latin-1"), file
    return source, file


class _Reader:
    """Applies MetaProperties.Builder's rules to parsed properties."""

    def __init__(self, props: JavaProperties, file: str | None) -> None:
        self.props = props
        self.file = file

    def fail(self, message: str, key: str | None) -> CheckpointReadError:
        entry = self.props.find(key) if key is not None else None
        return CheckpointReadError(
            message,
            kafka_exception="RuntimeException",
            file=self.file,
            line=entry.line if entry is not None else None,
            # A key that is not there at all is a fault of the whole file: byte 0.
            position=entry.position if entry is not None else 0,
            field=key,
        )

    def version(self) -> int:
        text = self.props.as_dict().get("version", "0")
        try:
            number = java_parse_int(text.strip("".join(chr(c) for c in range(33))))
        except JavaNumberFormatError:
            raise self.fail(f"Invalid meta.properties version string '{text}'", "version") from None
        if number not in (0, 1):
            raise self.fail(f"Unknown meta.properties version number {number}", "version")
        return number

    def required_int(self, key: str) -> int:
        text = self.props.as_dict().get(key)
        if text is None:
            raise self.fail(f"Failed to find {key}", key)
        try:
            return java_parse_int(text)
        except JavaNumberFormatError:
            raise self.fail(f"Unable to read {key} as a base-10 number.", key) from None

    def directory_id(self) -> KafkaUuid | None:
        text = self.props.as_dict().get("directory.id")
        if text is None:
            return None
        try:
            return KafkaUuid.from_string(text)
        except KafkaUuidError as exc:
            raise self.fail(
                f"Unable to read directory.id as a Uuid: {exc}", "directory.id"
            ) from None


def read_meta_properties(source: Source, *, file: str | None = None) -> MetaProperties:
    """Read ``meta.properties`` (path, Latin-1 bytes, or text) with Kafka 4.0's rules."""
    text, name = _load(source, file)
    try:
        props = parse_java_properties(text)
    except JavaPropertiesError as exc:
        raise CheckpointReadError(
            str(exc),
            kafka_exception="IllegalArgumentException",
            file=name,
            line=exc.line,
            position=len(text[: exc.position].encode("latin-1", "replace")),
            field="escape",
        ) from None
    reader = _Reader(props, name)
    version = reader.version()
    values = props.as_dict()
    node_id: int | None = None
    if version == 0:
        if "broker.id" in values:
            node_id = reader.required_int("broker.id")
    else:
        node_id = reader.required_int("node.id")
    cluster_id = values.get("cluster.id")
    directory_id = reader.directory_id()
    if version != 0 and cluster_id is None:
        raise reader.fail("cluster.id was not found.", "cluster.id")
    return MetaProperties(
        version,
        cluster_id,
        node_id,
        directory_id,
        tuple((entry.key, entry.value) for entry in props.entries),
        props.comments,
    )


def meta_properties_items(meta: MetaProperties) -> list[tuple[str, str]]:
    """``MetaProperties.toProperties()`` entries in the order a JDK 17 broker writes them."""
    values: dict[str, str] = {"version": str(meta.version)}
    if meta.cluster_id is not None:
        values["cluster.id"] = meta.cluster_id
    if meta.node_id is not None:
        values["broker.id" if meta.version == 0 else "node.id"] = str(meta.node_id)
    if meta.directory_id is not None:
        values["directory.id"] = str(meta.directory_id)
    return [(key, values[key]) for key in java_hash_order(list(values))]


def format_meta_properties(
    properties: MetaProperties | Iterable[tuple[str, str]],
    *,
    date_comment: str | datetime,
) -> str:
    """The text ``PropertiesUtils.writePropertiesFile`` writes.

    A :class:`MetaProperties` is written in JDK 17 hash order; plain items are
    written in the order given. ``date_comment`` is the ``#<date>`` line's text
    or a datetime to render like ``Date.toString()`` (UTC).
    """
    items = (
        meta_properties_items(properties)
        if isinstance(properties, MetaProperties)
        else list(properties)
    )
    date = date_comment if isinstance(date_comment, str) else java_date_comment(date_comment)
    return format_java_properties(items, date_comment=date)


def write_meta_properties(
    path: str | os.PathLike[str],
    properties: MetaProperties | Iterable[tuple[str, str]],
    *,
    date_comment: str | datetime,
) -> None:
    """Write atomically via ``.tmp`` + fsync + rename + directory fsync."""
    text = format_meta_properties(properties, date_comment=date_comment)
    write_atomically(path, text.encode("utf-8"))
