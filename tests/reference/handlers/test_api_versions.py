"""ApiVersions against Kafka 4.0's answers in the golden wire recording."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.envelope import decode_response
from lethe_formats.protocol.framing import frame
from lethe_formats.protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
)
from lethe_formats.protocol.registry import apis
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.handlers.dispatch import handled_api_keys
from lethe_reference.protocol.loopback import LoopbackClient

WIRE = fixtures_root() / "golden" / "wire"
FRAMES = [json.loads(line) for line in (WIRE / "frames.jsonl").read_text().splitlines()]
#: Features Kafka 4.0 finalizes that lethe does not (protocols it does not serve).
NOT_FINALIZED = {"group.version"}


def exchange(seq: int) -> tuple[dict[str, Any], dict[str, Any]]:
    req = next(f for f in FRAMES if f["seq"] == seq)
    resp = next(
        f
        for f in FRAMES
        if f["dir"] == "response"
        and (f["conn"], f["correlation_id"], f["api_key"])
        == (req["conn"], req["correlation_id"], req["api_key"])
    )
    return req, resp


def replay(broker: Broker, seq: int) -> tuple[Any, Any]:
    """(lethe's decoded response, Kafka's decoded response) to request frame ``seq``."""
    req, resp = exchange(seq)
    client = LoopbackClient(broker)
    expect = (req["correlation_id"], req["api_key"], req["api_version"])
    client.send_raw(bytes.fromhex(req["hex"]), expect=expect)
    ((_, ours),) = client.responses()
    _, theirs = decode_response(req["api_key"], req["api_version"], bytes.fromhex(resp["hex"])[4:])
    return ours, theirs


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    broker = Broker(tmp_path, clock=ManualClock(1_795_289_550_000), durable=False)
    broker.startup()
    return broker


@pytest.mark.parametrize("seq", [1, 105, 125], ids=["rdkafka-v3", "rdkafka-admin-v3", "kpy-v4"])
def test_served_ranges_and_features_match_kafka_4_0(broker: Broker, seq: int) -> None:
    ours, theirs = replay(broker, seq)
    assert isinstance(ours, ApiVersionsResponse)
    assert ours.error_code == theirs.error_code == 0
    kafka = {v.api_key: (v.min_version, v.max_version) for v in theirs.api_keys}
    served = {v.api_key: (v.min_version, v.max_version) for v in ours.api_keys}
    assert set(served) == set(handled_api_keys())
    assert {key: kafka[key] for key in served} == served
    assert [v.api_key for v in ours.api_keys] == sorted(served)
    assert ours.supported_features == theirs.supported_features
    assert ours.finalized_features == tuple(
        f for f in theirs.finalized_features if f.name not in NOT_FINALIZED
    )
    assert ours.zk_migration_ready is theirs.zk_migration_ready is False


def test_every_api_the_issue_lists_and_has_a_handler_is_advertised(broker: Broker) -> None:
    ours = LoopbackClient(broker).request(ApiVersionsRequest("lethe", "1"), 3)
    assert isinstance(ours, ApiVersionsResponse)
    keys = {v.api_key for v in ours.api_keys}
    assert {ApiKey.API_VERSIONS, ApiKey.METADATA, ApiKey.CREATE_TOPICS} <= keys
    assert keys <= set(apis())


def test_unsupported_version_gets_error_35_and_only_the_api_versions_range_in_v0(broker):
    client = LoopbackClient(broker)
    header = struct.pack(">hhih", ApiKey.API_VERSIONS, 9, 77, 1) + b"x" + b"\x00"
    client.send_raw(frame(header + b"\x00"))
    (payload,) = client.raw_frames()
    assert struct.unpack_from(">i", payload)[0] == 77  # response header v0: no tag byte
    _, body = decode_response(ApiKey.API_VERSIONS, 0, payload)
    spec = apis()[ApiKey.API_VERSIONS]
    assert body == ApiVersionsResponse(
        error_code=35, api_keys=(ApiVersion(18, spec.min_version, spec.max_version),)
    )
    assert not client.closed


@pytest.mark.parametrize(
    ("name", "version"), [("", "1.0"), ("bad name", "1.0"), ("ok", "-1"), ("ok", "1.")]
)
def test_v3_software_name_and_version_must_match_kafkas_pattern(broker, name, version):
    ours = LoopbackClient(broker).request(ApiVersionsRequest(name, version), 3)
    assert ours == ApiVersionsResponse(error_code=42)


def test_v0_to_v2_list_apis_without_features(broker: Broker) -> None:
    for version in (0, 1, 2):
        ours = LoopbackClient(broker).request(ApiVersionsRequest(), version)
        assert isinstance(ours, ApiVersionsResponse)
        assert ours.error_code == 0
        assert ours.api_keys
        assert ours.finalized_features == ()
