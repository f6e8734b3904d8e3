"""The authorizer's decisions, as Kafka's StandardAuthorizer makes them: super users, DENY
wins, implied operations (DESCRIBE from READ/WRITE/DELETE/ALTER, DESCRIBE_CONFIGS from
ALTER_CONFIGS) for ALLOW only, LITERAL / ``*`` / PREFIXED patterns, ``User:*`` and hosts,
``allow.everyone.if.no.acl.found``, filters (ANY, MATCH), and ACLs surviving a restart."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_reference.cluster.acl import (
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermission,
    PatternType,
    ResourceType,
    validation_problem,
)
from lethe_reference.cluster.authorizer import ACL_FILE, Authorizer, authorizer_settings

Op, Perm, Kind = AclOperation, AclPermission, ResourceType
ALICE = "User:alice"


def acl(
    name: str,
    op: AclOperation,
    *,
    pattern: PatternType = PatternType.LITERAL,
    principal: str = ALICE,
    host: str = "*",
    permission: AclPermission = Perm.ALLOW,
    kind: ResourceType = Kind.TOPIC,
) -> AclBinding:
    return AclBinding(kind, name, pattern, principal, host, op, permission)


def may(authorizer: Authorizer, op: AclOperation, name: str = "orders", **kw: str) -> bool:
    return authorizer.authorize(
        kw.get("principal", ALICE), kw.get("host", "10.0.0.1"), op, Kind.TOPIC, name
    )


def with_acls(*bindings: AclBinding, **kw: object) -> Authorizer:
    authorizer = Authorizer(**kw)  # type: ignore[arg-type]
    authorizer.add(bindings)
    return authorizer


def test_no_acl_denies_unless_allow_everyone_if_no_acl_found() -> None:
    assert not may(Authorizer(), Op.READ)
    assert may(Authorizer(allow_if_no_acl=True), Op.READ)


def test_any_acl_on_the_resource_ends_the_allow_everyone_rule() -> None:
    authorizer = with_acls(acl("orders", Op.READ, principal="User:bob"), allow_if_no_acl=True)
    assert not may(authorizer, Op.READ)
    assert may(authorizer, Op.READ, "other")


def test_super_users_are_allowed_everything_even_against_a_deny() -> None:
    authorizer = with_acls(
        acl("orders", Op.ALL, principal="User:root", permission=Perm.DENY),
        super_users=["User:root"],
    )
    assert may(authorizer, Op.DELETE, principal="User:root")


@pytest.mark.parametrize("granted", [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER, Op.DESCRIBE])
def test_describe_is_implied_by_read_write_delete_alter(granted: AclOperation) -> None:
    assert may(with_acls(acl("orders", granted)), Op.DESCRIBE)


def test_implication_goes_one_way_and_not_across() -> None:
    authorizer = with_acls(acl("orders", Op.DESCRIBE), acl("orders", Op.ALTER_CONFIGS))
    assert not may(authorizer, Op.DELETE)
    assert not may(authorizer, Op.READ)
    assert may(authorizer, Op.DESCRIBE_CONFIGS)
    assert not may(with_acls(acl("orders", Op.ALTER)), Op.DESCRIBE_CONFIGS)


def test_deny_wins_and_denies_only_its_operation() -> None:
    authorizer = with_acls(acl("orders", Op.ALL), acl("orders", Op.DELETE, permission=Perm.DENY))
    assert not may(authorizer, Op.DELETE)
    assert may(authorizer, Op.READ)
    denied_read = with_acls(acl("orders", Op.READ), acl("orders", Op.READ, permission=Perm.DENY))
    assert not may(denied_read, Op.READ)
    assert may(denied_read, Op.DESCRIBE)  # a DENY of READ implies nothing


def test_deny_all_denies_every_operation() -> None:
    authorizer = with_acls(acl("orders", Op.READ), acl("*", Op.ALL, permission=Perm.DENY))
    assert not may(authorizer, Op.READ)


def test_wildcard_and_prefixed_patterns_cover_names() -> None:
    authorizer = with_acls(acl("*", Op.DESCRIBE), acl("ord", Op.READ, pattern=PatternType.PREFIXED))
    assert may(authorizer, Op.DESCRIBE, "anything")
    assert may(authorizer, Op.READ, "orders")
    assert not may(authorizer, Op.READ, "or")
    literal_star_prefix = with_acls(acl("ord", Op.READ))
    assert not may(literal_star_prefix, Op.READ, "orders")


def test_principal_wildcard_and_host_matching() -> None:
    authorizer = with_acls(
        acl("orders", Op.READ, principal="User:*"), acl("orders", Op.WRITE, host="10.0.0.9")
    )
    assert may(authorizer, Op.READ, principal="User:bob")
    assert not may(authorizer, Op.WRITE)  # from 10.0.0.1
    assert may(authorizer, Op.WRITE, host="10.0.0.9")


def test_authorized_operations_list_what_the_principal_may_do() -> None:
    authorizer = with_acls(acl("orders", Op.READ))
    assert authorizer.authorized_operations(ALICE, "h", Kind.TOPIC, "orders") == (
        Op.READ,
        Op.DESCRIBE,
    )


def test_filters_select_exact_names_or_what_applies_with_match() -> None:
    literal, prefixed = acl("orders", Op.READ), acl("ord", Op.READ, pattern=PatternType.PREFIXED)
    wildcard = acl("*", Op.READ)
    authorizer = with_acls(literal, prefixed, wildcard)
    assert authorizer.matching(AclFilter(resource_name="ord")) == [prefixed]
    applies = AclFilter(resource_name="orders", pattern_type=PatternType.MATCH)
    assert authorizer.matching(applies) == [literal, prefixed, wildcard]
    only_prefixed = AclFilter(pattern_type=PatternType.PREFIXED)
    assert authorizer.matching(only_prefixed) == [prefixed]


def test_acls_persist_in_the_log_dir_and_removal_too(tmp_path: Path) -> None:
    path = tmp_path / ACL_FILE
    first = Authorizer(path)
    first.add([acl("orders", Op.READ), acl("orders", Op.READ), acl("x", Op.WRITE)])
    assert len(Authorizer(path).bindings) == 2  # a binding created twice is kept once
    removed = first.remove(AclFilter(resource_name="x"))
    assert removed == [acl("x", Op.WRITE)]
    assert Authorizer(path).bindings == (acl("orders", Op.READ),)


def test_settings_come_from_the_config_names_kafka_uses() -> None:
    enabled, supers, allow = authorizer_settings(
        [
            {
                "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                "super.users": "User:admin; User:ops",
            }
        ]
    )
    assert enabled and supers == {"User:admin", "User:ops"} and not allow
    assert authorizer_settings([{}]) == (False, frozenset(), False)


@pytest.mark.parametrize(
    "binding",
    [
        acl("orders", Op.ANY),
        acl("orders", Op.READ, permission=Perm.ANY),
        acl("orders", Op.READ, pattern=PatternType.MATCH),
        acl("", Op.READ),
        acl("orders", Op.READ, kind=Kind.ANY),
        acl("my-cluster", Op.ALTER, kind=Kind.CLUSTER),
        acl("orders", Op.READ, principal="alice"),
    ],
)
def test_bindings_kafka_refuses_to_create_have_a_problem(binding: AclBinding) -> None:
    assert validation_problem(binding) is not None


def test_a_valid_binding_has_no_problem() -> None:
    assert validation_problem(acl("kafka-cluster", Op.ALTER, kind=Kind.CLUSTER)) is None


def test_authorize_any_asks_for_some_allowed_resource_not_denied() -> None:
    assert not Authorizer().authorize_any(ALICE, "h", Op.WRITE, Kind.TOPIC)
    allowed = with_acls(acl("orders", Op.WRITE))
    assert allowed.authorize_any(ALICE, "h", Op.WRITE, Kind.TOPIC)
    assert not allowed.authorize_any(ALICE, "h", Op.WRITE, Kind.GROUP)
    shadowed = with_acls(
        acl("orders", Op.WRITE),
        acl("ord", Op.WRITE, pattern=PatternType.PREFIXED, permission=Perm.DENY),
    )
    assert not shadowed.authorize_any(ALICE, "h", Op.WRITE, Kind.TOPIC)
    wildcard_deny = with_acls(acl("x", Op.ALL), acl("*", Op.WRITE, permission=Perm.DENY))
    assert not wildcard_deny.authorize_any(ALICE, "h", Op.WRITE, Kind.TOPIC)
    assert with_acls(super_users=[ALICE]).authorize_any(ALICE, "h", Op.WRITE, Kind.TOPIC)
