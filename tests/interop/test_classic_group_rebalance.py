"""Classic consumer groups with kafka-python, aiokafka and confluent-kafka consumers.

Each library's consumers (tests/interop/group_member.py, one process each) join a
group on a 4-partition topic; a second member joins (the partitions are split), leaves
with LeaveGroup (the first gets them all back), a third joins and stops heartbeating
(SIGSTOP: the coordinator expires it after its 6 s session timeout, as Kafka's heartbeat
expiry does, and the group rebalances without it), and the last member leaves (the
group is Empty with no member). After every step the assignments the clients report
and the group as DescribeGroups tells it (confluent-kafka's admin client) must agree.
Expected behaviour: Kafka 4.0's classic group coordinator (ClassicGroup,
GroupMetadataManager: rebalance on join, on leave and on session expiry).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import ConsumerGroupState
from confluent_kafka.admin import AdminClient, NewTopic

MEMBER = Path(__file__).with_name("group_member.py")
PARTITIONS = 4
#: the lowest session timeout Kafka's default group.min.session.timeout.ms allows
SHORT_SESSION_MS = 6000
#: upper bound for one step (a rebalance; an expiry takes the session timeout first)
STEP_S = 40.0


class Member:
    """One consumer process and the assignments it has printed."""

    def __init__(self, library: str, bootstrap: str, topic: str, group: str, session_ms: int):
        self.process = subprocess.Popen(
            [sys.executable, str(MEMBER), library, bootstrap, topic, group, str(session_ms)],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[list[int]] = queue.Queue()
        self.assignment: list[int] | None = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(json.loads(line))

    def wait_for(self, partitions: int) -> list[int]:
        """Block until the member reports ``partitions`` partitions; that assignment."""
        deadline = time.monotonic() + STEP_S
        while self.assignment is None or len(self.assignment) != partitions:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"still {self.assignment}, expected {partitions} partitions")
            try:
                self.assignment = self.lines.get(timeout=left)
            except queue.Empty:
                continue
        return self.assignment

    def leave(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(STEP_S) == 0

    def stop_heartbeating(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(STEP_S)


@pytest.fixture
def members() -> Iterator[list[Member]]:
    started: list[Member] = []
    yield started
    for member in started:
        member.kill()


def described(admin: AdminClient, group: str) -> tuple[str, dict[str, list[int]]]:
    """(state, member id -> assigned partitions) from DescribeGroups."""
    (future,) = admin.describe_consumer_groups([group], request_timeout=30).values()
    description = future.result(timeout=30)
    assigned = {
        m.member_id: sorted(tp.partition for tp in m.assignment.topic_partitions)
        for m in description.members
    }
    return description.state, assigned


def wait_described(
    admin: AdminClient, group: str, state: ConsumerGroupState, count: int
) -> dict[str, list[int]]:
    """Poll DescribeGroups until the group is in ``state`` with ``count`` members."""
    deadline = time.monotonic() + STEP_S
    while True:
        now_state, assigned = described(admin, group)
        if now_state == state and len(assigned) == count:
            return assigned
        if time.monotonic() > deadline:
            raise AssertionError(f"group is {now_state} with {assigned}")
        time.sleep(0.2)


@pytest.mark.parametrize("library", ["kafka-python", "aiokafka", "confluent-kafka"])
def test_join_rebalance_leave_and_expiry(
    bootstrap: str, topic: str, members: list[Member], library: str
) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, PARTITIONS, 1)]).values():
        future.result(timeout=30)
    group = f"{topic}-g"
    everything = list(range(PARTITIONS))

    def join(session_ms: int = 10_000) -> Member:
        members.append(Member(library, bootstrap, topic, group, session_ms))
        return members[-1]

    first = join()
    assert first.wait_for(PARTITIONS) == everything
    (only,) = wait_described(admin, group, ConsumerGroupState.STABLE, 1).values()
    assert only == everything

    second = join()
    halves = sorted([first.wait_for(2), second.wait_for(2)])
    assert sorted(halves[0] + halves[1]) == everything
    assert sorted(wait_described(admin, group, ConsumerGroupState.STABLE, 2).values()) == halves

    second.leave()
    assert first.wait_for(PARTITIONS) == everything
    wait_described(admin, group, ConsumerGroupState.STABLE, 1)

    third = join(SHORT_SESSION_MS)
    halves = sorted([first.wait_for(2), third.wait_for(2)])
    assert sorted(halves[0] + halves[1]) == everything
    before = wait_described(admin, group, ConsumerGroupState.STABLE, 2)

    third.stop_heartbeating()
    assert first.wait_for(PARTITIONS) == everything
    after = wait_described(admin, group, ConsumerGroupState.STABLE, 1)
    assert set(after) < set(before)  # the survivor kept its member id
    assert list(after.values()) == [everything]
    third.kill()

    first.leave()
    assert wait_described(admin, group, ConsumerGroupState.EMPTY, 0) == {}
