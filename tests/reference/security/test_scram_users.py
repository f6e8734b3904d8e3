"""Users made with AlterUserScramCredentials log in with SCRAM on a SASL listener of the
same broker (the protocol-level form of ``kafka-configs.sh --add-config
'SCRAM-SHA-256=[...]'`` then a client's login, which the golden recording shows on
Kafka 4.0.0: fixtures/golden/admin-tools/scram-users), survive a restart, and lose
their login when deleted. The client salts the password, as Java's admin client does
(``ScramFormatter.hi``: PBKDF2-HMAC with the mechanism's hash)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import pytest
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    ScramDeletion,
    ScramUpsertion,
    ScramUserResult,
)
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.describe_user_scram_credentials import (
    CredentialInfo,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    ScramUserName,
    UserScramResult,
)
from lethe_formats.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from lethe_formats.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from lethe_formats.security.scram import MECHANISMS, ScramClient
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.protocol.listeners import SASL_PLAINTEXT, ListenerSecurity
from lethe_reference.protocol.loopback import LoopbackClient
from lethe_reference.server.defaults import broker_config
from security_support import secured_broker

SCRAM_LISTENER = ListenerSecurity(
    SASL_PLAINTEXT, SASL_PLAINTEXT, ("SCRAM-SHA-256", "SCRAM-SHA-512")
)
SALT = b"sixteen byte salt"
TYPES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}


def start(log_dir: Path) -> Broker:
    broker = Broker(log_dir, config=broker_config(), clock=ManualClock(0))
    broker.startup()
    return broker


def upsertion(user: str, password: str, mechanism: str, iterations: int = 8192) -> ScramUpsertion:
    salted = hashlib.pbkdf2_hmac(MECHANISMS[mechanism], password.encode(), SALT, iterations)
    return ScramUpsertion(user, TYPES[mechanism], iterations, SALT, salted)


def alter(
    broker: Broker,
    *,
    deletions: Sequence[ScramDeletion] = (),
    upsertions: Sequence[ScramUpsertion] = (),
) -> tuple[ScramUserResult, ...]:
    request = AlterUserScramCredentialsRequest(tuple(deletions), tuple(upsertions))
    return (
        LoopbackClient(broker).call(request, AlterUserScramCredentialsResponse, version=0).results
    )


def describe(broker: Broker, *users: str) -> tuple[UserScramResult, ...]:
    request = DescribeUserScramCredentialsRequest(tuple(ScramUserName(u) for u in users))
    answer = LoopbackClient(broker).call(request, DescribeUserScramCredentialsResponse, version=0)
    assert (answer.error_code, answer.error_message) == (ErrorCode.NONE, "")
    return answer.results


def login(broker: Broker, user: str, password: str, mechanism: str) -> int:
    """SaslHandshake v1 and two SaslAuthenticate rounds; the last error code."""
    client = LoopbackClient(broker, listener=SCRAM_LISTENER)
    client.call(ApiVersionsRequest("test", "1"), ApiVersionsResponse, version=3)
    shake = client.call(SaslHandshakeRequest(mechanism), SaslHandshakeResponse, version=1)
    assert shake.error_code == ErrorCode.NONE
    scram = ScramClient(mechanism, user, password)
    first = client.call(SaslAuthenticateRequest(scram.first()), SaslAuthenticateResponse, version=2)
    if first.error_code:
        return first.error_code
    final = client.call(
        SaslAuthenticateRequest(scram.final(first.auth_bytes)), SaslAuthenticateResponse, version=2
    )
    if final.error_code == ErrorCode.NONE:
        scram.verify(final.auth_bytes)
    return final.error_code


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_an_added_user_logs_in_and_a_deleted_one_no_longer(tmp_path: Path, mechanism: str) -> None:
    broker = start(tmp_path)
    assert login(broker, "alice", "alice-secret", mechanism) == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert alter(broker, upsertions=[upsertion("alice", "alice-secret", mechanism)]) == (
        ScramUserResult("alice", ErrorCode.NONE, None),
    )
    assert login(broker, "alice", "alice-secret", mechanism) == ErrorCode.NONE
    assert login(broker, "alice", "wrong", mechanism) == ErrorCode.SASL_AUTHENTICATION_FAILED
    other = "SCRAM-SHA-512" if mechanism == "SCRAM-SHA-256" else "SCRAM-SHA-256"
    assert login(broker, "alice", "alice-secret", other) == ErrorCode.SASL_AUTHENTICATION_FAILED
    alter(broker, deletions=[ScramDeletion("alice", TYPES[mechanism])])
    assert login(broker, "alice", "alice-secret", mechanism) == ErrorCode.SASL_AUTHENTICATION_FAILED
    broker.shutdown()


def test_credentials_survive_a_restart_and_only_the_keys_are_kept(tmp_path: Path) -> None:
    broker = start(tmp_path)
    alter(broker, upsertions=[upsertion("alice", "alice-secret", "SCRAM-SHA-256")])
    broker.shutdown()
    saved = (tmp_path / "scram-credentials.json").read_text()
    assert "alice" in saved
    assert "alice-secret" not in saved
    again = start(tmp_path)
    assert describe(again, "alice") == (
        UserScramResult("alice", ErrorCode.NONE, "", (CredentialInfo(1, 8192),)),
    )
    assert login(again, "alice", "alice-secret", "SCRAM-SHA-256") == ErrorCode.NONE
    again.shutdown()


def test_a_user_without_credentials_is_not_found(tmp_path: Path) -> None:
    broker = start(tmp_path)
    message = "Attempt to describe a user credential that does not exist: bob"
    assert describe(broker, "bob") == (
        UserScramResult("bob", ErrorCode.RESOURCE_NOT_FOUND, message, ()),
    )
    broker.shutdown()


def test_a_corrupt_credential_file_starts_empty(tmp_path: Path) -> None:
    (tmp_path / "scram-credentials.json").write_text('[{"user": "x"}, 3, "garbage"')
    broker = start(tmp_path)
    assert describe(broker) == ()
    broker.shutdown()


def test_unauthorized_requests_get_kafkas_error_responses(tmp_path: Path) -> None:
    """Without DESCRIBE / ALTER on the cluster (an anonymous principal under the
    StandardAuthorizer): 31 everywhere, nothing changed; a null user list (Kafka sends
    no answer at all, see the handler's docstring) gets 31 and no results."""
    broker = secured_broker(tmp_path)
    client = LoopbackClient(broker)
    null = client.call(
        DescribeUserScramCredentialsRequest(None), DescribeUserScramCredentialsResponse, version=0
    )
    assert (null.error_code, null.error_message, null.results) == (
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        None,
        (),
    )
    denied = alter(broker, upsertions=[upsertion("mallory", "m", "SCRAM-SHA-256")])
    assert denied == (
        ScramUserResult(
            "mallory", ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."
        ),
    )
    assert not (tmp_path / "scram-credentials.json").exists()
    broker.shutdown()
