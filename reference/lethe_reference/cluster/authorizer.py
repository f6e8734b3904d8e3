"""An ACL authorizer with the rules of Kafka's ``StandardAuthorizer``, persisted in the log dir.

Theory of operation
-------------------
Enabled by ``authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer``
(:data:`AUTHORIZER_CLASS`); without it the broker has no authorizer and allows
everything (:mod:`lethe_reference.handlers.authz`). One decision::

    principal in super.users                                   -> ALLOW
    bindings whose pattern covers the resource (LITERAL equal or "*", PREFIXED prefix)
      of those, the ones for this principal or User:*, this host or "*":
        any DENY for the operation (or ALL)                    -> DENY   (deny wins)
        any ALLOW for the operation (or ALL, or implying it)   -> ALLOW
    no binding covers the resource at all                      -> allow.everyone.if.no.acl.found
    otherwise                                                  -> DENY

Implied operations apply to ALLOW only: READ, WRITE, DELETE and ALTER imply
DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS. A DENY denies exactly its
operation (or everything, for ALL).

Persistence. Kafka keeps ACLs in the KRaft metadata log; the reference broker
has none, so the bindings live in :data:`ACL_FILE` (``.lethe-acls.json``,
beside ``.lethe-topics.json``), rewritten atomically after every change and
read at startup, so ACLs survive a restart::

    {"version": 1, "acls": [{"resource_type": "TOPIC", "resource_name": "t",
      "pattern_type": "LITERAL", "principal": "User:alice", "host": "*",
      "operation": "READ", "permission": "ALLOW"}, ...]}

A binding created twice is kept once, as Kafka's ACL set does.

:meth:`Authorizer.authorize_any` answers Kafka's ``authorizeByResourceType``
(may the principal do the operation on *some* resource of the type? asked by
InitProducerId for WRITE on any topic): a super user may; a DENY of the
operation on the LITERAL ``*`` resource forbids; otherwise some ALLOW binding
of the principal (or ``User:*``) for the operation must not be covered by one
of its DENY bindings (a LITERAL deny of the same name, or a PREFIXED deny that
is a prefix of it). ``allow.everyone.if.no.acl.found`` is not consulted there.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from lethe_formats.storage.atomic import write_atomically

from lethe_reference.cluster.acl import (
    SUPPORTED_OPERATIONS,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclFilter,
    AclOperation,
    AclPermission,
    PatternType,
    ResourceType,
)

__all__ = [
    "ACL_FILE",
    "AUTHORIZER_CLASS",
    "Authorizer",
    "authorizer_settings",
    "config_value",
]

AUTHORIZER_CLASS = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ACL_FILE = ".lethe-acls.json"
_IMPLIES_DESCRIBE = frozenset(
    {
        AclOperation.DESCRIBE,
        AclOperation.READ,
        AclOperation.WRITE,
        AclOperation.DELETE,
        AclOperation.ALTER,
    }
)
_IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})


def config_value(layers: Sequence[Mapping[str, str]], name: str) -> str | None:
    """The raw value of ``name`` in the first layer that has it (highest priority first)."""
    for layer in layers:
        if name in layer:
            return layer[name]
    return None


def authorizer_settings(
    layers: Sequence[Mapping[str, str]],
) -> tuple[bool, frozenset[str], bool]:
    """(enabled, super users, allow.everyone.if.no.acl.found) from raw config layers."""
    enabled = (config_value(layers, "authorizer.class.name") or "").strip() == AUTHORIZER_CLASS
    supers = config_value(layers, "super.users") or ""
    allow = (config_value(layers, "allow.everyone.if.no.acl.found") or "false").strip()
    return (
        enabled,
        frozenset(s.strip() for s in supers.split(";") if s.strip()),
        allow.lower() == "true",
    )


class Authorizer:
    """ACL bindings plus the decision rule of the module docstring."""

    def __init__(
        self,
        path: Path | None = None,
        *,
        super_users: Iterable[str] = (),
        allow_if_no_acl: bool = False,
    ) -> None:
        self.path = path
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_if_no_acl
        self._bindings: dict[AclBinding, None] = {}
        if path is not None and path.exists():
            self._load(path)

    @property
    def bindings(self) -> tuple[AclBinding, ...]:
        return tuple(self._bindings)

    # --- decisions ----------------------------------------------------------------------

    def authorize(
        self,
        principal: str,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
    ) -> bool:
        """Whether ``principal`` connected from ``host`` may do ``operation`` on the resource."""
        if principal in self.super_users:
            return True
        covering = [b for b in self._bindings if b.applies_to(resource_type, name)]
        if not covering:
            return self.allow_if_no_acl
        mine = [b for b in covering if _concerns(b, principal, host)]
        if any(_denies(b, operation) for b in mine):
            return False
        return any(_allows(b, operation) for b in mine)

    def authorize_any(
        self, principal: str, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Kafka's ``authorizeByResourceType`` (module docstring)."""
        if principal in self.super_users:
            return True
        mine = [
            b
            for b in self._bindings
            if b.resource_type == resource_type and _concerns(b, principal, host)
        ]
        denies = [b for b in mine if _denies(b, operation)]
        if any(
            d.pattern_type is PatternType.LITERAL and d.resource_name == WILDCARD for d in denies
        ):
            return False
        allows = [
            b
            for b in mine
            if b.permission is AclPermission.ALLOW and b.operation in (AclOperation.ALL, operation)
        ]
        return any(not _deny_covers(denies, a) for a in allows)

    def authorized_operations(
        self, principal: str, host: str, resource_type: ResourceType, name: str
    ) -> tuple[AclOperation, ...]:
        """The supported operations of the type that ``principal`` may do on the resource."""
        return tuple(
            op
            for op in SUPPORTED_OPERATIONS.get(resource_type, ())
            if self.authorize(principal, host, op, resource_type, name)
        )

    # --- changes ------------------------------------------------------------------------

    def add(self, bindings: Iterable[AclBinding]) -> None:
        """Add bindings (already validated) and persist."""
        for binding in bindings:
            self._bindings[binding] = None
        self._save()

    def matching(self, acl_filter: AclFilter) -> list[AclBinding]:
        return [b for b in self._bindings if acl_filter.matches(b)]

    def remove(self, acl_filter: AclFilter) -> list[AclBinding]:
        """Remove and return every binding the filter matches (persisted)."""
        gone = self.matching(acl_filter)
        for binding in gone:
            del self._bindings[binding]
        if gone:
            self._save()
        return gone

    # --- persistence --------------------------------------------------------------------

    def _load(self, path: Path) -> None:
        data = json.loads(path.read_text("utf-8"))
        for entry in data.get("acls", ()):
            self._bindings[AclBinding.from_json(entry)] = None

    def _save(self) -> None:
        if self.path is None:
            return
        acls = [b.to_json() for b in self._bindings]
        text = json.dumps({"version": 1, "acls": acls}, indent=1, sort_keys=True)
        write_atomically(self.path, text.encode("utf-8"))


def _deny_covers(denies: list[AclBinding], allowed: AclBinding) -> bool:
    for deny in denies:
        if deny.pattern_type is PatternType.PREFIXED:
            if allowed.resource_name.startswith(deny.resource_name):
                return True
        elif deny.resource_name == allowed.resource_name:
            return True
    return False


def _concerns(binding: AclBinding, principal: str, host: str) -> bool:
    if binding.principal not in (principal, WILDCARD_PRINCIPAL):
        return False
    return binding.host in (WILDCARD, host)


def _denies(binding: AclBinding, operation: AclOperation) -> bool:
    return binding.permission is AclPermission.DENY and binding.operation in (
        AclOperation.ALL,
        operation,
    )


def _allows(binding: AclBinding, operation: AclOperation) -> bool:
    if binding.permission is not AclPermission.ALLOW:
        return False
    if binding.operation in (AclOperation.ALL, operation):
        return True
    if operation is AclOperation.DESCRIBE:
        return binding.operation in _IMPLIES_DESCRIBE
    if operation is AclOperation.DESCRIBE_CONFIGS:
        return binding.operation in _IMPLIES_DESCRIBE_CONFIGS
    return False
