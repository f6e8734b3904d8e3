"""``lethe delete-records`` and ``lethe topics`` reach TLS listeners with
``--command-config`` and Kafka's client property names, as kafka-delete-records.sh and
kafka-topics.sh do: SASL_SSL with SCRAM (PEM truststore) and SSL with a PKCS12 client
keystore (mutual TLS), against ``lethe broker`` started from the CLI."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tls_support import (
    ADMIN,
    STORE_PASSWORD,
    Certs,
    CliBroker,
    broker_settings,
    write_properties,
)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory, tls_certs: Certs) -> Iterator[CliBroker]:
    with CliBroker(tmp_path_factory.mktemp("broker"), broker_settings(tls_certs)) as running:
        yield running


def lethe(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "lethe_tools.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def sasl_ssl(tmp_path: Path, tls_certs: Certs, mechanism: str) -> str:
    return str(
        write_properties(
            tmp_path / f"{mechanism}.properties",
            {
                "security.protocol": "SASL_SSL",
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(tls_certs.ca),
                "sasl.mechanism": mechanism,
                "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                f'required username="{ADMIN[0]}" password="{ADMIN[1]}";',
            },
        )
    )


def mutual_tls(tmp_path: Path, tls_certs: Certs) -> str:
    return str(
        write_properties(
            tmp_path / "ssl.properties",
            {
                "security.protocol": "SSL",
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(tls_certs.ca),
                "ssl.keystore.type": "PKCS12",
                "ssl.keystore.location": str(tls_certs.client_p12),
                "ssl.keystore.password": STORE_PASSWORD,
            },
        )
    )


def test_topics_and_delete_records_over_sasl_ssl_and_mutual_tls(
    broker: CliBroker, tls_certs: Certs, tmp_path: Path
) -> None:
    scram = sasl_ssl(tmp_path, tls_certs, "SCRAM-SHA-512")
    sasl_address, ssl_address = broker.address("SASL_SSL"), broker.address("SSL")
    created = lethe(
        "topics", "--bootstrap-server", sasl_address, "--command-config", scram,
        "--create", "--topic", "tls-topic", "--partitions", "1",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == "Created topic tls-topic."
    listed = lethe("topics", "--bootstrap-server", ssl_address, "--command-config",
                   mutual_tls(tmp_path, tls_certs), "--list")  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split() == ["tls-topic"]
    offsets = tmp_path / "offsets.json"
    offsets.write_text('{"partitions": [{"topic": "tls-topic", "partition": 0, "offset": 0}]}')
    for address, config in ((sasl_address, sasl_ssl(tmp_path, tls_certs, "SCRAM-SHA-256")),
                            (ssl_address, mutual_tls(tmp_path, tls_certs))):  # fmt: skip
        run = lethe("delete-records", "--bootstrap-server", address,
                    "--command-config", config, "--offset-json-file", str(offsets))  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == [
            "Executing records delete operation",
            "Records delete operation completed:",
            "partition: tls-topic-0\tlow_watermark: 0",
        ]


def test_an_untrusted_broker_certificate_fails_as_javas_ssl_authentication_exception(
    broker: CliBroker, tmp_path: Path
) -> None:
    config = write_properties(tmp_path / "none.properties", {"security.protocol": "SSL"})
    offsets = tmp_path / "offsets.json"
    offsets.write_text('{"partitions": [{"topic": "tls-topic", "partition": 0, "offset": 0}]}')
    run = lethe("delete-records", "--bootstrap-server", broker.address("SSL"),
                "--command-config", str(config), "--offset-json-file", str(offsets))  # fmt: skip
    out = run.stdout + run.stderr
    assert "org.apache.kafka.common.errors.SslAuthenticationException" in out, out
    assert "CERTIFICATE_VERIFY_FAILED" in out
