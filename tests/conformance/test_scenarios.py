"""The runner grades honestly: it can fail, and it never calls "could not tell" a pass.

Small scenarios are written as dicts, saved to a temporary file and loaded
through the real loader, then run against the embedded broker (or targets
derived from it: without a log dir, on the wall clock, missing an API) and
against a scripted peer that answers nonsense.
"""

from __future__ import annotations

import copy
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_broker import FakeBroker, api_versions_body, response_frame
from lethe_conformance.client import KafkaConnection
from lethe_conformance.outcomes import Mismatch, Outcome, ScenarioResult, requirement_results, worst
from lethe_conformance.scenarios import (
    Scenario,
    Selection,
    load_scenario,
    run_scenario,
    run_scenarios,
    scenarios_root,
)
from lethe_conformance.targets import BootstrapTarget, Capabilities
from lethe_conformance.targets.embedded import EmbeddedTarget
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.delete_records import DeleteRecordsResponse
from lethe_formats.protocol.messages.describe_configs import DescribeConfigsResponse
from lethe_formats.protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)

GOLDEN = scenarios_root() / "kip107" / "kip107-golden-delete-records.json"
RECORD = {"key": "k", "value": "v", "timestamp": "1795286504180"}
TOPIC = {
    "name": "t",
    "partitions": 1,
    "configs": {"retention.ms": "-1", "message.timestamp.after.max.ms": "9223372036854775807"},
}


@pytest.fixture(scope="module")
def embedded() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as target:
        yield target


def scenario(tmp_path: Path, data: dict[str, Any]) -> Scenario:
    path = tmp_path / f"{data['id']}.json"
    path.write_text(json.dumps(data))
    return load_scenario(path)


def small(ident: str, steps: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {
        "id": ident,
        "description": "a test scenario",
        "requirements": fields.pop("requirements", ["KIP107-DEL-2"]),
        "profile": fields.pop("profile", "kip107"),
        "requires": fields.pop("requires", []),
        "setup": fields.pop("setup", {"topics": [TOPIC]}),
        "steps": steps,
        **fields,
    }


PRODUCE = {"op": "produce", "topic": "t", "partition": 0, "batches": [{"records": [RECORD] * 3}]}


def delete_to(offset: str, low_watermark: str, **more: Any) -> dict[str, Any]:
    return {
        "op": "delete_records",
        "partitions": [{"topic": "t", "partition": 0, "offset": offset}],
        "expect": {
            "partitions": [
                {"topic": "t", "partition": 0, "error": "NONE", "low_watermark": low_watermark}
            ]
        },
        **more,
    }


class WithoutApi:
    """The embedded broker as a target that does not advertise one API."""

    def __init__(self, inner: EmbeddedTarget, api_key: int) -> None:
        self.inner, self.api_key = inner, api_key
        self.name = "without-api"
        self.capabilities = inner.capabilities

    def connect(self) -> KafkaConnection:
        conn = self.inner.connect()
        conn.versions.pop(self.api_key)
        return conn

    def profiles(self) -> frozenset[str]:
        return frozenset({"kip107"})

    def advance_time(self, ms: int) -> None: ...
    def restart(self) -> None: ...
    def trigger_cleaning(self) -> None: ...
    def close(self) -> None: ...


# --- FAIL: the runner can fail ------------------------------------------------------------


def test_a_wrong_expectation_fails_naming_the_json_path_expected_and_actual(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    data = json.loads(GOLDEN.read_text())
    step = next(i for i, s in enumerate(data["steps"]) if s["op"] == "delete_records")
    data["steps"][step]["expect"]["partitions"][0]["low_watermark"] = "20"  # Kafka said 19
    result = run_scenario(embedded, scenario(tmp_path, data))
    assert result.outcome is Outcome.FAIL
    assert result.mismatches == (
        Mismatch(f"$.steps[{step}].expect.partitions[0].low_watermark", "20", "19"),
    )
    assert f"steps[{step}] delete_records" in result.detail


def test_a_wrong_error_name_fails_showing_both_codes(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    bad = delete_to("9", "-1")
    bad["expect"]["partitions"][0]["error"] = "NONE"
    result = run_scenario(
        embedded, scenario(tmp_path, small("kip107-t-wrong-error", [PRODUCE, bad]))
    )
    assert result.outcome is Outcome.FAIL
    assert str(result.mismatches[0]).endswith("expected NONE (0), got OFFSET_OUT_OF_RANGE (1)")


def test_a_requirement_tied_to_passing_steps_passes_though_a_later_step_fails(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    steps = [PRODUCE, delete_to("1", "1", requirements=["KIP107-DEL-2"]), delete_to("2", "7")]
    data = small("kip107-t-partial", steps, requirements=["KIP107-DEL-2", "KIP107-LWM-2"])
    result = run_scenario(embedded, scenario(tmp_path, data))
    assert result.outcome is Outcome.FAIL
    assert result.requirements == {"KIP107-DEL-2": Outcome.PASS, "KIP107-LWM-2": Outcome.FAIL}
    assert [s.outcome for s in result.steps] == [Outcome.PASS, Outcome.PASS, Outcome.FAIL]


def test_fetched_records_are_compared_field_by_field(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    fetch = {
        "op": "fetch", "topic": "t", "partition": 0, "offset": "1",
        "expect": {"records": [{"offset": "1", "value": "v"}, {"offset": "2", "key": "other"}]},
    }  # fmt: skip
    result = run_scenario(embedded, scenario(tmp_path, small("kip107-t-records", [PRODUCE, fetch])))
    # bytes as lethe dump --json writes them, never Python's b'...'
    assert result.mismatches == (
        Mismatch("$.steps[1].expect.records[1].key", '{"utf8": "other"}', '{"utf8": "k"}'),
    )


# --- NOT_APPLICABLE, UNSUPPORTED ----------------------------------------------------------


def test_log_dir_scenarios_are_not_applicable_without_log_dir_access(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    remote = BootstrapTarget(embedded.bootstrap)
    assert remote.capabilities == Capabilities(clock="wall")
    check = {
        "op": "check_files",
        "expect": {"partitions": [{"topic": "t", "partition": 0, "segments": ["0"]}]},
    }
    data = small("kip107-t-files", [PRODUCE, check], requires=["log-dir"])
    result = run_scenario(remote, scenario(tmp_path, data))
    assert result.outcome is Outcome.NOT_APPLICABLE
    assert "lacks log-dir" in result.detail
    assert result.steps == ()  # nothing ran, nothing was created
    assert result.requirements == {"KIP107-DEL-2": Outcome.NOT_APPLICABLE}


def test_clock_scenarios_are_not_applicable_on_the_wall_clock(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    data = small(
        "kip107-t-clock", [{"op": "advance_time", "ms": "1000"}], requires=["clock-control"]
    )
    result = run_scenario(BootstrapTarget(embedded.bootstrap), scenario(tmp_path, data))
    assert result.outcome is Outcome.NOT_APPLICABLE


def test_a_profile_the_target_does_not_offer_is_unsupported(tmp_path: Path) -> None:
    with EmbeddedTarget(overrides={"delete.topic.partition.enable": "false"}) as without:
        assert "kip694" not in without.profiles()
        data = small(
            "kip694-t-extension", [PRODUCE], profile="kip694", requirements=["KIP694-API-1"]
        )
        result = run_scenario(without, scenario(tmp_path, data))
    assert result.outcome is Outcome.UNSUPPORTED
    assert "does not offer profile kip694" in result.detail


def test_an_api_the_target_does_not_advertise_is_unsupported(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    target = WithoutApi(embedded, ApiKey.DELETE_RECORDS)
    result = run_scenario(
        target, scenario(tmp_path, small("kip107-t-no-api", [PRODUCE, delete_to("1", "1")]))
    )
    assert result.outcome is Outcome.UNSUPPORTED
    assert "DELETE_RECORDS" in result.detail


# --- INCONCLUSIVE vs FAIL for waits -------------------------------------------------------

NEVER = {
    "op": "wait",
    "timeout_ms": 300,
    "poll_ms": 100,
    "until": {
        "op": "list_offsets",
        "partitions": [{"topic": "t", "partition": 0, "timestamp": "earliest"}],
        "expect": {"partitions": [{"topic": "t", "partition": 0, "offset": "99"}]},
    },
}


def test_a_wall_clock_wait_that_runs_out_is_inconclusive(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    result = run_scenario(
        BootstrapTarget(embedded.bootstrap),
        scenario(tmp_path, small("kip107-t-wait", [PRODUCE, NEVER])),
    )
    assert result.outcome is Outcome.INCONCLUSIVE
    assert "wall-clock" in result.detail
    assert result.mismatches[0].path == "$.steps[1].until.expect.partitions[0].offset"


def test_a_virtual_clock_wait_that_runs_out_fails(embedded: EmbeddedTarget, tmp_path: Path) -> None:
    result = run_scenario(embedded, scenario(tmp_path, small("kip107-t-wait", [PRODUCE, NEVER])))
    assert result.outcome is Outcome.FAIL
    assert "virtual" in result.detail


# --- ERROR: nonsense, unreachable, refused setup ------------------------------------------


def nonsense_broker(header: RequestHeader, payload: bytes) -> bytes | None:
    """Answers setup correctly, then DeleteRecords with another correlation id."""
    if header.api_key == ApiKey.API_VERSIONS:
        return response_frame(header, api_versions_body())
    if header.api_key == ApiKey.METADATA:
        part = MetadataResponsePartition(partition_index=0, leader_id=1)
        topic = MetadataResponseTopic(name="*", partitions=(part,))
        body = MetadataResponse(
            brokers=(MetadataResponseBroker(1, "127.0.0.1", 1),), topics=(topic,)
        )
        return response_frame(header, body)
    if header.api_key == ApiKey.DESCRIBE_CONFIGS:
        return response_frame(header, DescribeConfigsResponse())
    return response_frame(header, DeleteRecordsResponse(), correlation_id=header.correlation_id + 1)


def test_a_target_answering_nonsense_is_its_fail_naming_target_and_api(tmp_path: Path) -> None:
    # bytes that answer another request: the target's wrong answer (issue #14), never a pass
    data = small("kip107-t-nonsense", [delete_to("1", "1")], setup={"topics": []})
    with FakeBroker(nonsense_broker) as peer:
        result = run_scenario(BootstrapTarget(f"127.0.0.1:{peer.port}"), scenario(tmp_path, data))
    assert result.outcome is Outcome.FAIL
    assert result.detail.startswith("steps[0] delete_records: ")
    assert "(not an answer to the request)" in result.detail
    assert f"127.0.0.1:{peer.port} (DELETE_RECORDS)" in result.detail
    assert "correlation id" in result.detail


def test_an_unreachable_target_gives_every_scenario_an_error(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    target = BootstrapTarget(f"127.0.0.1:{port}")
    results = run_scenarios(target, [scenario(tmp_path, small("kip107-t-down", [PRODUCE]))])
    assert [r.outcome for r in results] == [Outcome.ERROR]
    assert f"127.0.0.1:{port}" in results[0].detail


def test_a_refused_setup_is_the_targets_fail_with_the_step_and_the_answer(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    # Scenarios' setups are valid for Kafka: a target refusing one refuses a valid request
    bad = copy.deepcopy(TOPIC)
    bad["configs"]["cleanup.policy"] = "shred"
    result = run_scenario(
        embedded, scenario(tmp_path, small("kip107-t-setup", [PRODUCE], setup={"topics": [bad]}))
    )
    assert result.outcome is Outcome.FAIL
    assert result.detail.startswith("setup: CreateTopics t {")
    assert '"cleanup.policy": "shred"}: INVALID_CONFIG' in result.detail


# --- selection and aggregation ------------------------------------------------------------


def test_selection_by_profile_requirement_and_id(tmp_path: Path) -> None:
    a = scenario(tmp_path, small("kip107-t-a", [PRODUCE], requirements=["KIP107-DEL-2"]))
    b = scenario(
        tmp_path, small("kip534-t-b", [PRODUCE], profile="kip534", requirements=["KIP534-HZN-1"])
    )
    assert [s.id for s in (a, b) if Selection(profiles=frozenset({"kip534"})).matches(s)] == [
        "kip534-t-b"
    ]
    assert Selection(requirements=frozenset({"KIP107-DEL-2", "X"})).matches(a)
    assert not Selection(scenarios=frozenset({"kip107-t-a"})).matches(b)


def result(ident: str, **requirements: Outcome) -> ScenarioResult:
    outcome = worst(requirements.values()) or Outcome.PASS
    return ScenarioResult(
        ident,
        ident,
        "kip107",
        outcome,
        "",
        {k.replace("_", "-"): v for k, v in requirements.items()},
    )


def test_a_requirement_gets_the_worst_outcome_over_its_scenarios() -> None:
    results = [
        result("one", R_1=Outcome.PASS, R_2=Outcome.PASS),
        result("two", R_1=Outcome.NOT_APPLICABLE, R_3=Outcome.INCONCLUSIVE),
        result("three", R_1=Outcome.FAIL, R_3=Outcome.UNSUPPORTED),
    ]
    graded = requirement_results(results)
    assert {k: v.outcome for k, v in graded.items()} == {
        "R-1": Outcome.FAIL,
        "R-2": Outcome.PASS,
        "R-3": Outcome.INCONCLUSIVE,
    }
    assert graded["R-1"].scenarios == {
        "one": Outcome.PASS,
        "two": Outcome.NOT_APPLICABLE,
        "three": Outcome.FAIL,
    }


def test_outcomes_are_ordered_and_only_fail_and_error_fail_a_gate() -> None:
    assert [o.rank for o in Outcome] == list(range(6))
    assert worst([Outcome.PASS, Outcome.ERROR, Outcome.FAIL]) is Outcome.ERROR
    assert worst([]) is None
    assert {o for o in Outcome if o.fails_gate} == {Outcome.FAIL, Outcome.ERROR}


def test_produced_headers_come_back_in_order_with_null_and_binary_values(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    headers = [{"key": "a", "value": None}, {"key": "a", "value": {"hex": "00ff"}}]
    produce = {
        "op": "produce",
        "topic": "t",
        "partition": 0,
        "batches": [{"records": [dict(RECORD, headers=headers)], "compression": "zstd"}],
    }
    fetch = {
        "op": "fetch", "topic": "t", "partition": 0, "offset": "0",
        "expect": {"records": [{"offset": "0", "key": "k", "headers": headers}]},
    }  # fmt: skip
    result = run_scenario(embedded, scenario(tmp_path, small("kip107-t-headers", [produce, fetch])))
    assert result.outcome is Outcome.PASS, result.detail
