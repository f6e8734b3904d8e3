"""Client quotas (KIP-546): the entities, their values, and Kafka's rules for changing them.

Theory of operation
-------------------
A quota entity is a map of entity type to name: ``user`` and/or ``client-id``
(``user`` alone, ``client-id`` alone, or both) or ``ip`` alone; a null name is the
type's default (``--entity-default``). Each entity holds quota keys with float
values; the keys depend on the entity (``QuotaConfig``)::

    user / client-id   producer_byte_rate (LONG), consumer_byte_rate (LONG),
                       request_percentage (DOUBLE), controller_mutation_rate (DOUBLE)
    ip                 connection_creation_rate (INT)

Changing them (``ClientQuotaControlManager.alterClientQuotas``), per entry of the
request, each answered INVALID_REQUEST (42) with Kafka's message:

1. an entity given twice, or a key given twice (Kafka's "Duplicate quota key" error
   is overwritten at once): "Ignoring duplicate entity E";
2. no entity part: "Invalid empty client quota entity"; a type given twice:
   "Invalid client quota entity, duplicate entity entry T"; another type:
   "Unhandled client quota entity type: T"; an empty name: "Empty T not supported";
3. ``ip`` with another type: "Invalid quota entity combination, IP entity shouldnot be
   combined with User or ClientId" (sic); an ``ip`` name that does not resolve:
   "N is not a valid IP or resolvable host.";
4. per set key: an unknown key "Invalid configuration key K"; a value <= 0 "Quota K must
   be greater than 0"; an integral key with a fraction "K cannot be a fractional value."
   (or too large: "Proposed value for K is too large for an INT." / "for a LONG.").

A removal of a key the entity does not have is no change; an entity left without
keys is gone. The request is atomic (``ControllerResult.atomicOf``): validated
entries are applied, failed ones not; ``validate_only`` applies nothing.

Describing (``ClientQuotasImage.describe``): components filter by type, exactly by
name (match type 0), the default (1) or any name (2); ``strict`` wants the entity
to have no other types. Errors for the whole request: an empty type "Invalid empty
entity type." and a type twice "Entity type T cannot appear more than once in the
filter." (INVALID_REQUEST), an unknown type "Unsupported entity type T"
(UNSUPPORTED_VERSION, 35), a match string with types 1/2 or none with 0, an
unknown match type, ``ip`` with ``user`` or ``client-id`` (INVALID_REQUEST).

The store is a plain object, saved as JSON in the log dir (``client-quotas.json``)
as KRaft keeps ``ClientQuotaRecord`` in the metadata log. It does no I/O but that.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lethe_formats.protocol.broker_errors import KafkaError, error_for_code
from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference.cluster.state_files import read_json_list, write_json

__all__ = [
    "CLIENT_ID",
    "IP",
    "QUOTA_FILE",
    "RESOLVER_KEY",
    "USER",
    "ClientQuotaStore",
    "Entity",
    "check_filter",
    "entity_problem",
    "entity_text",
    "is_ip_literal",
    "matches",
    "value_problem",
]

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
QUOTA_FILE = "client-quotas.json"
#: ``broker.extensions`` key of the host-name lookup the server installs
RESOLVER_KEY = "resolve-host"
#: match types of DescribeClientQuotas' components
EXACT, DEFAULT, SPECIFIED = 0, 1, 2

_INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1
#: key -> Java type, per kind of entity (``QuotaConfig``)
_CLIENT_KEYS = {
    "producer_byte_rate": "LONG",
    "consumer_byte_rate": "LONG",
    "request_percentage": "DOUBLE",
    "controller_mutation_rate": "DOUBLE",
}
_IP_KEYS = {"connection_creation_rate": "INT"}

#: an entity: (type, name) pairs sorted by type; a None name is the default
Entity = tuple[tuple[str, str | None], ...]


def _invalid(message: str) -> KafkaError:
    return error_for_code(ErrorCode.INVALID_REQUEST, message)


def entity_text(entity: Mapping[str, str | None]) -> str:
    """``ClientQuotaEntity.toString``: ``ClientQuotaEntity(entries={type=name, ...})``."""
    parts = ", ".join(f"{t}={n}" for t, n in entity.items())
    return f"ClientQuotaEntity(entries={{{parts}}})"


def is_ip_literal(name: str) -> bool:
    """An IPv4 or IPv6 address literal (what resolves without a name lookup)."""
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def entity_problem(
    parts: Iterable[tuple[str, str | None]], resolves: Callable[[str], bool] = is_ip_literal
) -> tuple[Entity, dict[str, str]]:
    """The entity of a request's parts and its allowed keys; raises KafkaError (42).
    ``resolves`` is ``InetAddress.getByName`` succeeding: the server gives a name
    lookup; without one (sans-IO tests) only address literals resolve."""
    seen: dict[str, str | None] = {}
    for entity_type, name in parts:
        if entity_type in seen:
            raise _invalid(f"Invalid client quota entity, duplicate entity entry {entity_type}")
        if entity_type not in {USER, CLIENT_ID, IP}:
            raise _invalid(f"Unhandled client quota entity type: {entity_type}")
        seen[entity_type] = name
        if name is not None and not name:
            raise _invalid(f"Empty {entity_type} not supported")
    if not seen:
        raise _invalid("Invalid empty client quota entity")
    if IP in seen:
        if len(seen) > 1:
            raise _invalid(
                "Invalid quota entity combination, IP entity shouldnot be combined with "
                "User or ClientId"
            )
        name = seen[IP]
        if name is not None and not resolves(name):
            raise _invalid(f"{seen[IP]} is not a valid IP or resolvable host.")
        keys = _IP_KEYS
    else:
        keys = _CLIENT_KEYS
    return tuple(sorted(seen.items())), keys


def value_problem(keys: Mapping[str, str], key: str, value: float) -> str | None:
    """``validateQuotaKeyValue``: why ``key=value`` is refused, or None."""
    kind = keys.get(key)
    if kind is None:
        return f"Invalid configuration key {key}"
    if not value > 0.0:
        return f"Quota {key} must be greater than 0"
    if kind == "DOUBLE":
        return None
    if kind == "INT" and value > _INT_MAX:
        return f"Proposed value for {key} is too large for an INT."
    if kind == "LONG" and value > _LONG_MAX:
        return f"Proposed value for {key} is too large for a LONG."
    if abs(math.fmod(value, 1.0)) > 1e-6:
        return f"{key} cannot be a fractional value."
    return None


def check_filter(components: Iterable[tuple[str, int, str | None]]) -> None:
    """``ClientQuotasImage.describe``'s checks of the filter; raises KafkaError."""
    seen: set[str] = set()
    for entity_type, match_type, match in components:
        if not entity_type:
            raise _invalid("Invalid empty entity type.")
        if entity_type in seen:
            raise _invalid(f"Entity type {entity_type} cannot appear more than once in the filter.")
        if entity_type not in {USER, CLIENT_ID, IP}:
            raise error_for_code(
                ErrorCode.UNSUPPORTED_VERSION, f"Unsupported entity type {entity_type}"
            )
        seen.add(entity_type)
        if match_type == EXACT and match is None:
            raise _invalid("Request specified MATCH_TYPE_EXACT, but set match string to null.")
        if match_type == DEFAULT and match is not None:
            raise _invalid(
                "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."
            )
        if match_type == SPECIFIED and match is not None:
            raise _invalid(
                "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."
            )
        if match_type not in {EXACT, DEFAULT, SPECIFIED}:
            raise _invalid(f"Unknown match type {match_type}")
    if IP in seen and seen & {USER, CLIENT_ID}:
        raise _invalid(
            "Invalid entity filter component combination. IP filter component should not be "
            "used with user or clientId filter component."
        )


def matches(
    entity: Entity, components: Iterable[tuple[str, int, str | None]], strict: bool
) -> bool:
    """``ClientQuotasImage.matches`` (the filter already checked)."""
    parts = dict(entity)
    wanted = list(components)
    if strict and len(parts) != len(wanted):
        return False
    for entity_type, match_type, match in wanted:
        if entity_type not in parts:
            return False
        if match_type == EXACT and parts[entity_type] != match:
            return False
        if match_type == DEFAULT and parts[entity_type] is not None:
            return False
    return True


@dataclass
class ClientQuotaStore:
    """Every entity's quota values (in the order keys were first set), saved at ``path``."""

    path: Path | None = None
    entities: dict[Entity, dict[str, float]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> ClientQuotaStore:
        store = cls(path)
        for item in read_json_list(path):
            entity = tuple((str(t), None if n is None else str(n)) for t, n in item["entity"])
            store.entities[entity] = {str(k): float(v) for k, v in item["values"].items()}
        return store

    def save(self) -> None:
        if self.path is None:
            return
        items = [{"entity": list(e), "values": v} for e, v in self.entities.items()]
        write_json(self.path, items)

    def apply(self, entity: Entity, changes: Mapping[str, float | None]) -> None:
        """Set (or, for None, remove) keys; an entity without keys is dropped."""
        values = self.entities.setdefault(entity, {})
        for key, value in changes.items():
            if value is None:
                values.pop(key, None)
            else:
                values[key] = value
        if not values:
            del self.entities[entity]
