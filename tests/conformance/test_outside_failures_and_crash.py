"""Failures caused from outside a broker, and the crash moment.

A launched broker's log dir fails the way Kafka's own tests fail one: the dir
is replaced by a file and the broker meets it at its next write. Kafka 4.0.0
(verified on a launched 4.0.0, conformance/verified/kafka-4.0.0) then takes a
dir offline and keeps serving the other one, or, when it was its only log dir,
halts with status 1 (``LogManager.handleLogDirFailure``: every log dir failed).
`lethe broker` has one log dir, so it must halt the same way; its launcher
declares no ``failures``, and scenarios needing one are NOT_APPLICABLE there,
as are kinds no launcher can cause (a failure inside a delete).

The crash (``crash_restart``) drops the broker with no shutdown work: what it
had checkpointed survives, what it had not may be lost (KIP107-LSO-5, a MAY),
so the embedded broker, whose checkpoint task never ran on its virtual clock,
comes back with the log start offset its first segment gives.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_conformance.client import calls
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios import load_scenario, run_scenario, scenarios_root
from lethe_conformance.targets.base import CRASH, INJECT_FAILURE, ControlError
from lethe_conformance.targets.embedded import EmbeddedTarget
from lethe_conformance.targets.launched import LaunchedTarget, kafka_uuid
from lethe_conformance.targets.launcher import LauncherError, load_launcher, parse_launcher
from lethe_conformance.targets.outside_failures import FAILED_SUFFIX, fail_log_dir
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.records.builder import RecordSpec, build_batch

KIP107 = scenarios_root() / "kip107"
OFFLINE = KIP107 / "kip107-delete-records-log-dir-offline.json"
UNEXPECTED = KIP107 / "kip107-delete-records-unexpected-failure.json"
CRASHED = KIP107 / "kip107-log-start-offset-survives-crash.json"
LETHE = load_launcher("lethe")
_HALT_BOUND_S = 60.0


def two_dirs(tmp_path: Path, layout: dict[str, list[int]]) -> list[Path]:
    dirs = []
    for name, partitions in layout.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "meta.properties").write_text("version=1\n")
        for p in partitions:
            (folder / f"t-{p}").mkdir()
        dirs.append(folder)
    return dirs


# --- the file operation ---------------------------------------------------------------------


def test_the_dir_holding_the_partition_becomes_a_file(tmp_path: Path) -> None:
    data, spare = two_dirs(tmp_path, {"data": [0], "spare": [1]})
    assert fail_log_dir([data, spare], "t", [1]) == spare
    assert spare.is_file() and spare.stat().st_size == 0
    kept = spare.with_name("spare" + FAILED_SUFFIX)
    assert sorted(p.name for p in kept.iterdir()) == ["meta.properties", "t-1"]
    assert (data / "t-0").is_dir()


@pytest.mark.parametrize(
    ("layout", "partitions", "message"),
    [
        ({"data": [0, 1], "spare": []}, [1], r"also holds t partitions \[0\]"),
        ({"data": [0], "spare": [1]}, [0, 1], "2 different log dirs"),
        ({"data": [0], "spare": []}, [1], "no folder of t-1"),
    ],
    ids=["shares-a-dir", "spread-over-dirs", "missing"],
)
def test_a_placement_that_does_not_allow_the_failure_is_refused(
    tmp_path: Path, layout: dict[str, list[int]], partitions: list[int], message: str
) -> None:
    dirs = two_dirs(tmp_path, layout)
    with pytest.raises(ControlError, match=message):
        fail_log_dir(dirs, "t", partitions)
    assert all(d.is_dir() for d in dirs)  # nothing was changed


# --- launcher files ---------------------------------------------------------------------------


def test_the_kafka_launcher_declares_a_second_log_dir_and_a_metadata_dir_apart() -> None:
    kafka = load_launcher("kafka")
    assert set(kafka.failures) == {"log-dir-offline"}
    settings = kafka.failures["log-dir-offline"]
    assert settings["log.dirs"] == "{log_dir},{spare_log_dir}"
    assert "{log_dir}" not in settings["metadata.log.dir"]
    assert not LETHE.failures  # lethe broker serves one log dir


def test_a_failure_no_runner_can_cause_from_outside_is_refused(tmp_path: Path) -> None:
    text = (
        'name = "x"\nsummary = "s"\nports = ["plaintext"]\n[commands]\nstart = ["run"]\n'
        '[failures.delete-error]\n"a" = "b"\n'
    )
    with pytest.raises(LauncherError, match=r"x\.toml: failures\.delete-error: not a failure"):
        parse_launcher(text, tmp_path / "x.toml")


def test_cluster_ids_never_start_with_a_dash() -> None:
    """kafka-storage.sh format reads '--cluster-id -abc' as a missing value (seen on 4.0.0)."""
    ids = [kafka_uuid() for _ in range(2000)]
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)


# --- lethe broker processes ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def launched() -> Iterator[LaunchedTarget]:
    with LaunchedTarget(LETHE) as target:
        yield target


def test_a_launcher_without_failures_makes_the_failure_scenarios_not_applicable(
    launched: LaunchedTarget,
) -> None:
    assert INJECT_FAILURE not in launched.capabilities.names()
    for path in (OFFLINE, UNEXPECTED):
        result = run_scenario(launched, load_scenario(path))
        assert result.outcome is Outcome.NOT_APPLICABLE, result
        assert "lacks inject-failure" in result.detail


def test_a_kind_the_launcher_cannot_cause_is_not_applicable_with_the_reason(
    tmp_path: Path,
) -> None:
    source = LETHE.source.read_text(encoding="utf-8")
    declared = source + '\n[failures.log-dir-offline]\n"log.dirs" = "{log_dir},{spare_log_dir}"\n'
    spec = parse_launcher(declared, tmp_path / "lethe-failing.toml")
    with LaunchedTarget(spec) as target:
        assert target.capabilities.failure_kinds == {"log-dir-offline"}
        result = run_scenario(target, load_scenario(UNEXPECTED))
        assert result.outcome is Outcome.NOT_APPLICABLE
        assert "cannot cause the failure delete-error" in result.detail
        assert "outside its process" in result.detail
        assert not result.steps  # decided before any broker of its own started
        # lethe broker ignores log.dirs: both partitions share its one dir, so the
        # runner refuses to fail it (an ERROR naming the placement), and changes nothing
        offline = run_scenario(target, load_scenario(OFFLINE))
        assert offline.outcome is Outcome.ERROR
        assert "also holds" in offline.detail


def test_lethe_broker_halts_when_its_only_log_dir_fails_as_kafka_does() -> None:
    """Kafka 4.0.0, one log dir replaced by a file: 'Shutdown broker because all log dirs
    ... have failed', exit status 1 within a second (seen on a launched 4.0.0)."""
    with LaunchedTarget(LETHE) as target:
        with target.connect() as conn:
            assert calls.create_topic(conn, "t", 1, {}).topics[0].error_code == ErrorCode.NONE
        fail_log_dir([target.log_dir], "t", [0])
        node = target.nodes[1]
        deadline = time.monotonic() + _HALT_BOUND_S
        while node.running and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not node.running, "lethe broker kept running on a log dir that is a file"
        assert node.exit_status() == 1
        assert "event=halt" in node.output_tail()
        failed = target.log_dir.with_name(target.log_dir.name + FAILED_SUFFIX)
        assert not (failed / ".kafka_cleanshutdown").exists()  # no shutdown work


def test_the_crash_scenario_passes_on_lethe_broker_processes(launched: LaunchedTarget) -> None:
    assert CRASH in launched.capabilities.names()
    result = run_scenario(launched, load_scenario(CRASHED))
    assert result.outcome is Outcome.PASS, result


# --- the embedded target ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def embedded() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as target:
        yield target


def test_the_crash_scenario_passes_on_the_embedded_target(embedded: EmbeddedTarget) -> None:
    assert CRASH in embedded.capabilities.names()
    result = run_scenario(embedded, load_scenario(CRASHED))
    assert result.outcome is Outcome.PASS, result


def earliest_after(embedded: EmbeddedTarget, topic: str, then: Any) -> int:
    with embedded.connect() as conn:
        assert calls.create_topic(conn, topic, 1, {}).topics[0].error_code == ErrorCode.NONE
        batch = build_batch([RecordSpec(b"k", b"v", timestamp=0)] * 4, base_offset=0)
        assert calls.produce(conn, topic, 0, batch).responses[0].partition_responses[0]
        answer = calls.delete_records(conn, [(topic, 0, 3)]).topics[0].partitions[0]
        assert (answer.error_code, answer.low_watermark) == (ErrorCode.NONE, 3)
    then()
    with embedded.connect() as conn:
        found = calls.list_offsets(conn, [(topic, 0, -2)]).topics[0].partitions[0]
    assert found.error_code == ErrorCode.NONE
    return int(found.offset)


def test_a_crash_does_no_shutdown_work_and_a_restart_does(embedded: EmbeddedTarget) -> None:
    """No time passed, so no periodic checkpoint ran: a clean restart writes the raise at
    shutdown and keeps it; a crash loses it (KIP107-LSO-5: permitted, as Kafka would)."""
    assert earliest_after(embedded, "kept", embedded.restart) == 3
    assert earliest_after(embedded, "lost", embedded.crash_restart) == 0


def test_without_waiting_for_the_checkpoint_the_crash_loses_the_raise(
    embedded: EmbeddedTarget, tmp_path: Path
) -> None:
    """Dropping the wait for the checkpoint makes the crash lose the raise: the scenario
    fails on the earliest offset, so its pass depends on the checkpoint seen before."""
    data = json.loads(CRASHED.read_text())
    assert data["steps"][2]["op"] == "wait"
    del data["steps"][2]
    path = tmp_path / CRASHED.name
    path.write_text(json.dumps(data))
    result = run_scenario(embedded, load_scenario(path))
    assert result.outcome is Outcome.FAIL
    assert result.detail.endswith("offset: expected 3, got 0"), result.detail
