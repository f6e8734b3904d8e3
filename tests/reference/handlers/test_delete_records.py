"""DeleteRecords (KIP-107) through the handler, replaying the golden delete-records case.

Expected values: fixtures/golden/delete-records/case.json (what Kafka 4.0
returned) and kafka-facts.md 1.2-1.3.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteRecordsTopic,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.handlers.partition_ops.delete import (
    DelayedDeleteRecords,
    PartitionDelete,
    Results,
)
from lethe_reference.metadata import CONSUMER_OFFSETS
from partition_ops_support import (
    DELREC_TOPIC,
    call,
    case_json,
    ctx,
    delete_records,
    delrec_broker,
    produce,
)

CASE = case_json("delete-records")


def _golden_step(op: str, edge_case: str | None = None) -> dict[str, object]:
    steps = CASE["steps"] + CASE["edge_cases_before_capture"] + CASE["edge_cases_after_capture"]
    for step in steps:
        if step["op"] == op and (
            edge_case is None or step.get("edge_case", "").startswith(edge_case)
        ):
            return dict(step)
    raise LookupError((op, edge_case))


def _raw(edge_case: str) -> list[dict[str, int]]:
    """The partitions of a raw kafka-python DeleteRecords response in case.json."""
    step = _golden_step("delete_records_raw", edge_case)
    result = step["result"]
    assert isinstance(result, dict)
    return [p for t in result["response"]["topics"] for p in t["partitions"]]


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    return delrec_broker(tmp_path)


@pytest.fixture
def deleted(broker: Broker) -> Broker:
    """After the golden request: p0 to 19, p1 to 24, p2 to -1."""
    assert delete_records(broker, DELREC_TOPIC, {0: 19, 1: 24, 2: -1}) == {
        0: (19, 0),
        1: (24, 0),
        2: (30, 0),
    }
    return broker


def test_golden_request_returns_kafkas_low_watermarks(broker: Broker) -> None:
    step = _golden_step("delete_records")
    request = {p: o for p, o in step["request"]}  # type: ignore[attr-defined]
    expected = {r["partition"]: r["low_watermark"] for r in step["results"]}  # type: ignore[attr-defined]
    result = delete_records(broker, DELREC_TOPIC, request)
    assert {p: lw for p, (lw, _) in result.items()} == expected == {0: 19, 1: 24, 2: 30}
    assert all(code == ErrorCode.NONE for _, code in result.values())
    starts = {p: broker.log(DELREC_TOPIC, p).log_start_offset for p in range(3)}  # type: ignore[union-attr]
    assert starts == {int(k): v for k, v in CASE["log_start_offsets_after_delete"].items()}


def test_delete_records_deletes_no_files_retention_does(deleted: Broker) -> None:
    segments = {p: deleted.log(DELREC_TOPIC, p).segments.base_offsets for p in range(3)}  # type: ignore[union-attr]
    assert segments == {0: [0, 8, 16, 24, 32], 1: [0, 8, 16, 24, 32], 2: [0, 8, 16, 24]}
    deleted.log_manager.cleanup_logs()
    after = _golden_step("wait")["segment_base_offsets_on_disk"]
    segments = {p: deleted.log(DELREC_TOPIC, p).segments.base_offsets for p in range(3)}  # type: ignore[union-attr]
    assert segments == {int(k): v for k, v in after.items()}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("edge_case", "partition", "offset"),
    [
        ("below_log_start_offset", 0, 17),
        ("equal_to_log_start_offset", 1, 24),
        ("above_high_watermark", 0, 45),
    ],
)
def test_edge_cases_answer_as_kafka(
    deleted: Broker, edge_case: str, partition: int, offset: int
) -> None:
    (expected,) = _raw(edge_case)
    assert delete_records(deleted, DELREC_TOPIC, {partition: offset}) == {
        partition: (expected["low_watermark"], expected["error_code"])
    }


def test_equal_to_high_watermark_moves_the_log_start_offset_to_it(deleted: Broker) -> None:
    assert delete_records(deleted, DELREC_TOPIC, {1: 36}) == {1: (36, 0)}
    (expected,) = _raw("equal_to_high_watermark")
    assert delete_records(deleted, DELREC_TOPIC, {2: 30}) == {
        2: (expected["low_watermark"], expected["error_code"])
    }
    assert deleted.log(DELREC_TOPIC, 1).log_start_offset == 36  # type: ignore[union-attr]


def test_negative_offset_other_than_minus_one_is_out_of_range(broker: Broker) -> None:
    assert delete_records(broker, DELREC_TOPIC, {0: -2}) == {0: (-1, ErrorCode.OFFSET_OUT_OF_RANGE)}
    assert broker.log(DELREC_TOPIC, 0).log_start_offset == 0  # type: ignore[union-attr]


def test_compact_topic_is_a_policy_violation(broker: Broker) -> None:
    broker.create_topic("golden-delrec-compacted", 1, {"cleanup.policy": "compact"})
    now = broker.clock.now_ms()
    specs = [
        RecordSpec(k.encode(), v.encode(), timestamp=now)
        for k, v in (("k1", "v1"), ("k2", "v2"), ("k1", "v3"))
    ]
    assert (
        produce(broker, "golden-delrec-compacted", 0, build_batch(specs, base_offset=0)).error_code
        == 0
    )
    (expected,) = _raw("cleanup.policy=compact")
    assert delete_records(broker, "golden-delrec-compacted", {0: 1}) == {
        0: (expected["low_watermark"], expected["error_code"])
    }
    assert expected["error_code"] == ErrorCode.POLICY_VIOLATION


def test_compact_delete_topic_may_delete(broker: Broker) -> None:
    broker.create_topic("both", 1, {"cleanup.policy": "compact,delete"})
    batch = build_batch([RecordSpec(b"k", b"v", timestamp=broker.clock.now_ms())], base_offset=0)
    produce(broker, "both", 0, batch)
    assert delete_records(broker, "both", {0: 1}) == {0: (1, 0)}


def test_internal_topic_is_invalid(broker: Broker) -> None:
    broker.create_topic(CONSUMER_OFFSETS, 1)
    (expected,) = _raw("__consumer_offsets")
    assert delete_records(broker, CONSUMER_OFFSETS, {0: 0}) == {
        0: (expected["low_watermark"], expected["error_code"])
    }
    assert expected["error_code"] == ErrorCode.INVALID_TOPIC_EXCEPTION


@pytest.mark.parametrize(
    ("edge_case", "topic", "partition"),
    [
        ("non-existent partition", DELREC_TOPIC, 7),
        ("non-existent topic", "golden-delrec-does-not-exist", 0),
    ],
)
def test_unknown_partition_or_topic(
    broker: Broker, edge_case: str, topic: str, partition: int
) -> None:
    (expected,) = _raw(edge_case)
    assert delete_records(broker, topic, {partition: 1}) == {
        partition: (expected["low_watermark"], expected["error_code"])
    }
    assert expected["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


@pytest.mark.parametrize("version", [0, 1, 2])
def test_every_version_answers_alike(broker: Broker, version: int) -> None:
    assert delete_records(broker, DELREC_TOPIC, {0: 19, 2: -1}, version=version) == {
        0: (19, 0),
        2: (30, 0),
    }


def test_known_partitions_come_before_unknown_ones_and_duplicates_answer_once(
    broker: Broker,
) -> None:
    request = DeleteRecordsRequest(
        topics=(
            DeleteRecordsTopic("nope", (DeleteRecordsPartition(0, 1),)),
            DeleteRecordsTopic(
                DELREC_TOPIC, (DeleteRecordsPartition(0, 5), DeleteRecordsPartition(0, 9))
            ),
        ),
        timeout_ms=1000,
    )
    response = call(broker, ctx(ApiKey.DELETE_RECORDS, 2), request)
    assert isinstance(response, DeleteRecordsResponse)
    assert [
        (t.name, [(p.partition_index, p.low_watermark, p.error_code) for p in t.partitions])
        for t in response.topics
    ] == [
        (DELREC_TOPIC, [(0, 9, 0)]),
        ("nope", [(0, -1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]),
    ]


def _delayed(broker: Broker, lagging: dict[int, int]) -> DelayedDeleteRecords[Results]:
    results: Results = {
        (DELREC_TOPIC, 0): PartitionDelete(ErrorCode.NONE, 19, 10),
        (DELREC_TOPIC, 1): PartitionDelete(ErrorCode.OFFSET_OUT_OF_RANGE),
    }
    return DelayedDeleteRecords(
        broker, results, dict, followers=lambda _t, p: [lagging[p]] if p in lagging else []
    )


def test_delayed_delete_completes_when_followers_catch_up(deleted: Broker) -> None:
    lagging = {0: 10}
    delayed = _delayed(deleted, lagging)
    purgatory = deleted.purgatories.delete_records
    assert not purgatory.watch(delayed, [(DELREC_TOPIC, 0)], deleted.clock.now_ms() + 1000)
    assert purgatory.check((DELREC_TOPIC, 0)) == 0
    lagging[0] = 19
    assert purgatory.check((DELREC_TOPIC, 0)) == 1
    result = delayed.result()
    assert result[(DELREC_TOPIC, 0)] == PartitionDelete(ErrorCode.NONE, 19, 19)
    assert result[(DELREC_TOPIC, 1)].error == ErrorCode.OFFSET_OUT_OF_RANGE


def test_delayed_delete_expires_with_request_timed_out(deleted: Broker) -> None:
    delayed = _delayed(deleted, {0: 10})
    purgatory = deleted.purgatories.delete_records
    purgatory.watch(delayed, [(DELREC_TOPIC, 0)], deleted.clock.now_ms() + 1000)
    deleted.clock.advance(1000)  # type: ignore[attr-defined]
    deleted.run_due()
    result = delayed.result()
    assert result[(DELREC_TOPIC, 0)] == PartitionDelete(ErrorCode.REQUEST_TIMED_OUT, 19, 10)
