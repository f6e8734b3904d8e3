"""Produce-path validation: each rejection carries Kafka 4.0's error code.

Rules and codes: kafka-facts 3.1 and Kafka's ProduceRequest.validateRecords,
UnifiedLog.analyzeAndValidateRecords and LogValidator (see the validator's
docstring); codes from Errors.java: CORRUPT_MESSAGE 2, MESSAGE_TOO_LARGE 10,
RECORD_LIST_TOO_LARGE 18, INVALID_TIMESTAMP 32, INVALID_RECORD 87,
UNKNOWN_SERVER_ERROR -1.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from lethe_formats.crc import crc32c
from lethe_formats.model import BatchHeader, Compression, ControlType, TimestampType
from lethe_formats.records.builder import (
    RecordSpec,
    build_batch,
    build_empty_batch,
    build_end_txn_marker_batch,
    build_legacy_message_set,
)
from lethe_formats.records.scan import LogScanner, decode_records
from lethe_reference.clock import ManualClock
from lethe_reference.storage import errors
from lethe_reference.storage.log import PartitionLog
from lethe_reference.storage.settings import StorageSettings
from lethe_reference.storage.validator import validate_and_assign_offsets
from storage_support import client_batch

NOW = 1_700_000_000_000
DEFAULTS = StorageSettings()


def _validate(
    data: bytes, settings: StorageSettings = DEFAULTS, *, next_offset: int = 100
) -> bytes:
    result = validate_and_assign_offsets(
        data,
        next_offset=next_offset,
        leader_epoch=7,
        now_ms=NOW,
        settings=settings,
        target_compression=settings.compression_type,
        topic_partition="t-0",
    )
    return result.records


def _rejected(data: bytes, code: int, settings: StorageSettings = DEFAULTS) -> errors.LogError:
    with pytest.raises(errors.RecordValidationError) as caught:
        _validate(data, settings)
    assert caught.value.error_code == code, caught.value
    return caught.value


def _recrc(data: bytes) -> bytes:
    fixed = bytearray(data)
    struct.pack_into(">I", fixed, 17, crc32c(bytes(fixed[21:])))
    return bytes(fixed)


def _header(data: bytes) -> BatchHeader:
    return BatchHeader(*struct.unpack_from(">qiibIhiqqqhii", data, 0))


GOOD = client_batch([NOW - 10, NOW - 5, NOW])


# --- ProduceRequest.validateRecords -------------------------------------------------------


@pytest.mark.parametrize("data", [b"", GOOD[:16], GOOD[:-1]], ids=["empty", "16-bytes", "torn"])
def test_no_complete_batch_is_invalid_record(data: bytes) -> None:
    _rejected(data, 87)


def test_a_length_below_the_v0_record_overhead_is_corrupt() -> None:
    data = bytearray(GOOD)
    struct.pack_into(">i", data, 8, 13)
    _rejected(bytes(data), 2)


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_message_sets_are_refused_as_invalid_record(magic: int) -> None:
    """KIP-724: Kafka 4.0 accepts only magic 2 from producers (Produce v3+)."""
    legacy = build_legacy_message_set(
        [RecordSpec(b"k", b"v", timestamp=NOW)], magic=magic, base_offset=0
    )
    _rejected(legacy, 87)


def test_two_batches_in_one_partition_are_invalid_record() -> None:
    _rejected(GOOD + GOOD, 87)


def test_bytes_too_few_for_a_second_batch_are_dropped() -> None:
    assert len(_validate(GOOD + GOOD[:30])) == len(GOOD)


# --- UnifiedLog.analyzeAndValidateRecords ---------------------------------------------------


def test_a_producer_batch_must_have_base_offset_zero() -> None:
    data = bytearray(GOOD)
    struct.pack_into(">q", data, 0, 5)
    error = _rejected(bytes(data), 87)
    assert "should be 0, but it is 5" in error.message


def test_a_batch_larger_than_max_message_bytes_is_message_too_large() -> None:
    _rejected(GOOD, 10, StorageSettings(max_message_bytes=len(GOOD) - 1))
    assert _validate(GOOD, StorageSettings(max_message_bytes=len(GOOD)))


def test_a_bad_crc_is_corrupt_message() -> None:
    data = bytearray(GOOD)
    data[-1] ^= 1
    _rejected(bytes(data), 2)


def test_a_batch_shorter_than_its_61_byte_header_is_corrupt_message() -> None:
    data = bytearray(GOOD[:40])
    struct.pack_into(">i", data, 8, 28)
    _rejected(bytes(data), 2)


def test_an_undefined_codec_id_is_unknown_server_error() -> None:
    data = bytearray(GOOD)
    struct.pack_into(">h", data, 21, 5)
    _rejected(_recrc(bytes(data)), -1)


# --- LogValidator ---------------------------------------------------------------------------


def test_last_offset_delta_inconsistent_with_the_count_is_invalid_record() -> None:
    data = bytearray(GOOD)
    struct.pack_into(">i", data, 23, 5)
    assert "Inconsistent batch offset range [0, 5] and count of records 3" in (
        _rejected(_recrc(bytes(data)), 87).message
    )


def test_a_negative_offset_range_is_invalid_record() -> None:
    data = bytearray(GOOD)
    struct.pack_into(">i", data, 23, -1)
    assert "invalid offset range" in _rejected(_recrc(bytes(data)), 87).message


def test_an_empty_batch_from_a_producer_is_invalid_record() -> None:
    empty = build_empty_batch(base_offset=0, last_offset_delta=0, max_timestamp=NOW)
    assert "Invalid reported count for record batch: 0" in _rejected(empty, 87).message


def test_control_batches_from_producers_are_invalid_record() -> None:
    marker = build_end_txn_marker_batch(
        base_offset=0,
        producer_id=4,
        producer_epoch=0,
        control_type=ControlType.COMMIT,
        coordinator_epoch=1,
        timestamp=NOW,
    )
    assert "not allowed to write control records" in _rejected(marker, 87).message


def test_a_producer_id_without_a_sequence_is_invalid_record() -> None:
    batch = client_batch([NOW], producer_id=4, producer_epoch=0, base_sequence=-1)
    assert "Invalid sequence number -1" in _rejected(batch, 87).message


def test_undecodable_records_are_invalid_record() -> None:
    data = bytearray(GOOD)
    struct.pack_into(">i", data, 23, 3)  # claim 4 records, carry 3
    struct.pack_into(">i", data, 57, 4)
    _rejected(_recrc(bytes(data)), 87)


def test_compacted_topics_refuse_records_without_keys() -> None:
    batch = client_batch([NOW, NOW, NOW], keys=[b"a", None, b"c"])
    compacted = StorageSettings(cleanup_policy=("compact",))
    error = _rejected(batch, 87, compacted)
    assert isinstance(error, errors.RecordValidationError)
    assert error.record_errors == (
        (1, "Compacted topic cannot accept message without key in topic partition t-0."),
    )
    assert _validate(client_batch([NOW], keys=[None]))  # fine when not compacted


def test_create_time_outside_the_allowed_range_is_invalid_timestamp() -> None:
    """message.timestamp.after.max.ms defaults to 1 hour in 4.0 (KIP-1030); ">" not ">="."""
    assert _validate(client_batch([NOW + 3_600_000]))
    error = _rejected(client_batch([NOW, NOW + 3_600_001]), 32)
    assert isinstance(error, errors.RecordValidationError)
    assert [index for index, _ in error.record_errors] == [1]
    bounded = StorageSettings(message_timestamp_before_max_ms=1000)
    assert _validate(client_batch([NOW - 1000]), bounded)
    _rejected(client_batch([NOW - 1001]), 32, bounded)


def test_a_producer_setting_log_append_time_on_such_a_topic_is_invalid_timestamp() -> None:
    batch = client_batch([NOW], timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=NOW)
    _rejected(batch, 32, StorageSettings(message_timestamp_type=TimestampType.LOG_APPEND_TIME))


def test_a_batch_larger_than_segment_bytes_is_record_list_too_large(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = PartitionLog.create(
        tmp_path / "t-0", StorageSettings(segment_bytes=len(GOOD) - 1), clock=clock, durable=False
    )
    batch = client_batch([clock.now_ms()])
    with pytest.raises(errors.RecordListTooLargeError) as caught:
        log.append_as_leader(client_batch([clock.now_ms()] * 3), leader_epoch=0)
    assert caught.value.error_code == 18
    assert log.append_as_leader(batch, leader_epoch=0).first_offset == 0


# --- offset assignment --------------------------------------------------------------------


def test_offsets_and_epoch_are_patched_outside_the_crc() -> None:
    out = _validate(GOOD, next_offset=100)
    header = _header(out)
    assert (header.base_offset, header.last_offset, header.partition_leader_epoch) == (100, 102, 7)
    assert out[17:] == GOOD[17:]  # CRC, attributes, records untouched


def test_a_wrong_max_timestamp_is_corrected_with_a_new_crc() -> None:
    data = bytearray(GOOD)
    struct.pack_into(">q", data, 35, NOW + 999)
    out = _validate(_recrc(bytes(data)))
    assert _header(out).max_timestamp == NOW
    assert next(iter(LogScanner(out))).crc_valid


def test_log_append_time_topics_stamp_the_broker_time() -> None:
    settings = StorageSettings(message_timestamp_type=TimestampType.LOG_APPEND_TIME)
    result = validate_and_assign_offsets(
        GOOD, next_offset=0, leader_epoch=0, now_ms=NOW + 1, settings=settings
    )
    header = result.header
    assert result.log_append_time == NOW + 1
    assert header.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert header.max_timestamp == NOW + 1
    entry = next(iter(LogScanner(result.records)))
    assert entry.crc_valid
    assert result.records[61:] == GOOD[61:]  # records keep their own deltas


def test_topic_compression_type_recompresses_keeping_the_records() -> None:
    settings = StorageSettings(compression_type="gzip")
    out = _validate(GOOD, settings, next_offset=10)
    entry = next(iter(LogScanner(out)))
    assert entry.crc_valid and isinstance(entry.header, BatchHeader)
    assert entry.header.compression is Compression.GZIP
    before = decode_records(GOOD, next(iter(LogScanner(GOOD))))
    after = decode_records(out, entry)
    assert [(r.key, r.value, r.offset_delta) for r in after] == [
        (r.key, r.value, r.offset_delta) for r in before
    ]
    assert entry.header.base_offset == 10


def test_compressed_inner_offsets_out_of_order_are_rewritten() -> None:
    specs = [RecordSpec(b"k%d" % i, b"v", timestamp=NOW) for i in range(3)]
    odd = build_batch(
        specs,
        base_offset=0,
        compression=Compression.LZ4,
        offset_deltas=[0, 2, 1],
        last_offset_delta=2,
    )
    out = _validate(odd)
    entry = next(iter(LogScanner(out)))
    assert [r.offset_delta for r in decode_records(out, entry)] == [0, 1, 2]
    assert [r.key for r in decode_records(out, entry)] == [b"k0", b"k1", b"k2"]
