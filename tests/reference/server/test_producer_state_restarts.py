"""Idempotent producers across restarts of a ``lethe broker`` process.

Kafka's answer to a retried batch (same producer id, epoch and sequences as one
it already appended) is error NONE with the original batch's base offset, and
nothing is appended (``UnifiedLog.append``: ``maybeDuplicate``); its producer
state survives a restart through the ``.snapshot`` files plus a replay of the
log beyond them, after a clean shutdown and after a kill -9
(``LogLoader.recoverSegment``). These tests start the broker with the CLI, as
a user does, and speak the protocol over a socket; no timing is asserted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from broker_process import BrokerProcess
from lethe_formats.model import RecordBatch
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    TopicProduceData,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.scan import read_log
from lethe_formats.storage.producer_snapshot import read_producer_snapshot

TOPIC = "idem"
PRODUCER_ID, EPOCH = 4242, 0
CRASH_CYCLES = 4
#: Producer expiry reads the batches' own timestamps (``lastTimestamp``): records
#: stamped long ago would expire at load, in Kafka as here.
NOW_MS = int(time.time() * 1000)


class LetheBroker(BrokerProcess):
    """The process, with this module's Produce."""

    def produce(self, records: bytes) -> PartitionProduceResponse:
        request = ProduceRequest(
            None, -1, 30000, (TopicProduceData(TOPIC, (PartitionProduceData(0, records),)),)
        )
        answer = self.exchange(request, 9)
        return answer.responses[0].partition_responses[0]  # type: ignore[attr-defined,no-any-return]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[LetheBroker]:
    server = LetheBroker(tmp_path / "logs")
    server.start()
    config = (CreatableTopicConfig("segment.bytes", "1048576"),)
    created = server.exchange(CreateTopicsRequest((CreatableTopic(TOPIC, 1, 1, (), config),)), 7)
    assert created.topics[0].error_code == 0  # type: ignore[attr-defined]
    yield server
    if server.process is not None:
        server.crash()


def batch(sequence: int, count: int = 3, epoch: int = EPOCH) -> bytes:
    specs = [RecordSpec(b"k", b"v%d" % (sequence + i), timestamp=NOW_MS) for i in range(count)]
    return build_batch(
        specs, base_offset=0, producer_id=PRODUCER_ID, producer_epoch=epoch, base_sequence=sequence
    )


def values_on_disk(log_dir: Path) -> list[bytes | None]:
    partition = log_dir / f"{TOPIC}-0"
    return [
        record.value
        for path in sorted(partition.glob("*.log"))
        for batch_ in read_log(path.read_bytes())
        if isinstance(batch_, RecordBatch)
        for record in batch_.records
    ]


def test_a_retry_after_a_clean_restart_gets_the_original_offset(broker: LetheBroker) -> None:
    first, second = batch(0), batch(3)
    assert broker.produce(first).base_offset == 0
    assert broker.produce(second).base_offset == 3
    broker.stop()
    partition = broker.log_dir / f"{TOPIC}-0"
    snapshot = read_producer_snapshot((partition / f"{6:020d}.snapshot").read_bytes())
    assert [(e.producer_id, e.last_sequence, e.last_offset) for e in snapshot.entries] == [
        (PRODUCER_ID, 5, 5)
    ]
    broker.start()
    retry = broker.produce(second)
    assert (retry.error_code, retry.base_offset) == (ErrorCode.NONE, 3)
    assert retry.log_append_time_ms == NOW_MS  # the original batch's max timestamp
    # Only the last batch survives a snapshot (Kafka writes one BatchMetadata per producer):
    # a retry of the one before it is out of order, as Kafka answers it.
    assert broker.produce(first).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert broker.produce(batch(7)).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert broker.produce(batch(6)).base_offset == 6
    broker.stop()
    assert values_on_disk(broker.log_dir).count(b"v3") == 1


def test_a_stale_epoch_after_a_restart_is_invalid_producer_epoch(broker: LetheBroker) -> None:
    assert broker.produce(batch(0, epoch=2)).base_offset == 0
    broker.stop()
    broker.start()
    assert broker.produce(batch(3, epoch=1)).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert broker.produce(batch(1, epoch=3)).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert broker.produce(batch(0, epoch=3)).base_offset == 3


def test_retries_after_kill_9_get_their_original_offsets(broker: LetheBroker) -> None:
    """A bounded kill -9 loop: each cycle appends a batch, crashes, and retries it."""
    sequence = 0
    offsets: dict[int, int] = {}
    for _cycle in range(CRASH_CYCLES):
        records = batch(sequence)
        offsets[sequence] = broker.produce(records).base_offset
        broker.crash()
        assert not (broker.log_dir / ".kafka_cleanshutdown").exists()
        broker.start()
        retry = broker.produce(records)
        assert (retry.error_code, retry.base_offset) == (ErrorCode.NONE, offsets[sequence])
        sequence += 3
    assert offsets == {3 * i: 3 * i for i in range(CRASH_CYCLES)}
    broker.stop()
    values = values_on_disk(broker.log_dir)
    assert values == [b"v%d" % i for i in range(3 * CRASH_CYCLES)]


def test_a_producer_idle_past_its_expiry_is_forgotten_at_load(broker: LetheBroker) -> None:
    """``producer.id.expiration.ms`` (1 day) counts from the batch's own timestamp;
    the snapshot load skips such a producer, so any sequence is accepted after the
    restart: NONE, never UNKNOWN_PRODUCER_ID (Kafka 4.0 does not send it on Produce)."""
    day_old = NOW_MS - 86_400_000
    specs = [RecordSpec(b"k", b"old", timestamp=day_old)]
    old = build_batch(
        specs, base_offset=0, producer_id=PRODUCER_ID, producer_epoch=EPOCH, base_sequence=0
    )
    assert broker.produce(old).base_offset == 0
    assert broker.produce(batch(5)).error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    broker.stop()
    broker.start()
    answer = broker.produce(batch(5))
    assert (answer.error_code, answer.base_offset) == (ErrorCode.NONE, 1)
