"""The "consumer" embedded protocol: subscription and assignment bytes.

A classic group with protocol type ``consumer`` carries these inside
JoinGroup/SyncGroup and stores them in GroupMetadataValue's member
``subscription`` and ``assignment`` bytes. The coordinator never needs to read
them (assignment is the leader's job); DescribeGroups, dump tools and tests do.

Byte layouts (classic encoding, no tagged fields)::

    ConsumerProtocolSubscription            since
      version          int16
      topics           [string]             v0
      userData         bytes?               v0
      ownedPartitions  [topic string | partitions [int32]]   v1
      generationId     int32                v2   (-1 = none)
      rackId           string?              v3

    ConsumerProtocolAssignment
      version            int16
      assignedPartitions [topic string | partitions [int32]]   v0
      userData           bytes?               v0

Theory of operation
-------------------
Kafka's ``ConsumerProtocol`` promises that later versions only append fields,
so a version above 3 is read with the version-3 layout and bytes after the
known fields are ignored (as Kafka does). A negative version is an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lethe_formats.coordinator._message import (
    ArrayOf,
    Field,
    StructSpec,
    compile_struct,
    message_schema,
    since,
)
from lethe_formats.errors import CorruptRecordError, FormatError
from lethe_formats.primitives import Window

__all__ = [
    "ConsumerAssignment",
    "ConsumerSubscription",
    "TopicPartitionList",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
]

HIGHEST_VERSION = 3


@dataclass(frozen=True, slots=True)
class TopicPartitionList:
    topic: str
    partitions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ConsumerSubscription:
    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartitionList, ...] = ()
    generation_id: int = -1
    rack_id: str | None = None
    version: int = HIGHEST_VERSION


@dataclass(frozen=True, slots=True)
class ConsumerAssignment:
    assigned_partitions: tuple[TopicPartitionList, ...]
    user_data: bytes | None = None
    version: int = HIGHEST_VERSION


_TOPIC_PARTITIONS = StructSpec(
    TopicPartitionList, (Field("topic", "string"), Field("partitions", ArrayOf("int32")))
)
_SUBSCRIPTION = StructSpec(
    ConsumerSubscription,
    (
        Field("topics", ArrayOf("string")),
        Field("user_data", "bytes", nullable=since(0)),
        Field("owned_partitions", ArrayOf(_TOPIC_PARTITIONS), since(1)),
        Field("generation_id", "int32", since(2)),
        Field("rack_id", "string", since(3), nullable=since(3)),
    ),
)
_ASSIGNMENT = StructSpec(
    ConsumerAssignment,
    (
        Field("assigned_partitions", ArrayOf(_TOPIC_PARTITIONS)),
        Field("user_data", "bytes", nullable=since(0)),
    ),
)


def _schema(spec: StructSpec) -> Any:
    cases = {v: compile_struct(spec, v, False) for v in range(HIGHEST_VERSION + 1)}
    # Newer versions only append fields: read them with the newest known layout.
    newest = compile_struct(spec, HIGHEST_VERSION, False)
    return message_schema(cases, newest, strict_end=False)


SubscriptionSchema = _schema(_SUBSCRIPTION)
AssignmentSchema = _schema(_ASSIGNMENT)


def _decode(schema: Any, data: bytes, what: str) -> Any:
    if len(data) >= 2 and int.from_bytes(data[:2], "big", signed=True) < 0:
        raise CorruptRecordError(f"{what}: negative version", position=0, field="version")
    try:
        return schema.parse_stream(Window(bytes(data)))
    except FormatError as error:
        error.field = f"{what}.{error.field}" if error.field else what
        raise


def decode_subscription(data: bytes) -> ConsumerSubscription:
    """A consumer's JoinGroup protocol metadata."""
    value: ConsumerSubscription = _decode(SubscriptionSchema, data, "subscription")
    return value


def decode_assignment(data: bytes) -> ConsumerAssignment:
    """A member's assignment from SyncGroup."""
    value: ConsumerAssignment = _decode(AssignmentSchema, data, "assignment")
    return value


def encode_subscription(value: ConsumerSubscription) -> bytes:
    return bytes(SubscriptionSchema.build(value))


def encode_assignment(value: ConsumerAssignment) -> bytes:
    return bytes(AssignmentSchema.build(value))
