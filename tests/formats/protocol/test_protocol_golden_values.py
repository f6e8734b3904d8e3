"""Decoded golden frames carry the values the recording's README labels say
(the labels were decoded by kafka-python, independently of lethe)."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any

import pytest
from lethe_formats.protocol.envelope import decode_request, decode_response
from lethe_formats.protocol.error_codes import error_name
from lethe_formats.protocol.messages.delete_records import DeleteRecordsResponse
from lethe_formats.protocol.messages.fetch import FetchRequest, FetchResponse
from lethe_formats.protocol.messages.produce import ProduceRequest, ProduceResponse
from lethe_formats.protocol.registry import apis
from lethe_formats.protocol.schema import Struct
from wire_golden import Frame, exchange_labels, frame_by_seq, load_frames


def _body(frame: Frame) -> Struct:
    if frame.direction == "request":
        return decode_request(frame.payload)[1]
    return decode_response(frame.api_key, frame.api_version, frame.payload)[1]


def _values(value: Any, out: dict[str, set[str]], name: str = "") -> dict[str, set[str]]:
    """Every field value in a decoded message, as text, by field name."""
    if isinstance(value, Struct):
        for item in dataclasses.fields(value):
            _values(getattr(value, item.name), out, item.name)
    elif isinstance(value, tuple):
        for element in value:
            _values(element, out, name)
    else:
        out[name].add(str(value))
    return out


def _labelled(direction: str) -> list[Any]:
    labels = exchange_labels()
    return [
        pytest.param(frame, id=frame.test_id)
        for frame in load_frames()
        if frame.api_key in apis() and frame.direction == direction and frame.seq in labels
    ]


def _check_labels(frame: Frame, prefix: str) -> None:
    values = _values(_body(frame), defaultdict(set))
    checked = 0
    for key, label in exchange_labels()[frame.seq].items():
        if not key.startswith(prefix) or key[len(prefix) :] not in values:
            continue
        found = values[key[len(prefix) :]]
        for part in label.split(","):
            if part.endswith("..."):
                assert any(v.startswith(part[:-3]) for v in found), (key, label, found)
            else:
                assert part in found, (key, label, found)
        checked += 1
    assert checked or not any(k.startswith(prefix) for k in exchange_labels()[frame.seq])


@pytest.mark.parametrize("frame", _labelled("request"))
def test_request_fields_match_the_recording_labels(frame: Frame) -> None:
    _check_labels(frame, "req.")


@pytest.mark.parametrize("frame", _labelled("response"))
def test_response_fields_and_errors_match_the_recording_labels(frame: Frame) -> None:
    _check_labels(frame, "resp.")
    codes = _values(_body(frame), defaultdict(set))["error_code"]
    label = exchange_labels()[frame.seq]["errors"].strip()
    assert {f"{code} {error_name(int(code))}" for code in codes} == {label}


def test_produce_v10_response_0032_base_offset_3_log_start_0() -> None:
    body = _body(frame_by_seq(32))
    assert isinstance(body, ProduceResponse)
    (partition,) = body.responses[0].partition_responses
    assert (partition.base_offset, partition.log_start_offset, partition.error_code) == (3, 0, 0)
    assert body.responses[0].name == "wire-rd-events"


def test_produce_v10_request_0031_carries_a_v2_record_batch() -> None:
    body = _body(frame_by_seq(31))
    assert isinstance(body, ProduceRequest)
    assert (body.acks, body.transactional_id) == (-1, None)
    records = body.topic_data[0].partition_data[0].records
    assert records is not None
    assert records[16] == 2  # magic byte of a v2 batch


@pytest.mark.parametrize(
    ("seq", "error_code", "low_watermark"),
    [(118, 0, 2), (120, 1, -1), (124, 44, -1), (226, 0, 2), (230, 1, -1), (234, 44, -1)],
)
def test_delete_records_results(seq: int, error_code: int, low_watermark: int) -> None:
    body = _body(frame_by_seq(seq))
    assert isinstance(body, DeleteRecordsResponse)
    (partition,) = body.topics[0].partitions
    assert (partition.error_code, partition.low_watermark) == (error_code, low_watermark)


def test_fetch_v16_uses_topic_ids_and_reports_log_start_offset() -> None:
    request = _body(frame_by_seq(74))
    assert isinstance(request, FetchRequest)
    assert request.topics[0].topic == ""  # v13+ carries topic_id instead of the name
    assert request.topics[0].topic_id.int != 0
    response = _body(frame_by_seq(75))
    assert isinstance(response, FetchResponse)
    partition = response.responses[0].partitions[0]
    assert (partition.high_watermark, partition.log_start_offset) == (6, 0)
    assert response.responses[0].topic_id == request.topics[0].topic_id
