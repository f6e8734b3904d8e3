"""A target that misbehaves, as third-party brokers do, gets graded, never a traceback or a hang.

The target is lethe's reference broker behind :class:`MisbehavingProxy`, which
closes the connection, answers garbage or another request's correlation id,
stays silent, or refuses idempotent batches with UNKNOWN_PRODUCER_ID on the
APIs a test names (what Tansu 0.6.0 does on DeleteRecords, DescribeConfigs and
Produce). Grading (fixtures/scenarios/README.md, *Outcomes*; issues #13, #14):
a closed connection on an advertised API, an answer that is not one and a
refused valid setup step are the target's FAIL; silence is INCONCLUSIVE
after the request timeout. Every result names the step.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_conformance.outcomes import Outcome, ScenarioResult
from lethe_conformance.run import RunOptions, execute
from lethe_conformance.scenarios import load_scenario, run_scenarios
from lethe_conformance.targets.bootstrap import BootstrapTarget
from lethe_conformance.targets.embedded import EmbeddedTarget
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.api_keys import ApiKey
from misbehaving_proxy import MisbehavingProxy

REQUEST_TIMEOUT_S = 1.0
SPECIAL = "kip107-list-offsets-special-timestamps"  # steps: produce, delete_records, ...
CONFIGS = "kip107-cleanup-policy-gates-delete-records"  # steps[0]: describe_configs
PRODUCER = "kip107-producer-outlives-delete-records"  # steps[0]: an idempotent produce
REPLAY = "kip107-delete-records-inside-compressed-batches"  # setup replays idempotent batches


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[str, int]]:
    with EmbeddedTarget(clock="wall") as target:
        host, _, port = target.bootstrap.rpartition(":")
        yield host, int(port)


def _run(
    upstream: tuple[str, int], behaviours: dict[int, str], scenario: str
) -> tuple[ScenarioResult, float]:
    loaded = load_scenario(fixtures_root() / "scenarios" / "kip107" / f"{scenario}.json")
    with MisbehavingProxy(upstream, behaviours) as proxy:
        target = BootstrapTarget(proxy.address, request_timeout=REQUEST_TIMEOUT_S)
        started = time.monotonic()
        (result,) = run_scenarios(target, [loaded])
        elapsed = time.monotonic() - started
        target.close()
    assert proxy.misbehaved, "the proxy never misbehaved: the test shows nothing"
    return result, elapsed


@pytest.mark.parametrize(
    ("api", "behaviour", "scenario", "outcome", "names"),
    [
        (
            ApiKey.DELETE_RECORDS,
            "close",
            SPECIAL,
            Outcome.FAIL,
            ("steps[1] delete_records:", "(DELETE_RECORDS): the target closed the connection"),
        ),
        (
            ApiKey.DESCRIBE_CONFIGS,
            "close",
            CONFIGS,
            Outcome.FAIL,
            ("steps[0] describe_configs:", "(DESCRIBE_CONFIGS): the target closed the connection"),
        ),
        (
            ApiKey.PRODUCE,
            "unknown-producer",
            PRODUCER,
            Outcome.FAIL,
            ("steps[0] produce:", "got UNKNOWN_PRODUCER_ID (59)"),
        ),
        (
            ApiKey.PRODUCE,
            "unknown-producer",
            REPLAY,
            Outcome.FAIL,
            ("setup: replay[0] batch ", "Produce answered UNKNOWN_PRODUCER_ID"),
        ),
        (
            ApiKey.DELETE_RECORDS,
            "garbage",
            SPECIAL,
            Outcome.FAIL,
            ("steps[1] delete_records:", "undecodable", "not an answer to the request"),
        ),
        (
            ApiKey.FETCH,
            "other-id",
            "kip107-golden-delete-records",
            Outcome.FAIL,
            ("fetch:", "correlation id", "not an answer to the request"),
        ),
        (
            ApiKey.DESCRIBE_CONFIGS,
            "hang",
            CONFIGS,
            Outcome.INCONCLUSIVE,
            ("steps[0] describe_configs:", "(DESCRIBE_CONFIGS): no response within 1 s"),
        ),
        (
            ApiKey.LIST_OFFSETS,
            "hang",
            SPECIAL,
            Outcome.INCONCLUSIVE,
            ("setup:", "(LIST_OFFSETS): no response within 1 s", "hangs"),
        ),
    ],
)
def test_a_misbehaving_target_is_graded_naming_the_step(
    upstream: tuple[str, int],
    api: int,
    behaviour: str,
    scenario: str,
    *,
    outcome: Outcome,
    names: tuple[str, ...],
) -> None:
    result, elapsed = _run(upstream, {api: behaviour}, scenario)
    assert result.outcome is outcome, result.detail
    for text in names:
        assert text in result.detail
    # bounded: one silent request, plus the cleanup's, never a wait for ever
    assert elapsed < 4 * REQUEST_TIMEOUT_S + 20


def test_a_whole_run_against_a_tansu_like_target_has_no_error_and_no_traceback(
    upstream: tuple[str, int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI's path (execute): profiles are discovered although DescribeConfigs closes
    the connection, and every scenario is graded; none is an ERROR."""
    chosen = tmp_path / "scenarios"
    chosen.mkdir()
    for name in (SPECIAL, CONFIGS, PRODUCER, REPLAY):
        shutil.copy(fixtures_root() / "scenarios" / "kip107" / f"{name}.json", chosen)
    behaviours = {
        ApiKey.DELETE_RECORDS: "close",
        ApiKey.DESCRIBE_CONFIGS: "close",
        ApiKey.PRODUCE: "unknown-producer",
    }
    with MisbehavingProxy(upstream, behaviours) as proxy:
        run = execute(RunOptions(target=proxy.address, scenarios_dir=chosen))
    outcomes = {r.scenario_id: r.outcome for r in run.results}
    assert outcomes == dict.fromkeys((SPECIAL, CONFIGS, PRODUCER, REPLAY), Outcome.FAIL)
    assert run.exit_code == 1
    assert run.offered >= {"kip107", "kip534"}
    assert "Traceback" not in json.dumps([r.detail for r in run.results])
    assert "Traceback" not in capsys.readouterr().err
