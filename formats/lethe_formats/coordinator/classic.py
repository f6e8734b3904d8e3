"""Values of offset-commit (types 0/1) and classic group-metadata (type 2) records.

Byte layouts (v0-v3 classic encoding; v4 is flexible: compact strings, bytes
and arrays, and a tagged-field section after each struct)::

    OffsetCommitValue                       since
      version         int16
      offset          int64                 v0
      leaderEpoch     int32                 v3   (-1 = none)
      metadata        string                v0
      commitTimestamp int64                 v0
      expireTimestamp int64                 v1 only (-1 = none)

    GroupMetadataValue
      version               int16
      protocolType          string          v0
      generation            int32           v0
      protocol              string?         v0   (null while the group is empty)
      leader                string?         v0
      currentStateTimestamp int64           v2   (-1 = unknown)
      members               [MemberMetadata]
        memberId            string          v0
        groupInstanceId     string?         v3   (static membership)
        clientId            string          v0
        clientHost          string          v0
        rebalanceTimeout    int32           v1   (-1 = unknown)
        sessionTimeout      int32           v0
        subscription        bytes           v0   (the selected protocol's metadata)
        assignment          bytes           v0   (from the leader's SyncGroup)

Kafka 4.0 writes OffsetCommitValue v3 (v1 when the commit carries an expire
timestamp) and GroupMetadataValue v3; both read v0-v4. A null value (a
tombstone) deletes the offset or the group.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.coordinator._message import (
    ArrayOf,
    Field,
    MessageSpec,
    StructSpec,
    Versions,
    only,
    since,
)

__all__ = [
    "GROUP_METADATA_VALUE",
    "OFFSET_COMMIT_VALUE",
    "GroupMemberMetadata",
    "GroupMetadataValue",
    "OffsetCommitValue",
]

Tags = tuple[tuple[int, bytes], ...]


@dataclass(frozen=True, slots=True)
class OffsetCommitValue:
    """A committed offset. ``metadata`` is the client's string, kept verbatim
    (librdkafka's ends with a NUL byte)."""

    offset: int
    metadata: str
    commit_timestamp: int
    leader_epoch: int = -1
    expire_timestamp: int = -1
    version: int = 3
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class GroupMemberMetadata:
    """One member of a classic group as the coordinator stores it."""

    member_id: str
    client_id: str
    client_host: str
    session_timeout: int
    subscription: bytes
    assignment: bytes
    group_instance_id: str | None = None
    rebalance_timeout: int = -1
    unknown_tags: Tags = ()


@dataclass(frozen=True, slots=True)
class GroupMetadataValue:
    """A classic group: generation, chosen protocol, leader and members."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    members: tuple[GroupMemberMetadata, ...] = ()
    current_state_timestamp: int = -1
    version: int = 3
    unknown_tags: Tags = ()


OFFSET_COMMIT_VALUE = MessageSpec(
    "OffsetCommitValue",
    StructSpec(
        OffsetCommitValue,
        (
            Field("offset", "int64"),
            Field("leader_epoch", "int32", since(3)),
            Field("metadata", "string"),
            Field("commit_timestamp", "int64"),
            Field("expire_timestamp", "int64", only(1)),
        ),
    ),
    versions=Versions(0, 4),
    flexible=since(4),
)

_MEMBER = StructSpec(
    GroupMemberMetadata,
    (
        Field("member_id", "string"),
        Field("group_instance_id", "string", since(3), nullable=since(3)),
        Field("client_id", "string"),
        Field("client_host", "string"),
        Field("rebalance_timeout", "int32", since(1)),
        Field("session_timeout", "int32"),
        Field("subscription", "bytes"),
        Field("assignment", "bytes"),
    ),
)

GROUP_METADATA_VALUE = MessageSpec(
    "GroupMetadataValue",
    StructSpec(
        GroupMetadataValue,
        (
            Field("protocol_type", "string"),
            Field("generation", "int32"),
            Field("protocol", "string", nullable=since(0)),
            Field("leader", "string", nullable=since(0)),
            Field("current_state_timestamp", "int64", since(2)),
            Field("members", ArrayOf(_MEMBER)),
        ),
    ),
    versions=Versions(0, 4),
    flexible=since(4),
)
