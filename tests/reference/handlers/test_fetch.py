"""Fetch through the handler: golden reads around the log start offset, byte limits,
long polling, topic ids and incremental fetch sessions.

Expected values: fixtures/golden/delete-records/case.json (raw Fetch v12
responses of Kafka 4.0 below and at the log start offset), kafka-facts.md 2.2-2.3
and Kafka's source (``ReplicaManager.readFromLog``, ``LogSegment.read``,
``DelayedFetch``, ``FetchSession``).
"""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import pytest
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.fetch import FetchResponse, PartitionData
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.purgatory import Deferred
from partition_ops_support import (
    DELREC_TOPIC,
    call,
    case_json,
    ctx,
    delete_records,
    delrec_broker,
    fetch,
    fetch_request,
    produce,
)

CASE = case_json("delete-records")


def _golden_raw(op: str) -> dict[str, object]:
    step = next(s for s in CASE["edge_cases_before_capture"] if s["op"] == op)
    result: dict[str, object] = step["result"]
    return result


def _only(response: FetchResponse) -> PartitionData:
    (topic,) = response.responses
    (partition,) = topic.partitions
    return partition


def _fields(data: PartitionData) -> dict[str, object]:
    return {
        "partition_index": data.partition_index,
        "error_code": data.error_code,
        "high_watermark": data.high_watermark,
        "last_stable_offset": data.last_stable_offset,
        "log_start_offset": data.log_start_offset,
        "aborted_transactions": data.aborted_transactions,
        "preferred_read_replica": data.preferred_read_replica,
        "records": {"hex": (data.records or b"").hex()},
    }


def _expected(golden: dict[str, object]) -> dict[str, object]:
    response = golden["response"]
    assert isinstance(response, dict)
    (topic,) = response["responses"]
    (partition,) = topic["partitions"]
    keys = _fields(PartitionData(partition_index=0, error_code=0, high_watermark=0))
    return {k: partition[k] for k in keys}


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    broker = delrec_broker(tmp_path)
    delete_records(broker, DELREC_TOPIC, {0: 19, 1: 24, 2: -1})
    return broker


def clock(broker: Broker) -> ManualClock:
    assert isinstance(broker.clock, ManualClock)
    return broker.clock


def done(deferred: Deferred[FetchResponse]) -> bool:
    """Whether ``deferred`` completed (a call, so mypy does not pin the property)."""
    return deferred.done


def one_batch(broker: Broker, count: int = 2) -> bytes:
    now = broker.clock.now_ms()
    specs = [RecordSpec(b"k", b"v" * 10, timestamp=now) for _ in range(count)]
    return build_batch(specs, base_offset=0)


def test_fetch_below_the_log_start_offset_is_kafkas_golden_answer(broker: Broker) -> None:
    golden = _golden_raw("fetch_raw_below_log_start_offset")
    response = fetch(broker, fetch_request(DELREC_TOPIC, {0: 18}), version=12)
    assert (response.error_code, response.session_id) == (0, 0)
    assert _fields(_only(response)) == _expected(golden)
    assert _only(response).error_code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_fetch_at_the_log_start_offset_returns_kafkas_bytes(broker: Broker) -> None:
    golden = _golden_raw("fetch_raw_at_log_start_offset")
    response = fetch(broker, fetch_request(DELREC_TOPIC, {0: 19}), version=12)
    assert _fields(_only(response)) == _expected(golden)


def test_fetch_above_the_log_end_offset_is_out_of_range(broker: Broker) -> None:
    data = _only(fetch(broker, fetch_request(DELREC_TOPIC, {0: 41})))
    assert (data.error_code, data.high_watermark, data.log_start_offset) == (1, -1, -1)


def test_fetch_at_or_past_the_high_watermark_reads_nothing(broker: Broker) -> None:
    log = broker.log(DELREC_TOPIC, 0)
    assert log is not None
    log.update_high_watermark(30)  # as if followers had not caught up
    for offset in (30, 35, 40):
        data = _only(fetch(broker, fetch_request(DELREC_TOPIC, {0: offset})))
        assert (data.error_code, data.high_watermark, data.records) == (0, 30, b"")


def test_the_first_batch_is_returned_even_above_the_partition_limit(broker: Broker) -> None:
    whole = _only(fetch(broker, fetch_request(DELREC_TOPIC, {0: 19})))
    first_batch_size = 279  # dump.txt: baseOffset 16 ... size: 279
    data = _only(fetch(broker, fetch_request(DELREC_TOPIC, {0: 19}, partition_max_bytes=10)))
    assert data.records == (whole.records or b"")[:first_batch_size]


def test_limits_slice_bytes_and_later_partitions_drop_an_incomplete_first_batch(
    broker: Broker,
) -> None:
    request = fetch_request(DELREC_TOPIC, {0: 19, 1: 24}, max_bytes=400, partition_max_bytes=300)
    (topic,) = fetch(broker, request).responses
    first, second = topic.partitions
    whole = _only(fetch(broker, fetch_request(DELREC_TOPIC, {0: 19})))
    assert first.records == (whole.records or b"")[:300]  # Kafka slices the file by bytes
    assert (second.error_code, second.high_watermark, second.records) == (0, 36, b"")


def test_read_committed_lists_aborted_transactions_even_when_none(broker: Broker) -> None:
    data = _only(fetch(broker, fetch_request(DELREC_TOPIC, {0: 19}, isolation_level=1)))
    assert (data.aborted_transactions, data.last_stable_offset) == ((), 40)


def test_unknown_partition_answers_at_once_with_schema_defaults(broker: Broker) -> None:
    response = fetch(broker, fetch_request(DELREC_TOPIC, {7: 0}, max_wait_ms=500))
    data = _only(response)
    assert (data.error_code, data.high_watermark, data.records) == (
        3,
        -1,
        b"",
    )  # MemoryRecords.EMPTY


@pytest.mark.parametrize(("epoch", "code"), [(0, 0), (1, 75)])
def test_current_leader_epoch_is_checked(broker: Broker, epoch: int, code: int) -> None:
    request = fetch_request(DELREC_TOPIC, {0: 19})
    partition = request.topics[0].partitions[0]
    topic = dataclasses.replace(
        request.topics[0], partitions=(dataclasses.replace(partition, current_leader_epoch=epoch),)
    )
    data = _only(fetch(broker, dataclasses.replace(request, topics=(topic,))))
    assert data.error_code == code


# --- long polling ---------------------------------------------------------------------


def test_long_poll_is_completed_by_a_later_produce(broker: Broker) -> None:
    request = fetch_request(DELREC_TOPIC, {2: 30}, max_wait_ms=500)
    pending = call(broker, ctx(ApiKey.FETCH, 12), request)
    assert isinstance(pending, Deferred) and not done(pending)
    assert produce(broker, DELREC_TOPIC, 2, one_batch(broker)).base_offset == 30
    assert done(pending)
    data = _only(pending.result())
    assert (data.high_watermark, data.records[:8] if data.records else b"") == (
        32,
        (30).to_bytes(8, "big"),
    )


def test_long_poll_expires_empty_at_max_wait(broker: Broker) -> None:
    request = fetch_request(DELREC_TOPIC, {2: 30}, max_wait_ms=500)
    pending = call(broker, ctx(ApiKey.FETCH, 12), request)
    assert isinstance(pending, Deferred)
    clock(broker).advance(499)
    broker.run_due()
    assert not done(pending)
    clock(broker).advance(1)
    broker.run_due()
    data = _only(pending.result())
    assert (data.error_code, data.high_watermark, data.records) == (0, 30, b"")


def test_long_poll_waits_for_min_bytes(broker: Broker) -> None:
    request = fetch_request(DELREC_TOPIC, {2: 30}, max_wait_ms=500, min_bytes=10_000)
    pending = call(broker, ctx(ApiKey.FETCH, 12), request)
    produce(broker, DELREC_TOPIC, 2, one_batch(broker))
    assert isinstance(pending, Deferred) and not done(pending)
    clock(broker).advance(500)
    broker.run_due()
    data = _only(pending.result())
    assert data.high_watermark == 32 and data.records


def test_no_wait_when_data_is_there(broker: Broker) -> None:
    request = fetch_request(DELREC_TOPIC, {0: 19}, max_wait_ms=500)
    response = call(broker, ctx(ApiKey.FETCH, 12), request)
    assert isinstance(response, FetchResponse)


# --- topic ids (v13+) -----------------------------------------------------------------


def test_topic_ids_name_topics_from_v13(broker: Broker) -> None:
    info = broker.metadata.get(DELREC_TOPIC)
    assert info is not None
    topic_id = uuid.UUID(bytes=info.topic_id.raw)
    response = fetch(broker, fetch_request("", {0: 19}, topic_id=topic_id), version=13)
    (topic,) = response.responses
    assert topic.topic_id == topic_id
    assert topic.partitions[0].log_start_offset == 19


def test_unknown_topic_id(broker: Broker) -> None:
    response = fetch(broker, fetch_request("", {0: 0}, topic_id=uuid.uuid4()), version=13)
    data = _only(response)
    assert (data.error_code, data.high_watermark) == (ErrorCode.UNKNOWN_TOPIC_ID, -1)


# --- fetch sessions (v7+) ------------------------------------------------------------


def _session(broker: Broker) -> int:
    full = fetch(broker, fetch_request(DELREC_TOPIC, {1: 36, 2: 30}, session_epoch=0))
    assert full.session_id != 0
    assert [p.partition_index for p in full.responses[0].partitions] == [1, 2]
    return full.session_id


def _incremental(broker: Broker, session_id: int, epoch: int, **kwargs: object) -> FetchResponse:
    request = fetch_request(DELREC_TOPIC, {}, session_id=session_id, session_epoch=epoch)
    return fetch(broker, request, **kwargs)  # type: ignore[arg-type]


def test_incremental_fetch_sends_only_what_changed(broker: Broker) -> None:
    session_id = _session(broker)
    quiet = _incremental(broker, session_id, 1)
    assert (quiet.error_code, quiet.session_id, quiet.responses) == (0, session_id, ())
    produce(broker, DELREC_TOPIC, 2, one_batch(broker))
    changed = _incremental(broker, session_id, 2)
    (topic,) = changed.responses
    assert [(p.partition_index, p.high_watermark) for p in topic.partitions] == [(2, 32)]


def test_incremental_fetch_with_the_wrong_epoch(broker: Broker) -> None:
    session_id = _session(broker)
    wrong = _incremental(broker, session_id, 5)
    assert (wrong.error_code, wrong.session_id) == (ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0)


def test_incremental_fetch_with_an_unknown_session(broker: Broker) -> None:
    missing = _incremental(broker, 12345, 1)
    assert (missing.error_code, missing.session_id) == (ErrorCode.FETCH_SESSION_ID_NOT_FOUND, 0)


def test_final_epoch_closes_the_session(broker: Broker) -> None:
    session_id = _session(broker)
    closing = fetch(
        broker, fetch_request(DELREC_TOPIC, {1: 36}, session_id=session_id, session_epoch=-1)
    )
    assert closing.session_id == 0
    gone = _incremental(broker, session_id, 1)
    assert gone.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND


def test_session_with_topic_ids_refuses_older_versions(broker: Broker) -> None:
    info = broker.metadata.get(DELREC_TOPIC)
    assert info is not None
    topic_id = uuid.UUID(bytes=info.topic_id.raw)
    request = fetch_request("", {1: 36}, topic_id=topic_id, session_epoch=0)
    session_id = fetch(broker, request, version=13).session_id
    old = _incremental(broker, session_id, 1, version=12)
    assert old.error_code == ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR


def test_responses_encode_at_every_version(broker: Broker) -> None:
    for version in range(4, 18):
        request = fetch_request(DELREC_TOPIC, {0: 19, 9: 0}, session_epoch=-1)
        if version >= 13:
            info = broker.metadata.get(DELREC_TOPIC)
            assert info is not None
            topic_id = uuid.UUID(bytes=info.topic_id.raw)
            request = fetch_request("", {0: 19, 9: 0}, topic_id=topic_id)
        response = fetch(broker, request, version=version)
        decoded = decode(FetchResponse, version, encode(response, version))
        first, unknown = decoded.responses[0].partitions
        assert (first.high_watermark, unknown.error_code) == (40, 3)
