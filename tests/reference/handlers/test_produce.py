"""Produce through the handler: appends, per-partition errors, idempotent producers.

Expected values: Kafka 4.0's rules from its source (``KafkaApis.handleProduce
Request``, ``ReplicaManager.appendToLocalLog``, ``ProduceRequest.validateRecords``,
``LogValidator``, ``ProducerAppendInfo``), the error table and the golden
delete-records case (offsets a producer got back).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.model import Compression, ControlType
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from lethe_formats.records.builder import (
    RecordSpec,
    build_batch,
    build_end_txn_marker_batch,
    build_legacy_message_set,
)
from lethe_reference.broker import Broker
from lethe_reference.config import BrokerConfig
from lethe_reference.metadata import CONSUMER_OFFSETS
from partition_ops_support import call, ctx, delete_records, new_broker, produce

TOPIC = "orders"


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    broker = new_broker(tmp_path)
    broker.create_topic(TOPIC, 2)
    return broker


def batch(broker: Broker, count: int = 3, **kwargs: object) -> bytes:
    now = broker.clock.now_ms()
    specs = [RecordSpec(f"k{i}".encode(), f"v{i}".encode(), timestamp=now) for i in range(count)]
    return build_batch(specs, base_offset=0, **kwargs)  # type: ignore[arg-type]


def leo(broker: Broker, topic: str = TOPIC, partition: int = 0) -> int:
    log = broker.log(topic, partition)
    assert log is not None
    return log.log_end_offset


def test_appends_get_consecutive_offsets_and_move_the_high_watermark(broker: Broker) -> None:
    first = produce(broker, TOPIC, 0, batch(broker, 3), acks=1)
    second = produce(broker, TOPIC, 0, batch(broker, 2), acks=-1)
    assert (first.error_code, first.base_offset, first.log_append_time_ms) == (0, 0, -1)
    assert (second.error_code, second.base_offset, second.log_start_offset) == (0, 3, 0)
    assert (second.record_errors, second.error_message) == ((), None)
    log = broker.log(TOPIC, 0)
    assert log is not None and log.high_watermark == log.log_end_offset == 5


def test_acks_zero_still_appends(broker: Broker) -> None:
    assert produce(broker, TOPIC, 0, batch(broker), acks=0).error_code == 0
    assert leo(broker) == 3


def test_log_append_time_topic_answers_the_broker_time(broker: Broker) -> None:
    broker.create_topic("lat", 1, {"message.timestamp.type": "LogAppendTime"})
    answer = produce(broker, "lat", 0, batch(broker))
    assert answer.log_append_time_ms == broker.clock.now_ms()


def test_log_start_offset_field_follows_delete_records(broker: Broker) -> None:
    produce(broker, TOPIC, 0, batch(broker, 5))
    delete_records(broker, TOPIC, {0: 4})
    assert produce(broker, TOPIC, 0, batch(broker)).log_start_offset == 4


@pytest.mark.parametrize(("topic", "partition"), [(TOPIC, 2), ("missing", 0)])
def test_unknown_topic_or_partition(broker: Broker, topic: str, partition: int) -> None:
    answer = produce(broker, topic, partition, batch(broker))
    assert (answer.error_code, answer.base_offset, answer.log_start_offset) == (3, -1, -1)


def test_invalid_acks_appends_nothing(broker: Broker) -> None:
    answer = produce(broker, TOPIC, 0, batch(broker), acks=2)
    assert (answer.error_code, answer.base_offset, answer.log_start_offset) == (21, -1, -1)
    assert leo(broker) == 0


def test_compacted_topic_without_key_is_invalid_record_with_record_errors(broker: Broker) -> None:
    broker.create_topic("compacted", 1, {"cleanup.policy": "compact"})
    now = broker.clock.now_ms()
    specs = [RecordSpec(b"k", b"v", timestamp=now), RecordSpec(None, b"v", timestamp=now)]
    answer = produce(broker, "compacted", 0, build_batch(specs, base_offset=0))
    assert answer.error_code == ErrorCode.INVALID_RECORD
    assert (answer.base_offset, answer.log_start_offset) == (-1, 0)
    assert [e.batch_index for e in answer.record_errors] == [1]
    message = "Compacted topic cannot accept message without key in topic partition compacted-0"
    assert (answer.record_errors[0].batch_index_error_message or "").startswith(message)
    assert (answer.error_message or "").startswith(
        "One or more records have been rejected due to 1 record errors in total, and only "
        f"showing the first three errors at most: [RecordError(batchIndex=1, message='{message}"
    )
    assert leo(broker, "compacted") == 0


def test_timestamp_out_of_range_is_invalid_timestamp(broker: Broker) -> None:
    late = broker.clock.now_ms() + 3_600_001  # message.timestamp.after.max.ms is 1 h
    specs = [RecordSpec(b"k", b"v", timestamp=late)]
    answer = produce(broker, TOPIC, 0, build_batch(specs, base_offset=0))
    assert answer.error_code == ErrorCode.INVALID_TIMESTAMP
    assert answer.error_message == "One or more records have been rejected due to invalid timestamp"
    assert [e.batch_index for e in answer.record_errors] == [0]


def test_bad_crc_is_corrupt_message_without_log_start_offset(broker: Broker) -> None:
    data = bytearray(batch(broker))
    data[-1] ^= 0xFF
    answer = produce(broker, TOPIC, 0, bytes(data))
    assert (answer.error_code, answer.log_start_offset, answer.error_message) == (2, -1, None)


def test_record_batch_larger_than_max_message_bytes(broker: Broker) -> None:
    broker.create_topic("small", 1, {"max.message.bytes": "100"})
    answer = produce(broker, "small", 0, batch(broker, 5))
    assert (answer.error_code, answer.log_start_offset) == (ErrorCode.MESSAGE_TOO_LARGE, -1)


@pytest.mark.parametrize(
    "records",
    [
        pytest.param(b"", id="empty"),
        pytest.param(None, id="null"),
        pytest.param(b"\x00" * 11, id="shorter-than-log-overhead"),
    ],
)
def test_no_batch_is_invalid_record(broker: Broker, records: bytes | None) -> None:
    answer = produce(broker, TOPIC, 0, records)
    assert (answer.error_code, answer.log_start_offset) == (ErrorCode.INVALID_RECORD, -1)


def test_two_batches_in_one_partition_are_invalid(broker: Broker) -> None:
    answer = produce(broker, TOPIC, 0, batch(broker) + batch(broker))
    assert (answer.error_code, answer.log_start_offset) == (ErrorCode.INVALID_RECORD, -1)


def test_legacy_magic_is_invalid_record(broker: Broker) -> None:
    specs = [RecordSpec(b"k", b"v", timestamp=broker.clock.now_ms())]
    legacy = build_legacy_message_set(specs, magic=1, base_offset=0)
    assert produce(broker, TOPIC, 0, legacy).error_code == ErrorCode.INVALID_RECORD


@pytest.mark.parametrize(("version", "code"), [(6, 76), (7, 0)])
def test_zstd_needs_produce_v7(broker: Broker, version: int, code: int) -> None:
    zstd = batch(broker, compression=Compression.ZSTD)
    assert produce(broker, TOPIC, 0, zstd, version=version).error_code == code


def _without_verification(broker: Broker) -> None:
    static = {**broker.config.static, "transaction.partition.verification.enable": "false"}
    broker.config = BrokerConfig(static)


def test_clients_may_not_write_control_batches(broker: Broker) -> None:
    marker = build_end_txn_marker_batch(
        base_offset=0,
        producer_id=7,
        producer_epoch=0,
        control_type=ControlType.COMMIT,
        coordinator_epoch=0,
        timestamp=broker.clock.now_ms(),
    )
    # transaction.partition.verification.enable (Kafka 4.0's default): the coordinator is
    # asked first, and there is none yet (no __transaction_state)
    answer = produce(broker, TOPIC, 0, marker, transactional_id="txn")
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.NOT_ENOUGH_REPLICAS,
        "Unable to verify the partition has been added to the transaction. "
        "Underlying error: COORDINATOR_NOT_AVAILABLE",
    )
    _without_verification(broker)
    answer = produce(broker, TOPIC, 0, marker, transactional_id="txn")
    assert (answer.error_code, answer.log_start_offset) == (ErrorCode.INVALID_RECORD, 0)
    assert answer.error_message is None


def test_internal_topics_only_take_admin_client_appends(broker: Broker) -> None:
    broker.create_topic(CONSUMER_OFFSETS, 1)
    refused = produce(broker, CONSUMER_OFFSETS, 0, batch(broker))
    assert (refused.error_code, refused.log_start_offset) == (ErrorCode.INVALID_TOPIC_EXCEPTION, -1)
    allowed = produce(broker, CONSUMER_OFFSETS, 0, batch(broker), client_id="__admin_client")
    assert allowed.error_code == 0


def test_transactional_batch_needs_a_transactional_id(broker: Broker) -> None:
    txn = batch(broker, producer_id=9, producer_epoch=0, base_sequence=0, is_transactional=True)
    request = ProduceRequest(
        transactional_id=None,
        acks=-1,
        timeout_ms=1000,
        topic_data=(
            TopicProduceData(
                TOPIC, (PartitionProduceData(0, txn), PartitionProduceData(1, batch(broker)))
            ),
        ),
    )
    response = call(broker, ctx(ApiKey.PRODUCE, 9), request)
    assert isinstance(response, ProduceResponse)
    answers = response.responses[0].partition_responses
    code = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert [(a.index, a.error_code, a.base_offset) for a in answers] == [
        (0, code, -1),
        (1, code, -1),
    ]
    assert answers[0].error_message == code.message
    assert leo(broker, TOPIC, 1) == 0
    # with the id, the partition is verified with the coordinator (none yet)
    verified = produce(broker, TOPIC, 0, txn, transactional_id="t")
    assert verified.error_code == ErrorCode.NOT_ENOUGH_REPLICAS
    _without_verification(broker)
    assert produce(broker, TOPIC, 0, txn, transactional_id="t").error_code == 0


def test_responses_encode_at_every_version(broker: Broker) -> None:
    request = ProduceRequest(
        transactional_id=None,
        acks=1,
        timeout_ms=1000,
        topic_data=(TopicProduceData(TOPIC, (PartitionProduceData(0, batch(broker)),)),),
    )
    for version in range(3, 13):
        response = call(broker, ctx(ApiKey.PRODUCE, version), request)
        decoded = decode(ProduceResponse, version, encode(response, version))
        assert decoded.responses[0].partition_responses[0].base_offset == 3 * (version - 3)


# --- idempotent producers -------------------------------------------------------------


def idempotent(broker: Broker, sequence: int, count: int = 2, epoch: int = 0) -> bytes:
    return batch(broker, count, producer_id=42, producer_epoch=epoch, base_sequence=sequence)


def test_retried_batch_gets_its_original_offsets(broker: Broker) -> None:
    first = idempotent(broker, 0)
    produce(broker, TOPIC, 0, first)
    produce(broker, TOPIC, 0, idempotent(broker, 2))
    retry = produce(broker, TOPIC, 0, first)
    assert (retry.error_code, retry.base_offset, retry.log_start_offset) == (0, 0, 0)
    # Kafka answers a duplicate's log_append_time with the batch's max timestamp.
    assert retry.log_append_time_ms == broker.clock.now_ms()
    assert leo(broker) == 4


def test_only_the_last_five_batches_are_recognised(broker: Broker) -> None:
    for index in range(6):
        assert produce(broker, TOPIC, 0, idempotent(broker, 2 * index)).error_code == 0
    assert produce(broker, TOPIC, 0, idempotent(broker, 2)).base_offset == 2
    forgotten = produce(broker, TOPIC, 0, idempotent(broker, 0))
    assert forgotten.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert forgotten.log_start_offset == 0


def test_sequence_gap_is_out_of_order(broker: Broker) -> None:
    produce(broker, TOPIC, 0, idempotent(broker, 0))
    gap = produce(broker, TOPIC, 0, idempotent(broker, 3))
    assert gap.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert leo(broker) == 2


def test_unknown_producer_may_start_at_any_sequence(broker: Broker) -> None:
    assert produce(broker, TOPIC, 0, idempotent(broker, 17)).error_code == 0
    assert produce(broker, TOPIC, 0, idempotent(broker, 19)).error_code == 0


def test_older_epoch_is_invalid_producer_epoch(broker: Broker) -> None:
    produce(broker, TOPIC, 0, idempotent(broker, 0, epoch=3))
    old = produce(broker, TOPIC, 0, idempotent(broker, 2, epoch=2))
    assert old.error_code == ErrorCode.INVALID_PRODUCER_EPOCH


def test_new_epoch_must_restart_at_sequence_zero(broker: Broker) -> None:
    produce(broker, TOPIC, 0, idempotent(broker, 0, epoch=0))
    bad = produce(broker, TOPIC, 0, idempotent(broker, 2, epoch=1))
    assert bad.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(broker, TOPIC, 0, idempotent(broker, 0, epoch=1)).error_code == 0


def test_sequences_are_per_partition(broker: Broker) -> None:
    produce(broker, TOPIC, 0, idempotent(broker, 0))
    assert produce(broker, TOPIC, 1, idempotent(broker, 0)).base_offset == 0


def test_producer_below_the_log_start_offset_is_kept_in_memory(broker: Broker) -> None:
    """Kafka 4.0's ``onLogStartOffsetIncremented`` keeps every producer (older
    brokers evicted unretained ones); only a reload drops snapshots at or below
    the log start offset."""
    produce(broker, TOPIC, 0, idempotent(broker, 0))
    delete_records(broker, TOPIC, {0: 2})
    bad = produce(broker, TOPIC, 0, idempotent(broker, 9))
    assert bad.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(broker, TOPIC, 0, idempotent(broker, 2)).base_offset == 2


def test_broken_duplicate_still_gets_its_validation_error(broker: Broker) -> None:
    first = idempotent(broker, 0)
    produce(broker, TOPIC, 0, first)
    broken = bytearray(first)
    broken[-1] ^= 0xFF
    assert produce(broker, TOPIC, 0, bytes(broken)).error_code == ErrorCode.CORRUPT_MESSAGE
