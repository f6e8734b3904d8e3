"""A range that captures the value it found, and later references to that exact value.

On the wall clock a delete horizon is known only between two broker times, but
"every batch rebuilt in one cleaning carries the same horizon" (KIP534-HZN-10;
Kafka 4.0's ``Cleaner.clean`` reads the clock once and passes it to
``doClean``) is still checkable: the first batch's value is captured
(``{"between": [...], "capture": "h1"}``) and the others must equal it
(``{"ref": "h1"}``). The golden compaction scenario does this on its wall path,
and passed on a launched Kafka 4.0.0 and on ``lethe broker`` processes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from lethe_conformance.scenarios import ScenarioError, load_scenario, scenarios_root
from lethe_conformance.scenarios.context import Expectations, RunContext
from lethe_conformance.targets.base import Target

GOLDEN = scenarios_root() / "kip534" / "kip534-golden-compaction-passes.json"
RANGE = {"between": ["100", "200"], "capture": "h1"}


def context() -> RunContext:
    return RunContext(cast(Target, None), load_scenario(GOLDEN))


def test_a_value_in_range_is_captured_and_equal_values_pass() -> None:
    ctx, exp = context(), Expectations()
    ctx.judge_int(exp, "$.a", RANGE, 150)
    ctx.judge_int(exp, "$.b", {"ref": "h1"}, 150)
    assert exp.mismatches == []
    assert ctx.values["h1"] == 150


def test_a_different_value_fails_against_the_captured_one() -> None:
    ctx, exp = context(), Expectations()
    ctx.judge_int(exp, "$.a", RANGE, 150)
    ctx.judge_int(exp, "$.b", {"ref": "h1"}, 151)  # also inside the range: still a FAIL
    assert [str(m) for m in exp.mismatches] == ["$.b: expected 150, got 151"]


def test_a_value_out_of_range_fails_and_is_still_the_reference() -> None:
    ctx, exp = context(), Expectations()
    ctx.judge_int(exp, "$.a", RANGE, 250)
    ctx.judge_int(exp, "$.b", {"ref": "h1"}, 250)
    assert [str(m) for m in exp.mismatches] == ["$.a: expected between 100 and 200, got 250"]


def wall_batches(data: dict[str, Any]) -> list[dict[str, Any]]:
    step = data["steps"][7]
    assert step["clock"] == "wall" and "KIP534-HZN-10" in step["requirements"]
    batches: list[dict[str, Any]] = step["expect"]["partitions"][0]["batches"]
    return batches


def test_the_golden_wall_path_compares_every_pass1_horizon_with_the_first() -> None:
    data = json.loads(GOLDEN.read_text())
    horizons = [b["delete_horizon_ms"] for b in wall_batches(data) if b.get("delete_horizon")]
    assert horizons[0]["capture"] == "h1"
    assert horizons[1:] == [{"ref": "h1"}] * 3
    virtual_only = {r for e in data["wall_clock"]["virtual_only"] for r in e["requirements"]}
    assert virtual_only == {"KIP534-CLN-3"}


def test_a_reference_before_its_capture_is_refused(tmp_path: Path) -> None:
    data = json.loads(GOLDEN.read_text())
    batches = wall_batches(data)
    batches[0]["delete_horizon_ms"], batches[1]["delete_horizon_ms"] = (
        batches[1]["delete_horizon_ms"],
        batches[0]["delete_horizon_ms"],
    )
    batches[0]["base_timestamp"] = {"ref": "t1"}  # the first batch no longer refers to h1
    path = tmp_path / GOLDEN.name
    path.write_text(json.dumps(data))
    with pytest.raises(ScenarioError, match=r"steps\[7\].*'h1' is captured by no earlier step"):
        load_scenario(path)
