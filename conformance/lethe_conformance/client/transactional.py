"""A transactional producer's own state, as Kafka's clients keep it: plain data, no IO.

Theory of operation
-------------------
A transactional producer is a transactional id plus what InitProducerId gave
it (producer id, epoch) plus, per partition, the next sequence number. Within
a transaction it remembers which partitions and which groups it already added
to the transaction, so it asks the coordinator once per partition
(AddPartitionsToTxn) and once per group (AddOffsetsToTxn), as Kafka's
producer does (``TransactionManager``)::

    init()            -> producer id, epoch; sequences restart at 0
    begin()           -> nothing sent: the transaction starts with its first addition
    batch(tp, recs)   -> a transactional v2 batch (bit 4) with the partition's next
                         base sequence; the sequence moves on by the record count
    end()             -> the added partitions and groups are forgotten

Kafka's transaction protocol has two shapes (KIP-890). Transaction version 1
(every client before Kafka 4.0's, librdkafka's, and the golden capture's):
the client adds each partition with AddPartitionsToTxn (v3 and below, the
client form), sends Produce at v11 or below and EndTxn at v4 or below; the
epoch stays the same across transactions, so every marker carries it.
:data:`TV1_MAX_VERSIONS` are those caps (Kafka's ``ProduceRequest.Builder``
with ``useTransactionV1Version``, ``EndTxnRequest.Builder``).

Sequence numbers are per partition and wrap at 2^31 (``DefaultRecordBatch``'s
``incrementSequence``), which no scenario reaches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from lethe_formats.model import Compression
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.records.builder import RecordSpec, build_batch

__all__ = ["TV1_MAX_VERSIONS", "TransactionalProducer"]

#: Highest versions a transaction-version-1 client sends (the client form of
#: AddPartitionsToTxn; Produce and EndTxn below their KIP-890 part 2 versions).
TV1_MAX_VERSIONS: dict[int, int] = {
    ApiKey.ADD_PARTITIONS_TO_TXN: 3,
    ApiKey.PRODUCE: 11,
    ApiKey.END_TXN: 4,
}
_SEQUENCE_WRAP = 1 << 31


@dataclass(slots=True)
class TransactionalProducer:
    """One transactional id's producer state (see the module docstring)."""

    transactional_id: str
    transaction_timeout_ms: int = 60_000
    producer_id: int = -1
    producer_epoch: int = -1
    sequences: dict[tuple[str, int], int] = field(default_factory=dict)
    partitions: list[tuple[str, int]] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)

    def initialized(self, producer_id: int, producer_epoch: int) -> None:
        """What InitProducerId answered: a new epoch restarts every sequence at 0."""
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.sequences.clear()
        self.end()

    def begin(self) -> None:
        """A new transaction: nothing is added yet."""
        self.end()

    def end(self) -> None:
        """The transaction is over (committed or aborted): forget what it added."""
        self.partitions.clear()
        self.groups.clear()

    def missing_partitions(self, wanted: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
        """The partitions of ``wanted`` not yet added to the transaction, in order."""
        return [tp for tp in dict.fromkeys(wanted) if tp not in self.partitions]

    def added(self, partitions: Sequence[tuple[str, int]]) -> None:
        self.partitions.extend(tp for tp in partitions if tp not in self.partitions)

    def batch(
        self,
        topic: str,
        partition: int,
        records: Sequence[RecordSpec],
        *,
        compression: Compression = Compression.NONE,
    ) -> bytes:
        """A transactional batch with the partition's next base sequence (base offset 0,
        as every producer sends it). Call :meth:`sent` once the broker took it."""
        return build_batch(
            records,
            base_offset=0,
            compression=compression,
            producer_id=self.producer_id,
            producer_epoch=self.producer_epoch,
            base_sequence=self.sequences.get((topic, partition), 0),
            is_transactional=True,
        )

    def sent(self, topic: str, partition: int, count: int) -> None:
        """The broker appended ``count`` records: the partition's sequence moves on."""
        key = (topic, partition)
        self.sequences[key] = (self.sequences.get(key, 0) + count) % _SEQUENCE_WRAP
