"""Values of the KIP-848 consumer-group records (types 3-8), version 0, flexible.

Every value here is flexible from version 0: compact strings and arrays
(uvarint length + 1, 0 = null) and a tagged-field section after each struct.
Byte layouts (``?`` = nullable, ``[]`` = compact array)::

    3 ConsumerGroupMetadataValue            6 ConsumerGroupTargetAssignmentMetadataValue
      version int16 | epoch int32 | tags      version int16 | assignmentEpoch int32 | tags

    4 ConsumerGroupPartitionMetadataValue
      version int16
      topics []: topicId uuid | topicName string | numPartitions int32
                 | partitionMetadata []: partition int32 | racks [] string | tags
                 | tags
      tags

    5 ConsumerGroupMemberMetadataValue
      version int16 | instanceId string? | rackId string? | clientId string
      | clientHost string | subscribedTopicNames [] string | subscribedTopicRegex string?
      | rebalanceTimeoutMs int32 | serverAssignor string?
      | tags (tag 0: classicMemberMetadata?  = uvarint presence | sessionTimeoutMs int32
      |                                       | supportedProtocols []: name string
      |                                                              | metadata bytes | tags
      |                                       | tags)

    7 ConsumerGroupTargetAssignmentMemberValue
      version int16 | topicPartitions []: topicId uuid | partitions [] int32 | tags | tags

    8 ConsumerGroupCurrentMemberAssignmentValue
      version int16 | memberEpoch int32 | previousMemberEpoch int32 | state int8
      | assignedPartitions []: topicId uuid | partitions [] int32 | tags
      | partitionsPendingRevocation [] (same) | tags

Theory of operation
-------------------
The coordinator of this project speaks only the classic protocol, so these
records are decoded (to read logs Kafka wrote) and encoded (round trips), not
acted on. Tags not named here are kept raw in ``unknown_tags``.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.coordinator._message import (
    ArrayOf,
    Field,
    MessageSpec,
    StructSpec,
    Versions,
    since,
)
from lethe_formats.storage.kafka_uuid import KafkaUuid

__all__ = [
    "CONSUMER_GROUP_VALUE_SPECS",
    "ClassicMemberMetadata",
    "ClassicProtocol",
    "ConsumerGroupCurrentMemberAssignmentValue",
    "ConsumerGroupMemberMetadataValue",
    "ConsumerGroupMetadataValue",
    "ConsumerGroupPartitionMetadataValue",
    "ConsumerGroupTargetAssignmentMemberValue",
    "ConsumerGroupTargetAssignmentMetadataValue",
    "PartitionRacks",
    "TopicMetadata",
    "TopicPartitions",
]

Tags = tuple[tuple[int, bytes], ...]
ALL_NULLABLE = since(0)


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadataValue:
    epoch: int
    version: int = 0
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class PartitionRacks:
    partition: int
    racks: tuple[str, ...]
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    topic_id: KafkaUuid
    topic_name: str
    num_partitions: int
    partition_metadata: tuple[PartitionRacks, ...] = ()
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class ConsumerGroupPartitionMetadataValue:
    topics: tuple[TopicMetadata, ...]
    version: int = 0
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class ClassicProtocol:
    name: str
    metadata: bytes
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class ClassicMemberMetadata:
    """Set for a member that joined a KIP-848 group with the classic protocol."""

    session_timeout_ms: int
    supported_protocols: tuple[ClassicProtocol, ...]
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class ConsumerGroupMemberMetadataValue:
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    instance_id: str | None = None
    rack_id: str | None = None
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    classic_member_metadata: ClassicMemberMetadata | None = None
    version: int = 0
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMetadataValue:
    assignment_epoch: int
    version: int = 0
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class TopicPartitions:
    topic_id: KafkaUuid
    partitions: tuple[int, ...]
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMemberValue:
    topic_partitions: tuple[TopicPartitions, ...]
    version: int = 0
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class ConsumerGroupCurrentMemberAssignmentValue:
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned_partitions: tuple[TopicPartitions, ...]
    partitions_pending_revocation: tuple[TopicPartitions, ...]
    version: int = 0
    unknown_tags: Tags = ()


_TOPIC_PARTITIONS = StructSpec(
    TopicPartitions, (Field("topic_id", "uuid"), Field("partitions", ArrayOf("int32")))
)
_RACKS = StructSpec(
    PartitionRacks, (Field("partition", "int32"), Field("racks", ArrayOf("string")))
)
_TOPIC = StructSpec(
    TopicMetadata,
    (
        Field("topic_id", "uuid"),
        Field("topic_name", "string"),
        Field("num_partitions", "int32"),
        Field("partition_metadata", ArrayOf(_RACKS)),
    ),
)
_CLASSIC = StructSpec(
    ClassicMemberMetadata,
    (
        Field("session_timeout_ms", "int32"),
        Field(
            "supported_protocols",
            ArrayOf(
                StructSpec(ClassicProtocol, (Field("name", "string"), Field("metadata", "bytes")))
            ),
        ),
    ),
)


def _v0(name: str, spec: StructSpec) -> MessageSpec:
    return MessageSpec(name, spec, versions=Versions(0, 0), flexible=since(0))


#: record type -> value table
CONSUMER_GROUP_VALUE_SPECS: dict[int, MessageSpec] = {
    3: _v0(
        "ConsumerGroupMetadataValue",
        StructSpec(ConsumerGroupMetadataValue, (Field("epoch", "int32"),)),
    ),
    4: _v0(
        "ConsumerGroupPartitionMetadataValue",
        StructSpec(ConsumerGroupPartitionMetadataValue, (Field("topics", ArrayOf(_TOPIC)),)),
    ),
    5: _v0(
        "ConsumerGroupMemberMetadataValue",
        StructSpec(
            ConsumerGroupMemberMetadataValue,
            (
                Field("instance_id", "string", nullable=ALL_NULLABLE),
                Field("rack_id", "string", nullable=ALL_NULLABLE),
                Field("client_id", "string"),
                Field("client_host", "string"),
                Field("subscribed_topic_names", ArrayOf("string")),
                Field("subscribed_topic_regex", "string", nullable=ALL_NULLABLE),
                Field("rebalance_timeout_ms", "int32"),
                Field("server_assignor", "string", nullable=ALL_NULLABLE),
                Field(
                    "classic_member_metadata",
                    _CLASSIC,
                    nullable=ALL_NULLABLE,
                    tag=0,
                    write_null=True,
                ),
            ),
        ),
    ),
    6: _v0(
        "ConsumerGroupTargetAssignmentMetadataValue",
        StructSpec(
            ConsumerGroupTargetAssignmentMetadataValue, (Field("assignment_epoch", "int32"),)
        ),
    ),
    7: _v0(
        "ConsumerGroupTargetAssignmentMemberValue",
        StructSpec(
            ConsumerGroupTargetAssignmentMemberValue,
            (Field("topic_partitions", ArrayOf(_TOPIC_PARTITIONS)),),
        ),
    ),
    8: _v0(
        "ConsumerGroupCurrentMemberAssignmentValue",
        StructSpec(
            ConsumerGroupCurrentMemberAssignmentValue,
            (
                Field("member_epoch", "int32"),
                Field("previous_member_epoch", "int32"),
                Field("state", "int8"),
                Field("assigned_partitions", ArrayOf(_TOPIC_PARTITIONS)),
                Field("partitions_pending_revocation", ArrayOf(_TOPIC_PARTITIONS)),
            ),
        ),
    ),
}
