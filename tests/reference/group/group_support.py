"""Helpers for the coordinator tests: a coordinator on a manual clock, joining members."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

from lethe_formats.coordinator import decode_record
from lethe_formats.model import Record, RecordBatch
from lethe_formats.records.scan import read_log
from lethe_reference.clock import ManualClock
from lethe_reference.cluster.group import (
    AppendError,
    GroupConfig,
    GroupCoordinator,
    JoinRequest,
    JoinResult,
    Pending,
    SyncRequest,
    SyncResult,
)

GROUP = "g"
START_MS = 1_700_000_000_000
RANGE = (("range", b"range-meta"),)


@dataclass
class Harness:
    """A coordinator whose partitions are all loaded and whose writes are kept."""

    config: GroupConfig = field(
        default_factory=lambda: GroupConfig(group_initial_rebalance_delay_ms=0)
    )
    clock: ManualClock = field(default_factory=lambda: ManualClock(START_MS))
    batches: list[tuple[int, bytes]] = field(default_factory=list)
    #: when set, the log refuses every write with this Kafka error code
    fail_with: int | None = None
    coordinator: GroupCoordinator = field(init=False)

    def __post_init__(self) -> None:
        counter = itertools.count(1)
        self.coordinator = GroupCoordinator(
            self.clock,
            self._append,
            self.config,
            new_uuid=lambda: f"uuid{next(counter)}",
        )
        for partition in range(self.config.offsets_topic_num_partitions):
            self.coordinator.load(partition, [])

    def _append(self, partition: int, batch: bytes) -> None:
        if self.fail_with is not None:
            raise AppendError(self.fail_with)
        self.batches.append((partition, batch))

    def request(self, client: str, member_id: str = "", **changes: Any) -> JoinRequest:
        base = JoinRequest(GROUP, member_id, "consumer", RANGE, 10_000, 30_000, client, "/10.0.0.1")
        return replace(base, **changes)

    def join(
        self, client: str, member_id: str = "", **changes: Any
    ) -> JoinResult | Pending[JoinResult]:
        return self.coordinator.join_group(self.request(client, member_id, **changes))

    def new_member(self, client: str) -> str:
        """A member id handed out with MEMBER_ID_REQUIRED."""
        first = self.join(client)
        assert isinstance(first, JoinResult) and first.error_code == 79
        return first.member_id

    def sync(
        self, member_id: str, generation: int, assignments: dict[str, bytes] | None = None
    ) -> SyncResult | Pending[SyncResult]:
        pairs = tuple((assignments or {}).items())
        return self.coordinator.sync_group(SyncRequest(GROUP, member_id, generation, pairs))

    def advance(self, ms: int) -> None:
        self.clock.advance(ms)
        self.coordinator.tick()

    def records(self) -> list[Record]:
        out: list[Record] = []
        for _, data in self.batches:
            for batch in read_log(data):
                assert isinstance(batch, RecordBatch)
                out.extend(batch.records)
        return out

    def written(self) -> list[Any]:
        return [decode_record(record) for record in self.records()]


def done(result: Any) -> Any:
    """The value of an immediate result or of a completed Pending."""
    return result.result() if isinstance(result, Pending) else result
