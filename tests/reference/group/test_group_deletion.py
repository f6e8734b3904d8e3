"""OffsetDelete and DeleteGroups in the group coordinator, as Kafka 4.0 answers them
(``OffsetMetadataManager.deleteOffsets``, ``GroupCoordinatorShard.deleteGroups``,
``ClassicGroup.validateOffsetDelete`` / ``validateDeleteGroup``): error codes,
tombstones written to ``__consumer_offsets``, what OffsetFetch and consumed
retention see afterwards, and nothing changed when the write fails."""

from __future__ import annotations

from group_support import GROUP, Harness, done
from lethe_formats.coordinator import GroupMetadataKey, OffsetCommitKey
from lethe_formats.coordinator.consumer_protocol import ConsumerSubscription, encode_subscription
from lethe_reference.cluster.group import CommitOffset, OffsetCommitRequest, OffsetDeleteResult
from lethe_reference.cluster.group.deletion import subscribed_topics

NONE, NOT_COORDINATOR, INVALID_GROUP_ID, NOT_ENOUGH_REPLICAS = 0, 16, 24, 19
COORDINATOR_NOT_AVAILABLE, NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND = 15, 68, 69
GROUP_SUBSCRIBED_TO_TOPIC = 86
TP0, TP1, OTHER = ("orders", 0), ("orders", 1), ("audit", 0)


def commit(h: Harness, group: str, *offsets: tuple[tuple[str, int], int]) -> None:
    request = OffsetCommitRequest(group, {tp: CommitOffset(o) for tp, o in offsets})
    assert set(h.coordinator.commit_offsets(request).values()) == {NONE}


def stable_consumer(h: Harness, topics: tuple[str, ...]) -> str:
    """One member in a Stable "consumer" group subscribed to ``topics``."""
    meta = encode_subscription(ConsumerSubscription(topics))
    member = h.new_member("a")
    done(h.join("a", member, protocols=(("range", meta),)))
    done(h.sync(member, 1, {member: b""}))
    assert h.coordinator.describe_group(GROUP).state == "Stable"
    return member


def test_offset_delete_tombstones_the_stored_offsets_and_fetch_forgets_them() -> None:
    h = Harness()
    commit(h, "audit", (TP0, 5), (TP1, 7))
    written = len(h.batches)
    result = h.coordinator.delete_offsets("audit", [TP0, ("orders", 9)])
    assert result == OffsetDeleteResult(NONE, {TP0: NONE, ("orders", 9): NONE})
    assert len(h.batches) == written + 1  # one batch, only for the stored offset
    tombstone = h.written()[-1]
    assert tombstone.key == OffsetCommitKey("audit", "orders", 0) and tombstone.value is None
    fetched = h.coordinator.fetch_offsets("audit", [TP0, TP1]).offsets
    assert (fetched[TP0].offset, fetched[TP1].offset) == (-1, 7)
    assert h.coordinator.committed("audit").keys() == {TP1}


def test_offset_delete_with_nothing_stored_writes_nothing() -> None:
    h = Harness()
    commit(h, "audit", (TP0, 5))
    written = len(h.batches)
    assert h.coordinator.delete_offsets("audit", [OTHER]).partitions == {OTHER: NONE}
    assert len(h.batches) == written


def test_offset_delete_of_an_unknown_group_is_group_id_not_found() -> None:
    h = Harness()
    assert h.coordinator.delete_offsets("nobody", [TP0]) == OffsetDeleteResult(GROUP_ID_NOT_FOUND)
    assert h.coordinator.delete_offsets("", [TP0]) == OffsetDeleteResult(INVALID_GROUP_ID)


def test_offset_delete_refuses_subscribed_topics_only() -> None:
    h = Harness()
    member = stable_consumer(h, ("orders",))
    request = OffsetCommitRequest(GROUP, {TP0: CommitOffset(3), OTHER: CommitOffset(4)}, member, 1)
    assert set(h.coordinator.commit_offsets(request).values()) == {NONE}
    result = h.coordinator.delete_offsets(GROUP, [TP0, OTHER])
    assert result.partitions == {TP0: GROUP_SUBSCRIBED_TO_TOPIC, OTHER: NONE}
    assert h.coordinator.committed(GROUP).keys() == {TP0}


def test_offset_delete_on_a_non_consumer_group_with_members_is_non_empty_group() -> None:
    h = Harness()
    member = h.new_member("a")
    done(h.join("a", member, protocol_type="connect"))
    assert h.coordinator.delete_offsets(GROUP, [TP0]) == OffsetDeleteResult(NON_EMPTY_GROUP)


def test_subscription_that_does_not_decode_subscribes_to_nothing() -> None:
    h = Harness()
    member = h.new_member("a")
    done(h.join("a", member))  # protocol metadata b"range-meta" is no subscription
    group = h.coordinator.groups[GROUP]
    assert subscribed_topics(group) == frozenset()


def test_delete_groups_writes_offset_and_group_tombstones_and_forgets_the_group() -> None:
    h = Harness()
    commit(h, "audit", (TP0, 5), (OTHER, 1))
    assert h.coordinator.delete_groups(["audit", "nobody", "audit"]) == {
        "audit": NONE,
        "nobody": GROUP_ID_NOT_FOUND,
    }
    last = h.written()[-3:]
    assert {r.key for r in last} == {
        OffsetCommitKey("audit", "orders", 0),
        OffsetCommitKey("audit", "audit", 0),
        GroupMetadataKey("audit"),
    }
    assert all(r.value is None for r in last)
    assert "audit" not in h.coordinator.groups and h.coordinator.committed("audit") == {}
    assert h.coordinator.fetch_offsets("audit", [TP0]).offsets[TP0].offset == -1
    assert h.coordinator.delete_groups(["audit"]) == {"audit": GROUP_ID_NOT_FOUND}


def test_delete_groups_refuses_a_group_with_members() -> None:
    h = Harness()
    stable_consumer(h, ("orders",))
    assert h.coordinator.delete_groups([GROUP, ""]) == {
        GROUP: NON_EMPTY_GROUP,
        "": INVALID_GROUP_ID,
    }
    assert GROUP in h.coordinator.groups


def test_a_failed_write_changes_nothing() -> None:
    h = Harness()
    commit(h, "audit", (TP0, 5))
    h.fail_with = NOT_ENOUGH_REPLICAS
    assert h.coordinator.delete_offsets("audit", [TP0]).error_code == COORDINATOR_NOT_AVAILABLE
    assert h.coordinator.delete_groups(["audit"]) == {"audit": COORDINATOR_NOT_AVAILABLE}
    assert h.coordinator.committed("audit").keys() == {TP0}


def test_a_group_of_an_unloaded_partition_is_not_coordinator() -> None:
    h = Harness()
    commit(h, "audit", (TP0, 5))
    h.coordinator.unload(h.coordinator.partition_for("audit"))
    assert h.coordinator.delete_offsets("audit", [TP0]).error_code == NOT_COORDINATOR
    assert h.coordinator.delete_groups(["audit"]) == {"audit": NOT_COORDINATOR}


def test_replaying_the_tombstones_restores_the_deleted_state() -> None:
    h = Harness()
    commit(h, "audit", (TP0, 5), (TP1, 6))
    commit(h, "billing", (TP0, 9))
    h.coordinator.delete_offsets("audit", [TP0])
    h.coordinator.delete_groups(["billing"])
    again = Harness()
    for partition in {p for p, _ in h.batches}:
        again.coordinator.load(partition, h.records())
    assert again.coordinator.committed("audit").keys() == {TP1}
    assert again.coordinator.committed("billing") == {}
    assert "billing" not in again.coordinator.groups
