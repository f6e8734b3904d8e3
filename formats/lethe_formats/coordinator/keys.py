"""Keys of ``__consumer_offsets`` records: the key's version is the record type.

Byte layout (every key; classic encoding, no tagged fields)::

    0        2
    +--------+-----------------------------------------------------+
    |type i16| group string [| topic string | partition i32]      |  0, 1 OffsetCommit
    |        | group string                                        |  2 GroupMetadata
    |        | groupId string [| memberId string]                  |  3-8 consumer group
    +--------+-----------------------------------------------------+
    string = int16 length + UTF-8 bytes

Record types (Kafka 4.0's group coordinator)::

    0, 1  OffsetCommitKey (0 is the pre-0.10 form; Kafka writes 1)
    2     GroupMetadataKey                             classic group
    3     ConsumerGroupMetadataKey                     KIP-848 group epoch
    4     ConsumerGroupPartitionMetadataKey            subscribed topic metadata
    5     ConsumerGroupMemberMetadataKey     + member  member subscription
    6     ConsumerGroupTargetAssignmentMetadataKey     assignment epoch
    7     ConsumerGroupTargetAssignmentMemberKey + member  target assignment
    8     ConsumerGroupCurrentMemberAssignmentKey + member current assignment

Theory of operation
-------------------
One table per key type; all types share one ``Switch`` on the leading int16,
so :data:`KeySchema` parses any key. A type not listed is an
:class:`UnknownRecordTypeError` (Kafka's loader skips such records).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lethe_formats.coordinator._message import (
    Field,
    Reject,
    StructSpec,
    UnknownRecordTypeError,
    compile_struct,
    message_schema,
)

__all__ = [
    "ConsumerGroupCurrentMemberAssignmentKey",
    "ConsumerGroupMemberMetadataKey",
    "ConsumerGroupMetadataKey",
    "ConsumerGroupPartitionMetadataKey",
    "ConsumerGroupTargetAssignmentMemberKey",
    "ConsumerGroupTargetAssignmentMetadataKey",
    "CoordinatorKey",
    "GroupMetadataKey",
    "KeySchema",
    "OffsetCommitKey",
]


@dataclass(frozen=True, slots=True)
class OffsetCommitKey:
    """Types 0 and 1: the committed offset of one partition for one group."""

    group: str
    topic: str
    partition: int
    version: int = 1


@dataclass(frozen=True, slots=True)
class GroupMetadataKey:
    """Type 2: a classic group's metadata (generation, members, assignment)."""

    group: str
    version: int = 2


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadataKey:
    """Type 3: a KIP-848 consumer group's epoch."""

    group_id: str
    version: int = 3


@dataclass(frozen=True, slots=True)
class ConsumerGroupPartitionMetadataKey:
    """Type 4: metadata of the topics a KIP-848 group subscribes to."""

    group_id: str
    version: int = 4


@dataclass(frozen=True, slots=True)
class ConsumerGroupMemberMetadataKey:
    """Type 5: one KIP-848 member's subscription and client details."""

    group_id: str
    member_id: str
    version: int = 5


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMetadataKey:
    """Type 6: the epoch of a KIP-848 group's target assignment."""

    group_id: str
    version: int = 6


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMemberKey:
    """Type 7: one member's target assignment."""

    group_id: str
    member_id: str
    version: int = 7


@dataclass(frozen=True, slots=True)
class ConsumerGroupCurrentMemberAssignmentKey:
    """Type 8: one member's current assignment and epochs."""

    group_id: str
    member_id: str
    version: int = 8


CoordinatorKey = (
    OffsetCommitKey
    | GroupMetadataKey
    | ConsumerGroupMetadataKey
    | ConsumerGroupPartitionMetadataKey
    | ConsumerGroupMemberMetadataKey
    | ConsumerGroupTargetAssignmentMetadataKey
    | ConsumerGroupTargetAssignmentMemberKey
    | ConsumerGroupCurrentMemberAssignmentKey
)

_GROUP = (Field("group", "string"),)
_GROUP_ID = (Field("group_id", "string"),)
_MEMBER = (*_GROUP_ID, Field("member_id", "string"))

#: record type -> key table
KEY_SPECS: dict[int, StructSpec] = {
    0: StructSpec(
        OffsetCommitKey, (*_GROUP, Field("topic", "string"), Field("partition", "int32"))
    ),
    2: StructSpec(GroupMetadataKey, _GROUP),
    3: StructSpec(ConsumerGroupMetadataKey, _GROUP_ID),
    4: StructSpec(ConsumerGroupPartitionMetadataKey, _GROUP_ID),
    5: StructSpec(ConsumerGroupMemberMetadataKey, _MEMBER),
    6: StructSpec(ConsumerGroupTargetAssignmentMetadataKey, _GROUP_ID),
    7: StructSpec(ConsumerGroupTargetAssignmentMemberKey, _MEMBER),
    8: StructSpec(ConsumerGroupCurrentMemberAssignmentKey, _MEMBER),
}
KEY_SPECS[1] = KEY_SPECS[0]


def _unknown_type(context: Any) -> str:
    return f"unknown coordinator record type {context.version}"


#: Any ``__consumer_offsets`` key -> its key dataclass.
KeySchema = message_schema(
    {kind: compile_struct(spec, kind, False) for kind, spec in KEY_SPECS.items()},
    Reject(UnknownRecordTypeError, _unknown_type),
)
