"""The order in which a ``java.util.HashSet<String>`` (or a controller's
``TimelineHashMap<String, ...>``) hands back its names.

Kafka's ``ControllerApis`` collects request topics in HashSets and hands the
controller the topics in the set's iteration order, so that order decides both
the order of the results and which topic meets a shared bound first
(CreatePartitions' 10,000 records, :mod:`.controller_bounds`). A fresh HashSet
has 16 bins and doubles whenever it holds more than three quarters of its bins;
a name's bin is its ``String.hashCode`` spread (``h ^ h >>> 16``) masked to the
bin count, and names sharing a bin keep insertion order (a resize splits bins
without reordering them). Bins that Java turns into trees (8 or more names in
one bin of a table of 64 or more) are not modelled.

The KRaft controller keeps topics by name in a ``TimelineHashMap``
(``BaseHashTable``): a table of 2 slots to start with, doubled before an
insertion would take it past three quarters full; a name's slot is the top
bits of its ``String.hashCode`` times Knuth's 64-bit Fibonacci constant, and a
slot holds its names in insertion order (a rehash walks the old slots in order
and appends). ElectLeaders for every partition walks topics in that order.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TypeVar

from lethe_reference.cluster.group.support import java_string_hash

__all__ = ["copied_map_bins", "java_hash_map_order", "java_hash_set_order", "timeline_hash_order"]

_INITIAL_BINS = 16
K = TypeVar("K")


def _bins_for(size: int) -> int:
    bins = 1
    while size > bins * 3 // 4:
        bins *= 2
    return bins


def java_hash_set_order(names: Iterable[str], removed: Collection[str] = ()) -> list[str]:
    """Iteration order after adding ``names`` in order, then removing ``removed``
    (a removal frees no bins: the table keeps the size it grew to)."""
    kept = java_hash_map_order(list(dict.fromkeys(names)), java_string_hash)
    return [n for n in kept if n not in removed]


def copied_map_bins(size: int) -> int:
    """The bins of ``new HashMap<>(otherMap)`` holding ``size`` entries
    (``putMapEntries``: ``tableSizeFor((int) (size / 0.75 + 1))``)."""
    wanted = int(size / 0.75 + 1.0)
    bins = 1
    while bins < wanted:
        bins *= 2
    return bins


def java_hash_map_order(
    keys: Sequence[K], hash_of: Callable[[K], int], bins: int = _INITIAL_BINS
) -> list[K]:
    """Iteration order of a ``java.util.HashMap`` (or HashSet) that got ``keys`` in
    order, starting from ``bins`` bins; ``hash_of`` is the key's ``hashCode``."""
    mask = max(bins, _bins_for(len(keys))) - 1

    def bin_of(key: K) -> int:
        value = hash_of(key) & 0xFFFFFFFF
        return (value ^ (value >> 16)) & mask

    return sorted(keys, key=bin_of)


_FIBONACCI = -7046029254386353131  # BaseHashTable.findSlot's multiplier (a Java long)


def _timeline_slot(name: str, slots: int) -> int:
    product = (java_string_hash(name) * _FIBONACCI) & 0xFFFFFFFFFFFFFFFF
    return product >> (65 - slots.bit_length())


def timeline_hash_order(names: Iterable[str], removed: Collection[str] = ()) -> list[str]:
    """Iteration order of a ``TimelineHashMap`` after putting ``names`` in order, then
    removing ``removed`` (module docstring)."""
    table: list[list[str]] = [[], []]
    for size, name in enumerate(dict.fromkeys(names)):
        if (size + 1) * 0.75 > len(table):
            grown: list[list[str]] = [[] for _ in range(len(table) * 2)]
            for slot in table:
                for old in slot:
                    grown[_timeline_slot(old, len(grown))].append(old)
            table = grown
        table[_timeline_slot(name, len(table))].append(name)
    return [name for slot in table for name in slot if name not in removed]
