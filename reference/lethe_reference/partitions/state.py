"""KIP-694 partition modes and pending reductions: the values the topic registry keeps.

Theory of operation
-------------------
KIP-694 gives every partition a *mode* (its ``PartitionRecord.Mode``)::

    ReadWrite  0   the default: read and written as in Kafka
    ReadOnly   1   removal pending: readable, Produce refused
    None      -1   removal under way: readable until its replica is deleted,
                   Produce refused

and records each reduction as a ``DeleteTopicPartitionsRecord`` (topic, the
partitions to remove, the delay, the creation time). Here one reduction is a
:class:`Reduction`: the topic shrinks to ``count`` partitions, so partitions
``count .. previous-1`` are removed (catalog KIP694-DEL-2: only the highest
numbers, ids stay ``0..N-1``), no earlier than ``created_ms + delay_ms``.

The topic registry (:mod:`lethe_reference.metadata`) keeps a topic's
non-ReadWrite modes and its pending reduction next to its config overrides,
in the same JSON file, so both survive a restart (KIP694-META-4). This module
holds only the values and their JSON form; it imports nothing from the broker.

The broker configs that switch the feature on and time the deletion check are
named here, once: :data:`ENABLE_CONFIG`, :data:`INTERVAL_CONFIG`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "ENABLE_CONFIG",
    "INTERVAL_CONFIG",
    "PartitionMode",
    "Reduction",
    "modes_from_json",
    "modes_to_json",
]

#: Broker config: whether DeletePartitions is served (default false, KIP694-CFG-1).
ENABLE_CONFIG = "delete.topic.partition.enable"
#: Broker config: the delayed-deletion check interval (default 300000, KIP694-CFG-2).
INTERVAL_CONFIG = "delete.topic.partition.interval.delay.ms"


class PartitionMode(IntEnum):
    """KIP-694's partition modes, with their wire codes (KIP694-MODE-1)."""

    READ_WRITE = 0
    READ_ONLY = 1
    NONE = -1


@dataclass(frozen=True)
class Reduction:
    """A pending reduction of one topic to ``count`` partitions."""

    count: int
    delay_ms: int
    created_ms: int

    @property
    def due_ms(self) -> int:
        """The earliest time its partitions may be deleted."""
        return self.created_ms + self.delay_ms

    def to_json(self) -> dict[str, int]:
        return {"count": self.count, "delay_ms": self.delay_ms, "created_ms": self.created_ms}

    @classmethod
    def from_json(cls, data: object) -> Reduction | None:
        """The saved reduction, or None when ``data`` is not one (a damaged file)."""
        if not isinstance(data, Mapping):
            return None
        values = [data.get(key) for key in ("count", "delay_ms", "created_ms")]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return None
        count, delay_ms, created_ms = (int(v) for v in values)  # type: ignore[arg-type]
        if count < 1 or delay_ms < 0:
            return None
        return cls(count, delay_ms, created_ms)


def modes_to_json(modes: Mapping[int, PartitionMode]) -> dict[str, int]:
    """Non-ReadWrite modes as ``{"partition": code}`` (JSON keys are strings)."""
    return {str(p): int(m) for p, m in sorted(modes.items()) if m is not PartitionMode.READ_WRITE}


def modes_from_json(data: object) -> dict[int, PartitionMode]:
    """Saved modes; entries that do not read as (partition, known mode) are dropped."""
    if not isinstance(data, Mapping):
        return {}
    out: dict[int, PartitionMode] = {}
    for key, value in data.items():
        if not (isinstance(key, str) and key.isdigit()) or not isinstance(value, int):
            continue
        if value in PartitionMode._value2member_map_:
            mode = PartitionMode(value)
            if mode is not PartitionMode.READ_WRITE:
                out[int(key)] = mode
    return out
