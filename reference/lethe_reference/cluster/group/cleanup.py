"""The periodic cleanup: expired offsets and Empty groups without offsets removed.

Theory of operation
-------------------
Kafka 4.0 never removes a classic group when its last member leaves: the group
stays Empty (``kafka-consumer-groups.sh --list`` still shows it) until the
coordinator's *group metadata expiration* job runs
(``GroupCoordinatorShard.cleanupGroupMetadata``). Each loaded ``__consumer_offsets``
partition runs the job every ``offsets.retention.check.interval.ms`` (default 10
minutes), counted from when the partition was loaded (on a new broker: when the
first FindCoordinator created the topic), and again after each run. A run, for
every group of the partition:

1. expires offsets (``OffsetMetadataManager.cleanupExpiredOffsets``). Which
   offsets may expire depends on the group (``ClassicGroup.offsetExpirationCondition``):

   * a *simple* group (no protocol type, offsets committed without membership):
     any offset whose commit is ``offsets.retention.minutes`` old;
   * an Empty group with a protocol type: every offset, once the group has been
     Empty that long (the base is the state timestamp; a group loaded from a record
     without one uses the commit timestamp);
   * a Stable ``consumer`` group whose subscription is known: offsets of topics
     no member subscribes to, ``offsets.retention.minutes`` after their commit;
   * any other group (rebalancing, or a protocol type other than ``consumer``
     with members): none.

   An offset committed with an explicit expire timestamp (OffsetCommit v1-v4's
   retention time) expires at that timestamp instead. Offsets of subscribed topics
   never expire here. A tombstone is written per expired offset.
2. if no offset is left (or the group never had one) and the group is Empty, a
   GroupMetadata tombstone removes the group (``maybeDeleteGroup``). This is how
   ``kafka-console-consumer.sh``'s random ``console-consumer-NNNNN`` group (auto
   commit off, so no offsets) disappears from ``--list``: at the first run after
   its consumer left, up to ``offsets.retention.check.interval.ms`` later. Kafka
   4.0.0 measured (fixtures/golden/consumer-groups/README.md): the group vanished
   from ``--list`` at the 600 s run after the offsets topic was loaded, with
   server.log saying it generated the tombstone records.

All tombstones of one run are one append to the partition (Kafka returns them as
one coordinator result), written at the run's time. Only once the append succeeded
are the offsets and groups forgotten; a failed append keeps them (they are still on
disk) and the next run tries again, as Kafka's timer retries a failed job.

KIP-848 consumer groups take part in the same run (``ConsumerGroup.offsetExpirationCondition``:
an offset expires ``offsets.retention.minutes`` after its commit unless a member subscribes
to its topic; an Empty group with no offset left is removed with the tombstones of its
records); the consumer layer adds them through :meth:`CleanupLogic._cleanup_others`.

Decision: transactional offsets pending on a group (Kafka keeps their partitions
and the group until the transaction ends) are not modelled here; the transaction
coordinator's TxnOffsetCommit is a separate module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lethe_formats.coordinator import GroupMetadataKey, encode_key
from lethe_formats.model import Record
from lethe_formats.records.builder import RecordSpec

from lethe_reference.cluster.group.api import TopicPartition
from lethe_reference.cluster.group.deletion import DeletionLogic, known_subscription
from lethe_reference.cluster.group.group import ClassicGroup
from lethe_reference.cluster.group.persistence import OffsetAndMetadata
from lethe_reference.cluster.group.state import GroupState

__all__ = ["CleanupLogic", "expirable_since", "offset_expired"]

_S = GroupState


def expirable_since(group: ClassicGroup) -> str | None:
    """Which timestamp offsets of ``group`` age from: "state" (the time the group
    became Empty), "commit" (each offset's commit), or None (nothing expires)."""
    if group.protocol_type is None:
        return "commit"
    if group.is_(_S.EMPTY):
        return "state" if group.state_timestamp >= 0 else "commit"
    if group.is_(_S.STABLE) and known_subscription(group) is not None:
        return "commit"
    return None


class CleanupLogic(DeletionLogic):
    """The periodic expiration job (see the module docstring)."""

    def load(
        self, partition: int, records: Iterable[Record | tuple[bytes | None, bytes | None]]
    ) -> None:
        super().load(partition, records)
        self._schedule_cleanup(partition)

    def unload(self, partition: int) -> None:
        self.timers.cancel(("cleanup", partition))
        super().unload(partition)

    def _schedule_cleanup(self, partition: int) -> None:
        self.timers.schedule(
            ("cleanup", partition),
            self.now() + self.config.offsets_retention_check_interval_ms,
            lambda: self._run_cleanup(partition),
        )

    def _run_cleanup(self, partition: int) -> None:
        self.cleanup(partition)

    def cleanup(self, partition: int) -> int:
        """One run of the job for ``partition``; how many tombstones it wrote."""
        self._schedule_cleanup(partition)
        now = self.now()
        records: list[RecordSpec] = []
        expired: dict[str, list[TopicPartition]] = {}
        removed: list[str] = []
        for group in self._groups_of(partition):
            gone, all_gone = self._expired_offsets(group, now)
            if gone:
                expired[group.group_id] = gone
                records.extend(self._offset_tombstone(group.group_id, tp) for tp in gone)
            if all_gone and group.is_(_S.EMPTY):
                key = encode_key(GroupMetadataKey(group.group_id))
                records.append(RecordSpec(key=key, value=None, timestamp=now))
                removed.append(group.group_id)
        more, done = self._cleanup_others(partition, now)
        records += more
        if not records:
            return 0
        if self._write_partition(partition, records, f"the cleanup of partition {partition}"):
            return 0
        for group_id, gone in expired.items():
            self._forget(group_id, gone)
        for group_id in removed:
            self.offsets.pop(group_id, None)
            del self.groups[group_id]
        done()
        return len(records)

    def _cleanup_others(
        self, partition: int, now: int
    ) -> tuple[list[RecordSpec], Callable[[], None]]:
        """Tombstones of groups other than classic ones for the same run (one append),
        and what to forget once it is written; none here (see the consumer layer)."""
        del partition, now
        return [], _nothing

    def _expired_offsets(self, group: ClassicGroup, now: int) -> tuple[list[TopicPartition], bool]:
        """The group's offsets that expired now, and whether none is left after them."""
        stored = self.offsets.get(group.group_id, {})
        if not stored:
            return [], True
        since = expirable_since(group)
        if since is None:
            return [], False
        subscribed = known_subscription(group) or frozenset()
        retention = self.config.offsets_retention_ms
        gone = [
            tp
            for tp, committed in stored.items()
            if tp[0] not in subscribed
            and offset_expired(
                committed, group.state_timestamp if since == "state" else None, now, retention
            )
        ]
        return gone, len(gone) == len(stored)


def _nothing() -> None:
    return None


def offset_expired(
    committed: OffsetAndMetadata, base: int | None, now: int, retention: int
) -> bool:
    """Kafka's ``OffsetExpirationConditionImpl.isOffsetExpired``."""
    if committed.expire_timestamp is not None:
        return now >= committed.expire_timestamp
    start = committed.commit_timestamp if base is None else base
    return now - start >= retention
