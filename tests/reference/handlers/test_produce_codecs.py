"""Compressed batches through the reference broker: refused as Kafka refuses them,
written (produce, topic recompression, cleaner) as Kafka's writers write them.

Evidence: fixtures/kafka-codecs (README.md there says how it was made):
``cases.json`` is each batch a real Kafka 4.0.0 answered on Produce (error code,
base offset, error message); the frame headers are those of Kafka's writers
(``kafka_frame_header``, held to Kafka's output in tests/formats/test_kafka_codecs.py),
and ``broker/`` shows Kafka's broker and cleaner writing exactly what
``compress`` writes for the same records.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lethe_formats.compression import compress, decompress, kafka_frame_header
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import BatchHeader, Compression
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.scan import LogScanner
from lethe_reference.broker import Broker
from partition_ops_support import new_broker, produce

CASES = json.loads((fixtures_root() / "kafka-codecs" / "cases.json").read_text())
CODECS = [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
_RECORDS_AT = 61


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    return new_broker(tmp_path)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_produce_answers_what_kafka_answered(broker: Broker, case: dict[str, object]) -> None:
    topic = f"frames-{case['name']}"
    broker.create_topic(topic, 1)
    answer = case["kafka_produce"]
    assert isinstance(answer, dict)
    got = produce(broker, topic, 0, bytes.fromhex(str(case["batch"])))
    assert (got.error_code, got.base_offset, got.error_message) == (
        answer["error_code"],
        answer["base_offset"],
        answer["error_message"],
    )
    log = broker.log(topic, 0)
    assert log is not None and log.log_end_offset == (3 if answer["error_code"] == 0 else 0)


def _batches(log_dir: Path, topic: str) -> list[tuple[Path, int, BatchHeader, bytes]]:
    found = []
    for segment in sorted((log_dir / f"{topic}-0").glob("*.log")):
        data = segment.read_bytes()
        for entry in LogScanner(data, file=str(segment)):
            header = entry.header
            assert isinstance(header, BatchHeader)
            end = entry.position + header.size_in_bytes
            found.append(
                (segment, entry.position, header, data[entry.position + _RECORDS_AT : end])
            )
    return found


def _assert_kafka_framed(batches: list[tuple[Path, int, BatchHeader, bytes]], codec: int) -> int:
    """Every batch has ``codec`` and is exactly what Kafka's writer makes of its records."""
    for segment, position, header, stream in batches:
        where = f"{segment}: byte {position}"
        assert header.attributes & 0x07 == codec, where
        assert stream.startswith(kafka_frame_header(codec)), where
        assert stream == compress(codec, decompress(codec, stream)), where
    return len(batches)


def _records(broker: Broker, count: int, round_: int) -> list[RecordSpec]:
    now = broker.clock.now_ms()
    return [
        RecordSpec(f"k-{i % 3}".encode(), f"round {round_} value {i} amber".encode(), timestamp=now)
        for i in range(count)
    ]


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.dump_name)
def test_produced_recompressed_and_cleaned_batches_carry_kafkas_frames(
    broker: Broker, tmp_path: Path, codec: Compression
) -> None:
    name = codec.dump_name
    compact = {"cleanup.policy": "compact", "compression.type": name}
    broker.create_topic("as-sent", 1, {"cleanup.policy": "compact"})
    broker.create_topic("recompressed", 1, compact)
    for round_ in range(3):
        records = _records(broker, 6, round_)
        sent = build_batch(records, base_offset=0, compression=codec)
        assert produce(broker, "as-sent", 0, sent).error_code == 0
        plain = build_batch(records, base_offset=0)
        assert produce(broker, "recompressed", 0, plain).error_code == 0
        for topic in ("as-sent", "recompressed"):
            log = broker.log(topic, 0)
            assert log is not None
            log.roll()
    assert _assert_kafka_framed(_batches(tmp_path, "as-sent"), codec) == 3
    assert _assert_kafka_framed(_batches(tmp_path, "recompressed"), codec) == 3
    assert broker.cleaner.clean_now() == 2
    for topic in ("as-sent", "recompressed"):
        cleaned = _batches(tmp_path, topic)
        kept = sum(header.records_count for _, _, header, _ in cleaned)
        assert kept == 3  # the latest k-0, k-1, k-2 of round 2; earlier duplicates removed
        assert _assert_kafka_framed(cleaned, codec) >= 1
