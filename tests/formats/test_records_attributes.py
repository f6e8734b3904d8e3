"""Attribute bits: named fields at Kafka's bit positions, reserved bits kept, KIP-87 bit."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.model import (
    CONTROL_BIT,
    DELETE_HORIZON_BIT,
    KIP87_TOMBSTONE_BIT,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    Compression,
    RecordBatch,
    TimestampType,
)
from lethe_formats.records import decode_log
from lethe_formats.records.attributes import (
    BatchAttributes,
    LegacyAttributes,
    RecordAttributes,
    batch_attributes,
    legacy_attributes,
)

# kafka-facts 3.1: bits 0-2 codec, 3 LogAppendTime (0x08), 4 transactional (0x10),
# 5 control (0x20), 6 delete horizon (0x40).
BITS = [
    ("log_append_time", 0x08),
    ("transactional", 0x10),
    ("control", 0x20),
    ("delete_horizon", 0x40),
]


@pytest.mark.parametrize(("name", "mask"), BITS)
def test_each_batch_flag_is_its_kafka_bit(name: str, mask: int) -> None:
    assert BatchAttributes.build({name: True}) == mask.to_bytes(2, "big")
    assert BatchAttributes.parse(mask.to_bytes(2, "big"))[name] is True


def test_model_constants_agree_with_the_named_bits() -> None:
    flags = dict(BITS)
    assert flags == {
        "log_append_time": TIMESTAMP_TYPE_BIT,
        "transactional": TRANSACTIONAL_BIT,
        "control": CONTROL_BIT,
        "delete_horizon": DELETE_HORIZON_BIT,
    }


@pytest.mark.parametrize("codec", list(Compression))
def test_compression_is_the_low_three_bits(codec: Compression) -> None:
    parsed = BatchAttributes.parse(bytes([0x00, 0x38 | codec]))
    assert parsed.compression == codec
    assert (parsed.log_append_time, parsed.transactional, parsed.control) == (True, True, True)


def test_reserved_bits_survive_a_round_trip() -> None:
    raw = bytes.fromhex("8183")
    assert BatchAttributes.build(BatchAttributes.parse(raw)) == raw


def test_batch_attributes_helper_combines_the_bits() -> None:
    value = batch_attributes(
        compression=Compression.ZSTD,
        timestamp_type=TimestampType.LOG_APPEND_TIME,
        transactional=True,
        control=True,
        delete_horizon=True,
    )
    assert value == 0x04 | 0x08 | 0x10 | 0x20 | 0x40


def test_legacy_attributes_carry_codec_and_timestamp_type() -> None:
    assert legacy_attributes(compression=Compression.LZ4) == 0x03
    assert legacy_attributes(timestamp_type=TimestampType.LOG_APPEND_TIME) == 0x08
    assert LegacyAttributes.parse(b"\x0a").compression == 2


def test_kip87_tombstone_is_bit_0_of_the_record_attributes() -> None:
    assert KIP87_TOMBSTONE_BIT == 0x01
    assert RecordAttributes.build({"kip87_tombstone": True}) == b"\x01"
    assert RecordAttributes.parse(b"\x01").kip87_tombstone is True
    assert RecordAttributes.parse(b"\x00").kip87_tombstone is False


def test_kafka_writes_record_attributes_as_zero(golden_root: Path) -> None:
    seen = 0
    for segment in golden_root.rglob("0*.log"):
        for entry in decode_log(segment.read_bytes()):
            assert isinstance(entry, RecordBatch)
            for record in entry.records:
                assert record.attributes == 0
                seen += 1
    assert seen > 100
