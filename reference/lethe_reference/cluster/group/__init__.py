"""The group coordinator: classic consumer groups and their committed offsets.

Modules, bottom up: ``codes`` (Kafka error codes), ``state`` (the transition
table), ``support`` (partition choice, timers, pending replies), ``api``
(request and result values), ``group`` (a group's members), ``persistence``
(its ``__consumer_offsets`` records), ``runtime``, ``rebalance``,
``membership``, ``offsets``, ``deletion``, ``cleanup`` (the periodic expiration of
offsets and Empty groups) and ``coordinator`` (the public class).
"""

from __future__ import annotations

from lethe_reference.cluster.group.api import (
    CommitOffset,
    DescribedGroup,
    DescribedMember,
    FetchedOffset,
    JoinMember,
    JoinRequest,
    JoinResult,
    LeaveMember,
    LeaveResult,
    ListedGroup,
    MemberLeft,
    OffsetCommitRequest,
    OffsetFetchResult,
    SyncRequest,
    SyncResult,
    TopicPartition,
)
from lethe_reference.cluster.group.coordinator import GroupCoordinator
from lethe_reference.cluster.group.deletion import OffsetDeleteResult
from lethe_reference.cluster.group.persistence import OffsetAndMetadata
from lethe_reference.cluster.group.runtime import AppendError, GroupConfig
from lethe_reference.cluster.group.state import (
    GroupEvent,
    GroupState,
    IllegalTransitionError,
)
from lethe_reference.cluster.group.support import Pending, PendingError, partition_for

__all__ = [
    "AppendError",
    "CommitOffset",
    "DescribedGroup",
    "DescribedMember",
    "FetchedOffset",
    "GroupConfig",
    "GroupCoordinator",
    "GroupEvent",
    "GroupState",
    "IllegalTransitionError",
    "JoinMember",
    "JoinRequest",
    "JoinResult",
    "LeaveMember",
    "LeaveResult",
    "ListedGroup",
    "MemberLeft",
    "OffsetAndMetadata",
    "OffsetCommitRequest",
    "OffsetDeleteResult",
    "OffsetFetchResult",
    "Pending",
    "PendingError",
    "SyncRequest",
    "SyncResult",
    "TopicPartition",
    "partition_for",
]
