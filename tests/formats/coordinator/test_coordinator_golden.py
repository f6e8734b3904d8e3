"""Every record Kafka 4.0 wrote to the golden __consumer_offsets partitions decodes to
what Kafka's own ``--offsets-decoder`` printed for it, and re-encodes to its bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.coordinator import (
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    decode_record,
    encode_record,
)
from lethe_formats.coordinator.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from lethe_formats.model import Compression, RecordBatch
from lethe_formats.records.scan import read_log
from offsets_decoder_dump import Decoded, assert_matches, decoded_records

PARTITIONS = (14, 17, 41)


@pytest.fixture(scope="module")
def case_dir(golden_root: Path) -> Path:
    return golden_root / "consumer-offsets"


@pytest.fixture(scope="module")
def kafka_decoded(case_dir: Path) -> dict[str, Decoded]:
    return decoded_records(case_dir / "dump.txt")


def _log_name(partition: int) -> str:
    return f"__consumer_offsets-{partition}/00000000000000000000.log"


def _batches(case_dir: Path, partition: int) -> list[RecordBatch]:
    batches = list(read_log((case_dir / _log_name(partition)).read_bytes()))
    assert all(isinstance(batch, RecordBatch) for batch in batches)
    return [batch for batch in batches if isinstance(batch, RecordBatch)]


def test_dump_parser_finds_every_decoded_record(kafka_decoded: dict[str, Decoded]) -> None:
    # Counts from dump.txt: 13 records in -14, 7 in -17, 3 in -41.
    counts = {name: len(records) for name, records in kafka_decoded.items()}
    assert counts == {_log_name(14): 13, _log_name(17): 7, _log_name(41): 3}


@pytest.mark.parametrize("partition", PARTITIONS)
def test_every_record_decodes_as_kafka_decoded_it(
    case_dir: Path, kafka_decoded: dict[str, Decoded], partition: int
) -> None:
    expected = kafka_decoded[_log_name(partition)]
    seen = []
    for batch in _batches(case_dir, partition):
        for record in batch.records:
            offset = batch.header.base_offset + record.offset_delta
            key_json, value_json = expected[offset]
            decoded = decode_record(record)
            assert decoded.key.version == int(key_json["type"])
            assert_matches(decoded.key, key_json["data"], f"offset {offset} key")
            if value_json is None:
                assert decoded.is_tombstone
            else:
                assert decoded.value is not None
                assert decoded.value.version == int(value_json["version"])
                assert_matches(decoded.value, value_json["data"], f"offset {offset} value")
            seen.append(offset)
    assert seen == sorted(expected)


@pytest.mark.parametrize("partition", PARTITIONS)
def test_uncompressed_records_reencode_to_kafkas_bytes(case_dir: Path, partition: int) -> None:
    for batch in _batches(case_dir, partition):
        assert batch.header.compression is Compression.NONE
        for record in batch.records:
            assert encode_record(decode_record(record)) == (record.key, record.value)


def test_librdkafka_commit_metadata_keeps_its_trailing_nul(case_dir: Path) -> None:
    # README: confluent-kafka sends metadata with a trailing NUL; kafka-python does not.
    billing = [decode_record(r) for b in _batches(case_dir, 17) for r in b.records]
    audit = [decode_record(r) for b in _batches(case_dir, 41) for r in b.records]
    commits = {
        (rec.key.group, rec.key.partition): rec.value.metadata
        for rec in billing + audit
        if isinstance(rec.key, OffsetCommitKey) and isinstance(rec.value, OffsetCommitValue)
    }
    assert commits[("golden-billing", 1)] == "billing-p1-again\x00"  # the overwrite wins
    assert commits[("golden-audit", 0)] == "audit-p0"
    assert commits[("golden-audit", 2)] == ""


def test_classic_group_member_protocol_bytes_reencode(case_dir: Path) -> None:
    values = [decode_record(r).value for b in _batches(case_dir, 17) for r in b.records]
    groups = [v for v in values if isinstance(v, GroupMetadataValue) and v.members]
    (group,) = groups
    (member,) = group.members
    subscription = decode_subscription(member.subscription)
    assignment = decode_assignment(member.assignment)
    assert subscription.topics == ("golden-orders",)
    assert [(tp.topic, tp.partitions) for tp in assignment.assigned_partitions] == [
        ("golden-orders", (0, 1, 2))
    ]
    assert encode_subscription(subscription) == member.subscription
    assert encode_assignment(assignment) == member.assignment
