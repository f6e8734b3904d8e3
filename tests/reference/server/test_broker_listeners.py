"""``lethe broker`` takes its listeners as Kafka does, and binds them before anything else.

Kafka serves every entry of ``listeners`` and hands out ``advertised.listeners``;
lethe's ``--listen`` only fills in when the config names no listener. A port in
use must stop the broker before it logs "started" or writes into the log dir.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_formats.protocol.messages.metadata import MetadataRequest, MetadataResponse
from lethe_formats.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from lethe_tools.cli import main
from test_server_loopback import blocking_exchange
from tls_support import listening_ports

JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="alice" password="secret" user_alice="secret";'
)
SASL = {
    "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
}


def write_config(path: Path, settings: dict[str, str]) -> Path:
    path.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    return path


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[tuple[Path, list[subprocess.Popen[str]]]]:
    processes: list[subprocess.Popen[str]] = []
    yield tmp_path, processes
    for process in processes:
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0


def start(processes: list[subprocess.Popen[str]], *args: str) -> dict[str, int]:
    command = [sys.executable, "-m", "lethe_tools.cli", "broker", *args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    processes.append(process)
    assert process.stderr is not None
    deadline, lines = time.monotonic() + 120, []
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        lines.append(line)
        if "event=listening" in line:
            return listening_ports(line)
        assert line or process.poll() is None, lines
    raise AssertionError(lines)


def test_every_configured_listener_is_served_and_listen_only_fills_in(
    broker: tuple[Path, list[subprocess.Popen[str]]],
) -> None:
    folder, processes = broker
    config = write_config(
        folder / "server.properties",
        {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", **SASL},
    )
    # --listen names another address: the config's listeners win, as in Kafka
    ports = start(
        processes,
        "--listen",
        "127.0.0.1:1",
        "--log-dir",
        str(folder / "logs"),
        "--config",
        str(config),
    )
    assert ports["main"] not in (0, 1) and ports["SASL_PLAINTEXT"] not in (0, ports["main"])
    metadata = blocking_exchange(f"127.0.0.1:{ports['main']}", MetadataRequest(topics=None), 12)
    assert isinstance(metadata, MetadataResponse)
    assert [(b.host, b.port) for b in metadata.brokers] == [("127.0.0.1", ports["main"])]
    handshake = blocking_exchange(
        f"127.0.0.1:{ports['SASL_PLAINTEXT']}", SaslHandshakeRequest("PLAIN"), 1
    )
    assert isinstance(handshake, SaslHandshakeResponse)
    assert (handshake.error_code, handshake.mechanisms) == (0, ("PLAIN",))


def test_metadata_hands_out_the_advertised_listener(
    broker: tuple[Path, list[subprocess.Popen[str]]],
) -> None:
    folder, processes = broker
    config = write_config(
        folder / "server.properties",
        {
            "listeners": "PLAINTEXT://127.0.0.1:0",
            "advertised.listeners": "PLAINTEXT://kafka.example:19092",
        },
    )
    ports = start(processes, "--log-dir", str(folder / "logs"), "--config", str(config))
    metadata = blocking_exchange(f"127.0.0.1:{ports['main']}", MetadataRequest(topics=None), 12)
    assert isinstance(metadata, MetadataResponse)
    assert [(b.host, b.port) for b in metadata.brokers] == [("kafka.example", 19092)]


def test_a_port_in_use_stops_the_broker_before_it_initialises_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        config = write_config(
            tmp_path / "server.properties",
            {"listeners": f"PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:{port}", **SASL},
        )
        log_dir = tmp_path / "logs"
        status = main(["broker", "--log-dir", str(log_dir), "--config", str(config)])
    assert status == 1
    assert not log_dir.exists()
    # the log lines reach stderr, or only pytest's log capture when an earlier test in
    # this process configured logging with another stream: look at both
    text = capsys.readouterr().err + caplog.text
    assert "event=start-failed" in text and "started" not in text.replace("start-failed", "")


def test_a_listener_of_a_protocol_it_cannot_serve_stops_it_too(tmp_path: Path) -> None:
    config = write_config(tmp_path / "server.properties", {"listeners": "SSL://127.0.0.1:0"})
    log_dir = tmp_path / "logs"
    assert main(["broker", "--log-dir", str(log_dir), "--config", str(config)]) == 1
    assert not log_dir.exists()
