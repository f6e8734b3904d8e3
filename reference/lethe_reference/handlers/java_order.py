"""The order in which a ``java.util.HashSet<String>`` hands back its names.

Kafka's ``ControllerApis`` collects request topics in HashSets and hands the
controller the topics in the set's iteration order, so that order decides both
the order of the results and which topic meets a shared bound first
(CreatePartitions' 10,000 records, :mod:`.controller_bounds`). A fresh HashSet
has 16 bins and doubles whenever it holds more than three quarters of its bins;
a name's bin is its ``String.hashCode`` spread (``h ^ h >>> 16``) masked to the
bin count, and names sharing a bin keep insertion order (a resize splits bins
without reordering them). Bins that Java turns into trees (8 or more names in
one bin of a table of 64 or more) are not modelled.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from lethe_reference.cluster.group.support import java_string_hash

__all__ = ["java_hash_set_order"]

_INITIAL_BINS = 16


def _bins_for(size: int) -> int:
    bins = _INITIAL_BINS
    while size > bins * 3 // 4:
        bins *= 2
    return bins


def java_hash_set_order(names: Iterable[str], removed: Collection[str] = ()) -> list[str]:
    """Iteration order after adding ``names`` in order, then removing ``removed``
    (a removal frees no bins: the table keeps the size it grew to)."""
    added = list(dict.fromkeys(names))
    mask = _bins_for(len(added)) - 1

    def bin_of(name: str) -> int:
        value = java_string_hash(name) & 0xFFFFFFFF
        return (value ^ (value >> 16)) & mask

    return sorted((n for n in added if n not in removed), key=bin_of)
