"""Capability ``principals``: targets that connect as two SASL roles, and steps that act as one.

The embedded target always offers it (a SASL_PLAINTEXT listener beside the
PLAINTEXT one, Kafka's StandardAuthorizer, super users admin and ANONYMOUS);
a bootstrap target only when it was given both the admin's and a second
principal's credentials. Expected values: Kafka's SASL/PLAIN behaviour (a
wrong password is SASL_AUTHENTICATION_FAILED) and the runner contract in
fixtures/scenarios/README.md (missing capability -> NOT_APPLICABLE).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_conformance.client import AuthenticationError, PlainCredentials, calls
from lethe_conformance.outcomes import Outcome
from lethe_conformance.scenarios import ScenarioError, load_scenario, run_scenario, scenarios_root
from lethe_conformance.targets import BootstrapTarget, CapabilityMissingError
from lethe_conformance.targets.embedded import CREDENTIALS, EmbeddedTarget
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.describe_acls import DescribeAclsRequest, DescribeAclsResponse

AUTH_SCENARIO = scenarios_root() / "kip107" / "kip107-delete-records-authorization.json"


@pytest.fixture(scope="module")
def embedded() -> Iterator[EmbeddedTarget]:
    with EmbeddedTarget() as target:
        yield target


def sasl_address(target: EmbeddedTarget) -> str:
    conn = target.connect_as("admin")
    conn.close()
    return conn.target


def test_the_embedded_target_offers_principals_as_admin_and_alice(
    embedded: EmbeddedTarget,
) -> None:
    assert "principals" in embedded.capabilities.names()
    assert embedded.principal_of("admin") == "User:admin"
    assert embedded.principal_of("user") == "User:alice"


def test_the_user_role_is_authenticated_and_denied_what_no_acl_allows(
    embedded: EmbeddedTarget,
) -> None:
    with embedded.connect() as admin:
        calls.create_topic(admin, "principals-denied", 1, {})
    with embedded.connect_as("user") as user:
        answer = calls.list_offsets(user, [("principals-denied", 0, -1)])
    assert answer.topics[0].partitions[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED


def test_a_bootstrap_target_offers_principals_only_with_both_credentials(
    embedded: EmbeddedTarget,
) -> None:
    address = sasl_address(embedded)
    admin, user = CREDENTIALS["admin"], CREDENTIALS["user"]
    assert "principals" not in BootstrapTarget(address, sasl=admin).capabilities.names()
    assert "principals" not in BootstrapTarget(address, user=user).capabilities.names()
    both = BootstrapTarget(address, sasl=admin, user=user)
    assert "principals" in both.capabilities.names()
    assert both.principal_of("user") == "User:alice"
    with both.connect_as("user") as conn:
        assert conn.supports(21)
    with pytest.raises(CapabilityMissingError):
        BootstrapTarget(address, sasl=admin).connect_as("user")


def test_a_wrong_password_is_refused_by_the_sasl_listener(embedded: EmbeddedTarget) -> None:
    target = BootstrapTarget(
        sasl_address(embedded), sasl=PlainCredentials("alice", "not-her-password")
    )
    with pytest.raises(AuthenticationError, match="SASL_AUTHENTICATION_FAILED"):
        target.connect()


def test_a_principal_scenario_is_not_applicable_without_the_capability(
    embedded: EmbeddedTarget,
) -> None:
    plain = BootstrapTarget(embedded.bootstrap)
    result = run_scenario(plain, load_scenario(AUTH_SCENARIO))
    assert result.outcome is Outcome.NOT_APPLICABLE
    assert "principals" in result.detail


def test_a_step_acting_as_a_principal_needs_the_capability_in_requires(tmp_path: Path) -> None:
    data = json.loads(AUTH_SCENARIO.read_text())
    data["requires"] = []
    path = tmp_path / AUTH_SCENARIO.name
    path.write_text(json.dumps(data))
    with pytest.raises(ScenarioError, match="principals"):
        load_scenario(path)


def test_the_runner_removes_the_acls_a_scenario_created(embedded: EmbeddedTarget) -> None:
    """After the run, the user role is back to no rights: the ACLs are gone from the broker."""
    result = run_scenario(embedded, load_scenario(AUTH_SCENARIO))
    assert result.outcome is Outcome.PASS, result.detail
    alices = DescribeAclsRequest(1, None, 1, "User:alice", None, 1, 1)  # ANY but the principal
    with embedded.connect() as admin:
        answer = admin.call(alices, DescribeAclsResponse)
    assert answer.error_code == ErrorCode.NONE
    assert answer.resources == ()


def test_a_bootstrap_target_with_both_principals_runs_the_authorization_scenarios(
    embedded: EmbeddedTarget,
) -> None:
    """As against a real Kafka with a SASL_PLAINTEXT listener: every connection (setup,
    cleanup, admin steps) authenticates as the admin, steps with a principal as alice."""
    target = BootstrapTarget(
        sasl_address(embedded), sasl=CREDENTIALS["admin"], user=CREDENTIALS["user"]
    )
    for name in ("kip107-delete-records-authorization", "kip107-list-offsets-authorization"):
        result = run_scenario(target, load_scenario(scenarios_root() / "kip107" / f"{name}.json"))
        assert result.outcome is Outcome.PASS, result.detail
