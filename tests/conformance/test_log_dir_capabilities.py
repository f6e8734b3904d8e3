"""The capabilities edit-log-dir and own-log-dir: declared, gated, and doing what they say.

``restart_with_files`` changes the log dir between a clean shutdown and the
startup (a file written before a restart would be overwritten by the shutdown's
checkpoint writes); ``own-log-dir`` runs a scenario on a broker of its own.
A broker reached by address offers neither, so such scenarios are
NOT_APPLICABLE there, never FAIL.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios import ScenarioError, load_scenario, run_scenario, scenarios_root
from lethe_conformance.targets import BootstrapTarget
from lethe_conformance.targets.embedded import EmbeddedTarget

KIP107 = scenarios_root() / "kip107"
CORRUPT = KIP107 / "kip107-corrupt-log-start-offset-checkpoint.json"
EMPTY = KIP107 / "kip107-log-start-offset-checkpoint-written-empty.json"


@pytest.fixture(scope="module")
def embedded() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as target:
        yield target


def changed(tmp_path: Path, source: Path, change: Any) -> Path:
    data = json.loads(source.read_text())
    change(data)
    path = tmp_path / source.name
    path.write_text(json.dumps(data))
    return path


def test_the_embedded_target_offers_both(embedded: EmbeddedTarget) -> None:
    assert {"edit-log-dir", "own-log-dir"} <= embedded.capabilities.names()


def test_a_bootstrap_target_offers_neither_even_with_a_log_dir(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    target = BootstrapTarget(embedded.bootstrap, log_dir=tmp_path)
    assert not {"edit-log-dir", "own-log-dir"} & target.capabilities.names()
    for path in (CORRUPT, EMPTY):
        result = run_scenario(target, load_scenario(path))
        assert result.outcome is Outcome.NOT_APPLICABLE
        assert not result.steps


def test_restart_with_files_without_edit_log_dir_in_requires_is_refused(tmp_path: Path) -> None:
    path = changed(tmp_path, CORRUPT, lambda d: d["requires"].remove("edit-log-dir"))
    with pytest.raises(ScenarioError, match="op 'restart_with_files' needs 'edit-log-dir'"):
        load_scenario(path)


def test_a_path_leaving_the_log_dir_is_refused_by_the_schema(tmp_path: Path) -> None:
    def escape(data: dict[str, Any]) -> None:
        data["steps"][2]["files"][0]["path"] = "../elsewhere"

    with pytest.raises(ScenarioError, match=r"\$\.steps\[2\]\.files\[0\]\.path"):
        load_scenario(changed(tmp_path, CORRUPT, escape))


def test_the_file_is_written_while_the_broker_is_down(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    """Writing the corrupt file *before* a plain restart changes nothing: the clean shutdown
    rewrites the checkpoint, the log start offset survives, and the fallback step fails."""

    def plain_restart(data: dict[str, Any]) -> None:
        data["requires"] = ["log-dir", "restart"]
        data["steps"][2] = {"op": "restart"}

    result = run_scenario(embedded, load_scenario(changed(tmp_path, CORRUPT, plain_restart)))
    assert result.outcome is Outcome.FAIL
    assert result.steps[-1].index == 3
    assert [(m.expected, m.actual) for m in result.mismatches] == [("0", "2")]


def test_an_own_log_dir_scenario_runs_on_a_fresh_broker(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    """The same steps on the shared broker see other scenarios' checkpoint entries, so the
    exact-text expectation only holds on a broker of the scenario's own."""
    kept = run_scenario(embedded, load_scenario(CORRUPT), cleanup=False)
    assert kept.outcome is Outcome.PASS  # its topic stays, listed in the shared checkpoint
    log_dir = embedded.capabilities.log_dir
    assert log_dir is not None
    assert (log_dir / "log-start-offset-checkpoint").read_text().splitlines()[1] != "0"
    assert run_scenario(embedded, load_scenario(EMPTY)).outcome is Outcome.PASS


def test_a_wrong_checkpoint_text_fails_at_that_step(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    def wrong(data: dict[str, Any]) -> None:
        data["steps"][1]["until"]["expect"]["checkpoints"][0]["text"] = "0\n1\n"

    result = run_scenario(embedded, load_scenario(changed(tmp_path, EMPTY, wrong)))
    assert result.outcome is Outcome.FAIL
    assert result.steps[-1].index == 1
    assert [m.path for m in result.mismatches] == ["$.steps[1].until.expect.checkpoints[0].text"]
