"""The ops and runner pieces added for KIP107-CKP-7, KIP534-TXN-8, KIP68-MCO-4 and
KIP694-DISC-1, against scripted peers and local folders: ``raw_request`` tells a
closed connection from an answer, ``offset_delete`` judges the group error before
the partitions, ``delete_groups`` wants each group answered once, ``check_files``
root patterns, ``setup.broker_configs`` needing own-log-dir and reaching the
scenario's own broker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_broker import FakeBroker, api_versions_body, response_frame
from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.scenarios import ScenarioError, load_scenario
from lethe_conformance.scenarios.context import RunContext
from lethe_conformance.scenarios.ops import OPS
from lethe_conformance.targets.base import Capabilities
from lethe_conformance.targets.embedded import EmbeddedTarget
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.delete_groups import DeletableGroupResult, DeleteGroupsResponse
from lethe_formats.protocol.messages.offset_delete import (
    OffsetDeleteResponse,
    OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
)
from lethe_formats.protocol.schema import Struct

BODY = {"hex": "00007530000000000000000000020d6c657468652d616273656e74000000010000"}


class PeerTarget:
    """Just enough of a target for message ops: connections to a scripted peer."""

    name = "peer"

    def __init__(self, port: int, log_dir: Path | None = None) -> None:
        self.port = port
        self.capabilities = Capabilities(log_dir=log_dir)

    def connect(self) -> KafkaConnection:
        return KafkaConnection.open("127.0.0.1", self.port)


def scenario(tmp_path: Path, steps: list[dict[str, Any]], **extra: Any) -> Any:
    data = {
        "id": "kip68-unit",
        "description": "unit",
        "source": "unit",
        "requirements": ["KIP68-MCO-4"],
        "profile": "kip68",
        "requires": [],
        "setup": {"topics": [{"name": "t", "partitions": 1}]},
        "steps": steps,
    } | extra
    path = tmp_path / "kip68-unit.json"
    path.write_text(json.dumps(data))
    return load_scenario(path)


def peer(body: Struct | None) -> FakeBroker:
    """Answers ApiVersions, then every other request with ``body`` (None: close)."""

    def answer(header: RequestHeader, payload: bytes) -> bytes | None:
        if header.api_key == ApiKey.API_VERSIONS:
            return response_frame(header, api_versions_body())
        return None if body is None else response_frame(header, body)

    return FakeBroker(answer)


def run(tmp_path: Path, fake: FakeBroker, step: dict[str, Any]) -> list[str]:
    ctx = RunContext(PeerTarget(fake.port), scenario(tmp_path, [step]), token="abc123")  # type: ignore[arg-type]
    try:
        return [str(m) for m in OPS[step["op"]](ctx, step, "$.steps[0]")]
    finally:
        ctx.close()


@pytest.mark.parametrize(("closes", "expected", "mismatches"), [(True, True, 0), (False, True, 1)])
def test_raw_request_tells_a_closed_connection_from_an_answer(
    tmp_path: Path, closes: bool, expected: bool, mismatches: int
) -> None:
    step = {"op": "raw_request", "api_key": 10694, "version": 0, "body": BODY}
    step["expect"] = {"connection_closed": expected}
    with peer(None if closes else DeleteGroupsResponse()) as fake:
        assert len(run(tmp_path, fake, step)) == mismatches
        assert [h.api_key for h in fake.requests] == [ApiKey.API_VERSIONS, 10694]


def test_offset_delete_judges_the_group_error_before_any_partition(tmp_path: Path) -> None:
    step: dict[str, Any] = {"op": "offset_delete", "group": "g"}
    step["partitions"] = [{"topic": "t", "partition": 0}]
    with peer(OffsetDeleteResponse(error_code=69)) as fake:
        assert run(tmp_path, fake, step | {"expect": {"group_error": "GROUP_ID_NOT_FOUND"}}) == []
        wrong = run(tmp_path, fake, step | {"expect": {"error": "NONE"}})
    assert len(wrong) == 1 and "group_error" in wrong[0]


def test_offset_delete_needs_every_partition_answered(tmp_path: Path) -> None:
    answer = OffsetDeleteResponse(
        topics=(OffsetDeleteResponseTopic("other", (OffsetDeleteResponsePartition(0, 0),)),)
    )
    step = {"op": "offset_delete", "group": "g", "partitions": [{"topic": "t", "partition": 0}]}
    with peer(answer) as fake:
        assert any("a result for t-0" in m for m in run(tmp_path, fake, step))


def test_delete_groups_wants_each_group_once_with_its_error(tmp_path: Path) -> None:
    step = {"op": "delete_groups", "groups": ["a", "b"], "expect": {"error": "NONE"}}
    with peer(DeleteGroupsResponse(results=())) as fake:
        assert len(run(tmp_path, fake, step)) == 2  # neither group answered
    ctx = RunContext(PeerTarget(0), scenario(tmp_path, [step]), token="abc123")  # type: ignore[arg-type]
    name = ctx.group("a")
    twice = DeleteGroupsResponse(results=(DeletableGroupResult(name, 0),) * 2)
    with peer(twice) as fake:
        found = run(tmp_path, fake, {"op": "delete_groups", "groups": ["a"]})
    assert len(found) == 1 and "one result" in found[0]


def test_root_file_patterns_are_checked_at_the_log_dir_root(tmp_path: Path) -> None:
    (tmp_path / "log-start-offset-checkpoint.tmp").write_text("0\n1\nx 0 1")
    step = {
        "op": "check_files",
        "expect": {
            "root_files_present": ["log-start-offset-checkpoint.tmp", "*.missing"],
            "root_files_absent": ["*.tmp", "recovery-point-offset-checkpoint.tmp"],
        },
    }
    (tmp_path / "s").mkdir()
    loaded = scenario(tmp_path / "s", [step], requires=["log-dir"])
    ctx = RunContext(PeerTarget(0, log_dir=tmp_path), loaded, token="abc123")  # type: ignore[arg-type]
    found = [str(m) for m in OPS["check_files"](ctx, step, "$.steps[0]")]
    assert len(found) == 2
    assert any("*.missing" in m for m in found)
    assert any("log-start-offset-checkpoint.tmp" in m and "absent" in m for m in found)


def test_broker_configs_need_own_log_dir(tmp_path: Path) -> None:
    step = {"op": "api_versions", "expect": {"apis": [{"api_key": 18}]}}
    configs = {"topics": [], "broker_configs": {"delete.topic.partition.enable": "false"}}
    with pytest.raises(ScenarioError) as caught:
        scenario(tmp_path, [step], setup=configs)
    assert caught.value.path == "$.setup.broker_configs"
    loaded = scenario(tmp_path, [step], setup=configs, requires=["own-log-dir"])
    assert loaded.broker_configs == {"delete.topic.partition.enable": "false"}


def test_the_own_broker_gets_the_scenario_settings_on_top() -> None:
    with EmbeddedTarget() as target:
        assert "kip694" in target.profiles()
        with target.isolated({"delete.topic.partition.enable": "false"}) as own:
            assert "kip694" not in own.profiles()
            with own.connect() as conn:
                assert 10694 not in conn.versions
