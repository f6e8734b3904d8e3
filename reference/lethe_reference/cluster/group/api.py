"""What goes into the group coordinator and what comes out: plain frozen values.

Theory of operation
-------------------
The coordinator does not know wire versions. The handler layer decodes a
request, fills one of the ``*Request`` values (resolving version differences
such as JoinGroup v0 having no rebalance timeout, or v4+ requiring a known
member id) and maps the ``*Result`` back to the response of the version the
client spoke. Error codes are Kafka's (see ``codes``).

JoinGroup and SyncGroup may have to wait: the coordinator then returns a
:class:`~lethe_reference.cluster.group.support.Pending` that it completes later
with the same result type.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lethe_reference.cluster.group import codes

__all__ = [
    "CommitOffset",
    "DescribedGroup",
    "DescribedMember",
    "FetchedOffset",
    "JoinMember",
    "JoinRequest",
    "JoinResult",
    "LeaveMember",
    "LeaveResult",
    "ListedGroup",
    "MemberLeft",
    "OffsetCommitRequest",
    "OffsetFetchResult",
    "SyncRequest",
    "SyncResult",
    "TopicPartition",
]

TopicPartition = tuple[str, int]
#: (protocol name, protocol metadata) in the member's order of preference
Protocols = tuple[tuple[str, bytes], ...]


@dataclass(frozen=True, slots=True)
class JoinRequest:
    group_id: str
    member_id: str
    protocol_type: str
    protocols: Protocols
    session_timeout_ms: int
    rebalance_timeout_ms: int
    client_id: str
    client_host: str
    group_instance_id: str | None = None
    #: JoinGroup v4+: an unknown member first gets MEMBER_ID_REQUIRED and an id
    require_known_member_id: bool = True


@dataclass(frozen=True, slots=True)
class JoinMember:
    """One member as the leader's JoinGroup response lists it."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True, slots=True)
class JoinResult:
    error_code: int
    member_id: str
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    members: tuple[JoinMember, ...] = ()
    skip_assignment: bool = False


@dataclass(frozen=True, slots=True)
class SyncRequest:
    group_id: str
    member_id: str
    generation_id: int
    #: the leader's assignment: (member id, assignment bytes)
    assignments: tuple[tuple[str, bytes], ...] = ()
    group_instance_id: str | None = None
    #: SyncGroup v5+ (None when the client did not send them)
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass(frozen=True, slots=True)
class SyncResult:
    error_code: int
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass(frozen=True, slots=True)
class LeaveMember:
    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class MemberLeft:
    member_id: str
    group_instance_id: str | None
    error_code: int


@dataclass(frozen=True, slots=True)
class LeaveResult:
    """``error_code`` is the group-level error; ``members`` one entry per member
    asked to leave (LeaveGroup v0-2 report the single member's error at top level)."""

    error_code: int
    members: tuple[MemberLeft, ...] = ()


@dataclass(frozen=True, slots=True)
class CommitOffset:
    offset: int
    metadata: str | None = ""
    leader_epoch: int = -1


@dataclass(frozen=True, slots=True)
class OffsetCommitRequest:
    group_id: str
    offsets: dict[TopicPartition, CommitOffset]
    member_id: str = ""
    generation_id: int = -1
    group_instance_id: str | None = None
    #: OffsetCommit v2-v4's retention time (-1 = the broker default)
    retention_time_ms: int = -1
    #: OffsetCommit v9+ answers GROUP_ID_NOT_FOUND where older ones said ILLEGAL_GENERATION
    api_version: int = 9


@dataclass(frozen=True, slots=True)
class FetchedOffset:
    offset: int = -1
    leader_epoch: int = -1
    metadata: str = ""
    error_code: int = codes.NONE


@dataclass(frozen=True, slots=True)
class OffsetFetchResult:
    error_code: int
    offsets: dict[TopicPartition, FetchedOffset] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DescribedMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    #: the selected protocol's metadata and the assignment; empty unless Stable
    metadata: bytes = b""
    assignment: bytes = b""


@dataclass(frozen=True, slots=True)
class DescribedGroup:
    group_id: str
    error_code: int = codes.NONE
    state: str = "Dead"
    protocol_type: str = ""
    #: the selected protocol's name while Stable, else ""
    protocol_data: str = ""
    members: tuple[DescribedMember, ...] = ()
    #: False for a group this coordinator does not know (Kafka reports it Dead)
    exists: bool = False
    #: why it is not found, when not simply unknown (a consumer group is "not a classic group")
    missing_message: str = ""


@dataclass(frozen=True, slots=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = "classic"
