"""The conformance runner and the pytest plugin reach a target over TLS and SASL_SSL.

``lethe broker`` runs from the CLI with an SSL listener (client auth requested)
and a SASL_SSL one (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512); the runner gets its
security from options or from ``--command-config`` with Kafka's client property
names. A few kip107 scenarios that need no log dir must pass over each; an
authentication failure is a setup error (exit 2), one line naming it.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_tools.cli import main
from tls_support import (
    ADMIN,
    ALICE,
    KEY_PASSWORD,
    Certs,
    CliBroker,
    broker_settings,
    write_properties,
)

pytest_plugins = ["pytester"]
KIP107 = fixtures_root() / "scenarios" / "kip107"
SCENARIOS = (
    "kip107-list-offsets-special-timestamps",
    "kip107-delete-records-refusals",
    "kip107-fetch-bounds-and-versions",
)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory, tls_certs: Certs) -> Iterator[CliBroker]:
    with CliBroker(tmp_path_factory.mktemp("broker"), broker_settings(tls_certs)) as running:
        yield running


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("scenarios")
    for name in SCENARIOS:
        shutil.copy(KIP107 / f"{name}.json", folder)
    return folder


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["conformance", "run", *argv])
    return status, out.getvalue(), err.getvalue()


def outcomes(json_text: str) -> dict[str, str]:
    return {s["id"]: s["outcome"] for s in json.loads(json_text)["scenarios"]}


def test_runner_over_sasl_ssl_with_scram_from_options(
    broker: CliBroker, tls_certs: Certs, scenarios: Path
) -> None:
    status, out, err = run(
        "--target", broker.address("SASL_SSL"), "--scenarios", str(scenarios), "--json",
        "--security-protocol", "SASL_SSL", "--ssl-cafile", str(tls_certs.ca),
        "--sasl-mechanism", "SCRAM-SHA-256",
        "--sasl-username", ADMIN[0], "--sasl-password", ADMIN[1],
    )  # fmt: skip
    assert status == 0, err
    assert outcomes(out) == dict.fromkeys(SCENARIOS, "pass")


def test_runner_over_sasl_ssl_with_a_command_config(
    broker: CliBroker, tls_certs: Certs, scenarios: Path, tmp_path: Path
) -> None:
    config = write_properties(
        tmp_path / "client.properties",
        {
            "security.protocol": "SASL_SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(tls_certs.ca),
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
            f'required username="{ALICE[0]}" password="{ALICE[1]}";',
        },
    )
    status, out, err = run(
        "--target", broker.address("SASL_SSL"), "--scenarios", str(scenarios), "--json",
        "--command-config", str(config),
    )  # fmt: skip
    assert status == 0, err
    assert outcomes(out) == dict.fromkeys(SCENARIOS, "pass")


def test_runner_over_mutual_tls(broker: CliBroker, tls_certs: Certs, scenarios: Path) -> None:
    status, out, err = run(
        "--target", broker.address("SSL"), "--scenarios", str(scenarios), "--json",
        "--security-protocol", "SSL", "--ssl-cafile", str(tls_certs.ca),
        "--ssl-certfile", str(tls_certs.client_cert),
        "--ssl-keyfile", str(tls_certs.client_key_encrypted), "--ssl-key-password", KEY_PASSWORD,
    )  # fmt: skip
    assert status == 0, err
    assert outcomes(out) == dict.fromkeys(SCENARIOS, "pass")


WRONG_PASSWORD = "--security-protocol SASL_SSL --sasl-mechanism PLAIN --sasl-username admin"
REFUSALS = [
    (
        f"{WRONG_PASSWORD} --sasl-password wrong --ssl-cafile {{ca}}",
        "SASL_AUTHENTICATION_FAILED: Authentication failed: Invalid username or password",
    ),
    (f"{WRONG_PASSWORD} --sasl-password admin-secret", "CERTIFICATE_VERIFY_FAILED"),
    ("--security-protocol SSL --sasl-username admin --sasl-password x", "takes no SASL user"),
    ("--ssl-cafile {ca}", "TLS files need security protocol SSL or SASL_SSL, not PLAINTEXT"),
]


@pytest.mark.parametrize(("extra", "fragment"), REFUSALS)
def test_a_refused_or_unusable_security_setup_exits_2_with_one_line(
    broker: CliBroker, tls_certs: Certs, scenarios: Path, extra: str, fragment: str
) -> None:
    options = extra.format(ca=tls_certs.ca).split()
    status, _, err = run(
        "--target", broker.address("SASL_SSL"), "--scenarios", str(scenarios), *options
    )
    assert status == 2
    assert fragment in err, err
    assert "Traceback" not in err


def test_the_pytest_plugin_over_sasl_ssl(
    broker: CliBroker, tls_certs: Certs, pytester: pytest.Pytester
) -> None:
    result = pytester.runpytest_subprocess(
        "--pyargs", "lethe_conformance", "-p", "no:cacheprovider",
        "--lethe-target", broker.address("SASL_SSL"),
        "--lethe-security-protocol", "SASL_SSL", "--lethe-ssl-cafile", str(tls_certs.ca),
        "--lethe-sasl-mechanism", "SCRAM-SHA-512",
        "--lethe-sasl-username", ADMIN[0], "--lethe-sasl-password", ADMIN[1],
        "-k", "kip107-list-offsets-special-timestamps or kip107-delete-records-refusals",
    )  # fmt: skip
    result.assert_outcomes(passed=2)
