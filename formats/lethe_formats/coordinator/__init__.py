"""``__consumer_offsets`` records: keys and values the group coordinator writes.

Modules:

* ``keys``               every key type (0-8); the key's version is the record type
* ``classic``            OffsetCommitValue v0-v4, GroupMetadataValue v0-v4
* ``consumer_group``     the KIP-848 values (types 3-8), flexible v0
* ``consumer_protocol``  the "consumer" subscription/assignment bytes inside classic groups
* ``records``            decode/encode a whole record (key + value, null = tombstone)
* ``_message``/``_fields`` the declarative tables and their Construct compiler
"""

from __future__ import annotations

from lethe_formats.coordinator._message import UnknownRecordTypeError, UnsupportedVersionError
from lethe_formats.coordinator.classic import (
    GroupMemberMetadata,
    GroupMetadataValue,
    OffsetCommitValue,
)
from lethe_formats.coordinator.keys import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMetadataKey,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    CoordinatorKey,
    GroupMetadataKey,
    OffsetCommitKey,
)
from lethe_formats.coordinator.records import (
    CoordinatorRecord,
    CoordinatorValue,
    decode_key,
    decode_record,
    decode_value,
    encode_key,
    encode_record,
    encode_value,
)

__all__ = [
    "ConsumerGroupCurrentMemberAssignmentKey",
    "ConsumerGroupMemberMetadataKey",
    "ConsumerGroupMetadataKey",
    "ConsumerGroupPartitionMetadataKey",
    "ConsumerGroupTargetAssignmentMemberKey",
    "ConsumerGroupTargetAssignmentMetadataKey",
    "CoordinatorKey",
    "CoordinatorRecord",
    "CoordinatorValue",
    "GroupMemberMetadata",
    "GroupMetadataKey",
    "GroupMetadataValue",
    "OffsetCommitKey",
    "OffsetCommitValue",
    "UnknownRecordTypeError",
    "UnsupportedVersionError",
    "decode_key",
    "decode_record",
    "decode_value",
    "encode_key",
    "encode_record",
    "encode_value",
]
