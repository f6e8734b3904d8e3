"""Control records: Kafka's marker batches, key/value rules, exact encoder bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.errors import InvalidRecordError
from lethe_formats.model import ControlType, Record, RecordBatch
from lethe_formats.records import decode_log
from lethe_formats.records.builder import build_end_txn_marker_batch
from lethe_formats.records.control import (
    control_type,
    decode_control_key,
    decode_end_txn_marker,
    encode_control_key,
    encode_end_txn_marker_value,
)

# From transactions/pass0/dump.txt: the marker batches Kafka wrote.
MARKERS = {
    "00000000000000000005.log": ControlType.COMMIT,
    "00000000000000000009.log": ControlType.ABORT,
    "00000000000000000014.log": ControlType.COMMIT,
}


def _record(key: bytes | None, value: bytes | None = b"\x00\x00\x00\x00\x00\x07") -> Record:
    return Record(attributes=0, timestamp_delta=0, offset_delta=0, key=key, value=value)


@pytest.mark.parametrize(("name", "kind"), MARKERS.items())
def test_kafka_marker_batches_decode(txn_log_dir: Path, name: str, kind: ControlType) -> None:
    (batch,) = decode_log((txn_log_dir / name).read_bytes())
    assert isinstance(batch, RecordBatch)
    assert batch.header.is_control and batch.header.is_transactional
    (record,) = batch.records
    assert control_type(record) is kind
    marker = decode_end_txn_marker(record)
    assert (marker.control_type, marker.coordinator_epoch) == (kind, 0)
    assert (marker.key_version, marker.value_version) == (0, 0)


@pytest.mark.parametrize(("name", "kind"), MARKERS.items())
def test_marker_builder_writes_kafkas_bytes(
    txn_log_dir: Path, name: str, kind: ControlType
) -> None:
    data = (txn_log_dir / name).read_bytes()
    (batch,) = decode_log(data)
    assert isinstance(batch, RecordBatch)
    h = batch.header
    built = build_end_txn_marker_batch(
        base_offset=h.base_offset,
        producer_id=h.producer_id,
        producer_epoch=h.producer_epoch,
        control_type=kind,
        coordinator_epoch=0,
        timestamp=h.base_timestamp,
        partition_leader_epoch=h.partition_leader_epoch,
    )
    assert built == data


def test_encoders_write_version_0_big_endian() -> None:
    assert encode_control_key(ControlType.COMMIT) == b"\x00\x00\x00\x01"
    assert encode_control_key(ControlType.KRAFT_VOTERS) == b"\x00\x00\x00\x06"
    assert encode_end_txn_marker_value(258) == b"\x00\x00\x00\x00\x01\x02"


def test_key_shorter_than_4_bytes_is_invalid() -> None:
    with pytest.raises(InvalidRecordError, match="at least 4 bytes"):
        decode_control_key(b"\x00\x00\x00")


def test_null_key_is_invalid() -> None:
    with pytest.raises(InvalidRecordError):
        control_type(_record(None))


def test_negative_key_version_is_invalid() -> None:
    with pytest.raises(InvalidRecordError, match="Invalid version"):
        decode_control_key(b"\xff\xff\x00\x01")


def test_newer_key_version_is_parsed_as_version_0() -> None:
    assert decode_control_key(b"\x00\x05\x00\x00\xaa\xbb") == (5, ControlType.ABORT)


def test_unknown_type_id_is_kept_as_an_int() -> None:
    assert decode_control_key(b"\x00\x00\x00\x63") == (0, 99)


def test_marker_value_shorter_than_6_bytes_is_invalid() -> None:
    with pytest.raises(InvalidRecordError, match="at least 6 bytes"):
        decode_end_txn_marker(_record(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x07"))


def test_negative_marker_value_version_is_invalid() -> None:
    with pytest.raises(InvalidRecordError, match="Invalid version"):
        decode_end_txn_marker(_record(b"\x00\x00\x00\x01", b"\x80\x00\x00\x00\x00\x07"))


def test_newer_marker_value_version_is_parsed_as_version_0() -> None:
    marker = decode_end_txn_marker(_record(b"\x00\x00\x00\x00", b"\x00\x03\x00\x00\x00\x07"))
    assert (marker.control_type, marker.value_version, marker.coordinator_epoch) == (
        ControlType.ABORT,
        3,
        7,
    )


def test_non_marker_control_type_is_not_an_end_txn_marker() -> None:
    with pytest.raises(InvalidRecordError):
        decode_end_txn_marker(_record(encode_control_key(ControlType.LEADER_CHANGE)))
