"""SCRAM users made with Kafka's own ``kafka-configs.sh`` on ``lethe broker`` (started from
the command line), and clients logging in with them.

With Kafka's tools (``LETHE_KAFKA_HOME``, a Kafka 4.0.0 distribution; the
interop tox environment passes ``LETHE_*`` through): the recipe that recorded Kafka 4.0.0
(tools/kafka-recipes/admin-tools/scram_users.py, fixtures/golden/admin-tools/scram-users)
runs unchanged against ``lethe broker`` through the same recording proxy; every step
exits as on Kafka and prints what it printed (standard output, and the exception's
``Caused by:`` line on standard error). Then confluent-kafka logs in with the SCRAM-SHA-512
user the recipe left (bob), also after a restart of the broker.

Without Java (CI): the same users made with AlterUserScramCredentials from lethe's
protocol client, salted as the Java admin client salts, and confluent-kafka logging in
on the same broker's SASL_PLAINTEXT listener with SCRAM-SHA-256 and SCRAM-SHA-512.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient
from interop_support import CLIENT_TIMEOUT_S, free_port, wait_listening
from lethe_conformance.client import KafkaConnection
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    ScramUpsertion,
)

KAFKA_HOME = os.environ.get("LETHE_KAFKA_HOME", "")
RECIPES = Path(__file__).parents[2] / "tools" / "kafka-recipes" / "admin-tools"
FIXTURE = fixtures_root() / "golden" / "admin-tools" / "scram-users" / "outputs.json"
NEEDS_KAFKA = pytest.mark.skipif(
    not (KAFKA_HOME and Path(KAFKA_HOME, "bin", "kafka-configs.sh").exists()),
    reason="needs LETHE_KAFKA_HOME (Kafka's tools); the protocol-level twin runs in CI",
)
JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


@contextmanager
def lethe_broker(log_dir: Path, plain: int, sasl: int, advertised: int) -> Iterator[None]:
    """``lethe broker --config F``: a PLAINTEXT listener advertised as ``advertised`` and a
    SASL_PLAINTEXT listener offering SCRAM-SHA-256/512 with no JAAS users, as the recorded
    Kafka had."""
    config = log_dir.parent / f"{log_dir.name}.properties"
    config.write_text(
        f"listeners=PLAINTEXT://127.0.0.1:{plain},SASL_PLAINTEXT://127.0.0.1:{sasl}\n"
        f"advertised.listeners=PLAINTEXT://127.0.0.1:{advertised},"
        f"SASL_PLAINTEXT://127.0.0.1:{sasl}\n"
        "sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512\n"
        f"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config={JAAS}\n"
        f"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config={JAAS}\n"
    )
    lethe = shutil.which("lethe") or str(Path(sys.executable).with_name("lethe"))
    args = [lethe, "broker", "--log-dir", str(log_dir), "--config", str(config)]
    broker = subprocess.Popen(args, stderr=subprocess.DEVNULL)
    try:
        wait_listening(sasl, broker)
        yield
    finally:
        broker.terminate()
        assert broker.wait(60) == 0


def _settings(sasl: int, user: str, password: str, mechanism: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": f"127.0.0.1:{sasl}",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": password,
        "log_level": 0,
    }


def topics_as(sasl: int, user: str, password: str, mechanism: str) -> Any:
    """confluent-kafka's ListTopics (Metadata) after a SCRAM login."""
    admin = AdminClient(_settings(sasl, user, password, mechanism))
    return admin.list_topics(timeout=CLIENT_TIMEOUT_S)


def refused(sasl: int, user: str, password: str, mechanism: str) -> bool:
    """True when librdkafka reports the login refused (its error callback gets
    _AUTHENTICATION, Kafka's SASL_AUTHENTICATION_FAILED)."""
    errors: list[KafkaError] = []
    admin = AdminClient(_settings(sasl, user, password, mechanism) | {"error_cb": errors.append})
    deadline = time.monotonic() + CLIENT_TIMEOUT_S
    while not errors and time.monotonic() < deadline:
        admin.poll(0.1)
    return bool(errors) and errors[0].code() == KafkaError._AUTHENTICATION


def recipe() -> Any:
    sys.path.insert(0, str(RECIPES))
    try:
        spec = importlib.util.spec_from_file_location(
            "scram_users_recipe", RECIPES / "scram_users.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(RECIPES))


def caused_by(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Caused by:")]


@NEEDS_KAFKA
def test_kafka_configs_makes_scram_users_as_on_kafka(tmp_path: Path) -> None:
    plain, sasl, proxy = free_port(), free_port(), free_port()
    out = tmp_path / "out"
    out.mkdir()
    scram = recipe()
    for name, text in scram.FILES.items():
        (out / name).write_text(text)
    with lethe_broker(tmp_path / "logs", plain, sasl, proxy):
        scram.main(
            KAFKA_HOME,
            proxy,
            plain,
            out,
            [],
            steps=scram.steps(str(sasl), str(out)),
            keys=scram.KEYS,
            keep_stderr=True,
        )
        ours = {o["step"]: o for o in json.loads((out / "outputs.json").read_text())}
        topics_as(sasl, "bob", "b", "SCRAM-SHA-512")
    kafka = json.loads(FIXTURE.read_text())
    assert len(kafka) == len(ours) == 22
    for theirs in kafka:
        mine = ours[theirs["step"]]
        assert (theirs["step"], mine["exit"], mine["stdout"]) == (
            theirs["step"],
            theirs["exit"],
            theirs["stdout"],
        )
        assert caused_by(mine["stderr"]) == caused_by(theirs["stderr"]), theirs["step"]
    with lethe_broker(tmp_path / "logs", plain, sasl, proxy):
        topics_as(sasl, "bob", "b", "SCRAM-SHA-512")
        assert refused(sasl, "alice", "alice-512", "SCRAM-SHA-512")


def salted(user: str, password: str, mechanism: int, iterations: int) -> ScramUpsertion:
    """The upsertion Java's admin client sends (``ScramFormatter.hi``: PBKDF2-HMAC)."""
    salt = os.urandom(16)
    name = {1: "sha256", 2: "sha512"}[mechanism]
    digest = hashlib.pbkdf2_hmac(name, password.encode(), salt, iterations)
    return ScramUpsertion(user, mechanism, iterations, salt, digest)


def test_confluent_kafka_logs_in_as_users_made_with_the_api(tmp_path: Path) -> None:
    plain, sasl = free_port(), free_port()
    with lethe_broker(tmp_path / "logs", plain, sasl, plain):
        with KafkaConnection.open("127.0.0.1", plain) as conn:
            request = AlterUserScramCredentialsRequest(
                (), (salted("alice", "alice-secret", 1, 8192), salted("bob", "bob-secret", 2, 4096))
            )
            answer = conn.request(request, version=0)
        assert sorted((r.user, r.error_code) for r in answer.results) == [("alice", 0), ("bob", 0)]
        assert topics_as(sasl, "alice", "alice-secret", "SCRAM-SHA-256").topics is not None
        assert topics_as(sasl, "bob", "bob-secret", "SCRAM-SHA-512").topics is not None
        assert refused(sasl, "alice", "wrong", "SCRAM-SHA-256")
        assert refused(sasl, "bob", "bob-secret", "SCRAM-SHA-256")
        assert refused(sasl, "carol", "carol-secret", "SCRAM-SHA-512")
