"""What a partition leader knows about its followers: fetch state, HW, low watermark, ISR.

Theory of operation
-------------------
Kafka's ``Partition`` keeps a ``Replica`` per remote replica; a follower's
Fetch updates it (``updateFollowerFetchState``) with the offset it fetched
from (its LEO) and the ``LogStartOffset`` it reported (Fetch v5+). From
those the leader derives three things, all here as plain functions of
:class:`LeaderState`:

* **high watermark** (``maybeIncrementLeaderHW``): the minimum LEO over the
  leader and the followers in the ISR; it only grows;
* **low watermark** (``lowWatermarkIfLeader``): the minimum log start offset
  over the leader and every assigned follower whose broker is alive, in the
  ISR or not, each at the *last value it reported*. A follower that has not
  fetched since this broker became leader counts as -1 (Kafka's
  ``UnifiedLog.UNKNOWN_OFFSET`` in a reset replica state);
* **ISR changes**: a follower is caught up when it fetched at the leader's
  LEO, or at least at the LEO the leader had at its previous fetch
  (``lastCaughtUpTimeMs``); one behind the leader's LEO that has not been
  caught up for ``replica.lag.time.max.ms`` leaves the ISR (``maybeShrinkIsr``), and one
  out of the ISR whose LEO reached the HW joins it (``maybeExpandIsr``).

Numbers, not logs: callers pass the leader's offsets in, so the rules are
unit-testable without a broker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

__all__ = ["UNKNOWN_OFFSET", "FollowerState", "LeaderState"]

#: ``UnifiedLog.UNKNOWN_OFFSET``: a follower that has not fetched yet.
UNKNOWN_OFFSET = -1


@dataclass(slots=True)
class FollowerState:
    """One remote replica as its leader sees it (``ReplicaState``)."""

    log_end_offset: int = UNKNOWN_OFFSET
    log_start_offset: int = UNKNOWN_OFFSET
    last_caught_up_ms: int = 0
    last_fetch_leader_log_end_offset: int = UNKNOWN_OFFSET
    last_fetch_ms: int = 0


@dataclass
class LeaderState:
    """A partition led here: its followers' states (module docstring)."""

    followers: dict[int, FollowerState] = field(default_factory=dict)

    @classmethod
    def reset(cls, followers: Iterable[int], now_ms: int) -> LeaderState:
        """A new leader: nothing known yet about the followers (``resetReplicaState``)."""
        return cls({n: FollowerState(last_caught_up_ms=now_ms) for n in followers})

    def track(self, followers: Iterable[int], now_ms: int) -> None:
        """The replica list changed at the same epoch (a reassignment added or dropped
        replicas): new followers start unknown, dropped ones are forgotten."""
        wanted = set(followers)
        for node in wanted - self.followers.keys():
            self.followers[node] = FollowerState(last_caught_up_ms=now_ms)
        for node in self.followers.keys() - wanted:
            del self.followers[node]

    def update(
        self,
        follower: int,
        *,
        fetch_offset: int,
        log_start_offset: int,
        leader_log_end_offset: int,
        now_ms: int,
    ) -> FollowerState | None:
        """Record a follower's fetch (``updateFetchStateOrThrow``); None if not a replica."""
        state = self.followers.get(follower)
        if state is None:
            return None
        if fetch_offset >= leader_log_end_offset:
            state.last_caught_up_ms = max(state.last_caught_up_ms, now_ms)
        elif fetch_offset >= state.last_fetch_leader_log_end_offset:
            state.last_caught_up_ms = max(state.last_caught_up_ms, state.last_fetch_ms)
        state.log_end_offset = fetch_offset
        state.log_start_offset = log_start_offset
        state.last_fetch_leader_log_end_offset = leader_log_end_offset
        state.last_fetch_ms = now_ms
        return state

    def high_watermark(self, leader_log_end_offset: int, isr: Iterable[int]) -> int:
        """Minimum LEO over the leader and the followers in the ISR."""
        ends = [leader_log_end_offset]
        ends += [self.followers[n].log_end_offset for n in isr if n in self.followers]
        return min(ends)

    def low_watermark(self, leader_log_start_offset: int, alive: Callable[[int], bool]) -> int:
        """Minimum log start offset over the leader and the live followers."""
        starts = [leader_log_start_offset]
        starts += [s.log_start_offset for n, s in self.followers.items() if alive(n)]
        return min(starts)

    def lagging(
        self, isr: Iterable[int], leader_log_end_offset: int, now_ms: int, max_lag_ms: int
    ) -> set[int]:
        """Followers in the ISR out of sync (``isCaughtUp`` false): behind the leader's
        LEO and not caught up for more than ``max_lag_ms``. A follower at the LEO stays
        in sync however long ago it fetched (nothing was appended since)."""
        return {
            n
            for n in isr
            if n in self.followers
            and self.followers[n].log_end_offset != leader_log_end_offset
            and now_ms - self.followers[n].last_caught_up_ms > max_lag_ms
        }

    def caught_up(self, isr: Iterable[int], high_watermark: int) -> set[int]:
        """Followers out of the ISR whose LEO reached the HW (may join it)."""
        inside = set(isr)
        return {
            n
            for n, s in self.followers.items()
            if n not in inside and s.log_end_offset >= high_watermark
        }
