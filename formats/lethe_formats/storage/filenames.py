"""Names of segment files and partition directories in a Kafka log directory.

Theory of operation
-------------------
Segment files (``LogFileUtils``) are named after the segment's base offset,
zero-padded to **20 digits** (Java ``NumberFormat`` with 20 minimum integer
digits, no grouping), followed by one kind suffix and at most one transient
suffix::

    00000000000000000042 .index  [.deleted | .cleaned | .swap]
    |---- 20 digits ---| |kind|   |-- while deleting / compacting --|

Kinds: ``.log`` ``.index`` ``.timeindex`` ``.txnindex`` ``.snapshot``.
``.deleted`` marks files scheduled for asynchronous deletion; ``.cleaned`` and
``.swap`` are the cleaner's two-phase replacement (see ``LocalLog.replaceSegments``).

Kafka itself only takes ``substring(0, indexOf('.'))`` and ``Long.parseLong``s
it; lethe is stricter and insists on exactly 20 ASCII digits, so a hand-made
``42.log`` is reported instead of silently accepted.

Partition directories (``LocalLog.parseTopicPartitionName``)::

    <topic>-<partition>                          live
    <topic>-<partition>.<uniqueId>-delete        being deleted (topic capped so
    <topic>-<partition>.<uniqueId>-stray         the name stays <= 255 chars)
    <topic>-<partition>.<uniqueId>-future        target of an intra-broker move

The partition is whatever follows the *last* ``-`` of the part before the
``.``, parsed with ``Integer.parseInt``; ``uniqueId`` is the 32-hex
``UUID.randomUUID()`` with dashes removed when Kafka writes it, but any
non-whitespace run is accepted when reading, like Kafka's patterns.
"""

from __future__ import annotations

import enum
import re
import uuid
from dataclasses import dataclass

from lethe_formats.errors import FormatError
from lethe_formats.storage.java_text import JavaNumberFormatError, java_parse_int

__all__ = [
    "EXTRA_SUFFIXES",
    "SEGMENT_SUFFIXES",
    "FileKind",
    "FileNameError",
    "PartitionDirKind",
    "PartitionDirName",
    "SegmentFileName",
    "format_base_offset",
    "parse_partition_dir_name",
    "parse_segment_file_name",
    "partition_dir_name",
    "segment_file_name",
]

OFFSET_DIGITS = 20
MAX_OFFSET = 2**63 - 1
MAX_DIR_NAME = 255


class FileNameError(FormatError):
    """A file or directory name that does not follow Kafka's naming scheme."""


class FileKind(enum.StrEnum):
    """What a segment file holds, by suffix."""

    LOG = "log"
    INDEX = "index"
    TIME_INDEX = "timeindex"
    TXN_INDEX = "txnindex"
    SNAPSHOT = "snapshot"

    @property
    def suffix(self) -> str:
        return "." + self.value


SEGMENT_SUFFIXES: tuple[str, ...] = tuple(kind.suffix for kind in FileKind)
EXTRA_SUFFIXES: tuple[str, ...] = (".deleted", ".cleaned", ".swap")

_SEGMENT_NAME = re.compile(r"(?P<digits>[0-9]+)\.(?P<kind>[a-z]+)(?P<extra>\.[a-z]+)?")


@dataclass(frozen=True, slots=True)
class SegmentFileName:
    """A parsed segment file name; ``extra_suffix`` is ``""`` for a live file."""

    base_offset: int
    kind: FileKind
    extra_suffix: str = ""

    @property
    def name(self) -> str:
        return segment_file_name(self.base_offset, self.kind, self.extra_suffix)


def format_base_offset(offset: int) -> str:
    """The 20-digit zero-padded form of a base offset."""
    if not 0 <= offset <= MAX_OFFSET:
        raise ValueError(f"base offset {offset} is outside 0..{MAX_OFFSET}")
    return f"{offset:0{OFFSET_DIGITS}d}"


def segment_file_name(base_offset: int, suffix: str | FileKind, extra_suffix: str = "") -> str:
    """``segment_file_name(42, ".index")`` → ``00000000000000000042.index``.

    ``suffix`` is a :class:`FileKind` or its suffix with or without the dot;
    ``extra_suffix`` is ``""`` or one of :data:`EXTRA_SUFFIXES`.
    """
    kind = FileKind(suffix.lstrip(".")) if not isinstance(suffix, FileKind) else suffix
    if extra_suffix and extra_suffix not in EXTRA_SUFFIXES:
        raise ValueError(f"unknown extra suffix {extra_suffix!r}; expected one of {EXTRA_SUFFIXES}")
    return format_base_offset(base_offset) + kind.suffix + extra_suffix


def parse_segment_file_name(name: str) -> SegmentFileName:
    """Split ``00000000000000000042.index.deleted`` into (42, INDEX, ".deleted")."""
    match = _SEGMENT_NAME.fullmatch(name)
    if match is None:
        raise FileNameError(
            "not a segment file name: expected <20-digit base offset>.<kind>[.deleted|.cleaned|"
            ".swap] with kind one of " + ", ".join(SEGMENT_SUFFIXES),
            file=name,
            field="file name",
        )
    digits, kind_text, extra = match["digits"], match["kind"], match["extra"] or ""
    if len(digits) != OFFSET_DIGITS:
        raise FileNameError(
            f"base offset has {len(digits)} digits, Kafka writes exactly {OFFSET_DIGITS}",
            file=name,
            field="base offset",
        )
    offset = int(digits)
    if offset > MAX_OFFSET:
        raise FileNameError(
            f"base offset {offset} does not fit in a Java long", file=name, field="base offset"
        )
    if kind_text not in FileKind._value2member_map_:
        raise FileNameError(
            f"unknown file kind .{kind_text}; expected one of " + ", ".join(SEGMENT_SUFFIXES),
            file=name,
            field="suffix",
        )
    if extra and extra not in EXTRA_SUFFIXES:
        raise FileNameError(
            f"unknown extra suffix {extra}; expected one of " + ", ".join(EXTRA_SUFFIXES),
            file=name,
            field="suffix",
        )
    return SegmentFileName(offset, FileKind(kind_text), extra)


class PartitionDirKind(enum.StrEnum):
    """Which of Kafka's four partition directory forms a name has."""

    LIVE = ""
    DELETE = "-delete"
    FUTURE = "-future"
    STRAY = "-stray"


@dataclass(frozen=True, slots=True)
class PartitionDirName:
    """A parsed partition directory name; ``unique_id`` is None for a live one."""

    topic: str
    partition: int
    kind: PartitionDirKind = PartitionDirKind.LIVE
    unique_id: str | None = None

    @property
    def name(self) -> str:
        return partition_dir_name(self.topic, self.partition, self.kind, self.unique_id)


_NS = "[^ \\t\\n\\x0b\\f\\r]+"  # Java's \S+
_SUFFIXED_DIR = {
    kind: re.compile(f"({_NS})-({_NS})\\.({_NS}){re.escape(kind.value)}")
    for kind in PartitionDirKind
    if kind is not PartitionDirKind.LIVE
}


def _dir_error(name: str) -> FileNameError:
    return FileNameError(
        f"'{name}' is not in the form of topic-partition or topic-partition.uniqueId-delete "
        "(if marked for deletion)",
        file=name,
        field="directory name",
    )


def parse_partition_dir_name(name: str) -> PartitionDirName:
    """Parse a partition directory name with Kafka's rules (``parseTopicPartitionName``)."""
    if not name or "-" not in name:
        raise _dir_error(name)
    kind = PartitionDirKind.LIVE
    unique_id: str | None = None
    base = name
    for candidate, pattern in _SUFFIXED_DIR.items():
        if name.endswith(candidate.value):
            if pattern.fullmatch(name) is None:
                raise _dir_error(name)
            kind = candidate
            cut = name.rindex(".")
            base, unique_id = name[:cut], name[cut + 1 : -len(candidate.value)]
            break
    dash = base.rindex("-") if "-" in base else -1
    topic, partition_text = base[:dash] if dash >= 0 else "", base[dash + 1 :]
    if not topic or not partition_text:
        raise _dir_error(name)
    try:
        partition = java_parse_int(partition_text)
    except JavaNumberFormatError:
        raise _dir_error(name) from None
    return PartitionDirName(topic, partition, kind, unique_id)


def partition_dir_name(
    topic: str,
    partition: int,
    kind: PartitionDirKind = PartitionDirKind.LIVE,
    unique_id: str | None = None,
) -> str:
    """Build a directory name as Kafka does (``LocalLog.logDirName`` and friends).

    For ``-delete``/``-stray`` the topic is truncated so the name is at most 255
    characters; ``unique_id`` defaults to a fresh dashless uuid4 hex.
    """
    if kind is PartitionDirKind.LIVE:
        return f"{topic}-{partition}"
    uid = unique_id if unique_id is not None else uuid.uuid4().hex
    suffix = f"-{partition}.{uid}{kind.value}"
    if kind is PartitionDirKind.FUTURE:
        return topic + suffix
    return topic[: max(0, min(len(topic), MAX_DIR_NAME - len(suffix)))] + suffix
