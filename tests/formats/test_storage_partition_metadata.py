"""partition.metadata (PartitionMetadataReadBuffer rules) and Kafka's base64 Uuid."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lethe_formats.errors import CheckpointError
from lethe_formats.storage.java_text import CheckpointReadError
from lethe_formats.storage.kafka_uuid import ZERO_UUID, KafkaUuid, KafkaUuidError
from lethe_formats.storage.partition_metadata import (
    PartitionMetadata,
    format_partition_metadata,
    read_partition_metadata,
    write_partition_metadata,
)

TOPIC_ID = "IdvB5LqtQrSQL2tqHWQmVg"  # golden-delrec, from case.json
F = "golden-delrec-0/partition.metadata"


def error_for(text: str) -> CheckpointReadError:
    with pytest.raises(CheckpointReadError) as info:
        read_partition_metadata(text, file=F)
    assert isinstance(info.value, CheckpointError)
    assert info.value.kafka_exception == "IOException" and info.value.marks_dir_offline
    return info.value


def test_encode_has_two_lines_and_no_trailing_newline() -> None:
    assert format_partition_metadata(TOPIC_ID) == f"version: 0\ntopic_id: {TOPIC_ID}"


def test_topic_id_is_available_as_base64_text_and_as_sixteen_bytes() -> None:
    metadata = read_partition_metadata(f"version: 0\ntopic_id: {TOPIC_ID}")
    assert str(metadata.topic_id) == TOPIC_ID
    assert metadata.topic_id_bytes == bytes.fromhex("21dbc1e4baad42b4902f6b6a1d642656")
    assert metadata.encode() == f"version: 0\ntopic_id: {TOPIC_ID}"


def test_separator_is_colon_then_any_whitespace_and_extra_lines_are_ignored() -> None:
    text = f"version:\t 0\r\ntopic_id:  {TOPIC_ID}\nwhatever follows\n"
    assert read_partition_metadata(text) == PartitionMetadata(0, KafkaUuid.from_string(TOPIC_ID))


def test_a_higher_version_is_accepted_for_downgrades() -> None:
    assert read_partition_metadata(f"version: 3\ntopic_id: {TOPIC_ID}").version == 3


def test_a_negative_version_is_unrecognized() -> None:
    error = error_for(f"version: -1\ntopic_id: {TOPIC_ID}")
    assert error.message == f"Unrecognized version of partition metadata file ({F}): -1"
    assert error.line == 1


@pytest.mark.parametrize(
    ("text", "line", "shown"),
    [
        ("", 1, "null"),
        ("version: 0", 2, "null"),
        ("version:0\ntopic_id: x", 1, "version:0"),
        ("Version: 0\ntopic_id: x", 1, "Version: 0"),
        ("version: zero\ntopic_id: x", 1, "version: zero"),
        (f"version: 0\ntopic: {TOPIC_ID}", 2, f"topic: {TOPIC_ID}"),
        ("version: 0\ntopic_id: not-a-uuid", 2, "topic_id: not-a-uuid"),
        ("version: 0\ntopic_id: AAAA", 2, "topic_id: AAAA"),
    ],
)
def test_malformed_lines_use_kafkas_message(text: str, line: int, shown: str) -> None:
    error = error_for(text)
    assert error.message == f"Malformed line in partition metadata file [{F}]: {shown}"
    assert error.line == line


def test_the_zero_uuid_is_an_invalid_topic_id() -> None:
    error = error_for(f"version: 0\ntopic_id: {ZERO_UUID}")
    assert error.message == f"Invalid topic ID in partition metadata file ({F})"
    assert str(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"


def test_write_is_atomic_and_byte_exact(tmp_path: Path) -> None:
    path = tmp_path / "partition.metadata"
    write_partition_metadata(path, TOPIC_ID)
    assert path.read_bytes() == f"version: 0\ntopic_id: {TOPIC_ID}".encode()
    assert [p.name for p in tmp_path.iterdir()] == ["partition.metadata"]


def test_uuid_from_string_rejects_what_javas_decoder_rejects() -> None:
    with pytest.raises(KafkaUuidError) as info:
        KafkaUuid.from_string("A" * 25)
    assert str(info.value) == (
        f"Input string with prefix `{'A' * 24}` is too long to be decoded as a base64 UUID"
    )
    with pytest.raises(KafkaUuidError) as info:
        KafkaUuid.from_string("AAAA")
    assert str(info.value) == (
        "Input string `AAAA` decoded as 3 bytes, which is not equal to the expected 16 bytes "
        "of a base64-encoded UUID"
    )
    for bad in ("IdvB5LqtQrSQL2tqHWQmV+", "IdvB5LqtQrSQL2tqHWQmVg=", "IdvB5LqtQrSQL2tqHWQmVgA"):
        with pytest.raises(KafkaUuidError):
            KafkaUuid.from_string(bad)


def test_uuid_padding_is_optional_when_correct() -> None:
    assert KafkaUuid.from_string(TOPIC_ID + "==") == KafkaUuid.from_string(TOPIC_ID)


def test_uuid_bits_are_two_signed_longs() -> None:
    uuid = KafkaUuid(bytes.fromhex("ffffffffffffffff0000000000000001"))
    assert (uuid.most_significant_bits, uuid.least_significant_bits) == (-1, 1)


@given(st.binary(min_size=16, max_size=16))
def test_uuid_text_round_trips_in_22_url_safe_characters(raw: bytes) -> None:
    text = str(KafkaUuid(raw))
    assert len(text) == 22 and "=" not in text and "+" not in text and "/" not in text
    assert KafkaUuid.from_string(text).raw == raw
