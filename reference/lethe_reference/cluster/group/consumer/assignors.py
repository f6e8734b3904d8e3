"""Kafka 4.0's server-side assignors for consumer groups: ``uniform`` and ``range``.

Theory of operation
-------------------
An assignor maps the members' subscriptions and the group's current target
assignment to a new target assignment: ``{member id: {topic: {partition}}}``.
Topics are named here (the handler maps names to topic ids at the edge).

``range`` (Kafka's ``RangeAssignor``) is not sticky: members are ordered (static
members first, by instance id, then the rest by member id) and, per topic, each
subscribed member in that order takes the next contiguous range of
``partitions // members`` partitions, the first ``partitions % members`` of them
one more.

``uniform`` (Kafka's ``UniformAssignor``, the default) is sticky and balanced.
When every member subscribes to the same topics (a *homogeneous* group) it is
Kafka's ``UniformHomogeneousAssignmentBuilder``: every member's quota is
``total // members``, the first ``total % members`` members (in iteration order)
one more; each member keeps its previous partitions up to its quota, the rest
and every partition nobody owned are dealt out, in order, to the members below
quota. For different subscriptions (*heterogeneous*) lethe keeps each member's
previous partitions that it still subscribes to while it stays within one
partition of the balance, then gives each remaining partition to the subscribed
member with the fewest partitions; Kafka's heterogeneous builder follows the
same rules (stickiness, then balance among the subscribers of each topic) with
a different search, so the same input can give a different but equally
balanced result there.

Order matters to ``uniform``: which members get the extra partitions, which
partitions a member over quota gives up, and which free partitions go to whom.
The assignors take every order from their input, as Kafka's take it from
their ``GroupSpec``: members in ``spec.members`` order, a member's topics in
``MemberSpec.topics`` order, its current partitions in the order of
``MemberSpec.current``, partitions ascending. The coordinator builds the input
in the orders Kafka's ``HashMap``/``HashSet`` iterate (:func:`java_hash_order`
with :func:`java_string_hash` for member ids and :func:`java_uuid_hash` for
topic ids), so the same ids give the same result as on Kafka.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

__all__ = [
    "ASSIGNORS",
    "DEFAULT_ASSIGNOR",
    "Assignment",
    "AssignmentSpec",
    "Assignor",
    "MemberSpec",
    "RangeAssignor",
    "UniformAssignor",
    "java_hash_order",
    "java_string_hash",
    "java_uuid_hash",
]

T = TypeVar("T")

#: ``{topic name: {partition}}``
Assignment = dict[str, set[int]]


@dataclass(frozen=True, slots=True)
class MemberSpec:
    """One member as the assignor sees it."""

    member_id: str
    instance_id: str | None
    #: the existing topics it subscribes to, in iteration order
    topics: tuple[str, ...]
    #: its partitions in the current target assignment, topics in iteration order
    current: Mapping[str, frozenset[int]]


@dataclass(frozen=True, slots=True)
class AssignmentSpec:
    members: tuple[MemberSpec, ...]
    #: partitions per subscribed topic that exists
    partitions: Mapping[str, int]

    def ordered(self) -> list[MemberSpec]:
        """Static members by instance id, then dynamic ones by member id (Kafka's range order)."""
        return sorted(
            self.members,
            key=lambda m: (0, m.instance_id, "") if m.instance_id else (1, "", m.member_id),
        )

    def homogeneous(self) -> bool:
        return len({frozenset(m.topics) for m in self.members}) <= 1


class Assignor(Protocol):
    name: str

    def assign(self, spec: AssignmentSpec) -> dict[str, Assignment]: ...


class RangeAssignor:
    """Kafka's ``range`` assignor (see the module docstring)."""

    name = "range"

    def assign(self, spec: AssignmentSpec) -> dict[str, Assignment]:
        members = spec.ordered()
        result: dict[str, Assignment] = {m.member_id: {} for m in members}
        for topic in sorted(spec.partitions):
            subscribers = [m for m in members if topic in m.topics]
            if not subscribers:
                continue
            count = spec.partitions[topic]
            quota, extra = divmod(count, len(subscribers))
            start = 0
            for member in subscribers:
                size = quota + (1 if extra > 0 else 0)
                extra -= 1
                end = min(start + size, count)
                if start < end:
                    result[member.member_id][topic] = set(range(start, end))
                start = end
        return result


class UniformAssignor:
    """Kafka's ``uniform`` assignor (see the module docstring)."""

    name = "uniform"

    def assign(self, spec: AssignmentSpec) -> dict[str, Assignment]:
        if not spec.members:
            return {}
        if spec.homogeneous():
            return _homogeneous(spec)
        return _heterogeneous(spec)


def java_string_hash(text: str) -> int:
    """``String.hashCode``: 31-polynomial over UTF-16 code units, as an int32."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h


def java_uuid_hash(raw: bytes) -> int:
    """``Uuid.hashCode``: the two 64-bit halves xor-ed, then its two 32-bit halves."""
    h = int.from_bytes(raw[:8], "big") ^ int.from_bytes(raw[8:16], "big")
    return ((h >> 32) ^ h) & 0xFFFFFFFF


def _table_size(entries: int, presized: bool) -> int:
    """The table size of a ``HashMap`` holding ``entries`` (load factor 0.75): grown
    from 16 by doubling, or sized up front as ``new HashSet<>(collection)`` does."""
    if presized:
        wanted = max(int(entries / 0.75) + 1, 16)
        return 1 << (wanted - 1).bit_length()
    size = 16
    while entries > size * 3 // 4:
        size *= 2
    return size


def java_hash_order(
    items: Iterable[T], hash_of: Callable[[T], int], *, presized: bool = False
) -> list[T]:
    """``items`` (in insertion order) in the order a Java ``HashMap``/``HashSet``
    holding them iterates: by bucket, a bucket in insertion order."""
    listed = list(items)
    mask = _table_size(len(listed), presized) - 1

    def bucket(item: T) -> int:
        h = hash_of(item)
        return (h ^ (h >> 16)) & mask

    return sorted(listed, key=bucket)


def _homogeneous(spec: AssignmentSpec) -> dict[str, Assignment]:
    members = list(spec.members)
    topics = [t for t in members[0].topics if t in spec.partitions]
    if not topics:
        return {m.member_id: {} for m in members}
    owned = {
        (topic, p)
        for m in members
        for topic, parts in m.current.items()
        if topic in spec.partitions
        for p in parts
        if p < spec.partitions[topic]
    }
    unassigned = [(t, p) for t in topics for p in range(spec.partitions[t]) if (t, p) not in owned]
    total = sum(spec.partitions[t] for t in topics)
    quota, extra = divmod(total, len(members))
    result: dict[str, Assignment] = {}
    unfilled: list[tuple[str, int]] = []
    for member in members:
        room = quota + (1 if extra > 0 else 0)
        extra -= 1
        kept: Assignment = {}
        for topic in member.current:
            if topic not in topics:
                continue
            for partition in sorted(member.current[topic]):
                if partition >= spec.partitions[topic]:
                    continue
                if room > 0:
                    kept.setdefault(topic, set()).add(partition)
                    room -= 1
                else:
                    unassigned.append((topic, partition))
        if room > 0:
            unfilled.append((member.member_id, room))
        result[member.member_id] = kept
    queue = iter(unassigned)
    for member_id, room in unfilled:
        for _ in range(room):
            item = next(queue, None)
            if item is None:
                break
            result[member_id].setdefault(item[0], set()).add(item[1])
    return result


def _heterogeneous(spec: AssignmentSpec) -> dict[str, Assignment]:
    members = list(spec.members)
    result: dict[str, Assignment] = {m.member_id: {} for m in members}
    size = dict.fromkeys(result, 0)
    taken: set[tuple[str, int]] = set()
    for member in members:
        for topic in member.current:
            if topic not in member.topics or topic not in spec.partitions:
                continue
            for partition in sorted(member.current[topic]):
                if partition < spec.partitions[topic] and (topic, partition) not in taken:
                    result[member.member_id].setdefault(topic, set()).add(partition)
                    taken.add((topic, partition))
                    size[member.member_id] += 1
    for topic in sorted(spec.partitions):
        subscribers = [m.member_id for m in members if topic in m.topics]
        for partition in range(spec.partitions[topic]):
            if not subscribers or (topic, partition) in taken:
                continue
            target = min(subscribers, key=lambda mid: size[mid])
            result[target].setdefault(topic, set()).add(partition)
            size[target] += 1
    _balance(spec, result, size)
    return result


def _balance(spec: AssignmentSpec, result: dict[str, Assignment], size: dict[str, int]) -> None:
    """Move partitions from the fullest subscriber to the emptiest until no topic's
    subscribers differ by more than one partition where a move is possible."""
    members = list(spec.members)
    moved = True
    while moved:
        moved = False
        for topic in sorted(spec.partitions):
            subscribers = [m.member_id for m in members if topic in m.topics]
            if len(subscribers) < 2:
                continue
            giver = max(
                (s for s in subscribers if result[s].get(topic)),
                key=lambda s: size[s],
                default=None,
            )
            taker = min(subscribers, key=lambda s: size[s])
            if giver is None or size[giver] - size[taker] <= 1:
                continue
            partition = max(result[giver][topic])
            result[giver][topic].discard(partition)
            if not result[giver][topic]:
                del result[giver][topic]
            result[taker].setdefault(topic, set()).add(partition)
            size[giver] -= 1
            size[taker] += 1
            moved = True


#: The assignors Kafka 4.0 ships, by name (``group.consumer.assignors``).
ASSIGNORS: dict[str, Assignor] = {"uniform": UniformAssignor(), "range": RangeAssignor()}
DEFAULT_ASSIGNOR = "uniform"
