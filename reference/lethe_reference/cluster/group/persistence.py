"""What the group coordinator writes to ``__consumer_offsets``, and reading it back.

Theory of operation
-------------------
Kafka keeps group state durable as records in the group's ``__consumer_offsets``
partition, and so does this coordinator:

* an OffsetCommit record per committed partition: key type 1
  ``(group, topic, partition)``, value v3 (v1 when the commit has an expire
  timestamp, OffsetCommit v2-v4's retention time), all partitions of one commit
  in one batch;
* a GroupMetadata record (key type 2, value v3) when a group is created (empty,
  protocol type "", generation 0), when the leader's assignment is stored, and
  when a join phase ends with no member (generation bumped, protocol and leader
  null).

Batches are built like the coordinator runtime of Kafka 4.0 builds them
(magic 2, no compression, producer id -1, base sequence 0, CreateTime = the
write time); base offset 0 and partition leader epoch -1 are placeholders the
log replaces on append, as Kafka's ``appendAsLeader`` does.

:func:`replay` folds a partition's records into the last state per key (a
tombstone deletes): the input of ``GroupCoordinator.load``. Record types this
coordinator does not serve (KIP-848 consumer groups, share groups) are counted
and skipped, as Kafka's loader skips unknown types.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from lethe_formats.coordinator import (
    GroupMemberMetadata,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    UnknownRecordTypeError,
    decode_record,
    encode_key,
    encode_value,
)
from lethe_formats.model import Record
from lethe_formats.records.builder import RecordSpec, build_batch

from lethe_reference.cluster.group.api import TopicPartition
from lethe_reference.cluster.group.group import ClassicGroup, Member
from lethe_reference.cluster.group.state import GroupState

__all__ = [
    "OffsetAndMetadata",
    "Replayed",
    "build_records_batch",
    "build_txn_batch",
    "empty_group_record",
    "group_from_value",
    "group_record",
    "offset_record",
    "replay",
]


@dataclass(frozen=True, slots=True)
class OffsetAndMetadata:
    """A committed offset as the coordinator keeps it."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int | None = None

    def to_value(self) -> OffsetCommitValue:
        if self.expire_timestamp is not None:
            return OffsetCommitValue(
                self.offset,
                self.metadata,
                self.commit_timestamp,
                expire_timestamp=self.expire_timestamp,
                version=1,
            )
        return OffsetCommitValue(
            self.offset, self.metadata, self.commit_timestamp, leader_epoch=self.leader_epoch
        )

    @classmethod
    def from_value(cls, value: OffsetCommitValue) -> OffsetAndMetadata:
        expire = value.expire_timestamp if value.version == 1 else -1
        return cls(
            offset=value.offset,
            leader_epoch=value.leader_epoch,
            metadata=value.metadata,
            commit_timestamp=value.commit_timestamp,
            expire_timestamp=None if expire == -1 else expire,
        )


def offset_record(
    group_id: str, tp: TopicPartition, committed: OffsetAndMetadata, now_ms: int
) -> RecordSpec:
    key = encode_key(OffsetCommitKey(group_id, tp[0], tp[1]))
    return RecordSpec(key=key, value=encode_value(committed.to_value()), timestamp=now_ms)


def _members(
    group: ClassicGroup, assignment: Mapping[str, bytes]
) -> tuple[GroupMemberMetadata, ...]:
    protocol = group.protocol_name or ""
    return tuple(
        GroupMemberMetadata(
            member_id=member.member_id,
            client_id=member.client_id,
            client_host=member.client_host,
            session_timeout=member.session_timeout_ms,
            subscription=member.metadata(protocol),
            assignment=assignment.get(member.member_id, b""),
            group_instance_id=member.group_instance_id,
            rebalance_timeout=member.rebalance_timeout_ms,
        )
        for member in group.members.values()
    )


def group_record(group: ClassicGroup, assignment: Mapping[str, bytes], now_ms: int) -> RecordSpec:
    """The group as it is now, with ``assignment`` for its members."""
    value = GroupMetadataValue(
        protocol_type=group.protocol_type or "",
        generation=group.generation,
        protocol=group.protocol_name,
        leader=group.leader_id,
        members=_members(group, assignment),
        current_state_timestamp=group.state_timestamp,
    )
    key = encode_key(GroupMetadataKey(group.group_id))
    return RecordSpec(key=key, value=encode_value(value), timestamp=now_ms)


def empty_group_record(group: ClassicGroup, now_ms: int) -> RecordSpec:
    """Written when a group is created, before any member is in it."""
    value = GroupMetadataValue("", 0, None, None, (), group.state_timestamp)
    key = encode_key(GroupMetadataKey(group.group_id))
    return RecordSpec(key=key, value=encode_value(value), timestamp=now_ms)


def build_records_batch(records: list[RecordSpec]) -> bytes:
    """One uncompressed batch of coordinator records (see the module docstring)."""
    return build_batch(records, base_offset=0, base_sequence=0)


def build_txn_batch(records: list[RecordSpec], producer_id: int, producer_epoch: int) -> bytes:
    """The batch of a transactional offset commit: transactional, the producer's
    id and epoch, no sequence (the coordinator writes it, not the producer)."""
    return build_batch(
        records,
        base_offset=0,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=-1,
        is_transactional=True,
    )


@dataclass(slots=True)
class Replayed:
    """The last state per key of a replayed partition (None = deleted)."""

    groups: dict[str, GroupMetadataValue | None] = field(default_factory=dict)
    offsets: dict[str, dict[TopicPartition, OffsetAndMetadata | None]] = field(default_factory=dict)
    skipped: int = 0


def replay(records: Iterable[Record | tuple[bytes | None, bytes | None]]) -> Replayed:
    """Fold records in log order (FormatError on a corrupt one, as Kafka's loader fails)."""
    out = Replayed()
    for record in records:
        try:
            decoded = decode_record(record)
        except UnknownRecordTypeError:
            out.skipped += 1
            continue
        key, value = decoded.key, decoded.value
        if isinstance(key, OffsetCommitKey):
            committed = value if isinstance(value, OffsetCommitValue) else None
            stored = None if committed is None else OffsetAndMetadata.from_value(committed)
            out.offsets.setdefault(key.group, {})[key.topic, key.partition] = stored
        elif isinstance(key, GroupMetadataKey):
            out.groups[key.group] = value if isinstance(value, GroupMetadataValue) else None
        else:
            out.skipped += 1
    return out


def group_from_value(group_id: str, value: GroupMetadataValue) -> ClassicGroup:
    """A loaded group: Stable with its members, or Empty (Kafka's ``fromRecord``)."""
    state = GroupState.STABLE if value.members else GroupState.EMPTY
    group = ClassicGroup(group_id, value.current_state_timestamp, state)
    group.generation = value.generation
    group.protocol_name = value.protocol
    for stored in value.members:
        protocols = () if value.protocol is None else ((value.protocol, stored.subscription),)
        group.add(
            Member(
                member_id=stored.member_id,
                group_instance_id=stored.group_instance_id,
                client_id=stored.client_id,
                client_host=stored.client_host,
                rebalance_timeout_ms=stored.rebalance_timeout,
                session_timeout_ms=stored.session_timeout,
                protocol_type=value.protocol_type,
                protocols=protocols,
                assignment=stored.assignment,
            )
        )
    group.protocol_type = value.protocol_type or None
    group.leader_id = value.leader
    return group
