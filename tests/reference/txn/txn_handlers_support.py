"""Driving the transaction APIs of a started broker through its handlers, as a
transactional client does (FindCoordinator, InitProducerId, AddPartitionsToTxn,
Produce, EndTxn)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
)
from lethe_formats.protocol.messages.end_txn import EndTxnRequest
from lethe_formats.protocol.messages.find_coordinator import (
    KEY_TYPE_TRANSACTION,
    FindCoordinatorRequest,
)
from lethe_formats.protocol.messages.init_producer_id import InitProducerIdRequest
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.handlers.dispatch import dispatch
from lethe_reference.purgatory import Deferred

sys.path.insert(0, str(Path(__file__).parents[1] / "handlers"))
from group_handlers_support import ctx
from group_handlers_support import new_broker as _new_broker

__all__ = ["Txn", "call", "new_broker", "txn_batch"]


def call(broker: Broker, api_key: int, version: int, request: Any) -> Any:
    """Dispatch as the connection layer does; a completed deferred gives its answer."""
    result = dispatch(broker, ctx(api_key, version, "lethe-test"), request)
    if isinstance(result, Deferred) and result.done:
        return result.result()
    return result


#: golden.properties, as the recorded Kafka ran: one replica for the internal topics
TXN_SETTINGS = {
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
}


def new_broker(log_dir: Path, settings: dict[str, str] | None = None) -> Broker:
    return _new_broker(log_dir, {**TXN_SETTINGS, **(settings or {})})


def txn_batch(producer_id: int, epoch: int, sequence: int, *values: bytes, now: int) -> bytes:
    specs = [RecordSpec(b"k", v, (), now) for v in values]
    return build_batch(
        specs,
        base_offset=0,
        producer_id=producer_id,
        producer_epoch=epoch,
        base_sequence=sequence,
        is_transactional=True,
    )


class Txn:
    """One transactional producer of ``broker`` (TV1 request versions, as librdkafka)."""

    def __init__(self, broker: Broker, transactional_id: str, timeout_ms: int = 60000) -> None:
        self.broker, self.id, self.timeout_ms = broker, transactional_id, timeout_ms
        self.producer_id = self.epoch = -1
        self.sequences: dict[tuple[str, int], int] = {}

    def find(self) -> Any:
        request = FindCoordinatorRequest(key_type=KEY_TYPE_TRANSACTION, coordinator_keys=(self.id,))
        return call(self.broker, ApiKey.FIND_COORDINATOR, 4, request).coordinators[0]

    def init(self) -> Any:
        self.find()  # creates __transaction_state the first time
        request = InitProducerIdRequest(
            transactional_id=self.id, transaction_timeout_ms=self.timeout_ms
        )
        response = call(self.broker, ApiKey.INIT_PRODUCER_ID, 4, request)
        if response.error_code == 0:
            self.producer_id, self.epoch = response.producer_id, response.producer_epoch
        return response

    def add(self, *partitions: tuple[str, int], version: int = 3) -> dict[tuple[str, int], int]:
        topics = {}
        for topic, partition in partitions:
            topics.setdefault(topic, []).append(partition)
        request = AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=self.id,
            v3_and_below_producer_id=self.producer_id,
            v3_and_below_producer_epoch=self.epoch,
            v3_and_below_topics=tuple(
                AddPartitionsToTxnTopic(t, tuple(p)) for t, p in topics.items()
            ),
        )
        response = call(self.broker, ApiKey.ADD_PARTITIONS_TO_TXN, version, request)
        return {
            (t.name, r.partition_index): r.partition_error_code
            for t in response.results_by_topic_v3_and_below
            for r in t.results_by_partition
        }

    def produce(self, tp: tuple[str, int], *values: bytes, version: int = 9) -> Any:
        sequence = self.sequences.get(tp, 0)
        now = self.broker.clock.now_ms()
        batch = txn_batch(self.producer_id, self.epoch, sequence, *values, now=now)
        request = ProduceRequest(
            transactional_id=self.id,
            acks=-1,
            timeout_ms=30000,
            topic_data=(TopicProduceData(tp[0], (PartitionProduceData(tp[1], batch),)),),
        )
        response = call(self.broker, ApiKey.PRODUCE, version, request)
        answer = response.responses[0].partition_responses[0]
        if answer.error_code == 0:
            self.sequences[tp] = sequence + len(values)
        return answer

    def end(self, commit: bool, version: int = 3) -> Any:
        request = EndTxnRequest(self.id, self.producer_id, self.epoch, commit)
        return call(self.broker, ApiKey.END_TXN, version, request)
