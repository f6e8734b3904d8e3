"""``lethe conformance settings``: the settings a by-address broker needs for the wall paths.

The printed lines must be exactly what the launchers' brokers get from the scenarios
(``wall_clock.broker_configs`` merged), minus the cluster scenarios, which never run by
address; values in scenarios that disagree are a fixture mistake and exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lethe_conformance.scenarios import wall_clock_broker_configs
from lethe_conformance.scenarios.loader import load_scenarios, scenario_files
from lethe_tools.cli import main


def printed(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    status = main(["conformance", "settings", *argv])
    lines = capsys.readouterr().out.splitlines()
    return status, [line for line in lines if not line.startswith("#")]


def test_every_setting_of_the_non_cluster_wall_paths_is_printed_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, lines = printed(capsys)
    scenarios = [s for s in load_scenarios() if "cluster-control" not in s.requires]
    expected = wall_clock_broker_configs(scenarios)
    assert status == 0
    assert dict(line.split("=", 1) for line in lines) == expected
    assert len(lines) == len(expected)
    # Kafka's retention task and the cleaner must come round within seconds
    assert int(expected["log.retention.check.interval.ms"]) <= 1000
    assert int(expected["log.cleaner.backoff.ms"]) <= 1000


def test_cluster_scenarios_settings_stay_out(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines = printed(capsys)
    cluster_only = {"replica.fetch.wait.max.ms", "broker.session.timeout.ms"}
    assert cluster_only.isdisjoint(line.split("=", 1)[0] for line in lines)


def test_a_profile_narrows_the_scenarios_read(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines = printed(capsys, "--profile", "kip534")
    kip534 = [
        s for s in load_scenarios() if s.profile == "kip534" and "cluster-control" not in s.requires
    ]
    assert dict(line.split("=", 1) for line in lines) == wall_clock_broker_configs(kip534)


def test_two_scenarios_asking_different_values_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wall = [json.loads(f.read_text(encoding="utf-8")) for f in scenario_files()]
    wall = [d for d in wall if "wall_clock" in d and "cluster-control" not in d["requires"]]
    for index, data in enumerate(wall[:2]):
        data["wall_clock"]["broker_configs"] = {"log.cleaner.backoff.ms": str(1000 + index)}
        (tmp_path / f"{data['id']}.json").write_text(json.dumps(data), encoding="utf-8")
    assert main(["conformance", "settings", "--scenarios", str(tmp_path)]) == 2
    assert "log.cleaner.backoff.ms" in capsys.readouterr().err


def test_a_folder_without_scenarios_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["conformance", "settings", "--scenarios", str(tmp_path)]) == 2
    assert "no scenario files" in capsys.readouterr().err
