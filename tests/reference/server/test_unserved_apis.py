"""APIs Kafka 4.0 advertises that lethe does not serve are answered as Kafka answers an
API it does not serve: the connection is closed without a response
(``SocketServer.Processor.parseRequestHeader``: a key not enabled on the listener is an
``InvalidRequestException``, a version outside the range an ``UnsupportedVersionException``;
both close the channel). fixtures/golden/admin-tools/leadership-quotas holds Kafka
4.0.0's ApiVersions answer (``api-versions`` step) and ``unserved.json``, what a real
Kafka 4.0.0 did with requests for keys and versions it does not advertise."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.envelope import decode_response
from lethe_formats.protocol.framing import frame
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig
from lethe_reference.handlers.api_versions import served_versions
from lethe_reference.protocol.loopback import LoopbackClient

GOLDEN = fixtures_root() / "golden" / "admin-tools" / "leadership-quotas"


def _kafka_api_versions() -> dict[int, tuple[int, int]]:
    frames = [json.loads(line) for line in (GOLDEN / "frames.jsonl").read_text().splitlines()]
    answer = next(f for f in frames if f["api_key"] == 18 and f["dir"] == "response")
    _, body = decode_response(18, answer["api_version"], bytes.fromhex(answer["hex"])[4:])
    assert isinstance(body, ApiVersionsResponse)
    return {v.api_key: (v.min_version, v.max_version) for v in body.api_keys}


KAFKA = _kafka_api_versions()
PROBES = json.loads((GOLDEN / "unserved.json").read_text())


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    broker = Broker(tmp_path, config=BrokerConfig({}), clock=ManualClock(0), durable=False)
    broker.startup()
    return broker


def served(broker: Broker) -> dict[int, tuple[int, int]]:
    return {v.api_key: (v.min_version, v.max_version) for v in served_versions(broker)}


def closes_without_answer(broker: Broker, key: int, version: int) -> bool:
    """A request frame for ``key``/``version`` (header v2, a few body bytes: the broker
    decides on the header) on a fresh connection: closed, nothing sent back."""
    client = LoopbackClient(broker)
    header = struct.pack(">hhih", key, version, 7, 5) + b"probe" + b"\x00"
    client.send_raw(frame(header + b"\x00" * 4))
    return client.closed and client.raw_frames() == []


def test_kafka_advertises_what_the_tool_printed() -> None:
    """``kafka-broker-api-versions.sh`` printed ``Name(key): low to high`` (or one
    version) for every API the recorded answer lists, and UNSUPPORTED for the rest."""
    outputs = json.loads((GOLDEN / "outputs.json").read_text())
    printed = next(o["stdout"] for o in outputs if o["step"] == "api-versions")
    ranges = {}
    for key, low, high in re.findall(r"\((\d+)\): (\d+)(?: to (\d+))? \[usable", printed):
        ranges[int(key)] = (int(low), int(high or low))
    assert ranges == KAFKA
    assert len(KAFKA) == 61 and printed.count("UNSUPPORTED") == 11


def test_apiversions_lists_only_served_apis_each_at_kafkas_range(broker: Broker) -> None:
    ours = served(broker)
    assert set(ours) <= set(KAFKA)
    assert {key: KAFKA[key] for key in ours} == ours
    answer = LoopbackClient(broker).request(ApiVersionsRequest("probe", "1"), 4)
    assert isinstance(answer, ApiVersionsResponse)
    assert {v.api_key: (v.min_version, v.max_version) for v in answer.api_keys} == ours


def test_every_api_kafka_serves_and_lethe_does_not_closes_the_connection(broker: Broker) -> None:
    unserved = sorted(set(KAFKA) - set(served(broker)))
    assert unserved, "every Kafka 4.0 API is served: keep the version probes below"
    for key in unserved:
        low, high = KAFKA[key]
        for version in {low, high}:
            assert closes_without_answer(broker, key, version), (key, version)


def test_every_served_api_closes_above_and_below_its_range(broker: Broker) -> None:
    for key, (low, high) in served(broker).items():
        if key == 18:  # ApiVersions answers an unknown version (KIP-511)
            continue
        assert closes_without_answer(broker, key, high + 1), key
        if low > 0:
            assert closes_without_answer(broker, key, low - 1), key


@pytest.mark.parametrize("probe", PROBES, ids=lambda p: f"{p['api_key']}v{p['api_version']}")
def test_what_kafka_closed_lethe_closes(broker: Broker, probe: dict[str, object]) -> None:
    assert probe["outcome"] == "closed"
    key, version = probe["api_key"], probe["api_version"]
    assert isinstance(key, int) and isinstance(version, int)
    assert closes_without_answer(broker, key, version)
