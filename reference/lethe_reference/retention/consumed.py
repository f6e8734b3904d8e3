"""KIP-68 consumed log retention: delete what every group has consumed, once it is old enough.

Theory of operation
-------------------
KIP-68 (never adopted by Kafka; an opt-in lethe extension) adds a retention
rule that runs *before* the forced ones (``retention.bytes``, ``retention.ms``)
in the same pass. The requirement catalog (fixtures/requirements/kip68.json)
settles what the KIP leaves open; this module is that rule and nothing else::

    retention pass, cleanup.policy contains delete (policies.delete_old_segments)
      1. log start offset breach
      2. consumed retention          <- here, only with retention.commitoffset.enable
      3. retention.bytes
      4. retention.ms

**Min committed offset** (KIP68-MCO-*). For one pass the caller builds a
:class:`MinCommittedOffsets` from the offsets the group coordinator has
*committed* (what OffsetFetch would return): per partition, the minimum over
every group that stored one, whatever the group's protocol or membership. A
partition no group committed for has none, and then no consumed retention
(the KIP's ``-1``); so has every partition when the offsets could not all be
read (a coordinator partition that failed to load: ``complete=False``). This
module never looks at the coordinator: the caller hands the offsets in, so the
rule stays a pure function of the log, the settings, the clock and one number.

**The rule** (KIP68-RET-*). With ``bound = min(min committed offset, HW)``
(an offset committed above the high watermark counts as the high watermark), a
segment is consumed-deletable when

* its upper bound - the next segment's base offset, or the log end offset for
  the last segment - is ``<= bound`` (all its offsets were consumed), and
* ``now - largest timestamp > limit`` (strictly; the largest record timestamp,
  the file's mtime when it has none), as ``retention.ms`` judges age.

``limit`` is ``retention.commitoffset.ms``, where ``-2`` means "use
``retention.ms``" and ``-1`` (also ``-2`` with ``retention.ms -1``) means the
age limit is never reached, as for KIP-405's ``local.retention.ms``: then the
rule deletes nothing. Deletion goes through :mod:`.deletable`, the path every
Kafka retention rule shares: a prefix only (the walk stops at the first
segment that fails), never past the HW, the active segment included when it
is non-empty (a new one is rolled first), log start offset moved to the first
remaining base offset, files renamed ``.deleted`` and removed after
``file.delete.delay.ms``.

With ``retention.commitoffset.enable`` false (the default) the rule returns
at once, so a broker with the extension off deletes exactly what Kafka does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from lethe_reference import faults
from lethe_reference.retention.deletable import deletable_segments, delete_segments
from lethe_reference.storage.log import PartitionLog
from lethe_reference.storage.segment import LogSegment

__all__ = [
    "NO_COMMITTED_OFFSETS",
    "ConsumedRetentionSettings",
    "MinCommittedOffsets",
    "consumed_retention_ms",
    "delete_consumed_segments",
    "no_committed_offsets",
]

TopicPartition = tuple[str, int]


@runtime_checkable
class ConsumedRetentionSettings(Protocol):
    """The topic settings the rule reads (``LogConfig`` has them)."""

    @property
    def retention_ms(self) -> int:
        """``retention.ms`` (-1: unlimited)."""
        ...

    @property
    def retention_commitoffset_enable(self) -> bool:
        """``retention.commitoffset.enable``."""
        ...

    @property
    def retention_commitoffset_ms(self) -> int:
        """``retention.commitoffset.ms`` (-2: as retention.ms, -1: never old enough)."""
        ...


def consumed_retention_ms(settings: object) -> int | None:
    """The age a consumed segment must exceed, or None when the rule deletes nothing:
    disabled, settings without the KIP-68 configs, or an age limit never reached."""
    if not isinstance(settings, ConsumedRetentionSettings):
        return None
    if not settings.retention_commitoffset_enable:
        return None
    limit = settings.retention_commitoffset_ms
    if limit == -2:
        limit = settings.retention_ms
    return None if limit < 0 else limit


@dataclass(frozen=True, slots=True)
class MinCommittedOffsets:
    """Per partition, the minimum committed offset over all groups, for one pass.

    ``complete`` False: some committed offsets could not be read, so no
    partition has a trustworthy minimum (KIP68-MCO-3).
    """

    offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    complete: bool = True

    @classmethod
    def of_groups(
        cls, groups: Iterable[Mapping[TopicPartition, int]], *, complete: bool = True
    ) -> MinCommittedOffsets:
        """The minimum per partition over ``groups`` (each group's committed offsets)."""
        lowest: dict[TopicPartition, int] = {}
        for committed in groups:
            for tp, offset in committed.items():
                lowest[tp] = min(offset, lowest.get(tp, offset))
        return cls(MappingProxyType(lowest), complete)

    def get(self, topic: str, partition: int) -> int | None:
        """The partition's min committed offset; None: no group committed, or unreadable."""
        if not self.complete:
            return None
        return self.offsets.get((topic, partition))


#: No group has committed anything (a broker without a group coordinator).
NO_COMMITTED_OFFSETS = MinCommittedOffsets()


def no_committed_offsets() -> MinCommittedOffsets:
    """The default source of min committed offsets: none (no consumed retention)."""
    return NO_COMMITTED_OFFSETS


def delete_consumed_segments(log: PartitionLog, min_committed_offset: int | None) -> int:
    """Run consumed retention on ``log`` (module docstring); returns segments deleted."""
    limit = consumed_retention_ms(log.settings)
    if min_committed_offset is None and faults.active(log, "consumed-retention-without-commits"):
        min_committed_offset = log.high_watermark
    if limit is None or min_committed_offset is None or not log.settings.delete:
        return 0
    bound = min(min_committed_offset, log.high_watermark)
    now = log.clock.now_ms()

    def consumed_and_old(segment: LogSegment, following: LogSegment | None) -> bool:
        upper = following.base_offset if following is not None else log.log_end_offset
        if faults.active(log, "consumed-retention-past-committed-offset"):
            upper = segment.base_offset + 1
        if faults.active(log, "consumed-retention-ignores-age"):
            return upper <= bound
        return upper <= bound and now - segment.largest_timestamp() > limit

    reason = f"consumed log retention {limit}ms breach below committed offset {bound}"
    return delete_segments(log, deletable_segments(log, consumed_and_old), reason)
