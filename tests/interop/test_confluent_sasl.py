"""confluent-kafka (librdkafka) over SASL_PLAINTEXT with SASL/PLAIN against a broker running
Kafka's StandardAuthorizer: ACLs created with librdkafka's own CreateAcls decide whether
alice may delete records (KIP-107: DELETE on the topic; without it
TOPIC_AUTHORIZATION_FAILED, as Kafka answers), and DescribeAcls lists what was created."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from interop_support import CLIENT_TIMEOUT_S
from sasl_support import ADMIN, ALICE, sasl_broker


@pytest.fixture(scope="module")
def sasl_bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from sasl_broker(tmp_path_factory.mktemp("sasl-broker"))


def config(bootstrap: str, who: tuple[str, str]) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": who[0],
        "sasl.password": who[1],
    }


def grant(admin: AdminClient, topic: str, operation: AclOperation) -> None:
    binding = AclBinding(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.LITERAL,
        "User:alice",
        "*",
        operation,
        AclPermissionType.ALLOW,
    )
    for future in admin.create_acls([binding], request_timeout=CLIENT_TIMEOUT_S).values():
        future.result(timeout=CLIENT_TIMEOUT_S)


def delete_to(admin: AdminClient, topic: str, offset: int) -> Any:
    futures = admin.delete_records([TopicPartition(topic, 0, offset)])
    return next(iter(futures.values())).result(timeout=CLIENT_TIMEOUT_S)


def test_librdkafka_is_allowed_and_denied_as_the_acls_say(sasl_bootstrap: str, topic: str) -> None:
    admin = AdminClient(config(sasl_bootstrap, ADMIN))
    alice = AdminClient(config(sasl_bootstrap, ALICE))
    created = admin.create_topics([NewTopic(topic, 1, 1)], request_timeout=CLIENT_TIMEOUT_S)
    created[topic].result(timeout=CLIENT_TIMEOUT_S)
    producer = Producer(config(sasl_bootstrap, ADMIN))
    for i in range(3):
        producer.produce(topic, value=f"v{i}".encode(), partition=0)
    assert producer.flush(CLIENT_TIMEOUT_S) == 0

    grant(admin, topic, AclOperation.DESCRIBE)
    with pytest.raises(KafkaException) as denied:
        delete_to(alice, topic, 2)
    assert denied.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    grant(admin, topic, AclOperation.DELETE)
    assert delete_to(alice, topic, 2).low_watermark == 2

    mine = AclBindingFilter(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.ANY,
        None,
        None,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    listed = admin.describe_acls(mine, request_timeout=CLIENT_TIMEOUT_S).result()
    assert sorted(b.operation.name for b in listed) == ["DELETE", "DESCRIBE"]
