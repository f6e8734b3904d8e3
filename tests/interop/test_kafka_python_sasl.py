"""kafka-python over SASL_PLAINTEXT with SASL/PLAIN and SCRAM-SHA-256/512 against a broker
running Kafka's StandardAuthorizer: clients authenticate, a wrong password is refused, and
requests are allowed or denied as the ACLs (created with the client's own CreateAcls) say.

Expected values: Kafka's behaviour for a principal without an ACL (TOPIC_AUTHORIZATION_FAILED,
29, raised by kafka-python as TopicAuthorizationFailedError), KIP-107's DeleteRecords
authorization (DELETE on the topic), and SASL_AUTHENTICATION_FAILED (58) for bad credentials.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
from interop_support import CLIENT_TIMEOUT_S
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (
    ACL,
    ACLOperation,
    ACLPermissionType,
    KafkaAdminClient,
    ResourcePattern,
    ResourceType,
)
from kafka.errors import (
    KafkaError,
    SaslAuthenticationFailedError,
    TopicAuthorizationFailedError,
)
from sasl_support import sasl_broker

TIMEOUT_MS = int(CLIENT_TIMEOUT_S * 1000)


@pytest.fixture(scope="module")
def sasl_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from sasl_broker(tmp_path_factory.mktemp("sasl-broker"))


def sasl(user: str, password: str, mechanism: str = "PLAIN") -> dict[str, Any]:
    return {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
        "request_timeout_ms": TIMEOUT_MS,
    }


def admin_client(bootstrap: str, user: str, password: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, **sasl(user, password))


def allow(admin: KafkaAdminClient, topic: str, operation: ACLOperation) -> None:
    pattern = ResourcePattern(ResourceType.TOPIC, topic)
    result = admin.create_acls(
        [ACL("User:alice", "*", operation, ACLPermissionType.ALLOW, pattern)]
    )
    assert result["failed"] == [], result


def eventually(check: Any) -> Any:
    """ACLs take effect at once on the reference broker; a bounded retry keeps the test
    honest for brokers that propagate them asynchronously."""
    deadline = time.monotonic() + CLIENT_TIMEOUT_S
    while True:
        try:
            return check()
        except TopicAuthorizationFailedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_acls_decide_what_an_authenticated_principal_may_do(
    sasl_bootstrap: str, topic: str
) -> None:
    admin = admin_client(sasl_bootstrap, "admin", "admin-secret")
    alice = admin_client(sasl_bootstrap, "alice", "alice-secret")
    try:
        spec = {"num_partitions": 1, "replication_factor": 1}
        answer = admin.create_topics({topic: spec}, timeout_ms=TIMEOUT_MS, wait_for_metadata=True)
        assert [t["error_code"] for t in answer["topics"]] == [0]
        producer = KafkaProducer(bootstrap_servers=sasl_bootstrap, **sasl("admin", "admin-secret"))
        try:
            for i in range(3):
                producer.send(topic, value=f"v{i}".encode(), partition=0)
            producer.flush(timeout=CLIENT_TIMEOUT_S)
        finally:
            producer.close(timeout=CLIENT_TIMEOUT_S)
        tp = TopicPartition(topic, 0)
        allow(admin, topic, ACLOperation.DESCRIBE)
        with pytest.raises(TopicAuthorizationFailedError):  # DESCRIBE alone: denied at once
            alice.delete_records({tp: 2}, timeout_ms=TIMEOUT_MS)
        allow(admin, topic, ACLOperation.DELETE)
        result = eventually(lambda: alice.delete_records({tp: 2}, timeout_ms=TIMEOUT_MS))
        assert result[tp]["low_watermark"] == 2
    finally:
        admin.close()
        alice.close()


def test_a_principal_without_write_cannot_produce(sasl_bootstrap: str, topic: str) -> None:
    admin = admin_client(sasl_bootstrap, "admin", "admin-secret")
    try:
        spec = {"num_partitions": 1, "replication_factor": 1}
        admin.create_topics({topic: spec}, timeout_ms=TIMEOUT_MS, wait_for_metadata=True)
        allow(admin, topic, ACLOperation.DESCRIBE)
    finally:
        admin.close()
    producer = KafkaProducer(
        bootstrap_servers=sasl_bootstrap, retries=0, **sasl("alice", "alice-secret")
    )
    try:
        future = producer.send(topic, value=b"x", partition=0)
        with pytest.raises(TopicAuthorizationFailedError):
            future.get(timeout=CLIENT_TIMEOUT_S)
    finally:
        producer.close(timeout=CLIENT_TIMEOUT_S)


def test_a_wrong_password_is_refused(sasl_bootstrap: str, caplog: pytest.LogCaptureFixture) -> None:
    """kafka-python's admin client reports a refused login only as a bootstrap timeout;
    the broker's log shows the SaslAuthenticate answer it got (58, Kafka's message)."""
    caplog.set_level(logging.INFO, logger="lethe_reference.protocol.session")
    with pytest.raises((SaslAuthenticationFailedError, KafkaError)):
        client = KafkaAdminClient(
            bootstrap_servers=sasl_bootstrap,
            bootstrap_timeout_ms=3000,
            **sasl("alice", "not-her-password"),
        )
        client.close()
    assert "Authentication failed: Invalid username or password" in caplog.text


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_logs_in_as_the_user_and_acls_apply(
    sasl_bootstrap: str, topic: str, mechanism: str
) -> None:
    admin = KafkaAdminClient(
        bootstrap_servers=sasl_bootstrap, **sasl("admin", "admin-secret", mechanism)
    )
    alice = KafkaAdminClient(
        bootstrap_servers=sasl_bootstrap, **sasl("alice", "alice-secret", mechanism)
    )
    try:
        spec = {"num_partitions": 1, "replication_factor": 1}
        admin.create_topics({topic: spec}, timeout_ms=TIMEOUT_MS, wait_for_metadata=True)
        allow(admin, topic, ACLOperation.DESCRIBE)
        with pytest.raises(TopicAuthorizationFailedError):  # alice is alice, not admin
            alice.delete_records({TopicPartition(topic, 0): 0}, timeout_ms=TIMEOUT_MS)
    finally:
        admin.close()
        alice.close()


def test_a_wrong_scram_password_is_refused(
    sasl_bootstrap: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="lethe_reference.protocol.session")
    with pytest.raises((SaslAuthenticationFailedError, KafkaError)):
        KafkaAdminClient(
            bootstrap_servers=sasl_bootstrap,
            bootstrap_timeout_ms=3000,
            **sasl("alice", "not-her-password", "SCRAM-SHA-256"),
        ).close()
    assert "Invalid client credentials" in caplog.text


def test_a_group_consumer_finds_its_coordinator_on_the_sasl_listener(
    sasl_bootstrap: str, topic: str
) -> None:
    """FindCoordinator names the broker's SASL address, so the group works over SASL."""
    producer = KafkaProducer(bootstrap_servers=sasl_bootstrap, **sasl("admin", "admin-secret"))
    try:
        for i in range(3):
            producer.send(topic, value=f"v{i}".encode(), partition=0)
        producer.flush(timeout=CLIENT_TIMEOUT_S)
    finally:
        producer.close(timeout=CLIENT_TIMEOUT_S)
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=sasl_bootstrap,
        group_id=f"{topic}-group",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        **sasl("admin", "admin-secret"),
    )
    try:
        seen: list[bytes] = []
        deadline = time.monotonic() + CLIENT_TIMEOUT_S
        while len(seen) < 3 and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                seen.extend(m.value for m in batch)
        assert seen == [b"v0", b"v1", b"v2"]
        consumer.commit()
        assert consumer.committed(TopicPartition(topic, 0)) == 3
    finally:
        consumer.close()
