"""Real-broker timing: wait until partition leaders serve, retry what Kafka's clients retry.

Theory of operation
-------------------
A real broker does some things asynchronously that a scenario takes as done:
Kafka creates a topic's partitions after CreateTopics answered, elects
leaders again after a restart, loads ``__consumer_offsets`` after a start.
Kafka's own clients absorb this by retrying a few *retriable* errors
(:data:`RETRIABLE`); the runner does the same, within bounds, and counts every
retry so the report shows how often the target needed one:

* **The leader probe** (:func:`await_leaders`), after setup's CreateTopics and
  after every step that restarts or re-elects (:data:`REELECTING_OPS`): every
  partition of the scenario's topics answers a ListOffsets LATEST from its
  leader with NONE. Metadata listing a leader is not enough: Kafka 4.0 lists
  it before the leader's replica manager serves the partition
  (NOT_LEADER_OR_FOLLOWER on the first Produce). OFFSET_NOT_AVAILABLE counts
  as serving: the broker answers as the leader, only its high watermark has
  not reached the start of its leader epoch yet (KIP-320; after an election
  with a frozen in-sync follower, not before that follower leaves the ISR),
  and later steps retry it as any retriable error.
* **Step retries** (:func:`retriable_error`): a step whose only mismatches are
  a retriable error where the scenario expected another answer is sent again
  after :data:`RETRY_PAUSE_S`, for at most :data:`RETRY_BOUND_S`. A retriable
  error means the broker did nothing, so sending again is what a client does.
  Only on a wall-clock target: on a virtual clock nothing changes between two
  attempts, so the first answer stands.

A partition the broker no longer lists in a listed topic, or lists in a KIP-694
reduction mode (ReadOnly, None), is not waited for: a scenario removed it.
The probe gives up after :data:`PROBE_BOUND_S` with a :class:`NotServingError`
(graded as the target's failure to serve: ERROR, naming the partitions).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from lethe_formats.protocol.error_codes import ErrorCode, error_name

from lethe_conformance.client import calls
from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import RunContext

__all__ = [
    "PROBE_BOUND_S",
    "REELECTING_OPS",
    "RETRIABLE",
    "RETRY_BOUND_S",
    "NotServingError",
    "await_leaders",
    "retriable_error",
]

#: The errors Kafka's clients retry (``RetriableException`` subclasses) that a broker
#: answers while it settles after a creation, a start or an election.
RETRIABLE = frozenset(
    error_name(code)
    for code in (
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.OFFSET_NOT_AVAILABLE,
    )
)
#: What a leader probe accepts: the leader answered as the leader.
_SERVING = frozenset({ErrorCode.NONE, ErrorCode.OFFSET_NOT_AVAILABLE})
#: Steps after which partition leaders may be re-elected: the probe runs again.
REELECTING_OPS = frozenset(
    {"restart", "restart_with_files", "crash_restart", "start_broker", "move_leader"}
)
PROBE_BOUND_S = 60.0
RETRY_BOUND_S = 20.0
RETRY_PAUSE_S = 0.25


class NotServingError(Exception):
    """Partition leaders still not serving after :data:`PROBE_BOUND_S`."""


def retriable_error(mismatches: Sequence[Mismatch]) -> str | None:
    """The retriable error that is every mismatch's actual answer where the scenario
    expected something else, else None (then the mismatches stand)."""
    found: set[str] = set()
    for mismatch in mismatches:
        actual = mismatch.actual.split(" ", 1)[0]
        expected = mismatch.expected.split(" ", 1)[0]
        if actual not in RETRIABLE or expected == actual:
            return None
        found.add(actual)
    return min(found) if found else None


def await_leaders(ctx: RunContext) -> None:
    """Every partition of the scenario's topics serves from its leader (module docstring)."""
    wanted = [(ctx.topic(t.symbol), p) for t in ctx.scenario.topics for p in range(t.partitions)]
    if not wanted:
        return
    deadline = time.monotonic() + PROBE_BOUND_S
    pending = list(wanted)
    last = ""
    while True:
        pending, last = _not_serving(ctx, pending)
        if not pending:
            return
        if time.monotonic() >= deadline:
            listed = ", ".join(f"{t}-{p}" for t, p in pending[:5])
            raise NotServingError(
                f"partitions not served by a leader after {PROBE_BOUND_S:.0f} s: {listed} ({last})"
            )
        time.sleep(RETRY_PAUSE_S)


def _not_serving(
    ctx: RunContext, partitions: list[tuple[str, int]]
) -> tuple[list[tuple[str, int]], str]:
    """The partitions whose leader does not answer ListOffsets LATEST with NONE yet."""
    topics = sorted({t for t, _ in partitions})
    listed = calls.metadata(ctx.conn(), topics).topics
    settled = {t.name for t in listed if t.error_code == ErrorCode.NONE and t.partitions}
    leaders = {(t.name, p.partition_index): p.leader_id for t in listed for p in t.partitions}
    reducing = {(t.name, p.partition_index) for t in listed for p in t.partitions if p.mode != 0}
    left: list[tuple[str, int]] = []
    last = ""
    for topic, partition in partitions:
        if (topic, partition) in reducing or (
            topic in settled and (topic, partition) not in leaders
        ):
            continue  # removed or being removed (KIP-694): no leader is expected to serve it
        leader = leaders.get((topic, partition), -1)
        if leader < 0:
            left.append((topic, partition))
            last = "no leader in Metadata"
            ctx.note_retry(error_name(ErrorCode.LEADER_NOT_AVAILABLE))
            continue
        code = _latest(_leader_conn(ctx, leader), topic, partition)
        if code not in _SERVING:
            left.append((topic, partition))
            last = error_name(code)
            ctx.note_retry(last)
    return left, last


def _leader_conn(ctx: RunContext, leader: int) -> KafkaConnection:
    """The leader's connection on a cluster target, the target's own otherwise."""
    if hasattr(ctx.target, "connect_to"):
        return ctx.conn_to(leader)
    return ctx.conn()


def _latest(conn: KafkaConnection, topic: str, partition: int) -> int:
    answer = calls.list_offsets(conn, [(topic, partition, -1)])
    for topic_answer in answer.topics:
        for partition_answer in topic_answer.partitions:
            return int(partition_answer.error_code)
    return int(ErrorCode.UNKNOWN_SERVER_ERROR)
