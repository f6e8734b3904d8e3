"""Reconciliation of one member, against Kafka 4.0's ``CurrentAssignmentBuilderTest``
(group-coordinator/src/test/.../modern/consumer/): the same inputs, the same members."""

from __future__ import annotations

from collections.abc import Mapping

from lethe_reference.cluster.group.consumer.member import (
    ConsumerMember,
    MemberState,
    reconcile,
)

S = MemberState


def parts(t1: set[int], t2: set[int]) -> dict[str, frozenset[int]]:
    return {t: frozenset(p) for t, p in (("t1", t1), ("t2", t2)) if p}


def m(
    state: MemberState,
    epoch: int,
    previous: int,
    assigned: Mapping[str, frozenset[int]],
    revoking: Mapping[str, frozenset[int]] | None = None,
) -> ConsumerMember:
    return ConsumerMember(
        "member",
        member_epoch=epoch,
        previous_member_epoch=previous,
        state=state,
        assigned=dict(assigned),
        pending_revocation=dict(revoking or {}),
    )


def free(topic: str, partition: int) -> int:
    return -1


def held(topic: str, partition: int) -> int:
    return 10


def test_stable_to_stable() -> None:
    member = m(S.STABLE, 10, 10, parts({1, 2, 3}, {4, 5, 6}))
    out = reconcile(member, 11, parts({1, 2, 3}, {4, 5, 6}), held, None)
    assert out == m(S.STABLE, 11, 10, parts({1, 2, 3}, {4, 5, 6}))


def test_stable_to_stable_with_new_partitions() -> None:
    member = m(S.STABLE, 10, 10, parts({1, 2, 3}, {4, 5, 6}))
    out = reconcile(member, 11, parts({1, 2, 3, 4}, {4, 5, 6, 7}), free, None)
    assert out == m(S.STABLE, 11, 10, parts({1, 2, 3, 4}, {4, 5, 6, 7}))


def test_stable_to_unrevoked_partitions() -> None:
    member = m(S.STABLE, 10, 10, parts({1, 2, 3}, {4, 5, 6}))
    out = reconcile(member, 11, parts({2, 3, 4}, {5, 6, 7}), free, None)
    assert out == m(S.UNREVOKED_PARTITIONS, 10, 10, parts({2, 3}, {5, 6}), parts({1}, {4}))


def test_stable_to_unreleased_partitions() -> None:
    member = m(S.STABLE, 10, 10, parts({1, 2, 3}, {4, 5, 6}))
    out = reconcile(member, 11, parts({1, 2, 3, 4}, {4, 5, 6, 7}), held, None)
    assert out == m(S.UNRELEASED_PARTITIONS, 11, 10, parts({1, 2, 3}, {4, 5, 6}))


def test_revoked_partitions_already_given_up_are_not_asked_for_again() -> None:
    """``testStableToUnreleasedPartitionsWithOwnedPartitionsNotHavingRevokedPartitions``:
    t2-6 is to go, but the member owns nothing any more; t2-7 is still held elsewhere."""
    member = m(S.STABLE, 10, 10, parts({1, 2, 3}, {4, 5, 6}))

    def t2_held(topic: str, partition: int) -> int:
        return 10 if topic == "t2" else -1

    out = reconcile(member, 11, parts({1, 2, 3}, {4, 5, 7}), t2_held, {})
    assert out == m(S.UNRELEASED_PARTITIONS, 11, 10, parts({1, 2, 3}, {4, 5}))


def test_unrevoked_partitions_to_stable_once_they_are_given_up() -> None:
    member = m(S.UNREVOKED_PARTITIONS, 10, 10, parts({2, 3}, {5, 6}), parts({1}, {4}))
    out = reconcile(member, 11, parts({2, 3}, {5, 6}), free, parts({2, 3}, {5, 6}))
    assert out == m(S.STABLE, 11, 10, parts({2, 3}, {5, 6}))


def test_remains_unrevoked_while_a_revoked_partition_is_still_owned() -> None:
    member = m(S.UNREVOKED_PARTITIONS, 10, 10, parts({2, 3}, {5, 6}), parts({1}, {4}))
    target = parts({3}, {6})
    assert reconcile(member, 12, target, free, None) == member
    assert reconcile(member, 12, target, free, parts({1, 2, 3}, {5, 6})) == member
    assert reconcile(member, 12, target, free, parts({2, 3}, {4, 5, 6})) == member


def test_unrevoked_to_unrevoked_with_a_newer_target() -> None:
    member = m(S.UNREVOKED_PARTITIONS, 10, 10, parts({2, 3}, {5, 6}), parts({1}, {4}))
    out = reconcile(member, 12, parts({3}, {6}), free, parts({2, 3}, {5, 6}))
    assert out == m(S.UNREVOKED_PARTITIONS, 11, 10, parts({3}, {6}), parts({2}, {5}))


def test_unrevoked_to_unreleased() -> None:
    member = m(S.UNREVOKED_PARTITIONS, 11, 10, parts({2, 3}, {5, 6}))
    out = reconcile(member, 11, parts({1, 2, 3}, {4, 5, 6}), held, parts({2, 3}, {5, 6}))
    assert out == m(S.UNRELEASED_PARTITIONS, 11, 11, parts({2, 3}, {5, 6}))


def test_unreleased_to_stable() -> None:
    member = m(S.UNRELEASED_PARTITIONS, 11, 11, parts({2, 3}, {5, 6}))
    out = reconcile(member, 12, parts({2, 3}, {5, 6}), held, None)
    assert out == m(S.STABLE, 12, 11, parts({2, 3}, {5, 6}))


def test_unreleased_to_stable_with_new_partitions() -> None:
    member = m(S.UNRELEASED_PARTITIONS, 11, 11, parts({2, 3}, {5, 6}))
    out = reconcile(member, 11, parts({2, 3, 4}, {5, 6, 7}), free, None)
    assert out == m(S.STABLE, 11, 11, parts({2, 3, 4}, {5, 6, 7}))


def test_unreleased_stays_while_they_are_held() -> None:
    member = m(S.UNRELEASED_PARTITIONS, 11, 11, parts({2, 3}, {5, 6}))
    assert reconcile(member, 11, parts({2, 3, 4}, {5, 6, 7}), held, None) == member


def test_unreleased_to_unrevoked_when_the_target_moves_on() -> None:
    member = m(S.UNRELEASED_PARTITIONS, 11, 11, parts({2, 3}, {5, 6}))
    out = reconcile(member, 12, parts({3}, {6}), held, None)
    assert out == m(S.UNREVOKED_PARTITIONS, 11, 11, parts({3}, {6}), parts({2}, {5}))
