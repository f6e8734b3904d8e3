"""The capability inject-failure and the op inject_failure: declared, gated, doing what they say.

Only a broker the runner owns can be made to fail on cue, so the embedded
target offers ``inject-failure`` and a broker reached by address never does:
there, scenarios that need it are NOT_APPLICABLE, never FAIL. Expected answers
(KAFKA_STORAGE_ERROR 56, UNKNOWN_SERVER_ERROR -1, low watermark -1) are Kafka's:
kafka-facts.md 1.2.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios import ScenarioError, load_scenario, run_scenario, scenarios_root
from lethe_conformance.targets import ALL_CAPABILITIES, INJECT_FAILURE, BootstrapTarget
from lethe_conformance.targets.embedded import EmbeddedTarget

KIP107 = scenarios_root() / "kip107"
OFFLINE = KIP107 / "kip107-delete-records-log-dir-offline.json"
UNEXPECTED = KIP107 / "kip107-delete-records-unexpected-failure.json"
UNREADABLE = scenarios_root() / "kip68" / "kip68-unreadable-offsets-skip-pass.json"
ALL = [OFFLINE, UNEXPECTED, UNREADABLE]


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


def test_inject_failure_is_a_capability_name() -> None:
    assert INJECT_FAILURE == "inject-failure"
    assert INJECT_FAILURE in ALL_CAPABILITIES


def test_the_embedded_target_offers_it(embedded: EmbeddedTarget) -> None:
    assert INJECT_FAILURE in embedded.capabilities.names()


@pytest.mark.parametrize("source", ALL, ids=lambda p: p.stem)
def test_the_scenarios_pass_on_the_embedded_target(embedded: EmbeddedTarget, source: Path) -> None:
    result = run_scenario(embedded, load_scenario(source))
    assert result.outcome is Outcome.PASS, result


def test_a_bootstrap_target_never_offers_it(embedded: EmbeddedTarget, tmp_path: Path) -> None:
    target = BootstrapTarget(embedded.bootstrap, log_dir=tmp_path)
    assert INJECT_FAILURE not in target.capabilities.names()
    for path in ALL:
        result = run_scenario(target, load_scenario(path))
        assert result.outcome is Outcome.NOT_APPLICABLE
        assert not result.steps


def test_inject_failure_without_the_capability_in_requires_is_refused(tmp_path: Path) -> None:
    path = changed(tmp_path, OFFLINE, lambda d: d["requires"].remove("inject-failure"))
    with pytest.raises(ScenarioError, match="op 'inject_failure' needs 'inject-failure'"):
        load_scenario(path)


def test_an_unknown_kind_is_refused_by_the_schema(tmp_path: Path) -> None:
    def unknown(data: dict[str, Any]) -> None:
        assert data["steps"][2]["op"] == "inject_failure"
        data["steps"][2]["kind"] = "disk-full"

    with pytest.raises(ScenarioError, match=r"\$\.steps\[2\]"):
        load_scenario(changed(tmp_path, OFFLINE, unknown))


def test_without_the_injection_the_offline_partition_is_deleted_normally(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    """The 56 comes from the injected failure, not from the partition itself."""

    def no_injection(data: dict[str, Any]) -> None:
        assert data["steps"][2]["op"] == "inject_failure"
        del data["steps"][2]

    result = run_scenario(embedded, load_scenario(changed(tmp_path, OFFLINE, no_injection)))
    assert result.outcome is Outcome.FAIL
    failed = [s for s in result.steps if s.outcome is Outcome.FAIL]
    assert failed and all("KAFKA_STORAGE_ERROR" in str(s) for s in failed)


def test_without_the_injection_unreadable_offsets_hold_nothing_back(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    """Consumed retention deletes at once when the offsets can be read: the step expecting
    log start 0 fails, so the skip comes from the injected failure."""

    def no_injection(data: dict[str, Any]) -> None:
        assert data["steps"][3]["op"] == "inject_failure"
        del data["steps"][3]

    result = run_scenario(embedded, load_scenario(changed(tmp_path, UNREADABLE, no_injection)))
    assert result.outcome is Outcome.FAIL
