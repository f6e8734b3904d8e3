"""Shared pieces of the security tests: a broker with Kafka's StandardAuthorizer and a
SASL_PLAINTEXT listener configured as a Kafka broker would be, and request contexts
for named principals."""

from __future__ import annotations

from pathlib import Path

from lethe_formats.protocol.api_keys import ApiKey
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.cluster.acl import (
    AclBinding,
    AclOperation,
    AclPermission,
    PatternType,
    ResourceType,
)
from lethe_reference.handlers.authz import authorizer_of
from lethe_reference.handlers.context import RequestContext
from lethe_reference.protocol.listeners import SASL_PLAINTEXT, ListenerSecurity
from lethe_reference.server.defaults import broker_config

JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" '
    'user_admin="admin-secret" user_alice="alice-secret";'
)
SECURED = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:admin",
    "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
}
SASL_LISTENER = ListenerSecurity(
    SASL_PLAINTEXT, SASL_PLAINTEXT, ("PLAIN",), {"admin": "admin-secret", "alice": "alice-secret"}
)
ADMIN = "User:admin"
ALICE = "User:alice"


def secured_broker(log_dir: Path, **extra: str) -> Broker:
    broker = Broker(log_dir, config=broker_config(overrides=SECURED | extra), clock=ManualClock(0))
    broker.startup()
    return broker


def plain_broker(log_dir: Path) -> Broker:
    broker = Broker(log_dir, config=broker_config(), clock=ManualClock(0))
    broker.startup()
    return broker


def ctx(api_key: ApiKey, version: int, principal: str = ALICE) -> RequestContext:
    return RequestContext(int(api_key), version, 7, "test", 1, principal, "127.0.0.1")


def grant(
    broker: Broker,
    topic: str,
    operation: AclOperation,
    *,
    principal: str = ALICE,
    permission: AclPermission = AclPermission.ALLOW,
) -> None:
    authorizer = authorizer_of(broker)
    assert authorizer is not None
    authorizer.add(
        [
            AclBinding(
                ResourceType.TOPIC,
                topic,
                PatternType.LITERAL,
                principal,
                "*",
                operation,
                permission,
            )
        ]
    )
