"""Scheduler: due order, ties, periods, cancellation, failing tasks, virtual time."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from lethe_reference.clock import ManualClock
from lethe_reference.scheduler import Scheduler, SchedulerError, TaskInfo


def _recorder(log: list[str], name: str) -> Callable[[], None]:
    return lambda: log.append(name)


def test_nothing_runs_before_its_due_time() -> None:
    clock = ManualClock(1_000)
    sched = Scheduler(clock)
    ran: list[str] = []
    sched.schedule("a", 500, _recorder(ran, "a"))
    clock.advance(499)
    assert sched.run_due() == []
    clock.advance(1)
    assert sched.run_due() == ["a"]
    assert ran == ["a"]


def test_one_shot_task_runs_once() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("once", 0, lambda: None)
    assert sched.run_due() == ["once"]
    clock.advance(10_000)
    assert sched.run_due() == []
    assert len(sched) == 0
    assert sched.next_due_ms() is None


def test_due_tasks_run_earliest_first() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("late", 300, lambda: None)
    sched.schedule("early", 100, lambda: None)
    sched.schedule("middle", 200, lambda: None)
    clock.advance(1_000)
    assert sched.run_due() == ["early", "middle", "late"]


def test_equal_due_times_run_in_scheduling_order() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    for name in ["c", "a", "b", "d"]:
        sched.schedule(name, 50, lambda: None)
    clock.advance(50)
    assert sched.run_due() == ["c", "a", "b", "d"]


def test_next_due_ms_is_the_earliest_absolute_due_time() -> None:
    clock = ManualClock(10_000)
    sched = Scheduler(clock)
    assert sched.next_due_ms() is None
    assert sched.delay_until_next_ms() is None
    sched.schedule("x", 300, lambda: None)
    sched.schedule("y", 100, lambda: None)
    assert sched.next_due_ms() == 10_100
    clock.advance(40)
    assert sched.delay_until_next_ms() == 60
    clock.advance(500)
    assert sched.delay_until_next_ms() == 0


def test_periodic_task_runs_every_period() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    ran: list[int] = []
    sched.schedule("kafka-log-retention", 300_000, lambda: ran.append(clock.now_ms()), 300_000)
    for _ in range(3):
        due = sched.next_due_ms()
        assert due is not None
        clock.set(due)
        assert sched.run_due() == ["kafka-log-retention"]
    assert ran == [300_000, 600_000, 900_000]
    assert sched.next_due_ms() == 1_200_000


def test_periodic_task_keeps_its_fixed_rate_when_run_late() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("tick", 1_000, lambda: None, 1_000)
    clock.set(1_400)
    assert sched.run_due() == ["tick"]
    assert sched.next_due_ms() == 2_000


def test_a_jump_over_many_periods_runs_a_periodic_task_once() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    count = [0]

    def tick() -> None:
        count[0] += 1

    sched.schedule("tick", 1_000, tick, 1_000)
    clock.set(86_400_500)
    assert sched.run_due() == ["tick"]
    assert count[0] == 1
    assert sched.next_due_ms() == 86_401_000


def test_stepping_through_next_due_sees_every_tick() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("a", 0, lambda: None, 400)
    sched.schedule("b", 0, lambda: None, 1_000)
    ran: list[tuple[int, str]] = []
    while (due := sched.next_due_ms()) is not None and due <= 2_000:
        clock.set(due)
        ran.extend((clock.now_ms(), name) for name in sched.run_due())
    assert ran == [
        (0, "a"),
        (0, "b"),
        (400, "a"),
        (800, "a"),
        (1_000, "b"),
        (1_200, "a"),
        (1_600, "a"),
        (2_000, "b"),
        (2_000, "a"),
    ]


def test_periodic_task_goes_behind_tasks_already_waiting_at_its_next_due_time() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("p", 100, lambda: None, 100)
    sched.schedule("q", 200, lambda: None)
    clock.set(100)
    assert sched.run_due() == ["p"]
    clock.set(200)
    assert sched.run_due() == ["q", "p"]


def test_cancel_removes_a_task() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("a", 10, lambda: None)
    sched.schedule("b", 20, lambda: None)
    assert sched.cancel("a") is True
    assert sched.cancel("a") is False
    assert sched.cancel("never") is False
    assert not sched.is_scheduled("a")
    assert sched.next_due_ms() == 20
    clock.advance(100)
    assert sched.run_due() == ["b"]


def test_cancelled_name_can_be_scheduled_again() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("a", 10, lambda: None)
    sched.cancel("a")
    sched.schedule("a", 30, lambda: None)
    assert sched.tasks() == [TaskInfo("a", 30, None)]
    clock.advance(10)
    assert sched.run_due() == []
    clock.advance(20)
    assert sched.run_due() == ["a"]


def test_a_periodic_task_can_cancel_itself() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("self-stop", 10, lambda: sched.cancel("self-stop"), 10)
    clock.advance(10)
    assert sched.run_due() == ["self-stop"]
    assert not sched.is_scheduled("self-stop")
    assert sched.next_due_ms() is None


def test_a_task_can_cancel_a_later_task_due_in_the_same_run() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("first", 5, lambda: sched.cancel("second"))
    sched.schedule("second", 6, lambda: None)
    clock.advance(10)
    assert sched.run_due() == ["first"]


def test_a_one_shot_task_can_reschedule_itself() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("again", 10, lambda: sched.schedule("again", 50, lambda: None))
    clock.advance(10)
    assert sched.run_due() == ["again"]
    assert sched.tasks() == [TaskInfo("again", 60, None)]


def test_tasks_scheduled_while_running_and_already_due_run_in_the_same_call() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("parent", 0, lambda: sched.schedule("child", 0, lambda: None))
    assert sched.run_due() == ["parent", "child"]


def test_a_failing_task_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    ran: list[str] = []

    def boom() -> None:
        raise RuntimeError("disk on fire")

    sched.schedule("before", 5, _recorder(ran, "before"))
    sched.schedule("boom", 5, boom, 100)
    sched.schedule("after", 5, _recorder(ran, "after"))
    clock.advance(5)
    with caplog.at_level(logging.ERROR, logger="lethe_reference.scheduler"):
        assert sched.run_due() == ["before", "boom", "after"]
    assert ran == ["before", "after"]
    assert "boom" in caplog.text
    assert "disk on fire" in caplog.text
    assert sched.is_scheduled("boom")  # a failing periodic task stays scheduled


def test_duplicate_name_is_refused() -> None:
    sched = Scheduler(ManualClock())
    sched.schedule("a", 10, lambda: None)
    with pytest.raises(SchedulerError, match="already scheduled"):
        sched.schedule("a", 20, lambda: None)


@pytest.mark.parametrize(("delay", "period"), [(-1, None), (0, 0), (0, -5)])
def test_bad_delay_or_period_is_refused(delay: int, period: int | None) -> None:
    sched = Scheduler(ManualClock())
    with pytest.raises(SchedulerError):
        sched.schedule("a", delay, lambda: None, period)
    assert len(sched) == 0


def test_clear_drops_everything() -> None:
    clock = ManualClock()
    sched = Scheduler(clock)
    sched.schedule("a", 1, lambda: None, 1)
    sched.schedule("b", 2, lambda: None)
    sched.clear()
    clock.advance(10)
    assert sched.run_due() == []
    assert sched.next_due_ms() is None


def test_tasks_lists_queued_tasks_in_run_order() -> None:
    clock = ManualClock(1_000)
    sched = Scheduler(clock)
    sched.schedule("b", 20, lambda: None, 7)
    sched.schedule("a", 10, lambda: None)
    sched.schedule("c", 20, lambda: None)
    assert sched.tasks() == [
        TaskInfo("a", 1_010, None),
        TaskInfo("b", 1_020, 7),
        TaskInfo("c", 1_020, None),
    ]
