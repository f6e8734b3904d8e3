"""Real clients over TLS against ``lethe broker`` started from the CLI.

confluent-kafka (librdkafka, OpenSSL) and kafka-python (Python's ssl) produce and
consume over SSL, over SASL_SSL with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, and
with mutual TLS, where the connection's principal is the client certificate's
subject (``User:CN=alice-client,OU=tests,O=lethe``, Kafka's default principal
builder) and ACLs apply to it: with Kafka's StandardAuthorizer and
``allow.everyone.if.no.acl.found=true``, a topic without ACLs is open to every
principal and one with an ACL only to the principals it names.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from interop_support import CLIENT_TIMEOUT_S
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KpTopicPartition
from tls_support import (
    ADMIN,
    ALICE,
    CLIENT_PRINCIPAL,
    KEY_PASSWORD,
    Certs,
    CliBroker,
    broker_settings,
)

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory, tls_certs: Certs) -> Iterator[CliBroker]:
    settings = broker_settings(
        tls_certs,
        **{
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:admin",
            "allow.everyone.if.no.acl.found": "true",
        },
    )
    with CliBroker(tmp_path_factory.mktemp("tls-broker"), settings) as running:
        yield running


def librdkafka(broker: CliBroker, tls_certs: Certs, how: str) -> dict[str, Any]:
    """confluent-kafka settings: ``ssl``, ``mtls`` or a SASL mechanism over SASL_SSL."""
    config: dict[str, Any] = {"ssl.ca.location": str(tls_certs.ca)}
    if how in ("ssl", "mtls"):
        config |= {"bootstrap.servers": broker.address("SSL"), "security.protocol": "SSL"}
        if how == "mtls":
            config |= {
                "ssl.certificate.location": str(tls_certs.client_cert),
                "ssl.key.location": str(tls_certs.client_key_encrypted),
                "ssl.key.password": KEY_PASSWORD,
            }
        return config
    return config | {
        "bootstrap.servers": broker.address("SASL_SSL"),
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": how,
        "sasl.username": ADMIN[0],
        "sasl.password": ADMIN[1],
    }


def admin(broker: CliBroker, tls_certs: Certs) -> AdminClient:
    return AdminClient(librdkafka(broker, tls_certs, "SCRAM-SHA-512"))


def create(broker: CliBroker, tls_certs: Certs) -> str:
    topic = f"tls-{uuid.uuid4().hex[:8]}"
    client = admin(broker, tls_certs)  # kept: a collected client fails its futures
    futures = client.create_topics([NewTopic(topic, 1, 1)])
    futures[topic].result(timeout=CLIENT_TIMEOUT_S)
    return topic


def produce_and_consume(config: dict[str, Any], topic: str) -> list[bytes]:
    producer = Producer(config)
    for i in range(3):
        producer.produce(topic, value=f"v{i}".encode(), partition=0)
    assert producer.flush(CLIENT_TIMEOUT_S) == 0
    consumer = Consumer(config | {"group.id": "tls-test", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got = []
        for message in consumer.consume(num_messages=3, timeout=CLIENT_TIMEOUT_S):
            assert message.error() is None, message.error()
            got.append(message.value())
        return got
    finally:
        consumer.close()


@pytest.mark.parametrize("how", ["ssl", "mtls", *MECHANISMS])
def test_confluent_kafka_produces_and_consumes(
    broker: CliBroker, tls_certs: Certs, how: str
) -> None:
    topic = create(broker, tls_certs)
    config = librdkafka(broker, tls_certs, how)
    assert produce_and_consume(config, topic) == [b"v0", b"v1", b"v2"]


def kafka_python(broker: CliBroker, tls_certs: Certs, how: str) -> dict[str, Any]:
    config: dict[str, Any] = {"ssl_cafile": str(tls_certs.ca), "request_timeout_ms": 30_000}
    if how in ("ssl", "mtls"):
        config |= {"bootstrap_servers": broker.address("SSL"), "security_protocol": "SSL"}
        if how == "mtls":
            config |= {
                "ssl_certfile": str(tls_certs.client_cert),
                "ssl_keyfile": str(tls_certs.client_key_encrypted),
                "ssl_password": KEY_PASSWORD,
            }
        return config
    return config | {
        "bootstrap_servers": broker.address("SASL_SSL"),
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": how,
        "sasl_plain_username": ALICE[0],
        "sasl_plain_password": ALICE[1],
    }


@pytest.mark.parametrize("how", ["ssl", "mtls", *MECHANISMS])
def test_kafka_python_produces_and_consumes(broker: CliBroker, tls_certs: Certs, how: str) -> None:
    topic = create(broker, tls_certs)
    config = kafka_python(broker, tls_certs, how)
    producer = KafkaProducer(**config)
    try:
        for i in range(3):
            producer.send(topic, value=f"k{i}".encode(), partition=0).get(CLIENT_TIMEOUT_S)
    finally:
        producer.close(CLIENT_TIMEOUT_S)
    consumer = KafkaConsumer(**config, enable_auto_commit=False, consumer_timeout_ms=30_000)
    try:
        consumer.assign([KpTopicPartition(topic, 0)])
        consumer.seek(KpTopicPartition(topic, 0), 0)
        values = [next(consumer).value for _ in range(3)]
    finally:
        consumer.close()
    assert values == [b"k0", b"k1", b"k2"]


def test_acls_apply_to_the_client_certificates_principal(
    broker: CliBroker, tls_certs: Certs
) -> None:
    topic = create(broker, tls_certs)
    binding = AclBinding(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.LITERAL,
        CLIENT_PRINCIPAL,
        "*",
        AclOperation.ALL,
        AclPermissionType.ALLOW,
    )
    client = admin(broker, tls_certs)
    for future in client.create_acls([binding]).values():
        future.result(timeout=CLIENT_TIMEOUT_S)
    # the certificate's principal is allowed ...
    assert produce_and_consume(librdkafka(broker, tls_certs, "mtls"), topic) == [
        b"v0",
        b"v1",
        b"v2",
    ]
    # ... a TLS client without a certificate (User:ANONYMOUS) is not, nor alice over SASL
    alice = librdkafka(broker, tls_certs, "PLAIN") | {
        "sasl.username": ALICE[0],
        "sasl.password": ALICE[1],
    }
    for config in (librdkafka(broker, tls_certs, "ssl"), alice):
        assert produce_errors(config, topic) == [KafkaError.TOPIC_AUTHORIZATION_FAILED]


def produce_errors(config: dict[str, Any], topic: str) -> list[int]:
    """The delivery error codes of one record produced with ``config``."""
    producer = Producer(config | {"message.timeout.ms": 20_000})
    errors: list[int] = []
    producer.produce(
        topic, b"x", partition=0, on_delivery=lambda e, _: errors.append(e.code() if e else 0)
    )
    producer.flush(CLIENT_TIMEOUT_S)
    return errors


def test_the_broker_log_names_no_secret(broker: CliBroker) -> None:
    text = broker.text()
    assert "admin-secret" not in text and "key-secret" not in text
    assert "connection-crashed" not in text and "Traceback" not in text
