"""``.kafka_cleanshutdown``: the clean-shutdown marker and the last broker epoch.

Theory of operation
-------------------
``CleanShutdownFileHandler`` writes one line of Jackson JSON, no trailing
newline, directly into the file (no ``.tmp``/rename) followed by an fsync::

    {"version":0,"brokerEpoch":9}

At startup the file's *existence* is what tells ``LogManager`` that no recovery
is needed; it is deleted once the logs are loaded. Its content only feeds
KIP-966's broker registration. Kafka's ``read()`` is deliberately forgiving: any
failure (bad JSON, missing or null ``brokerEpoch``) is logged at debug level and
treated as "no epoch"; ``version`` is never checked and unknown fields are
ignored (``@JsonIgnoreProperties(ignoreUnknown = true)``).

lethe offers both views: :func:`read_clean_shutdown` is strict and raises a
:class:`~.java_text.CheckpointReadError` (``marks_dir_offline`` false: Kafka
never fails on it) naming the problem; :func:`kafka_broker_epoch` returns what
Kafka would use, ``None`` for anything unreadable.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

from lethe_formats.storage.atomic import write_in_place_synced
from lethe_formats.storage.checkpoint import Source, load_text
from lethe_formats.storage.java_text import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    CheckpointReadError,
)

__all__ = [
    "CLEAN_SHUTDOWN_FILE",
    "CURRENT_VERSION",
    "CleanShutdown",
    "format_clean_shutdown",
    "kafka_broker_epoch",
    "read_clean_shutdown",
    "write_clean_shutdown",
]

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
CURRENT_VERSION = 0


@dataclass(frozen=True, slots=True)
class CleanShutdown:
    """Content of the marker."""

    version: int
    broker_epoch: int


def _fail(message: str, exception: str, file: str | None, field: str) -> CheckpointReadError:
    return CheckpointReadError(
        message, kafka_exception=exception, file=file, position=0, line=1, field=field
    )


def _int_field(
    content: dict[str, object], key: str, bounds: tuple[int, int], file: str | None
) -> int | None:
    value = content.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(f"{key} is not an integer: {value!r}", "JsonMappingException", file, key)
    if not bounds[0] <= value <= bounds[1]:
        raise _fail(f"{key} {value} is out of range", "JsonMappingException", file, key)
    return value


def read_clean_shutdown(source: Source, *, file: str | None = None) -> CleanShutdown:
    """Strictly read the marker; see the module docstring for Kafka's leniency."""
    text, name = load_text(source, file)
    try:
        content = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CheckpointReadError(
            f"not JSON: {exc.msg}",
            kafka_exception="JsonProcessingException",
            file=name,
            line=exc.lineno,
            position=len(text[: exc.pos].encode("utf-8")),
            field="json",
        ) from None
    if not isinstance(content, dict):
        raise _fail("not a JSON object", "JsonMappingException", name, "json")
    version = _int_field(content, "version", (INT32_MIN, INT32_MAX), name)
    epoch = _int_field(content, "brokerEpoch", (INT64_MIN, INT64_MAX), name)
    if epoch is None:
        raise _fail("brokerEpoch is missing or null", "NullPointerException", name, "brokerEpoch")
    return CleanShutdown(version if version is not None else 0, epoch)


def kafka_broker_epoch(source: Source, *, file: str | None = None) -> int | None:
    """What ``CleanShutdownFileHandler.read()`` yields: the epoch, or None on any failure."""
    try:
        return read_clean_shutdown(source, file=file).broker_epoch
    except (CheckpointReadError, OSError):
        return None


def format_clean_shutdown(broker_epoch: int, version: int = CURRENT_VERSION) -> str:
    """``{"version":0,"brokerEpoch":N}`` exactly as Jackson writes it."""
    return json.dumps({"version": version, "brokerEpoch": broker_epoch}, separators=(",", ":"))


def write_clean_shutdown(
    path: str | os.PathLike[str], broker_epoch: int, version: int = CURRENT_VERSION
) -> None:
    """Write in place and fsync, as Kafka does (no rename)."""
    write_in_place_synced(path, format_clean_shutdown(broker_epoch, version).encode("utf-8"))
