"""Every request frame librdkafka and kafka-python sent Kafka 4.0 decodes into the event
the recording says it is (API, version, correlation id, client id), whether it arrives
whole, byte by byte, or all frames of a connection in one chunk.
"""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.registry import apis
from lethe_reference.protocol import NEED_DATA, PAUSED, BrokerConnection, RequestReceived

FRAMES = fixtures_root() / "golden" / "wire" / "frames.jsonl"


@cache
def request_frames() -> tuple[dict[str, object], ...]:
    items = [json.loads(line) for line in FRAMES.read_text().splitlines()]
    return tuple(item for item in items if item["dir"] == "request")


def _connection() -> BrokerConnection:
    return BrokerConnection(1, frozenset(apis()))


def _check(event: object, item: dict[str, object]) -> None:
    assert isinstance(event, RequestReceived), event
    ctx = event.context
    assert (ctx.api_key, ctx.api_version) == (item["api_key"], item["api_version"])
    assert ctx.correlation_id == item["correlation_id"]
    assert ctx.client_id == item["client_id"]
    assert event.size == item["size"]


def test_the_recording_has_requests_of_every_served_family():
    keys = {item["api_key"] for item in request_frames()}
    assert {0, 1, 2, 3, 18, 19, 21, 32} <= keys


@pytest.mark.parametrize("item", request_frames(), ids=lambda item: f"seq{item['seq']}")
def test_golden_request_decodes_whole_and_byte_by_byte(item: dict[str, object]) -> None:
    raw = bytes.fromhex(str(item["hex"]))
    whole = _connection()
    whole.receive_data(raw)
    _check(whole.next_event(), item)
    split = _connection()
    for index in range(len(raw) - 1):
        split.receive_data(raw[index : index + 1])
        assert split.next_event() is NEED_DATA
    split.receive_data(raw[-1:])
    _check(split.next_event(), item)


def test_all_requests_of_a_connection_in_one_chunk_come_out_in_order():
    by_connection: dict[int, list[dict[str, object]]] = defaultdict(list)
    for item in request_frames():
        by_connection[int(str(item["conn"]))].append(item)
    for items in by_connection.values():
        conn = _connection()
        conn.receive_data(b"".join(bytes.fromhex(str(i["hex"])) for i in items))
        for item in items:
            event = conn.next_event()
            _check(event, item)
            assert conn.next_event() is PAUSED
            assert isinstance(event, RequestReceived)
            # Any response unmutes the connection; the API's all-default one will do.
            conn.send_response(event.context, apis()[event.context.api_key].response())
        assert conn.next_event() is NEED_DATA
