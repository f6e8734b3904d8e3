"""SCRAM credentials (KIP-554): the users' salted keys, and Kafka's rules for changing them.

Theory of operation
-------------------
Kafka keeps one credential per (user, mechanism) in its metadata log
(``UserScramCredentialRecord``: salt, StoredKey, ServerKey, iterations), written by
AlterUserScramCredentials (or ``kafka-storage format --add-scram``) and read by every
broker's SCRAM authenticator. The reference broker keeps them in
``scram-credentials.json`` in its log dir, as it keeps ``client-quotas.json``; every
broker of an ``EmbeddedCluster`` applies each change to its own file, as every Kafka
broker replays the same records.

The client salts the password itself: an upsertion carries the salt and
``SaltedPassword = Hi(password, salt, iterations)``; the broker derives
``ClientKey = HMAC(SaltedPassword, "Client Key")``, ``StoredKey = H(ClientKey)`` and
``ServerKey = HMAC(SaltedPassword, "Server Key")`` (``ScramControlManager.finishUpsertion``)
and never sees the password.

Changing them (``ScramControlManager.alterCredentials``), per user:

1. a user may be named once per request, deletions and upsertions together: the
   second naming fails the user with DUPLICATE_RESOURCE "A user credential cannot be
   altered twice in the same request" (a third naming changes nothing more);
2. an empty name: UNACCEPTABLE_CREDENTIAL "Username must not be empty"; a mechanism
   other than 1 (SCRAM-SHA-256) or 2 (SCRAM-SHA-512): UNSUPPORTED_SASL_MECHANISM
   "Unknown SCRAM mechanism";
3. deleting a credential the user does not have: RESOURCE_NOT_FOUND "Attempt to delete
   a user credential that does not exist";
4. iterations below 4096: UNACCEPTABLE_CREDENTIAL "Too few iterations"; above 16384:
   "Too many iterations";
5. an empty salted password: Java's HMAC refuses an empty key, which Kafka answers
   UNKNOWN_SERVER_ERROR with no message.

The request is atomic (``ControllerResult.atomicOf``): the users that passed are
changed, the others not.

This module does no I/O but reading and writing that file (:mod:`.state_files`).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lethe_formats.protocol.broker_errors import error_for_code
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.security.scram import MECHANISMS, MIN_ITERATIONS, hmac_digest

from lethe_reference.cluster.state_files import read_json_list, write_json
from lethe_reference.protocol.scram import ScramCredential

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "CREDENTIAL_FILE",
    "MAX_ITERATIONS",
    "MECHANISM_TYPES",
    "ScramCredentialStore",
    "check_deletion",
    "check_upsertion",
    "credential_from_salted",
    "scram_store",
]

CREDENTIAL_FILE = "scram-credentials.json"
#: ``ScramControlManager.MAX_ITERATIONS``
MAX_ITERATIONS = 16384
#: ``org.apache.kafka.clients.admin.ScramMechanism``: wire type -> mechanism name
MECHANISM_TYPES = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}

Key = tuple[str, str]  # (user, mechanism name)
_EXTENSION_KEY = "scram-credentials"


def scram_store(broker: Broker) -> ScramCredentialStore:
    """The broker's credentials (loaded from its log dir the first time)."""
    store = broker.extensions.get(_EXTENSION_KEY)
    if not isinstance(store, ScramCredentialStore):
        store = ScramCredentialStore.load(broker.log_dir / CREDENTIAL_FILE)
        broker.extensions[_EXTENSION_KEY] = store
    return store


def credential_from_salted(
    mechanism: str, salt: bytes, salted_password: bytes, iterations: int
) -> ScramCredential:
    """The stored credential of a client-salted password (RFC 5802 section 3)."""
    if not salted_password:
        raise error_for_code(ErrorCode.UNKNOWN_SERVER_ERROR, None)
    hash_name = MECHANISMS[mechanism]
    client_key = hmac_digest(hash_name, salted_password, b"Client Key")
    stored_key = hashlib.new(hash_name, client_key).digest()
    server_key = hmac_digest(hash_name, salted_password, b"Server Key")
    return ScramCredential(salt, iterations, stored_key, server_key)


def _check_name_and_mechanism(name: str, mechanism: int) -> str:
    if not name:
        raise error_for_code(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
    if mechanism not in MECHANISM_TYPES:
        raise error_for_code(ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
    return MECHANISM_TYPES[mechanism]


def check_upsertion(name: str, mechanism: int, iterations: int) -> str:
    """``validateUpsertion``: the mechanism's name; raises KafkaError."""
    mechanism_name = _check_name_and_mechanism(name, mechanism)
    if iterations < MIN_ITERATIONS:
        raise error_for_code(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    if iterations > MAX_ITERATIONS:
        raise error_for_code(ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
    return mechanism_name


def check_deletion(store: ScramCredentialStore, name: str, mechanism: int) -> str:
    """``validateDeletion``: the mechanism's name; raises KafkaError."""
    mechanism_name = _check_name_and_mechanism(name, mechanism)
    if (name, mechanism_name) not in store.credentials:
        raise error_for_code(
            ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
        )
    return mechanism_name


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@dataclass
class ScramCredentialStore:
    """Every (user, mechanism) credential, saved at ``path``."""

    path: Path | None = None
    credentials: dict[Key, ScramCredential] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> ScramCredentialStore:
        store = cls(path)
        for item in read_json_list(path):
            try:
                credential = ScramCredential(
                    base64.b64decode(item["salt"]),
                    int(item["iterations"]),
                    base64.b64decode(item["stored_key"]),
                    base64.b64decode(item["server_key"]),
                )
                key = (str(item["user"]), str(item["mechanism"]))
            except (KeyError, TypeError, ValueError):
                continue
            if key[1] in MECHANISMS:
                store.credentials[key] = credential
        return store

    def save(self) -> None:
        if self.path is None:
            return
        items = [
            {
                "user": user,
                "mechanism": mechanism,
                "salt": _b64(c.salt),
                "iterations": c.iterations,
                "stored_key": _b64(c.stored_key),
                "server_key": _b64(c.server_key),
            }
            for (user, mechanism), c in self.credentials.items()
        ]
        write_json(self.path, items)

    def users(self, mechanism: str) -> Mapping[str, ScramCredential]:
        """user -> credential of one mechanism (what the SCRAM authenticator looks up)."""
        return {u: c for (u, m), c in self.credentials.items() if m == mechanism}

    def mechanisms_of(self, user: str) -> list[tuple[int, int]]:
        """(mechanism type, iterations) of the user's credentials, by mechanism type."""
        return [
            (kind, self.credentials[(user, name)].iterations)
            for kind, name in MECHANISM_TYPES.items()
            if (user, name) in self.credentials
        ]

    def apply(self, changes: Mapping[Key, ScramCredential | None]) -> None:
        """Set (or, for None, remove) credentials, then save."""
        for key, credential in changes.items():
            if credential is None:
                self.credentials.pop(key, None)
            else:
                self.credentials[key] = credential
        self.save()
