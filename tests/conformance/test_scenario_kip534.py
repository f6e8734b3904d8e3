"""Every KIP-534 scenario passes against the embedded reference broker, except the listed
known failures (genuine broker defects), which must fail.

The expectations in the scenario files come from Kafka (the golden compaction and
transactions captures, kafka-facts.md section 4, the KIP and the catalog's decisions);
this test is where the reference broker's log cleaner is held to them. One broker per
test module serves all scenarios, each on topics of its own, as a shared CI broker would
(scenarios that need a fresh log dir get one: FRESH_TARGET, own-log-dir); the cleaner
runs when a scenario triggers it (trigger-cleaning) or on the broker's virtual clock.
The second half unit-tests the format additions the KIP-534 scenarios brought: batch
and .txnindex expectations, captured values, idempotent batches, broker configs, and
fixture segments copied into a log dir.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_conformance.outcomes import Outcome, ScenarioResult
from lethe_conformance.scenarios import (
    Scenario,
    ScenarioError,
    known_requirement_ids,
    load_scenario,
    load_scenarios,
    run_scenario,
    scenarios_root,
)
from lethe_conformance.scenarios.context import RunContext
from lethe_conformance.scenarios.ops import OPS
from lethe_conformance.targets.base import Capabilities
from lethe_conformance.targets.embedded import EmbeddedTarget
from lethe_formats.records.builder import RecordSpec, build_batch, build_empty_batch

SCENARIOS = load_scenarios(
    sorted((scenarios_root() / "kip534").glob("*.json")),
    known_requirements=known_requirement_ids(),
)

#: Scenarios that must run first on a broker of their own: what they check holds on Kafka
#: at any time, but a defect may hide once other scenarios ran (say, cleaned a log).
FRESH_TARGET = frozenset({"kip534-cleaner-checkpoint-file-exists"})

#: Scenarios the reference broker fails although their expectation is Kafka's: genuine
#: broker defects, each with the reason (strict: a fixed one makes its test fail).
KNOWN_REFERENCE_FAILURES: dict[str, str] = {}


@pytest.fixture(scope="module")
def target() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as embedded:
        yield embedded


def test_there_are_kip534_scenarios() -> None:
    assert len(SCENARIOS) >= 10


def _judge_on_reference(result: ScenarioResult, scenario: Scenario) -> None:
    report = [result.detail, *map(str, result.mismatches)]
    if scenario.id in KNOWN_REFERENCE_FAILURES:
        assert result.outcome is Outcome.FAIL, "fixed? remove it from KNOWN_REFERENCE_FAILURES"
        return
    assert result.outcome is Outcome.PASS, "\n".join(report)
    assert set(result.requirements.values()) == {Outcome.PASS}


@pytest.mark.parametrize(
    "scenario", [s for s in SCENARIOS if s.id not in FRESH_TARGET], ids=lambda s: s.id
)
def test_scenario_passes_on_the_reference_broker(
    target: EmbeddedTarget, scenario: Scenario
) -> None:
    _judge_on_reference(run_scenario(target, scenario), scenario)


@pytest.mark.parametrize(
    "scenario", [s for s in SCENARIOS if s.id in FRESH_TARGET], ids=lambda s: s.id
)
def test_scenario_passes_on_a_fresh_reference_broker(scenario: Scenario) -> None:
    with EmbeddedTarget() as fresh:
        _judge_on_reference(run_scenario(fresh, scenario), scenario)


def last_checked_value(data: dict[str, Any]) -> tuple[int, list[str | int]]:
    """(step index, key path inside the step) of the last int64 (or captured-value offset)
    checked outside produce steps: the last, so the steps before it (which build the state
    it checks) still pass and the failure lands exactly there. A wait's condition counts
    only when no other step checks a value (on the virtual clock an unmet wait is a FAIL).
    Steps of the wall clock's path do not run on the virtual target, so they never count."""
    plain: tuple[int, list[str | int]] | None = None
    waited: tuple[int, list[str | int]] | None = None
    for index, step in enumerate(data["steps"]):
        if step.get("clock") == "wall":
            continue
        if step["op"] == "wait":
            path = _value_path(step["until"].get("expect", {}), ["until", "expect"])
            waited = (index, path) if path is not None else waited
        elif step["op"] != "produce" and "expect" in step:
            path = _value_path(step["expect"], ["expect"])
            plain = (index, path) if path is not None else plain
    found = plain or waited
    if found is None:
        raise AssertionError(f"{data['id']} checks no value")
    return found


def _absent_to_listed(data: dict[str, Any]) -> int | None:
    """For a scenario that checks no value: expect its first ``absent`` checkpoint entry
    listed at offset 0 instead; the index of that step."""
    for index, step in enumerate(data["steps"]):
        for checkpoint in step.get("expect", {}).get("checkpoints", ()):
            if checkpoint.get("absent"):
                entry = checkpoint.pop("absent")[0]
                checkpoint["entries"] = [entry | {"offset": "0"}]
                return index
    return None


def _value_path(value: Any, path: list[str | int]) -> list[str | int] | None:
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return path
    if isinstance(value, dict) and "ref" in value:
        return [*path, "plus"]
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        found = _value_path(item, [*path, key])
        if found is not None:
            return found
    return None


def _bump(holder: Any, key: str | int) -> None:
    """Add one to an int64 string, or to a ``{"ref": ...}`` value's ``plus``."""
    holder[key] = str(int(holder.get(key, "0") if key == "plus" else holder[key]) + 1)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_a_changed_expectation_makes_the_scenario_fail(
    target: EmbeddedTarget, scenario: Scenario, tmp_path: Path
) -> None:
    """Every scenario really checks what it states: bump one expected value and it fails there."""
    data = json.loads(Path(scenario.source).read_text())
    listed = _absent_to_listed(data) if scenario.id in FRESH_TARGET else None
    if listed is not None:
        index, prefix = listed, f"$.steps[{listed}].expect"
    else:
        index, keys = last_checked_value(data)
        holder: Any = data["steps"][index]
        for key in keys[:-1]:
            holder = holder[key]
        _bump(holder, keys[-1])
        prefix = f"$.steps[{index}]." + ".".join(
            str(k) for k in keys[:2] if k in ("until", "expect")
        )
    path = tmp_path / Path(scenario.source).name
    path.write_text(json.dumps(data))
    result = run_scenario(target, load_scenario(path))
    assert result.outcome is Outcome.FAIL
    if scenario.id in KNOWN_REFERENCE_FAILURES:
        return  # it fails anyway, maybe at an earlier step
    assert result.steps[-1].index == index
    assert result.mismatches
    assert all(m.path.startswith(prefix) for m in result.mismatches)


# --- the format additions: batch expectations, captured values, broker configs -----------

MINIMAL: dict[str, Any] = {
    "id": "kip534-unit",
    "description": "A scenario to break one field at a time",
    "requirements": ["KIP534-HZN-1"],
    "profile": "kip534",
    "requires": ["log-dir"],
    "setup": {"topics": [{"name": "t", "partitions": 1}]},
    "steps": [
        {
            "op": "check_files",
            "expect": {"partitions": [{"topic": "t", "partition": 0, "batches": [{}]}]},
        }
    ],
}


def scenario_file(tmp_path: Path, steps: list[dict[str, Any]]) -> Path:
    path = tmp_path / "kip534-unit.json"
    path.write_text(json.dumps(MINIMAL | {"steps": steps}))
    return path


def batch_step(batch: dict[str, Any]) -> dict[str, Any]:
    return {
        "op": "check_files",
        "expect": {"partitions": [{"topic": "t", "partition": 0, "batches": [batch]}]},
    }


def refusal(tmp_path: Path, steps: list[dict[str, Any]]) -> ScenarioError:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(scenario_file(tmp_path, steps))
    return caught.value


@pytest.mark.parametrize(
    ("batch", "where"),
    [
        ({"delete_horizon": "yes"}, ".delete_horizon"),
        ({"base_offset": 4}, ".base_offset"),
        ({"crc": -1}, ".crc"),
        ({"compression": "brotli"}, ".compression"),
        ({"delete_horizon_ms": {"ref": "t1", "plus": 6000}}, ".delete_horizon_ms"),
        ({"offsets": [6]}, ".offsets[0]"),
    ],
)
def test_a_malformed_batch_expectation_names_its_json_path(
    tmp_path: Path, batch: dict[str, Any], where: str
) -> None:
    error = refusal(tmp_path, [batch_step(batch)])
    assert error.path.startswith(f"$.steps[0].expect.partitions[0].batches[0]{where}")


def test_an_unknown_batch_field_is_refused_by_name(tmp_path: Path) -> None:
    error = refusal(tmp_path, [batch_step({"horizon_bit": True})])
    assert error.path == "$.steps[0].expect.partitions[0].batches[0]"
    assert "horizon_bit" in error.message


def test_a_reference_to_a_value_no_earlier_step_captured_is_refused(tmp_path: Path) -> None:
    error = refusal(tmp_path, [batch_step({"max_timestamp": {"ref": "t1"}})])
    assert error.path == "$.steps[0].expect.partitions[0].batches[0].max_timestamp.ref"
    assert error.message == "value 't1' is captured by no earlier step"


def test_a_value_captured_by_an_earlier_produce_can_be_referred_to(tmp_path: Path) -> None:
    produce = {
        "op": "produce",
        "topic": "t",
        "partition": 0,
        "batches": [{"records": [{"key": "k", "value": "v", "timestamp": "0"}]}],
        "capture": {"log_append_time": "t1"},
    }
    path = scenario_file(tmp_path, [produce, batch_step({"max_timestamp": {"ref": "t1"}})])
    assert load_scenario(path).steps[1].op == "check_files"
    error = refusal(tmp_path, [batch_step({"max_timestamp": {"ref": "t1"}}), produce])
    assert error.path.startswith("$.steps[0]")


def test_a_malformed_idempotent_producer_names_its_json_path(tmp_path: Path) -> None:
    produce = {
        "op": "produce",
        "topic": "t",
        "partition": 0,
        "batches": [
            {
                "records": [{"key": "k", "value": "v", "timestamp": "0"}],
                "producer": {"producer_id": "7", "producer_epoch": 0, "base_sequence": -1},
            }
        ],
    }
    error = refusal(tmp_path, [produce])
    assert error.path == "$.steps[0].batches[0].producer.base_sequence"


def test_topic_configs_need_a_topic(tmp_path: Path) -> None:
    assert refusal(tmp_path, [{"op": "describe_configs"}]).path.startswith("$.steps[0]")


class _LogDirTarget:
    """Just enough of a target for check_files: a readable log dir, nothing to connect."""

    name = "unit"

    def __init__(self, log_dir: Path) -> None:
        self.capabilities = Capabilities(log_dir=log_dir)


def _segment(folder: Path, base: int, *batches: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{base:020d}.log").write_bytes(b"".join(batches))


def _judge(tmp_path: Path, batches: list[dict[str, Any]], captured: dict[str, int]) -> list[str]:
    """check_files of ``batches`` against a log dir holding a horizon batch at 4 and an empty
    producer-state batch at 7 in segment 0, and a plain batch at 9 in segment 9."""
    scenario = load_scenario(scenario_file(tmp_path, [batch_step({})]))
    ctx = RunContext(_LogDirTarget(tmp_path / "logs"), scenario, token="abc123")  # type: ignore[arg-type]
    ctx.values.update(captured)
    folder = tmp_path / "logs" / f"{ctx.topic('t')}-0"
    tombstone = RecordSpec(b"k", None, (), 1_000)
    horizon = build_batch(
        [tombstone], base_offset=4, offset_deltas=[2], last_offset_delta=2, delete_horizon_ms=7_000
    )
    empty = build_empty_batch(
        base_offset=7, last_offset_delta=1, max_timestamp=1_500, producer_id=5, base_sequence=3
    )
    _segment(folder, 0, horizon, empty)
    _segment(folder, 9, build_batch([RecordSpec(b"a", b"1", (), 2_000)], base_offset=9))
    partition = {"topic": "t", "partition": 0, "batches": batches}
    step = {"op": "check_files", "expect": {"partitions": [partition]}}
    return [f"{m.path}: {m.expected} / {m.actual}" for m in OPS["check_files"](ctx, step, "$.s")]


def test_check_files_compares_the_listed_batch_fields(tmp_path: Path) -> None:
    wanted: list[dict[str, Any]] = [
        {
            "segment": "0",
            "base_offset": "4",
            "last_offset": "6",
            "count": 1,
            "offsets": ["6"],
            "delete_horizon": True,
            "delete_horizon_ms": {"ref": "t1", "plus": "6000"},
            "base_timestamp": "7000",
            "max_timestamp": "1000",
            "control": False,
        },
        {
            "base_offset": "7",
            "last_offset": "8",
            "count": 0,
            "base_timestamp": "-1",
            "delete_horizon": False,
            "delete_horizon_ms": None,
            "producer_id": "5",
            "base_sequence": 3,
        },
        {"segment": "9", "base_offset": "9", "offsets": ["9"], "compression": "none"},
    ]
    assert _judge(tmp_path, wanted, {"t1": 1_000}) == []


def test_check_files_reports_each_wrong_batch_field_at_its_path(tmp_path: Path) -> None:
    wanted: list[dict[str, Any]] = [
        {"segment": "4", "delete_horizon_ms": {"ref": "t1", "plus": "6000"}, "offsets": ["4"]},
        {"delete_horizon": True, "base_timestamp": "1500"},
    ]
    assert _judge(tmp_path, wanted, {"t1": 1_001}) == [
        "$.s.expect.partitions[0].batches (count of batches): 2 / 3",
        "$.s.expect.partitions[0].batches[0].delete_horizon_ms: 7001 / 7000",
        "$.s.expect.partitions[0].batches[0].segment: 4 / 0",
        "$.s.expect.partitions[0].batches[0].offsets: [4] / [6]",
        "$.s.expect.partitions[0].batches[1].base_timestamp: 1500 / -1",
        "$.s.expect.partitions[0].batches[1].delete_horizon: true / false",
    ]


def test_a_missing_fixture_folder_to_copy_names_its_json_path(tmp_path: Path) -> None:
    copy = {"path": "{t}-0", "copy_segments_from": "golden/transactions/pass9/golden-txn-0"}
    step = {"op": "restart_with_files", "files": [{"path": "x", "delete": True}, copy]}
    with pytest.raises(ScenarioError) as caught:
        path = tmp_path / "kip534-unit.json"
        path.write_text(json.dumps(MINIMAL | {"requires": ["edit-log-dir"], "steps": [step]}))
        load_scenario(path)
    assert caught.value.path == "$.steps[0].files[1].copy_segments_from"
    assert "does not exist" in caught.value.message


def test_txn_index_entries_are_compared_exactly_in_segment_order(tmp_path: Path) -> None:
    scenario = load_scenario(scenario_file(tmp_path, [batch_step({})]))
    ctx = RunContext(_LogDirTarget(tmp_path / "logs"), scenario, token="abc123")  # type: ignore[arg-type]
    folder = tmp_path / "logs" / f"{ctx.topic('t')}-0"
    _segment(folder, 0, build_batch([RecordSpec(b"a", b"1", (), 0)], base_offset=0))
    golden = scenario_root_golden_txn() / "00000000000000000009.txnindex"
    (folder / "00000000000000000000.txnindex").write_bytes(golden.read_bytes())
    entry = {
        "segment": "0",
        "producer_id": "0",
        "first_offset": "6",
        "last_offset": "9",
        "last_stable_offset": "10",
    }

    def judge(wanted: list[dict[str, str]]) -> list[str]:
        partition = {"topic": "t", "partition": 0, "txn_index": wanted}
        step = {"op": "check_files", "expect": {"partitions": [partition]}}
        return [f"{m.path}: {m.actual}" for m in OPS["check_files"](ctx, step, "$.s")]

    assert judge([entry]) == []
    assert judge([]) == [
        '$.s.expect.partitions[0].txn_index: ["segment 0: producer 0 [6, 9] lso 10"]'
    ]


def scenario_root_golden_txn() -> Path:
    """Kafka's .txnindex of the golden aborted transaction (producer 0, offsets 6-9, LSO 10)."""
    return scenarios_root().parent / "golden" / "transactions" / "pass0" / "golden-txn-0"


def test_up_to_offset_needs_a_fixture_to_copy(tmp_path: Path) -> None:
    step = {"op": "restart_with_files", "files": [{"path": "x", "text": "", "up_to_offset": "5"}]}
    path = tmp_path / "kip534-unit.json"
    path.write_text(json.dumps(MINIMAL | {"requires": ["edit-log-dir"], "steps": [step]}))
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.path.startswith("$.steps[0].files[0]")
