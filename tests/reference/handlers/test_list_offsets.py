"""ListOffsets through the handler: the golden before/after values and Kafka's version rules.

Expected values: fixtures/golden/delete-records/case.json (ListOffsets
EARLIEST/LATEST/MAX_TIMESTAMP before and after DeleteRecords, as Kafka 4.0
answered them) and kafka-facts.md 2.1 (special timestamps, minimum versions,
duplicates, the timestamp search rule).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from lethe_reference.broker import Broker
from partition_ops_support import (
    DELREC_TOPIC,
    call,
    case_json,
    ctx,
    delete_records,
    delrec_broker,
    list_offsets,
)

CASE = case_json("delete-records")
SPECIAL = {"EARLIEST": -2, "LATEST": -1, "MAX_TIMESTAMP": -3}


def _golden(when: str) -> dict[str, dict[int, tuple[int, int, int]]]:
    """name -> partition -> (offset, timestamp, leader epoch), as librdkafka reported."""
    steps = CASE["steps"] + CASE["edge_cases_before_capture"]
    step = next(s for s in steps if s["op"] == "list_offsets" and s["when"] == when)
    return {
        name: {r["partition"]: (r["offset"], r["timestamp"], r["leader_epoch"]) for r in rows}
        for name, rows in step["results"].items()
    }


def _answer(broker: Broker, timestamp: int) -> dict[int, tuple[int, int, int]]:
    answers = list_offsets(broker, DELREC_TOPIC, dict.fromkeys(range(3), timestamp))
    assert all(a.error_code == ErrorCode.NONE for a in answers.values())
    return {p: (a.offset, a.timestamp, a.leader_epoch) for p, a in answers.items()}


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    return delrec_broker(tmp_path)


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_before_delete_records_as_kafka(broker: Broker, name: str) -> None:
    assert _answer(broker, SPECIAL[name]) == _golden("before DeleteRecords")[name]


def _deleted_and_retained(broker: Broker) -> None:
    """The golden state of the "after" lookups: DeleteRecords, then the retention
    pass that removed the segments wholly below the log start offsets (case.json
    lists those lookups after its "wait" step)."""
    delete_records(broker, DELREC_TOPIC, {0: 19, 1: 24, 2: -1})
    broker.log_manager.cleanup_logs()


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_after_delete_records_as_kafka(broker: Broker, name: str) -> None:
    _deleted_and_retained(broker)
    assert _answer(broker, SPECIAL[name]) == _golden("after DeleteRecords")[name]


def test_raw_v10_answers_match_the_golden_raw_response(broker: Broker) -> None:
    _deleted_and_retained(broker)
    step = next(s for s in CASE["edge_cases_before_capture"] if s["op"] == "list_offsets_raw")
    for result in step["results"].values():
        expected = {
            p["partition_index"]: (p["error_code"], p["timestamp"], p["offset"], p["leader_epoch"])
            for t in result["response"]["topics"]
            for p in t["partitions"]
        }
        got = list_offsets(
            broker, DELREC_TOPIC, dict.fromkeys(range(3), result["request_timestamp"])
        )
        assert {
            p: (a.error_code, a.timestamp, a.offset, a.leader_epoch) for p, a in got.items()
        } == expected


def test_max_timestamp_is_not_clamped_to_the_log_start_offset(broker: Broker) -> None:
    _deleted_and_retained(broker)
    answer = list_offsets(broker, DELREC_TOPIC, {2: -3})[2]
    assert (answer.offset, answer.timestamp) == (26, 1795289172184)
    assert broker.log(DELREC_TOPIC, 2).log_start_offset == 30  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("timestamp", "too_old", "first_ok"),
    [(-3, 6, 7), (-4, 7, 8), (-5, 8, 9)],
)
def test_special_timestamps_need_their_minimum_version(
    broker: Broker, timestamp: int, too_old: int, first_ok: int
) -> None:
    old = list_offsets(broker, DELREC_TOPIC, {0: timestamp}, version=too_old)[0]
    assert (old.error_code, old.offset, old.timestamp) == (ErrorCode.UNSUPPORTED_VERSION, -1, -1)
    assert list_offsets(broker, DELREC_TOPIC, {0: timestamp}, version=first_ok)[0].error_code == 0


def test_unknown_negative_timestamp_is_unsupported(broker: Broker) -> None:
    answer = list_offsets(broker, DELREC_TOPIC, {0: -6})[0]
    assert answer.error_code == ErrorCode.UNSUPPORTED_VERSION


def test_earliest_local_is_the_log_start_offset_and_latest_tiered_is_none(broker: Broker) -> None:
    delete_records(broker, DELREC_TOPIC, {0: 19})
    local = list_offsets(broker, DELREC_TOPIC, {0: -4})[0]
    assert (local.offset, local.timestamp) == (19, -1)
    tiered = list_offsets(broker, DELREC_TOPIC, {0: -5})[0]
    assert (tiered.error_code, tiered.offset, tiered.timestamp, tiered.leader_epoch) == (
        0,
        -1,
        -1,
        -1,
    )


def test_timestamp_search_finds_the_first_record_at_or_after(broker: Broker) -> None:
    # p2's record 26 carries its largest timestamp; only segment 24 reaches it.
    found = list_offsets(broker, DELREC_TOPIC, {2: 1795289172184})[2]
    assert (found.offset, found.timestamp, found.leader_epoch) == (26, 1795289172184, 0)
    first = list_offsets(broker, DELREC_TOPIC, {2: 0})[2]
    assert (first.offset, first.timestamp) == (0, 1795286504182)


def test_timestamp_past_every_record_answers_minus_one(broker: Broker) -> None:
    answer = list_offsets(broker, DELREC_TOPIC, {2: 1795289172185})[2]
    assert (answer.error_code, answer.offset, answer.timestamp) == (0, -1, -1)


def test_timestamp_search_stays_in_the_first_matching_segment(broker: Broker) -> None:
    # UnifiedLog.searchOffsetInLocalLog searches only the first segment whose
    # largest timestamp reaches the target; after DeleteRecords to 19 nothing
    # in p0's first segment (offsets 0-7) is at or above the log start offset.
    delete_records(broker, DELREC_TOPIC, {0: 19})
    answer = list_offsets(broker, DELREC_TOPIC, {0: 0})[0]
    assert (answer.error_code, answer.offset, answer.timestamp) == (0, -1, -1)


def test_duplicate_partition_is_invalid_request_once(broker: Broker) -> None:
    request = ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=(
            ListOffsetsTopic(
                DELREC_TOPIC,
                (
                    ListOffsetsPartition(0, -1, -1),
                    ListOffsetsPartition(1, -1, -1),
                    ListOffsetsPartition(0, -1, -2),
                ),
            ),
        ),
    )
    response = call(broker, ctx(ApiKey.LIST_OFFSETS, 10), request)
    assert isinstance(response, ListOffsetsResponse)
    (topic,) = response.topics
    assert [(p.partition_index, p.error_code, p.offset) for p in topic.partitions] == [
        (0, ErrorCode.INVALID_REQUEST, -1),
        (1, ErrorCode.NONE, 36),
    ]


def test_unknown_partition_and_topic(broker: Broker) -> None:
    assert list_offsets(broker, DELREC_TOPIC, {7: -1})[7].error_code == 3
    assert list_offsets(broker, "missing", {0: -1})[0].error_code == 3


@pytest.mark.parametrize(("epoch", "code"), [(-1, 0), (0, 0), (1, 75)])
def test_current_leader_epoch_is_checked(broker: Broker, epoch: int, code: int) -> None:
    request = ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=(ListOffsetsTopic(DELREC_TOPIC, (ListOffsetsPartition(0, epoch, -1),)),),
    )
    response = call(broker, ctx(ApiKey.LIST_OFFSETS, 10), request)
    assert response.topics[0].partitions[0].error_code == code


def test_leader_epoch_is_minus_one_below_v4(broker: Broker) -> None:
    answer = list_offsets(broker, DELREC_TOPIC, {2: 0}, version=3)[2]
    assert (answer.offset, answer.leader_epoch) == (0, -1)


def test_latest_for_read_committed_is_the_last_stable_offset(broker: Broker) -> None:
    log = broker.log(DELREC_TOPIC, 0)
    assert log is not None
    answer = list_offsets(broker, DELREC_TOPIC, {0: -1}, isolation_level=1)[0]
    assert answer.offset == log.last_stable_offset == 40
