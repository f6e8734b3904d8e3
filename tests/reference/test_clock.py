"""ManualClock and SystemClock: the broker's one injectable clock."""

from __future__ import annotations

import time

import pytest
from lethe_reference.clock import OFFSET_ENV, Clock, ClockError, ManualClock, SystemClock


def test_manual_clock_starts_at_the_given_time() -> None:
    clock = ManualClock(1_700_000_000_000)
    assert clock.now_ms() == 1_700_000_000_000
    assert clock.monotonic_ns() == 0


def test_manual_clock_default_start_is_epoch_zero() -> None:
    assert ManualClock().now_ms() == 0


def test_advance_moves_both_readings_together() -> None:
    clock = ManualClock(5_000)
    assert clock.advance(86_400_000) == 86_405_000
    assert clock.now_ms() == 86_405_000
    assert clock.monotonic_ns() == 86_400_000 * 1_000_000


def test_advance_by_zero_is_allowed() -> None:
    clock = ManualClock(10)
    clock.advance(0)
    assert clock.now_ms() == 10


def test_set_jumps_to_an_absolute_time() -> None:
    clock = ManualClock(100)
    assert clock.set(250) == 250
    assert clock.now_ms() == 250
    assert clock.set(250) == 250  # staying put is not going backwards


def test_set_backwards_is_a_typed_error_and_leaves_the_time() -> None:
    clock = ManualClock(1_000)
    with pytest.raises(ClockError, match="backwards"):
        clock.set(999)
    assert clock.now_ms() == 1_000


def test_negative_advance_is_a_typed_error() -> None:
    clock = ManualClock(1_000)
    with pytest.raises(ClockError, match="negative"):
        clock.advance(-1)
    assert clock.now_ms() == 1_000


def test_negative_start_is_refused() -> None:
    with pytest.raises(ClockError):
        ManualClock(-1)


def test_clock_error_is_a_value_error() -> None:
    assert issubclass(ClockError, ValueError)


def test_both_clocks_satisfy_the_protocol() -> None:
    assert isinstance(ManualClock(), Clock)
    assert isinstance(SystemClock(), Clock)


def test_system_clock_reads_epoch_milliseconds() -> None:
    before = time.time_ns() // 1_000_000
    now = SystemClock(0).now_ms()
    after = time.time_ns() // 1_000_000
    assert before <= now <= after


def test_system_clock_runs_on_another_date_when_told(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test-only shift: an argument, else LETHE_CLOCK_OFFSET_MS (clock.py docstring)."""
    two_days = 2 * 86_400_000
    before = time.time_ns() // 1_000_000
    shifted = SystemClock(two_days).now_ms()
    monkeypatch.setenv(OFFSET_ENV, str(-two_days))
    from_env = SystemClock().now_ms()
    after = time.time_ns() // 1_000_000
    assert before + two_days <= shifted <= after + two_days
    assert before - two_days <= from_env <= after - two_days
    assert repr(SystemClock(5)) == "SystemClock(offset_ms=5)"
    monkeypatch.delenv(OFFSET_ENV)
    assert repr(SystemClock()) == "SystemClock()"


def test_system_monotonic_clock_never_decreases() -> None:
    clock = SystemClock()
    readings = [clock.monotonic_ns() for _ in range(100)]
    assert readings == sorted(readings)
