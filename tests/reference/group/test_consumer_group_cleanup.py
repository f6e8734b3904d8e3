"""The periodic cleanup for KIP-848 consumer groups.

Expected behaviour from Kafka 4.0's source: ``ConsumerGroup.offsetExpirationCondition``
(an offset's base is its commit timestamp), ``OffsetMetadataManager.cleanupExpiredOffsets``
(offsets of topics a member subscribes to never expire there) and
``GroupCoordinatorShard.cleanupGroupMetadata`` / ``ConsumerGroup.createGroupTombstoneRecords``
(an Empty group with no offset left goes, tombstoning its target assignment epoch (type 6),
its subscription metadata (type 4) and its group epoch (type 3), in that order).
"""

from __future__ import annotations

from typing import Any

from group_support import Harness
from lethe_formats.coordinator import (
    ConsumerGroupMetadataKey,
    ConsumerGroupPartitionMetadataKey,
    ConsumerGroupTargetAssignmentMetadataKey,
    OffsetCommitKey,
)
from lethe_formats.protocol.error_codes import ErrorCode as E
from lethe_reference.cluster.group import CommitOffset, GroupConfig, OffsetCommitRequest
from lethe_reference.cluster.group.consumer import ConsumerHeartbeat

G = "cg"
INTERVAL = 600_000
RETENTION = 3 * INTERVAL


def harness() -> Harness:
    h = Harness(GroupConfig(group_initial_rebalance_delay_ms=0, offsets_retention_ms=RETENTION))
    h.coordinator.topic_partitions = lambda: {"orders": 2, "audit": 1}
    return h


def beat(h: Harness, member_id: str, epoch: int, **changes: Any) -> Any:
    return h.coordinator.consumer_heartbeat(ConsumerHeartbeat(G, member_id, epoch, **changes))


def joined(h: Harness, member_id: str = "m1") -> None:
    result = beat(
        h, member_id, 0, rebalance_timeout_ms=30_000, subscribed_topic_names=("orders",), owned={}
    )
    assert result.error_code == E.NONE


def commit(h: Harness, topic: str, member_id: str = "", epoch: int = -1) -> None:
    request = OffsetCommitRequest(G, {(topic, 0): CommitOffset(5)}, member_id, epoch, api_version=9)
    assert h.coordinator.commit_offsets(request) == {(topic, 0): E.NONE}


def keys_since(h: Harness, since: int) -> list[object]:
    out = []
    for record in h.written()[since:]:
        assert record.value is None
        out.append(record.key)
    return out


def test_empty_group_without_offsets_goes_at_the_next_run() -> None:
    h = harness()
    joined(h)
    beat(h, "m1", -1)  # leaves: the group is Empty
    before = len(h.written())
    h.advance(INTERVAL - 1)
    assert h.coordinator.describe_consumer_group(G).error_code == E.NONE
    h.advance(1)
    assert keys_since(h, before) == [
        ConsumerGroupTargetAssignmentMetadataKey(G),
        ConsumerGroupPartitionMetadataKey(G),
        ConsumerGroupMetadataKey(G),
    ]
    assert h.coordinator.describe_consumer_group(G).error_code == E.GROUP_ID_NOT_FOUND
    assert [g.group_id for g in h.coordinator.list_groups()] == []


def test_offsets_expire_from_their_commit_then_the_empty_group_goes() -> None:
    h = harness()
    joined(h)
    commit(h, "orders", "m1", 1)
    committed_at = h.clock.now_ms()
    beat(h, "m1", -1)
    before = len(h.written())
    h.advance(2 * INTERVAL)  # two runs, the offset is younger than the retention
    assert len(h.written()) == before
    h.advance(INTERVAL)
    assert h.clock.now_ms() - committed_at == RETENTION
    assert keys_since(h, before) == [
        OffsetCommitKey(G, "orders", 0),
        ConsumerGroupTargetAssignmentMetadataKey(G),
        ConsumerGroupPartitionMetadataKey(G),
        ConsumerGroupMetadataKey(G),
    ]
    assert h.coordinator.fetch_offsets(G).offsets == {}


def test_a_member_keeps_its_subscribed_topics_offsets_but_not_the_others() -> None:
    h = harness()
    joined(h)
    commit(h, "orders", "m1", 1)
    commit(h, "audit", "m1", 1)  # a topic no member subscribes to
    before = len(h.written())
    for _ in range(RETENTION // 30_000):  # within the 45 s session each time
        h.advance(30_000)
        assert beat(h, "m1", 1).error_code == E.NONE
    assert keys_since(h, before) == [OffsetCommitKey(G, "audit", 0)]
    fetched = h.coordinator.fetch_offsets(G)
    assert list(fetched.offsets) == [("orders", 0)]
    assert h.coordinator.describe_consumer_group(G).error_code == E.NONE
