"""A fake broker side for the sans-IO transaction coordinator: a clock, a list
of appended batches per ``__transaction_state`` partition, the markers asked
for, producer ids from a counter."""

from __future__ import annotations

from dataclasses import dataclass, field

from lethe_formats.coordinator.transaction_log import (
    TRANSACTION_STATES,
    TransactionLogValue,
    decode_transaction_key,
    decode_transaction_value,
)
from lethe_formats.model import RecordBatch
from lethe_formats.records.scan import read_log
from lethe_reference.cluster.txn.coordinator import (
    TransactionCoordinator,
    TxnAppendError,
    TxnConfig,
)
from lethe_reference.cluster.txn.metadata import TopicPartition


@dataclass
class Marker:
    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int
    partitions: frozenset[TopicPartition]


@dataclass
class FakeIO:
    now: int = 1_000_000
    next_id: int = 0
    epoch: int = 0
    batches: dict[int, list[bytes]] = field(default_factory=dict)
    markers: list[Marker] = field(default_factory=list)
    fail_with: int | None = None

    def now_ms(self) -> int:
        return self.now

    def append(self, partition: int, batch: bytes) -> None:
        if self.fail_with is not None:
            raise TxnAppendError(self.fail_with)
        self.batches.setdefault(partition, []).append(batch)

    def write_markers(
        self,
        producer_id: int,
        producer_epoch: int,
        commit: bool,
        coordinator_epoch: int,
        partitions: frozenset[TopicPartition],
    ) -> None:
        self.markers.append(
            Marker(producer_id, producer_epoch, commit, coordinator_epoch, partitions)
        )

    def new_producer_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def coordinator_epoch(self, partition: int) -> int:
        return self.epoch

    def records(self, partition: int) -> list[tuple[bytes | None, bytes | None]]:
        out: list[tuple[bytes | None, bytes | None]] = []
        for batch in self.batches.get(partition, []):
            for entry in read_log(batch):
                assert isinstance(entry, RecordBatch)
                assert entry.header.producer_id == -1 and entry.header.base_sequence == -1
                out.extend((r.key, r.value) for r in entry.records)
        return out

    def values(self, partition: int) -> list[tuple[str, TransactionLogValue]]:
        out = []
        for key, value in self.records(partition):
            decoded = decode_transaction_value(value)
            assert decoded is not None
            assert decode_transaction_key(key).transactional_id is not None
            out.append((TRANSACTION_STATES[decoded.transaction_status], decoded))
        return out


def loaded_coordinator(
    io: FakeIO, tid: str, config: TxnConfig | None = None
) -> TransactionCoordinator:
    coordinator = TransactionCoordinator(io, config)
    coordinator.load(coordinator.partition_for(tid), [])
    return coordinator
