"""The server-side assignors against the vectors of Kafka 4.0's own tests.

Expected assignments are those of ``OptimizedUniformAssignmentBuilderTest`` and
``RangeAssignorTest`` (group-coordinator/src/test/.../assignor/ in Kafka's source),
with their inputs in the orders those tests give Kafka's assignors: members in
``TreeMap`` order (A, B, C), a member's topics as the ``HashSet`` of its topic ids
iterates (the tests' fixed Uuids), current assignments in the order
``mkOrderedAssignment`` lists them or, for ``mkAssignment``, as its ``HashMap``
iterates.
"""

from __future__ import annotations

from collections.abc import Mapping

from lethe_formats.storage.kafka_uuid import KafkaUuid
from lethe_reference.cluster.group.consumer.assignors import (
    AssignmentSpec,
    MemberSpec,
    RangeAssignor,
    UniformAssignor,
    java_hash_order,
    java_string_hash,
    java_uuid_hash,
)

#: The fixed topic ids of OptimizedUniformAssignmentBuilderTest.
IDS = {
    "t1": KafkaUuid.from_string("T1-A4s3VTwiI5CTbEp6POw").raw,
    "t2": KafkaUuid.from_string("T2-B4s3VTwiI5YHbPp6YUe").raw,
    "t3": KafkaUuid.from_string("T3-CU8fVTLCz5YMkLoDQsa").raw,
}


def _by_id(name: str) -> int:
    raw = IDS.get(name)
    return java_string_hash(name) if raw is None else java_uuid_hash(raw)


def member(
    member_id: str,
    topics: set[str],
    current: Mapping[str, set[int]] | None = None,
    *,
    hashed_current: bool = False,
    instance_id: str | None = None,
) -> MemberSpec:
    """A member as Kafka's test builds it (``hashed_current``: ``mkAssignment``'s HashMap)."""
    parts = dict(current or {})
    order = java_hash_order(parts, _by_id) if hashed_current else list(parts)
    return MemberSpec(
        member_id,
        instance_id,
        tuple(java_hash_order(sorted(topics), _by_id, presized=True)),
        {t: frozenset(parts[t]) for t in order},
    )


Result = dict[str, dict[str, set[int]]]


def uniform(members: list[MemberSpec], partitions: dict[str, int]) -> Result:
    return UniformAssignor().assign(AssignmentSpec(tuple(members), partitions))


def test_java_hashes_are_javas() -> None:
    assert java_string_hash("hello") == 99162322  # "hello".hashCode()
    assert java_string_hash("") == 0
    assert java_uuid_hash(bytes(16)) == 0
    assert java_uuid_hash(bytes(7) + b"\x01" + bytes(8)) == 1


def test_uniform_first_assignment_two_members_two_topics() -> None:
    both = {"t1", "t3"}
    result = uniform([member("A", both), member("B", both)], {"t1": 3, "t3": 2})
    assert result == {"A": {"t1": {0}, "t3": {0, 1}}, "B": {"t1": {1, 2}}}


def test_uniform_keeps_what_it_can_of_an_unbalanced_assignment() -> None:
    both = {"t1", "t2"}
    members = [
        member("A", both, {"t1": {0, 1}, "t2": {0, 1}}),
        member("B", both, {"t1": {2}, "t2": {2}}),
    ]
    result = uniform(members, {"t1": 3, "t2": 3})
    assert result == {"A": {"t1": {0, 1}, "t2": {0}}, "B": {"t1": {2}, "t2": {1, 2}}}


def test_uniform_deals_out_added_partitions() -> None:
    both = {"t1", "t2"}
    members = [
        member("A", both, {"t1": {0, 2}, "t2": {0}}),
        member("B", both, {"t1": {1}, "t2": {1, 2}}),
    ]
    result = uniform(members, {"t1": 6, "t2": 5})
    assert result == {
        "A": {"t1": {0, 2, 3}, "t2": {0, 3, 4}},
        "B": {"t1": {1, 4, 5}, "t2": {1, 2}},
    }


def test_uniform_gives_a_new_member_what_the_others_give_up() -> None:
    both = {"t1", "t2"}
    members = [
        member("A", both, {"t1": {0, 2}, "t2": {0}}),
        member("B", both, {"t1": {1}, "t2": {1, 2}}),
        member("C", both),
    ]
    result = uniform(members, {"t1": 3, "t2": 3})
    assert result == {"A": {"t1": {0, 2}}, "B": {"t1": {1}, "t2": {1}}, "C": {"t2": {0, 2}}}


def test_uniform_shares_out_a_removed_members_partitions() -> None:
    both = {"t1", "t2"}
    members = [
        member("A", both, {"t1": {0}, "t2": {0}}, hashed_current=True),
        member("B", both, {"t1": {1}, "t2": {1}}, hashed_current=True),
    ]
    result = uniform(members, {"t1": 3, "t2": 3})
    assert result == {"A": {"t1": {0}, "t2": {0, 2}}, "B": {"t1": {1, 2}, "t2": {1}}}


def test_uniform_drops_topics_no_longer_subscribed() -> None:
    members = [
        member("A", {"t2"}, {"t1": {0}, "t2": {0}}, hashed_current=True),
        member("B", {"t2"}, {"t1": {1}, "t2": {1}}, hashed_current=True),
    ]
    result = uniform(members, {"t1": 2, "t2": 2})
    assert result == {"A": {"t2": {0}}, "B": {"t2": {1}}}


def test_uniform_with_no_existing_topic_assigns_nothing() -> None:
    assert uniform([member("A", {"t9"})], {}) == {"A": {}}


def test_uniform_heterogeneous_is_valid_and_balanced_per_topic() -> None:
    """Kafka's heterogeneous builder is checked by ``checkValidityAndBalance``: every
    partition of a subscribed topic to exactly one subscriber, and no partition could
    move to a subscriber with 2+ fewer partitions."""
    members = [member("A", {"t1", "t2"}), member("B", {"t3"}), member("C", {"t2", "t3"})]
    partitions = {"t1": 3, "t2": 3, "t3": 2}
    result = uniform(members, partitions)
    subscribed = {m.member_id: set(m.topics) for m in members}
    for topic, count in partitions.items():
        owners = [(mid, p) for mid, parts in result.items() for p in parts.get(topic, ())]
        assert sorted(p for _, p in owners) == list(range(count))
        assert all(topic in subscribed[mid] for mid, _ in owners)
    sizes = {mid: sum(map(len, parts.values())) for mid, parts in result.items()}
    for giver, parts in result.items():
        for topic in parts:
            for taker, topics in subscribed.items():
                assert topic not in topics or sizes[giver] - sizes[taker] <= 1


def range_(members: list[MemberSpec], partitions: dict[str, int]) -> Result:
    return RangeAssignor().assign(AssignmentSpec(tuple(members), partitions))


def test_range_three_members_three_topics_different_subscriptions() -> None:
    members = [member("A", {"t1", "t2"}), member("B", {"t3"}), member("C", {"t2", "t3"})]
    result = range_(members, {"t1": 3, "t2": 3, "t3": 2})
    assert result == {
        "A": {"t1": {0, 1, 2}, "t2": {0, 1}},
        "B": {"t3": {0}},
        "C": {"t2": {2}, "t3": {1}},
    }


def test_range_static_members_keep_their_ranges_under_a_new_member_id() -> None:
    """``testMixedStaticMembership``: static members sort by instance id first."""
    first = range_(
        [
            member("A", {"t1"}, instance_id="instanceA"),
            member("C", {"t1"}, instance_id="instanceC"),
            member("B", {"t1"}),
        ],
        {"t1": 5},
    )
    again = range_(
        [
            member("A1", {"t1"}, instance_id="instanceA"),
            member("C", {"t1"}, instance_id="instanceC"),
            member("B", {"t1"}),
        ],
        {"t1": 5},
    )
    assert first == {"A": {"t1": {0, 1}}, "C": {"t1": {2, 3}}, "B": {"t1": {4}}}
    assert again == {"A1": {"t1": {0, 1}}, "C": {"t1": {2, 3}}, "B": {"t1": {4}}}


def test_range_more_members_than_partitions() -> None:
    members = [member(m, {"t1"}) for m in "ABC"]
    assert range_(members, {"t1": 2}) == {"A": {"t1": {0}}, "B": {"t1": {1}}, "C": {}}
