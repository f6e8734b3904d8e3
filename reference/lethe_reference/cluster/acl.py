"""ACL bindings and binding filters, as Kafka's ``org.apache.kafka.common.acl`` models them.

Theory of operation
-------------------
An ACL binding says *who* (principal ``User:alice``, or ``User:*`` for
everyone), *from where* (a host address, or ``*``), *may or may not*
(ALLOW / DENY) do *what* (an operation) to *which resources* (a resource type
plus a pattern)::

    AclBinding(ResourcePattern(TOPIC, "orders-", PREFIXED),
               AccessControlEntry("User:alice", "*", READ, ALLOW))

A pattern is LITERAL (the name, or ``*`` meaning every resource of the type)
or PREFIXED (every name that starts with it). Filters, used by DescribeAcls
and DeleteAcls, select bindings: ANY (or null) in a field matches every value;
the pattern type filter MATCH selects the bindings that would *apply* to the
named resource (literal equal or ``*``, or a prefix of it), while ANY or a
concrete type compares the names exactly (:meth:`AclFilter.matches`).

The numeric codes are Kafka's (``ResourceType``, ``PatternType``,
``AclOperation``, ``AclPermissionType``), so they travel unchanged through
CreateAcls/DescribeAcls/DeleteAcls.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "CLUSTER_NAME",
    "SUPPORTED_OPERATIONS",
    "WILDCARD",
    "WILDCARD_PRINCIPAL",
    "AclBinding",
    "AclFilter",
    "AclOperation",
    "AclPermission",
    "PatternType",
    "ResourceType",
    "validation_problem",
]

#: The name of the one CLUSTER resource.
CLUSTER_NAME = "kafka-cluster"
#: A LITERAL resource name matching every resource of its type.
WILDCARD = "*"
#: The principal of an ACL that applies to every user.
WILDCARD_PRINCIPAL = "User:*"


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermission(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


_O = AclOperation
#: ``AclEntry.supportedOperations``: what authorized-operation bit fields report per type.
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        _O.READ,
        _O.WRITE,
        _O.CREATE,
        _O.DELETE,
        _O.ALTER,
        _O.DESCRIBE,
        _O.DESCRIBE_CONFIGS,
        _O.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (_O.READ, _O.DESCRIBE, _O.DELETE, _O.DESCRIBE_CONFIGS, _O.ALTER_CONFIGS),
    ResourceType.CLUSTER: (
        _O.CREATE,
        _O.ALTER,
        _O.DESCRIBE,
        _O.CLUSTER_ACTION,
        _O.DESCRIBE_CONFIGS,
        _O.ALTER_CONFIGS,
        _O.IDEMPOTENT_WRITE,
    ),
    ResourceType.TRANSACTIONAL_ID: (_O.DESCRIBE, _O.WRITE),
    ResourceType.DELEGATION_TOKEN: (_O.DESCRIBE,),
    ResourceType.USER: (_O.CREATE_TOKENS, _O.DESCRIBE_TOKENS),
}


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: a resource pattern plus an access control entry (all fields concrete)."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission: AclPermission

    def applies_to(self, resource_type: ResourceType, name: str) -> bool:
        """Whether this binding's pattern covers the resource ``(resource_type, name)``."""
        if self.resource_type != resource_type:
            return False
        if self.pattern_type is PatternType.PREFIXED:
            return name.startswith(self.resource_name)
        return self.resource_name in (name, WILDCARD)

    def to_json(self) -> dict[str, str]:
        return {
            "resource_type": self.resource_type.name,
            "resource_name": self.resource_name,
            "pattern_type": self.pattern_type.name,
            "principal": self.principal,
            "host": self.host,
            "operation": self.operation.name,
            "permission": self.permission.name,
        }

    @classmethod
    def from_json(cls, data: dict[str, str]) -> AclBinding:
        return cls(
            ResourceType[data["resource_type"]],
            data["resource_name"],
            PatternType[data["pattern_type"]],
            data["principal"],
            data["host"],
            AclOperation[data["operation"]],
            AclPermission[data["permission"]],
        )


def validation_problem(binding: AclBinding) -> str | None:
    """Why a new binding is refused (INVALID_REQUEST), or None; the checks of Kafka's
    ACL creation (``AclControlManager.validateNewAcl`` and the broker's principal parse)."""
    if binding.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
        return f"Invalid resourceType {binding.resource_type.name}"
    if binding.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {binding.pattern_type.name}"
    if binding.operation in (AclOperation.ANY, AclOperation.UNKNOWN):
        return f"Invalid operation {binding.operation.name}"
    if binding.permission not in (AclPermission.ALLOW, AclPermission.DENY):
        return f"Invalid permissionType {binding.permission.name}"
    if not binding.resource_name:
        return "Resource name should not be empty"
    if binding.resource_type is ResourceType.CLUSTER and binding.resource_name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    kind, sep, name = binding.principal.partition(":")
    if not sep or not kind or not name:
        return (
            f"Could not parse principal from `{binding.principal}` (no colon is present "
            "separating the principal type from name)"
        )
    return None


@dataclass(frozen=True, slots=True)
class AclFilter:
    """A binding filter: None / ANY / UNKNOWN-free values as DescribeAcls sends them."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission: AclPermission = AclPermission.ANY

    def matches(self, binding: AclBinding) -> bool:
        """``AclBindingFilter.matches``: every field matches (module docstring)."""
        if (
            self.resource_type is not ResourceType.ANY
            and self.resource_type != binding.resource_type
        ):
            return False
        if not self._pattern_matches(binding):
            return False
        if self.principal is not None and self.principal != binding.principal:
            return False
        if self.host is not None and self.host != binding.host:
            return False
        if self.operation is not AclOperation.ANY and self.operation != binding.operation:
            return False
        return self.permission is AclPermission.ANY or self.permission == binding.permission

    def _pattern_matches(self, binding: AclBinding) -> bool:
        wanted = self.pattern_type
        if wanted not in (PatternType.ANY, PatternType.MATCH) and wanted != binding.pattern_type:
            return False
        if self.resource_name is None:
            return True
        if wanted is not PatternType.MATCH:
            return self.resource_name == binding.resource_name
        if binding.pattern_type is PatternType.PREFIXED:
            return self.resource_name.startswith(binding.resource_name)
        return binding.resource_name in (self.resource_name, WILDCARD)

    def problem(self) -> str | None:
        """Why the filter is unusable (any UNKNOWN field), or None."""
        for value in (self.resource_type, self.pattern_type, self.operation, self.permission):
            if value.name == "UNKNOWN":
                return f"The filter contains UNKNOWN elements: {type(value).__name__}"
        return None
