"""KIP-107 through confluent-kafka: the golden ``delete-records`` case replayed.

The same records, partitions and timestamps as Kafka 4.0's golden case, from
one producer (acks=all) flushed per round, then the same DeleteRecords calls;
every offset, timestamp, leader epoch and low watermark checked is the one
Kafka returned (fixtures/golden/delete-records/case.json), including the edge
cases: below and at the log start offset, above and at the high watermark.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient, OffsetSpec
from confluent_support import (
    admin_client,
    create,
    delete_records,
    list_offsets,
    produce_golden_rounds,
)
from interop_support import CLIENT_TIMEOUT_S, Rec, delete_records_case, golden_produce_rounds
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition

#: The golden records carry 2026-11-21 timestamps; on the session broker's system clock
#: Kafka's seven-day retention would delete them from 2026-11-28 on, so the topic keeps
#: them whatever the date (fixtures/scenarios/README.md, *Time*).
UNDATED = {"retention.ms": "-1", "message.timestamp.after.max.ms": "9223372036854775807"}


@pytest.fixture
def admin(bootstrap: str) -> Iterator[AdminClient]:
    yield admin_client(bootstrap)


@pytest.fixture(params=[False, True], ids=["plain", "idempotent"])
def idempotent(request: pytest.FixtureRequest) -> bool:
    """Whether the golden rounds are produced idempotently (the golden producer was)."""
    return bool(request.param)


def test_golden_kip107_case_gives_kafkas_offsets_and_low_watermarks(
    admin: AdminClient, bootstrap: str, topic: str, idempotent: bool
) -> None:
    case = delete_records_case()
    create(admin, topic, 3, case["topics"][0]["configs_at_creation"] | UNDATED)
    reports = produce_golden_rounds(bootstrap, topic, idempotent=idempotent)
    expected_reports = [
        (r.partition, r.offset, r.timestamp) for rnd in golden_produce_rounds() for r in rnd
    ]
    assert sorted(reports) == sorted(expected_reports)

    before = next(s for s in case["steps"] if s["op"] == "list_offsets")["results"]
    for spec, key in (
        (OffsetSpec.earliest(), "EARLIEST"),
        (OffsetSpec.latest(), "LATEST"),
        (OffsetSpec.max_timestamp(), "MAX_TIMESTAMP"),
    ):
        got = list_offsets(admin, topic, range(3), spec)
        assert got == {
            e["partition"]: (e["offset"], e["timestamp"], e["leader_epoch"]) for e in before[key]
        }

    step = next(s for s in case["steps"] if s["op"] == "delete_records")
    low_watermarks = delete_records(admin, topic, dict(step["request"]))
    assert low_watermarks == {r["partition"]: r["low_watermark"] for r in step["results"]}
    assert low_watermarks == {0: 19, 1: 24, 2: 30}

    after = case["edge_cases_before_capture"][0]["results"]
    for spec, key in ((OffsetSpec.earliest(), "EARLIEST"), (OffsetSpec.latest(), "LATEST")):
        got = list_offsets(admin, topic, range(3), spec)
        assert got == {
            e["partition"]: (e["offset"], e["timestamp"], e["leader_epoch"]) for e in after[key]
        }
    assert read_from_log_start(bootstrap, topic) == golden_read_back()


def golden_read_back() -> list[Rec]:
    """What kafka-python read from the log start offsets after Kafka's deletes (no headers)."""
    records = delete_records_case()["records_read_back"]["records"]
    assert not any(r["headers"] for r in records)
    return [
        Rec(r["partition"], r["offset"], r["key"].encode(), r["value"].encode(), r["timestamp"])
        for r in records
    ]


def read_from_log_start(bootstrap: str, topic: str) -> list[Rec]:
    """Every record from the log start offsets, as the golden read-back did (assign, no group)."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        request_timeout_ms=int(CLIENT_TIMEOUT_S * 1000),
        fetch_max_wait_ms=100,
    )
    partitions = [KafkaTopicPartition(topic, p) for p in range(3)]
    try:
        consumer.assign(partitions)
        consumer.seek_to_beginning(*partitions)
        ends = consumer.end_offsets(partitions, timeout_ms=int(CLIENT_TIMEOUT_S * 1000))
        wanted = sum(ends.values()) - sum(consumer.position(tp) for tp in partitions)
        out: list[Rec] = []
        deadline = time.monotonic() + CLIENT_TIMEOUT_S
        while len(out) < wanted:
            assert time.monotonic() < deadline, f"read {len(out)} of {wanted} records in time"
            for batch in consumer.poll(timeout_ms=500).values():
                out.extend(
                    Rec(m.partition, m.offset, m.key, m.value, m.timestamp, tuple(m.headers))
                    for m in batch
                )
    finally:
        consumer.close()
    return sorted(out, key=lambda r: (r.partition, r.offset))


def test_delete_records_edge_cases_answer_as_kafka(
    admin: AdminClient, bootstrap: str, topic: str, idempotent: bool
) -> None:
    """Below / at the log start offset, above and at the high watermark (case.json edge cases)."""
    case = delete_records_case()
    create(admin, topic, 3, case["topics"][0]["configs_at_creation"] | UNDATED)
    produce_golden_rounds(bootstrap, topic, idempotent=idempotent)
    assert delete_records(admin, topic, {0: 19, 1: 24, 2: -1}) == {0: 19, 1: 24, 2: 30}
    edge = {
        e["edge_case"]: e
        for e in case["edge_cases_before_capture"] + case["edge_cases_after_capture"]
        if e["op"] == "delete_records"
    }
    below = edge["below_log_start_offset"]
    assert delete_records(admin, topic, dict(below["request"])) == {
        0: below["results"][0]["low_watermark"]
    }
    equal = edge["equal_to_log_start_offset"]
    assert delete_records(admin, topic, dict(equal["request"])) == {
        1: equal["results"][0]["low_watermark"]
    }
    above = edge["above_high_watermark"]
    assert delete_records(admin, topic, dict(above["request"])) == {
        0: above["results"][0]["error"]["code"]
    }
    assert above["results"][0]["error"]["code"] == KafkaError.OFFSET_OUT_OF_RANGE
    at_hw = edge["equal_to_high_watermark"]
    assert delete_records(admin, topic, dict(at_hw["request"])) == {
        1: at_hw["results"][0]["low_watermark"]
    }
