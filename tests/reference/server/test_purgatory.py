"""Deferred responses: Kafka's tryCompleteElseWatch / checkAndComplete / expiration, sans-IO."""

from __future__ import annotations

import pytest
from lethe_reference.clock import ManualClock
from lethe_reference.purgatory import Deferred, DeferredState, Purgatory
from lethe_reference.scheduler import Scheduler


class Waiter(Deferred[str]):
    """Completes once ``ready`` is set; answers "timeout" at its deadline."""

    def __init__(self, ready: bool = False) -> None:
        super().__init__()
        self.ready = ready
        self.tries = 0

    def try_complete(self) -> str | None:
        self.tries += 1
        return "done" if self.ready else None

    def on_expire(self) -> str:
        return "timeout"


def test_ready_at_once_completes_without_being_parked():
    purgatory = Purgatory("Fetch")
    waiter = Waiter(ready=True)
    got: list[str] = []
    assert purgatory.watch(waiter, [("t", 0)], deadline_ms=100) is True
    waiter.add_callback(got.append)
    assert got == ["done"]
    assert len(purgatory) == 0
    assert purgatory.watching(("t", 0)) == 0


def test_check_of_a_watched_key_completes_and_unparks():
    purgatory = Purgatory("Fetch")
    waiter = Waiter()
    got: list[str] = []
    waiter.add_callback(got.append)
    assert purgatory.watch(waiter, [("t", 0), ("t", 1)], deadline_ms=100) is False
    assert waiter.state is DeferredState.WATCHED
    assert purgatory.check(("t", 0)) == 0
    waiter.ready = True
    assert purgatory.check(("other", 0)) == 0
    assert got == []
    assert purgatory.check(("t", 1)) == 1
    assert got == ["done"]
    assert len(purgatory) == 0
    assert purgatory.watching(("t", 0)) == 0


def test_deadline_expires_through_the_scheduler():
    clock = ManualClock(1000)
    scheduler = Scheduler(clock)
    purgatory = Purgatory("DeleteRecords", scheduler)
    waiter = Waiter()
    got: list[str] = []
    waiter.add_callback(got.append)
    purgatory.watch(waiter, ["k"], deadline_ms=1500)
    assert scheduler.next_due_ms() == 1500
    clock.advance(499)
    scheduler.run_due()
    assert got == []
    clock.advance(1)
    scheduler.run_due()
    assert got == ["timeout"]
    assert scheduler.next_due_ms() is None


def test_completion_cancels_the_expiry_task():
    clock = ManualClock(0)
    scheduler = Scheduler(clock)
    purgatory = Purgatory("Fetch", scheduler)
    waiter = Waiter()
    purgatory.watch(waiter, ["k"], deadline_ms=500)
    waiter.ready = True
    purgatory.check("k")
    assert scheduler.next_due_ms() is None
    clock.advance(1000)
    assert scheduler.run_due() == []
    assert waiter.result() == "done"


def test_expire_due_without_a_scheduler():
    purgatory = Purgatory("Produce")
    early, late = Waiter(), Waiter()
    purgatory.watch(early, ["a"], deadline_ms=10)
    purgatory.watch(late, ["a"], deadline_ms=20)
    assert purgatory.next_deadline_ms() == 10
    assert purgatory.expire_due(15) == 1
    assert (early.result(), late.done) == ("timeout", False)
    assert purgatory.expire_all() == 1
    assert late.result() == "timeout"


def test_first_completion_wins_and_callbacks_run_once():
    waiter = Waiter()
    got: list[str] = []
    waiter.add_callback(got.append)
    waiter.complete("first")
    waiter.complete("second")
    waiter.expire()
    assert got == ["first"]
    assert waiter.result() == "first"


def test_a_failing_try_complete_answers_with_on_expire():
    class Broken(Waiter):
        def try_complete(self) -> str | None:
            raise RuntimeError("bug")

    purgatory = Purgatory("Fetch")
    broken = Broken()
    assert purgatory.watch(broken, ["k"], deadline_ms=10) is True
    assert broken.result() == "timeout"


def test_watching_twice_is_refused():
    purgatory = Purgatory("Fetch")
    waiter = Waiter()
    purgatory.watch(waiter, ["k"], deadline_ms=10)
    with pytest.raises(RuntimeError):
        purgatory.watch(waiter, ["k"], deadline_ms=10)


def test_result_before_completion_is_an_error():
    with pytest.raises(RuntimeError):
        Waiter().result()
