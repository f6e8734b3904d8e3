"""OffsetCommit and OffsetFetch for classic and simple groups.

Theory of operation
-------------------
A commit is checked against the group as Kafka 4.0 checks it
(``ClassicGroup.validateOffsetCommit``):

* no such group: with generation -1 a *simple* group is created (Empty, no
  protocol type), which is how kafka-python's ``assign()`` + ``commit()`` and
  admin tools commit; with a real generation the answer is GROUP_ID_NOT_FOUND
  (OffsetCommit v9+) or ILLEGAL_GENERATION (older versions);
* generation -1 on an Empty group is always accepted;
* otherwise the member must be known (UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID)
  and the generation current (ILLEGAL_GENERATION); an anonymous commit to a
  group with members is UNKNOWN_MEMBER_ID; a group still CompletingRebalance
  answers REBALANCE_IN_PROGRESS.

A group-level error applies to every partition of the request. A metadata
string longer than ``offset.metadata.max.bytes`` fails only its partition
(OFFSET_METADATA_TOO_LARGE). The accepted partitions are written as one batch of
OffsetCommit records (commit timestamp = now); only when the write succeeds do
they become visible to OffsetFetch, and a failed write answers every accepted
partition with Kafka's offset-commit translation of the append error.

Deleted partitions (a deleted topic, or partitions removed by KIP-694):
:meth:`OffsetLogic.delete_partition_offsets` writes a tombstone per committed
offset of theirs and forgets it, as Kafka's ``onPartitionsDeleted`` does, so a
partition created again later starts with no committed position.

OffsetFetch returns the stored offset per partition, or offset -1, leader epoch
-1 and metadata "" where nothing is stored (also for an unknown group). Topic
existence and authorization are the handler's business, as in Kafka.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from lethe_formats.coordinator import OffsetCommitKey, encode_key
from lethe_formats.records.builder import RecordSpec

from lethe_reference.cluster.group import codes
from lethe_reference.cluster.group.api import (
    FetchedOffset,
    OffsetCommitRequest,
    OffsetFetchResult,
    TopicPartition,
)
from lethe_reference.cluster.group.group import ClassicGroup
from lethe_reference.cluster.group.membership import MembershipLogic
from lethe_reference.cluster.group.persistence import OffsetAndMetadata, offset_record
from lethe_reference.cluster.group.state import GroupState

__all__ = ["OffsetLogic"]

_S = GroupState


class OffsetLogic(MembershipLogic):
    """Committed offsets (see the module docstring)."""

    def commit_offsets(self, request: OffsetCommitRequest) -> dict[TopicPartition, int]:
        """OffsetCommit: an error code per requested partition."""
        self._advance()
        error = self._precheck(request.group_id)
        created = False
        if not error:
            group = self.groups.get(request.group_id)
            if group is None and request.generation_id < 0:
                group = self.groups[request.group_id] = ClassicGroup(request.group_id, self.now())
                created = True
            error = self._check_commit(group, request)
        if error:
            return dict.fromkeys(request.offsets, error)
        result = self._store(request)
        if created and request.group_id not in self.offsets:
            del self.groups[request.group_id]  # nothing stored: revert the simple group
        return result

    def _check_commit(self, group: ClassicGroup | None, request: OffsetCommitRequest) -> int:
        if group is None:
            return (
                codes.GROUP_ID_NOT_FOUND if request.api_version >= 9 else codes.ILLEGAL_GENERATION
            )
        if group.is_(_S.DEAD):
            return codes.COORDINATOR_NOT_AVAILABLE
        if request.generation_id < 0 and group.is_(_S.EMPTY):
            return codes.NONE
        anonymous = not request.member_id and request.group_instance_id is None
        if request.generation_id >= 0 or not anonymous:
            error = self._validate_member(group, request.member_id, request.group_instance_id)
            if error:
                return error
            if request.generation_id != group.generation:
                return codes.ILLEGAL_GENERATION
        elif not group.is_(_S.EMPTY):
            return codes.UNKNOWN_MEMBER_ID
        if group.is_(_S.COMPLETING_REBALANCE):
            return codes.REBALANCE_IN_PROGRESS
        return codes.NONE

    def _store(self, request: OffsetCommitRequest) -> dict[TopicPartition, int]:
        now = self.now()
        expire = None if request.retention_time_ms == -1 else now + request.retention_time_ms
        limit = self.config.offset_metadata_max_bytes
        result: dict[TopicPartition, int] = {}
        accepted: dict[TopicPartition, OffsetAndMetadata] = {}
        for tp, commit in request.offsets.items():
            metadata = commit.metadata or ""
            if len(metadata.encode("utf-8", "surrogateescape")) > limit:
                result[tp] = codes.OFFSET_METADATA_TOO_LARGE
                continue
            accepted[tp] = OffsetAndMetadata(
                commit.offset, commit.leader_epoch, metadata, now, expire
            )
        if accepted:
            records = [offset_record(request.group_id, tp, c, now) for tp, c in accepted.items()]
            error = self._write(request.group_id, records)
            if error:
                result.update(dict.fromkeys(accepted, codes.offset_append_error(error)))
            else:
                self.offsets.setdefault(request.group_id, {}).update(accepted)
                result.update(dict.fromkeys(accepted, codes.NONE))
        return {tp: result[tp] for tp in request.offsets}

    def commit_txn_offsets(
        self, request: OffsetCommitRequest, producer_id: int, producer_epoch: int
    ) -> dict[TopicPartition, int]:
        """TxnOffsetCommit: the offsets are written in the producer's transaction
        and held pending; :meth:`complete_txn_offsets` makes them visible or drops
        them when the transaction's marker reaches the group's partition."""
        self._advance()
        error = self._precheck(request.group_id)
        if not error:
            group = self.groups.get(request.group_id)
            if group is not None and (request.generation_id >= 0 or request.member_id):
                error = self._check_commit(group, request)
        if error:
            return dict.fromkeys(request.offsets, error)
        now = self.now()
        accepted = {
            tp: OffsetAndMetadata(c.offset, c.leader_epoch, c.metadata or "", now)
            for tp, c in request.offsets.items()
        }
        records = [offset_record(request.group_id, tp, c, now) for tp, c in accepted.items()]
        error = self._write(request.group_id, records, (producer_id, producer_epoch))
        if error:
            return dict.fromkeys(accepted, codes.offset_append_error(error))
        key = (producer_id, request.group_id)
        self.pending_txn_offsets.setdefault(key, {}).update(accepted)
        return dict.fromkeys(accepted, codes.NONE)

    def complete_txn_offsets(self, partition: int, producer_id: int, commit: bool) -> None:
        """A marker of ``producer_id`` reached ``partition``: its pending offsets
        of the groups there become committed (COMMIT) or are dropped (ABORT)."""
        for key in [k for k in self.pending_txn_offsets if k[0] == producer_id]:
            group_id = key[1]
            if self.partition_for(group_id) != partition:
                continue
            offsets = self.pending_txn_offsets.pop(key)
            if commit:
                self.groups.setdefault(group_id, ClassicGroup(group_id, self.now()))
                self.offsets.setdefault(group_id, {}).update(offsets)

    def fetch_offsets(
        self,
        group_id: str,
        partitions: Iterable[TopicPartition] | None = None,
        *,
        require_stable: bool = False,
    ) -> OffsetFetchResult:
        """OffsetFetch for one group; ``partitions`` None means every stored one. With
        ``require_stable``, a partition with offsets pending in a transaction answers
        UNSTABLE_OFFSET_COMMIT."""
        self._advance()
        error = self._precheck(group_id)
        if error:
            return OffsetFetchResult(error)
        group = self.groups.get(group_id)
        stored = {} if group is None or group.is_(_S.DEAD) else self.offsets.get(group_id, {})
        wanted = sorted(stored) if partitions is None else list(partitions)
        unstable: set[TopicPartition] = set()
        if require_stable:
            for (_, pending_group), offsets in self.pending_txn_offsets.items():
                if pending_group == group_id:
                    unstable.update(offsets)
        return OffsetFetchResult(
            codes.NONE,
            {
                tp: FetchedOffset(error_code=codes.UNSTABLE_OFFSET_COMMIT)
                if tp in unstable
                else _fetched(stored.get(tp))
                for tp in wanted
            },
        )

    def delete_partition_offsets(self, partitions: Collection[TopicPartition]) -> int:
        """Tombstone and forget every committed offset of ``partitions``; how many.
        A group whose write fails keeps its offsets (they are still on disk)."""
        wanted = set(partitions)
        removed = 0
        for group_id, stored in list(self.offsets.items()):
            gone = [tp for tp in stored if tp in wanted]
            if not gone:
                continue
            now = self.now()
            records = [
                RecordSpec(
                    key=encode_key(OffsetCommitKey(group_id, *tp)), value=None, timestamp=now
                )
                for tp in gone
            ]
            if self._write(group_id, records):
                continue
            for tp in gone:
                del stored[tp]
            removed += len(gone)
        return removed

    def committed(self, group_id: str) -> dict[TopicPartition, OffsetAndMetadata]:
        """Every committed offset of a group (for retention and tests)."""
        return dict(self.offsets.get(group_id, {}))


def _fetched(stored: OffsetAndMetadata | None) -> FetchedOffset:
    if stored is None:
        return FetchedOffset()
    return FetchedOffset(stored.offset, stored.leader_epoch, stored.metadata)
