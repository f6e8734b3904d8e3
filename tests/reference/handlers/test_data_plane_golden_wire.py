"""The data-plane exchanges of fixtures/golden/wire replayed against the handlers.

librdkafka 2.16 and kafka-python 3.0.12 produced, listed offsets, fetched
(librdkafka sessionless with topic ids at v16 and read_committed; kafka-python
with an incremental fetch session at v12) and deleted records against Kafka
4.0. Each recorded request is decoded and handed to the handler, with the
broker's clock set to the time it was recorded, and the answer must equal
Kafka's recorded response byte for byte (the body as encoded at the request's
version, record bytes included). Session ids
are random on both sides: the test maps Kafka's to ours. A long poll that Kafka
answered after ``max_wait_ms`` is expired by moving the clock on.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.compiler import encode
from lethe_formats.protocol.envelope import decode_request, decode_response
from lethe_formats.protocol.messages.fetch import FetchRequest, FetchResponse
from lethe_formats.storage.kafka_uuid import KafkaUuid
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.purgatory import Deferred
from partition_ops_support import HANDLERS, ctx, new_broker

DATA_PLANE = {0, 1, 2, 21}
#: Topic ids Kafka gave the recorded topics (the v16 Fetch and CreateTopics frames).
TOPIC_IDS = {
    "wire-rd-events": uuid.UUID("00415681-98eb-46b0-a568-3d84829da158"),
    "wire-kp-events": uuid.UUID("5e40c660-f548-47e7-b5f3-3f09ba2ba4b1"),
}


def _frames() -> list[dict[str, Any]]:
    path = fixtures_root() / "golden" / "wire" / "frames.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _exchanges(client: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(request, response) frames of the data-plane APIs of ``client``, in order."""
    frames = _frames()
    responses = {(f["conn"], f["correlation_id"]): f for f in frames if f["dir"] == "response"}
    return [
        (f, responses[(f["conn"], f["correlation_id"])])
        for f in frames
        if f["dir"] == "request"
        and f["api_key"] in DATA_PLANE
        and f["client"].startswith(client)
        and (f["conn"], f["correlation_id"]) in responses
    ]


def _broker(tmp_path: Path, start_ms: int) -> Broker:
    broker = new_broker(tmp_path, start_ms - 1)
    for prefix in ("wire-rd", "wire-kp"):
        topic_id = KafkaUuid(TOPIC_IDS[f"{prefix}-events"].bytes)
        broker.create_topic(f"{prefix}-events", 1, topic_id=topic_id)
        broker.create_topic(f"{prefix}-kv", 1, {"cleanup.policy": "compact"})
    return broker


def _answer(broker: Broker, frame: dict[str, Any], request: Any) -> Any:
    result = HANDLERS[frame["api_key"]](
        broker, ctx(frame["api_key"], frame["api_version"]), request
    )
    if isinstance(result, Deferred) and not result.done:
        assert isinstance(broker.clock, ManualClock)
        broker.clock.advance(request.max_wait_ms)
        broker.run_due()
    return result.result() if isinstance(result, Deferred) else result


@pytest.mark.parametrize("client", ["confluent-kafka", "kafka-python"])
def test_replayed_requests_get_kafkas_answers(tmp_path: Path, client: str) -> None:
    exchanges = _exchanges(client)
    assert {req["api_key"] for req, _ in exchanges} == DATA_PLANE
    broker = _broker(tmp_path, exchanges[0][0]["ts_ms"])
    clock = broker.clock
    assert isinstance(clock, ManualClock)
    sessions: dict[int, int] = {0: 0}
    for request_frame, response_frame in exchanges:
        clock.set(max(clock.now_ms(), request_frame["ts_ms"]))
        _, request = decode_request(bytes.fromhex(request_frame["hex"])[4:])
        if isinstance(request, FetchRequest):
            request = replace(request, session_id=sessions[request.session_id])
        _, expected = decode_response(
            response_frame["api_key"],
            response_frame["api_version"],
            bytes.fromhex(response_frame["hex"])[4:],
        )
        answer = _answer(broker, request_frame, request)
        if isinstance(expected, FetchResponse):
            sessions.setdefault(expected.session_id, answer.session_id)
            assert (answer.session_id == 0) == (expected.session_id == 0)
            answer = replace(answer, session_id=expected.session_id)
        version = request_frame["api_version"]
        assert encode(answer, version) == encode(expected, version), f"seq {request_frame['seq']}"
