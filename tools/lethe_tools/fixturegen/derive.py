"""Checkpoint contents derived from the written log, with the Kafka rule behind each.

``{"derive": true}`` in a spec means "what a broker that had just appended
these batches and shut down cleanly would have written":

``recovery-point-offset-checkpoint``
    the log end offset of every partition (a clean shutdown flushes all).
``replication-offset-checkpoint``
    the high watermark; on a single replica it reaches the log end offset.
``log-start-offset-checkpoint``
    only partitions whose log start offset is *above* their first segment's
    base offset (LogManager skips the rest; golden delete-records shows it).
``cleaner-offset-checkpoint``
    for partitions of compacted topics with more than one segment: the base
    offset of the active segment, i.e. the first dirty offset after a
    cleaning pass over every inactive segment (the cleaner never touches the
    active one). A partition with one segment was never cleanable: no entry.
``leader-epoch-checkpoint`` (per partition)
    an entry (epoch, base offset) for each v2 batch whose partition leader
    epoch is >= 0 and greater than the latest so far (``UnifiedLog.append``),
    then ``truncateFromStart(log start offset)``: entries starting at or
    below it are dropped and the last of them comes back starting at it
    (golden delete-records: ``0 19``).

Offset checkpoint entries are sorted by (topic, partition); Kafka's own order
is HashMap order, i.e. unspecified, and readers must not depend on it.
"""

from __future__ import annotations

from collections.abc import Sequence

from lethe_tools.fixturegen.segment import SegmentContent
from lethe_tools.fixturegen.spec import EpochEntry, OffsetEntry, PartitionSpec, TopicSpec

__all__ = ["PartitionLayout", "derive_leader_epochs", "derive_offset_checkpoint"]

RECOVERY_POINT = "recovery-point-offset-checkpoint"
REPLICATION = "replication-offset-checkpoint"
LOG_START = "log-start-offset-checkpoint"
CLEANER = "cleaner-offset-checkpoint"


class PartitionLayout:
    """A partition's spec and the segments the writer produced for it."""

    def __init__(
        self, topic: TopicSpec, partition: PartitionSpec, segments: Sequence[SegmentContent]
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.segments = tuple(segments)

    def derived_offset(self, checkpoint: str) -> int | None:
        """This partition's entry in ``checkpoint``, or None if Kafka would not list it."""
        spec = self.partition
        if checkpoint in (RECOVERY_POINT, REPLICATION):
            return spec.log_end_offset
        if checkpoint == LOG_START:
            first_base = self.segments[0].base_offset
            return spec.log_start_offset if spec.log_start_offset > first_base else None
        if checkpoint == CLEANER:
            compacted = self.topic.cleanup_policy.compacts and len(self.segments) > 1
            return self.segments[-1].base_offset if compacted else None
        raise ValueError(f"no derivation rule for {checkpoint!r}")


def derive_offset_checkpoint(
    checkpoint: str, layouts: Sequence[PartitionLayout]
) -> list[OffsetEntry]:
    """Entries of the root ``checkpoint`` file for all partitions, sorted."""
    entries = []
    for layout in sorted(layouts, key=lambda x: (x.topic.name, x.partition.partition)):
        offset = layout.derived_offset(checkpoint)
        if offset is not None:
            entries.append(OffsetEntry(layout.topic.name, layout.partition.partition, offset))
    return entries


def derive_leader_epochs(partition: PartitionSpec) -> list[EpochEntry]:
    """The leader-epoch cache after the appends and the log start offset moves."""
    entries: list[EpochEntry] = []
    for batch in partition.batches:
        epoch = batch.partition_leader_epoch
        if batch.magic >= 2 and epoch >= 0 and (not entries or epoch > entries[-1].epoch):
            entries.append(EpochEntry(epoch, batch.base_offset))
    return _truncate_from_start(entries, partition.log_start_offset)


def _truncate_from_start(entries: list[EpochEntry], start_offset: int) -> list[EpochEntry]:
    removed = [e for e in entries if e.start_offset <= start_offset]
    kept = [e for e in entries if e.start_offset > start_offset]
    if removed:
        kept.insert(0, EpochEntry(removed[-1].epoch, start_offset))
    return kept
