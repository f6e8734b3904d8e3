"""A leader's view of its followers: HW over the ISR, low watermark over live replicas,
caught-up times for ISR shrink and expand (Kafka's Partition / ReplicaState rules)."""

from __future__ import annotations

from lethe_reference.cluster.replication import UNKNOWN_OFFSET, LeaderState


def fetched(state: LeaderState, follower: int, *at: int) -> None:
    """A fetch of ``follower`` at (fetch offset, its log start, leader LEO, time)."""
    offset, start, leo, now = at
    state.update(
        follower,
        fetch_offset=offset,
        log_start_offset=start,
        leader_log_end_offset=leo,
        now_ms=now,
    )


def test_a_new_leader_knows_nothing_of_its_followers() -> None:
    state = LeaderState.reset([2, 3], now_ms=100)
    assert state.followers[2].log_start_offset == UNKNOWN_OFFSET
    assert state.low_watermark(7, lambda _n: True) == -1


def test_the_high_watermark_is_the_minimum_leo_over_the_isr_only() -> None:
    state = LeaderState.reset([2, 3], now_ms=0)
    fetched(state, 2, 8, 0, 10, 1)
    fetched(state, 3, 4, 0, 10, 1)
    assert state.high_watermark(10, [2, 3]) == 4
    assert state.high_watermark(10, [2]) == 8
    assert state.high_watermark(10, []) == 10


def test_the_low_watermark_takes_every_live_follower_in_or_out_of_the_isr() -> None:
    state = LeaderState.reset([2, 3], now_ms=0)
    fetched(state, 2, 10, 5, 10, 1)
    fetched(state, 3, 10, 2, 10, 1)
    assert state.low_watermark(5, lambda _n: True) == 2
    assert state.low_watermark(5, lambda n: n != 3) == 5


def test_the_low_watermark_uses_the_last_reported_log_start_offset() -> None:
    state = LeaderState.reset([2], now_ms=0)
    fetched(state, 2, 10, 3, 10, 1)
    fetched(state, 2, 10, 6, 10, 2)
    assert state.low_watermark(9, lambda _n: True) == 6


def test_a_follower_not_caught_up_for_longer_than_the_lag_leaves_the_isr() -> None:
    state = LeaderState.reset([2, 3], now_ms=0)
    fetched(state, 2, 10, 0, 10, 20_000)  # at the leader's LEO: caught up now
    fetched(state, 3, 5, 0, 10, 20_000)  # behind: caught up when it last fetched
    assert state.lagging([2, 3], 10, now_ms=35_000, max_lag_ms=30_000) == {3}
    assert state.lagging([2, 3], 10, now_ms=30_000, max_lag_ms=30_000) == set()


def test_a_follower_at_the_leaders_leo_stays_in_sync_however_long_it_is_silent() -> None:
    state = LeaderState.reset([2], now_ms=0)
    fetched(state, 2, 10, 0, 10, 1_000)
    assert state.lagging([2], 10, now_ms=100_000, max_lag_ms=30_000) == set()
    assert state.lagging([2], 12, now_ms=100_000, max_lag_ms=30_000) == {2}


def test_a_follower_fetching_past_the_previous_leader_leo_counts_as_caught_up_then() -> None:
    state = LeaderState.reset([2], now_ms=0)
    fetched(state, 2, 10, 0, 10, 1_000)  # leader LEO 10 at this fetch
    fetched(state, 2, 10, 0, 12, 2_000)  # behind 12, but reached 10: caught up at 1000
    assert state.followers[2].last_caught_up_ms == 1_000


def test_a_follower_out_of_the_isr_joins_once_its_leo_reaches_the_hw() -> None:
    state = LeaderState.reset([2, 3], now_ms=0)
    fetched(state, 3, 9, 0, 10, 1)
    assert state.caught_up([1, 2], high_watermark=10) == set()
    fetched(state, 3, 10, 0, 10, 2)
    assert state.caught_up([1, 2], high_watermark=10) == {3}
