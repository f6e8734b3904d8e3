"""The record attributes byte on the produce path, with and without KIP-87's flag.

Kafka (kafka-facts 3.2; ``DefaultRecord.writeTo``, ``LogValidator``) reads a
record's attributes byte and ignores it: a batch assigned offsets in place
keeps the bytes as sent, a batch the validator rebuilds (``compression.type``
other than the batch's codec, or a compressed batch with inner offset deltas
other than 0..n-1) gets every record attributes byte written as 0. The catalog
(KIP87-BIT-4) keeps exactly that while ``tombstone.flag.enable`` is false;
with it true bit 0 survives every rewrite (KIP87-BIT-5, bit 0 only: the other
bits stay Kafka's). Key-less records on compacted topics are INVALID_RECORD (87)
flagged or not (KIP87-PRD-3, kafka-facts 3.1).
"""

from __future__ import annotations

import dataclasses

import pytest
from lethe_formats.model import Compression, RecordBatch
from lethe_formats.records.batch import encode_batch
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.scan import read_log
from lethe_reference.storage import errors
from lethe_reference.storage.settings import StorageSettings
from lethe_reference.storage.validator import validate_and_assign_offsets

NOW = 1_700_000_000_000
OFF = StorageSettings()
ON = StorageSettings(tombstone_flag_enable=True)
SENT = (0x01, 0xFF, 0x00, 0x02)  # flagged, every bit, plain, an unused bit alone


def _specs(*, keys: bool = True) -> list[RecordSpec]:
    return [
        RecordSpec(f"k{i}".encode() if keys else None, b"v", (), NOW - 10 + i, attributes=a)
        for i, a in enumerate(SENT)
    ]


def _append(data: bytes, settings: StorageSettings) -> RecordBatch:
    result = validate_and_assign_offsets(
        data,
        next_offset=40,
        leader_epoch=3,
        now_ms=NOW,
        settings=settings,
        target_compression=settings.compression_type,
        topic_partition="t-0",
    )
    (batch,) = list(read_log(result.records))
    assert isinstance(batch, RecordBatch)
    assert batch.header.base_offset == 40
    return batch


def _bytes_of(batch: RecordBatch) -> list[int]:
    return [r.attributes & 0xFF for r in batch.records]


def _gapped(compression: Compression) -> bytes:
    """A compressed batch whose inner offset deltas are 0, 2, 4, 6 (rebuilt by Kafka)."""
    batch = next(iter(read_log(build_batch(_specs(), base_offset=0, compression=compression))))
    assert isinstance(batch, RecordBatch)
    records = tuple(dataclasses.replace(r, offset_delta=2 * i) for i, r in enumerate(batch.records))
    header = dataclasses.replace(batch.header, last_offset_delta=3)
    return encode_batch(RecordBatch(header, records))


# --- in place: the bytes as sent, flag or not ----------------------------------------------


@pytest.mark.parametrize("settings", [OFF, ON], ids=["flag-off", "flag-on"])
@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP], ids=["none", "gzip"])
def test_offsets_assigned_in_place_keep_every_record_attributes_byte(
    settings: StorageSettings, codec: Compression
) -> None:
    batch = _append(build_batch(_specs(), base_offset=0, compression=codec), settings)
    assert _bytes_of(batch) == list(SENT)


# --- rebuilt: 0 as in Kafka, bit 0 kept with the flag ---------------------------------------


@pytest.mark.parametrize("target", ["gzip", "zstd", "uncompressed"])
def test_recompression_writes_zero_attributes_when_the_flag_is_off(target: str) -> None:
    source = Compression.NONE if target != "uncompressed" else Compression.LZ4
    data = build_batch(_specs(), base_offset=0, compression=source)
    batch = _append(data, dataclasses.replace(OFF, compression_type=target))
    assert _bytes_of(batch) == [0, 0, 0, 0]


@pytest.mark.parametrize("target", ["gzip", "zstd", "uncompressed"])
def test_recompression_keeps_bit_0_only_when_the_flag_is_on(target: str) -> None:
    source = Compression.NONE if target != "uncompressed" else Compression.LZ4
    data = build_batch(_specs(), base_offset=0, compression=source)
    batch = _append(data, dataclasses.replace(ON, compression_type=target))
    assert _bytes_of(batch) == [0x01, 0x01, 0x00, 0x00]
    assert [r.has_kip87_tombstone_flag for r in batch.records] == [True, True, False, False]


@pytest.mark.parametrize(
    ("settings", "expected"), [(OFF, [0, 0, 0, 0]), (ON, [1, 1, 0, 0])], ids=["off", "on"]
)
def test_offset_reassignment_of_a_gapped_compressed_batch(
    settings: StorageSettings, expected: list[int]
) -> None:
    batch = _append(_gapped(Compression.GZIP), settings)
    assert [r.offset_delta for r in batch.records] == [0, 1, 2, 3]  # proof it was rebuilt
    assert _bytes_of(batch) == expected


def test_a_flagged_record_keeps_its_value_and_the_batch_attributes_stay_kafkas() -> None:
    """KIP87-PRD-5 / BIT-2: no conversion to a null value; no batch bit is used."""
    spec = RecordSpec(b"k", b"deleted by me", (), NOW, kip87_tombstone=True)
    for settings in (OFF, ON, dataclasses.replace(ON, compression_type="zstd")):
        batch = _append(build_batch([spec], base_offset=0), settings)
        assert batch.records[0].value == b"deleted by me"
        assert batch.records[0].has_kip87_tombstone_flag
        assert not batch.header.is_control
        assert not batch.header.has_delete_horizon


# --- keys on compacted topics --------------------------------------------------------------


@pytest.mark.parametrize("flag", [False, True])
@pytest.mark.parametrize("attributes", [0, 1])
def test_key_less_records_on_compacted_topics_are_invalid_record(
    flag: bool, attributes: int
) -> None:
    settings = StorageSettings(cleanup_policy=("compact",), tombstone_flag_enable=flag)
    spec = RecordSpec(None, b"v", (), NOW, attributes=attributes)
    with pytest.raises(errors.RecordValidationError) as caught:
        _append(build_batch([spec], base_offset=0), settings)
    assert caught.value.error_code == 87
    assert "Compacted topic cannot accept message without key" in caught.value.message


def test_a_null_value_without_the_flag_is_accepted_on_a_flag_enabled_compacted_topic() -> None:
    """KIP87-CLN-2: stock clients' tombstones stay valid."""
    settings = StorageSettings(cleanup_policy=("compact",), tombstone_flag_enable=True)
    batch = _append(build_batch([RecordSpec(b"k", None, (), NOW)], base_offset=0), settings)
    assert batch.records[0].value is None
    assert batch.records[0].attributes == 0
