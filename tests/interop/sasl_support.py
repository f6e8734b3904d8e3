"""A reference broker with a SASL_PLAINTEXT listener (PLAIN, SCRAM-SHA-256/512) and Kafka's
StandardAuthorizer, as the SASL interop tests start it: super user ``admin``, and
``alice`` with no ACLs until a test grants some."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from lethe_reference.embedded import EmbeddedBroker
from lethe_reference.server.defaults import broker_config

ADMIN = ("admin", "admin-secret")
ALICE = ("alice", "alice-secret")
JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" '
    'user_admin="admin-secret" user_alice="alice-secret";'
)
#: the same accounts for SCRAM (lethe reads them from the JAAS line; Kafka from its metadata)
SCRAM_JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'user_admin="admin-secret" user_alice="alice-secret";'
)
SECURED = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:admin",
    "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
    "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
    "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
}


def sasl_broker(log_dir: Path) -> Iterator[str]:
    """Serve a secured broker in ``log_dir``; yields its SASL_PLAINTEXT bootstrap address."""
    with EmbeddedBroker(log_dir, config=broker_config(overrides=SECURED), sasl_port=0) as broker:
        yield broker.sasl_bootstrap
