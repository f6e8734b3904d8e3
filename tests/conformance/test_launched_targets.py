"""Launched targets: the ``lethe`` launcher driving ``lethe broker`` processes.

What a scenario needs from a broker the runner starts itself, shown on real
processes: a clean restart keeps the data, a crash (SIGKILL) too (the broker
recovers its log), a broker of its own on a fresh log dir with a scenario's
settings, an edit of the log dir between a stop and a start, the two SASL
principals, and a node that died is started again before the next scenario.
Also: launcher files are checked (a misspelt placeholder is an error naming
the file), control-hook action declarations, and the embedded broker's
restart keeps its port while another process wants it.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_conformance.client import calls
from lethe_conformance.client.connection import KafkaConnection, PlainCredentials
from lethe_conformance.client.errors import AuthenticationError
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios import load_scenario, run_scenario, run_scenarios
from lethe_conformance.targets.base import CLOCK_CONTROL, RESTART, TRIGGER_CLEANING
from lethe_conformance.targets.bootstrap import BootstrapTarget, ControlHook
from lethe_conformance.targets.embedded import EmbeddedTarget
from lethe_conformance.targets.launched import LaunchedTarget
from lethe_conformance.targets.launcher import LauncherError, load_launcher, parse_launcher
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.records.builder import RecordSpec, build_batch

LETHE = load_launcher("lethe")


@pytest.fixture(scope="module")
def launched() -> Iterator[LaunchedTarget]:
    with LaunchedTarget(LETHE) as target:
        yield target


def produce_three(target: LaunchedTarget, topic: str) -> None:
    with target.connect() as conn:
        assert calls.create_topic(conn, topic, 1, {}).topics[0].error_code == ErrorCode.NONE
        now = int(time.time() * 1000)  # the launched broker runs on the wall clock
        batch = build_batch([RecordSpec(b"k", b"v", timestamp=now)] * 3, base_offset=0)
        answer = calls.produce(conn, topic, 0, batch).responses[0].partition_responses[0]
        assert answer.error_code == ErrorCode.NONE


def end_offset(target: LaunchedTarget, topic: str) -> int:
    with target.connect() as conn:
        answer = calls.list_offsets(conn, [(topic, 0, -1)]).topics[0].partitions[0]
    assert answer.error_code == ErrorCode.NONE
    return int(answer.offset)


def test_shipped_launchers_read_and_name_their_pieces() -> None:
    kafka = load_launcher("kafka")
    assert kafka.start[0] == "{home}/bin/kafka-server-start.sh"
    assert kafka.ports == ("plaintext", "sasl", "controller")
    assert kafka.settings["log.retention.check.interval.ms"] == "1000"
    assert kafka.cluster and not LETHE.cluster
    assert set(LETHE.principals) == {"admin", "user"}


def test_a_launcher_with_an_unknown_placeholder_is_refused(tmp_path: Path) -> None:
    text = 'name = "x"\nsummary = "s"\nports = ["plaintext"]\n[commands]\nstart = ["{hoem}/run"]\n'
    spec = parse_launcher(text, tmp_path / "x.toml")
    with pytest.raises(LauncherError, match=r"x\.toml: unknown placeholder \{hoem\}"):
        spec.render(spec.start[0], {"home": "/opt"})
    with pytest.raises(LauncherError, match="ports must name 'plaintext'"):
        parse_launcher(text.replace('["plaintext"]', '["sasl"]'), tmp_path / "x.toml")


def test_a_launcher_needing_a_home_refuses_a_missing_one(tmp_path: Path) -> None:
    with pytest.raises(LauncherError, match=r"kafka-server-start\.sh does not exist"):
        LaunchedTarget(load_launcher("kafka"), home=tmp_path)


def test_the_launched_broker_runs_with_its_own_log_dir_and_settings(
    launched: LaunchedTarget,
) -> None:
    caps = launched.capabilities.names()
    assert {"log-dir", "restart", "edit-log-dir", "own-log-dir", "principals"} <= caps
    assert CLOCK_CONTROL not in caps and TRIGGER_CLEANING not in caps
    assert (launched.log_dir / "meta.properties").is_file()
    config = (launched.nodes[1].folder / "server.properties").read_text()
    assert "log.retention.check.interval.ms=1000" in config
    assert f"PLAINTEXT://127.0.0.1:{launched.nodes[1].ports['plaintext']}" in config


def test_a_clean_restart_and_a_crash_keep_the_data(launched: LaunchedTarget) -> None:
    produce_three(launched, "kept")
    pid = launched.nodes[1].pid
    launched.restart()
    assert (launched.log_dir / ".kafka_cleanshutdown").exists() or end_offset(launched, "kept")
    assert launched.nodes[1].pid != pid
    assert end_offset(launched, "kept") == 3
    launched.crash_restart()
    assert end_offset(launched, "kept") == 3


def test_an_edit_between_stop_and_start_reaches_the_next_start(launched: LaunchedTarget) -> None:
    seen: list[bool] = []
    produce_three(launched, "edited")  # its own topic: xdist may run the others elsewhere

    def edit(log_dir: Path) -> None:
        seen.append(launched.nodes[1].running)
        (log_dir / "log-start-offset-checkpoint").write_text("0\n1\nedited 0 two\n")

    launched.restart_editing(edit)
    assert seen == [False]  # the broker was down while the runner edited its files
    # the broker read the corrupt checkpoint at startup, fell back and serves
    assert end_offset(launched, "edited") == 3


def test_the_principals_authenticate_and_others_do_not(launched: LaunchedTarget) -> None:
    with launched.connect_as("user") as conn:
        assert conn.supports(21)
    with launched.connect_as("admin"):
        pass
    assert launched.principal_of("user") == "User:alice"
    wrong = PlainCredentials("alice", "not-her-password")
    with pytest.raises(AuthenticationError):
        KafkaConnection.open("127.0.0.1", launched.nodes[1].ports["sasl"], sasl=wrong)


def test_a_broker_of_its_own_takes_the_scenarios_settings(launched: LaunchedTarget) -> None:
    with launched.isolated({"delete.topic.partition.enable": "false"}) as own:
        assert own.log_dir != launched.log_dir
        assert not any(p.name.startswith("kept-") for p in own.log_dir.iterdir())
        assert "kip694" not in own.profiles()
        folder = own.nodes[1].folder
    assert not folder.exists()  # removed with the broker
    assert "kip694" in launched.profiles()


def test_a_node_that_died_is_started_before_the_next_scenario(
    launched: LaunchedTarget, tmp_path: Path
) -> None:
    node = launched.nodes[1]
    assert node.pid is not None
    os.kill(node.pid, signal.SIGKILL)
    node.crash(signal.SIGKILL)  # reaped; the node is down
    assert not node.running
    data = {
        "id": "kip107-t-after-crash",
        "description": "a test scenario",
        "requirements": ["KIP107-DEL-2"],
        "profile": "kip107",
        "requires": ["restart"],
        "setup": {"topics": [{"name": "t", "partitions": 1, "configs": {}}]},
        "steps": [{"op": "restart"}],
    }
    path = tmp_path / "kip107-t-after-crash.json"
    path.write_text(json.dumps(data))
    results = run_scenarios(launched, [load_scenario(path)])
    assert [r.outcome for r in results] == [Outcome.PASS], results[0].detail
    assert node.running


# --- control hooks declare their actions ---------------------------------------------------


def test_a_hook_declaring_only_restart_offers_only_restart(tmp_path: Path) -> None:
    hook = ControlHook.parse("true", frozenset({"restart"}))
    target = BootstrapTarget("127.0.0.1:9", control=hook)
    names = target.capabilities.names()
    assert RESTART in names
    assert CLOCK_CONTROL not in names and TRIGGER_CLEANING not in names
    with pytest.raises(ValueError, match="unknown control hook actions"):
        ControlHook.parse("true", frozenset({"reboot"}))


def test_the_cli_refuses_undeclarable_actions() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lethe_tools.cli", "conformance", "run", "--target",
         "127.0.0.1:9", "--control", "true", "--control-actions", "restart,reboot"],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--control-actions: unknown action ['reboot']" in done.stderr


def test_undeclared_actions_make_their_scenarios_not_applicable(tmp_path: Path) -> None:
    data = {
        "id": "kip107-t-clock",
        "description": "a test scenario",
        "requirements": ["KIP107-DEL-2"],
        "profile": "kip107",
        "requires": ["clock-control"],
        "setup": {"topics": []},
        "steps": [{"op": "advance_time", "ms": "1000"}],
    }
    path = tmp_path / "kip107-t-clock.json"
    path.write_text(json.dumps(data))
    with EmbeddedTarget() as embedded:
        hook = ControlHook.parse("false", frozenset({"restart"}))
        target = BootstrapTarget(embedded.bootstrap, control=hook)
        result = run_scenario(target, load_scenario(path))
    assert result.outcome is Outcome.NOT_APPLICABLE
    assert "lacks clock-control (provided by" in result.detail


# --- the embedded broker keeps its port over a restart ---------------------------------------


def test_an_embedded_restart_keeps_its_port_from_other_processes() -> None:
    with EmbeddedTarget() as target:
        port = int(target.bootstrap.rpartition(":")[2])
        taken: list[int] = []

        def edit(_: Path) -> None:
            # while the broker is down, another process tries to take its port
            with socket.socket() as other:
                try:
                    other.bind(("127.0.0.1", port))
                except OSError as error:
                    taken.append(error.errno)

        target.restart_editing(edit)
        assert taken == [errno.EADDRINUSE]  # the port was never free
        assert target.bootstrap.endswith(f":{port}")
        target.restart()
        with target.connect() as conn:
            assert conn.supports(21)


def test_a_stopped_embedded_broker_recovers_before_the_next_scenario(tmp_path: Path) -> None:
    with EmbeddedTarget() as target:
        target._broker.stop(keep_ports=True)  # as a restart that failed halfway leaves it
        target.recover()
        with target.connect() as conn:
            assert conn.supports(21)
