"""What a running scenario holds: the target, its connection, and the names it made.

Theory of operation
-------------------
Scenarios run on shared brokers (a CI Kafka, the embedded broker of one test
worker), so every topic and group a scenario uses gets a name of its own::

    lethe-<scenario id>-<symbol>-<run token>        e.g. lethe-kip107-golden-t-3f9a1c

The token is random per run, so reruns on the same broker never collide. A
step's ``topic`` is a symbol from ``setup.topics`` / ``setup.absent_topics``;
any other name (``__consumer_offsets``) is used as written. On-disk checks
compare only this scenario's topics, so other scenarios' partitions in the
same log dir never disturb them.

Some expected values depend on the target's clock (a delete horizon is the
cleaning's start time plus ``delete.retention.ms``). A step can capture such a
value under a name (``produce``'s ``capture.log_append_time``: the broker's
time, read from the Produce response of a LogAppendTime topic), and a later
expectation refers to it as ``{"ref": name, "plus": "6000"}``;
:meth:`RunContext.value` resolves both forms. On the wall clock such a value is
known only between two captured times: ``{"between": [low, high]}``, judged by
:meth:`RunContext.judge_int`. What the wall clock cannot pin down it can still
compare: ``{"between": [...], "capture": "h1"}`` also captures the value found
(the first batch cleaned in a pass), and a later ``{"ref": "h1"}`` must be
exactly that value (every other batch of the same pass: one horizon per
cleaning, whatever it is).

Principals (capability ``principals``): while a step runs with
``"principal": role`` (:meth:`RunContext.acting_as`), :meth:`RunContext.conn`
returns a connection authenticated as that role (one per role, opened
lazily); :meth:`RunContext.principal` turns a role into the
``User:<name>`` string ACLs name. ACLs a step creates are remembered
(:attr:`RunContext.acls`) so the runner removes them afterwards.

On a cluster target (capability ``cluster-control``) a step's ``broker`` names a
role (``leader``, ``follower-1``, ...; :attr:`RunContext.roles` maps them to
broker ids once setup is done) and the step's requests go to that broker
(:attr:`RunContext.route`).

The connection is opened lazily and dropped after anything that may have cut
it (a restart, a clock jump that can outlast ``connections.max.idle.ms``);
the next request reconnects.

:class:`Expectations` collects :class:`~lethe_conformance.outcomes.Mismatch`
values for one step: each names the JSON path of the expectation in the
scenario file, what was expected and what the target gave.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

from lethe_formats.protocol.error_codes import error_name

from lethe_conformance.client.acl_calls import Acl
from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.model import Scenario, ScenarioError
from lethe_conformance.targets.base import (
    PRINCIPALS,
    CapabilityMissingError,
    PrincipalTarget,
    Target,
)

__all__ = ["Expectations", "RunContext", "render"]

_MAX_NAME = 249  # Kafka's topic name limit
_ILLEGAL = re.compile(r"[^A-Za-z0-9._-]")


class RunContext:
    """One scenario's run on one target (not thread-safe)."""

    def __init__(self, target: Target, scenario: Scenario, token: str | None = None) -> None:
        self.target = target
        self.scenario = scenario
        self.token = token or secrets.token_hex(3)
        symbols = [t.symbol for t in scenario.topics] + list(scenario.absent_topics)
        self.topics = {symbol: self._name(symbol) for symbol in symbols}
        self._conn: KafkaConnection | None = None
        self.values: dict[str, int] = {}
        #: cluster-control: role -> broker id (set after setup), the role the current
        #: step's ``broker`` names (its requests go there), connections per broker
        self.roles: dict[str, int] = {}
        self.route: str | None = None
        self._node_conns: dict[int, KafkaConnection] = {}
        #: requests sent without waiting (``send_delete_records``), by name
        self.pending: dict[str, Any] = {}
        self._acting: str | None = None
        self._role_conns: dict[str, KafkaConnection] = {}
        self.acls: list[Acl] = []
        #: transactional producers by symbol (ops/transactions.py)
        self.producers: dict[str, Any] = {}
        #: retriable errors the runner absorbed, by error name (scenarios/readiness.py)
        self.retries: dict[str, int] = {}

    @property
    def virtual_clock(self) -> bool:
        return self.target.capabilities.clock == "virtual"

    def conn(self) -> KafkaConnection:
        if self.route is not None:
            return self.conn_to(self.node(self.route))
        if self._acting is not None:
            return self._role_conn(self._acting)
        if self._conn is None:
            self._conn = self.target.connect()
        return self._conn

    def node(self, role: str) -> int:
        """The broker id a cluster role names (cluster-control)."""
        if role not in self.roles:
            raise ScenarioError(self.scenario.source, "", f"broker role {role!r} is not known")
        return self.roles[role]

    def conn_to(self, node: int) -> KafkaConnection:
        """A connection to one broker of a cluster target (cluster-control)."""
        found = self._node_conns.get(node)
        if found is None:
            connect_to = getattr(self.target, "connect_to", None)
            if connect_to is None:
                raise ScenarioError(self.scenario.source, "", "the target is not a cluster")
            found = self._node_conns[node] = connect_to(node)
        return cast(KafkaConnection, found)

    def drop_connection(self) -> None:
        for node_conn in self._node_conns.values():
            node_conn.close()
        self._node_conns.clear()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        for conn in self._role_conns.values():
            conn.close()
        self._role_conns.clear()

    @contextmanager
    def acting_as(self, role: str | None) -> Iterator[None]:
        """Requests inside run as ``role`` (None: the target's default connection)."""
        previous, self._acting = self._acting, role
        try:
            yield
        finally:
            self._acting = previous

    def principal(self, role: str) -> str:
        """``User:<name>`` of a role (``*`` is every user, ``User:*``)."""
        if role == "*":
            return "User:*"
        return self._principals().principal_of(role)

    def _principals(self) -> PrincipalTarget:
        if PRINCIPALS not in self.target.capabilities.names():
            raise CapabilityMissingError(self.target.name, PRINCIPALS)
        return cast(PrincipalTarget, self.target)

    def _role_conn(self, role: str) -> KafkaConnection:
        conn = self._role_conns.get(role)
        if conn is None:
            conn = self._role_conns[role] = self._principals().connect_as(role)
        return conn

    def topic(self, symbol: str) -> str:
        """The real name of a topic symbol; a name that is not a symbol is literal."""
        return self.topics.get(symbol, symbol)

    def symbol(self, name: str) -> str:
        """The symbol of a real topic name (for messages), else the name."""
        for symbol, real in self.topics.items():
            if real == name:
                return symbol
        return name

    def note_retry(self, error: str) -> None:
        """Count one retry after the retriable ``error`` (the report shows the counts)."""
        self.retries[error] = self.retries.get(error, 0) + 1

    def capture(self, name: str, value: int) -> None:
        """Remember ``value`` under ``name`` for later ``{"ref": name}`` expectations."""
        self.values[name] = value

    def value(self, spec: str | Mapping[str, str]) -> int:
        """An int64 expectation: a decimal string, or ``{"ref": name, "plus": int64}``.

        A name no earlier step captured is a scenario error (the loader checks
        the order, so this only happens when the capturing step was skipped).
        """
        if isinstance(spec, str):
            return int(spec)
        name = spec["ref"]
        if name not in self.values:
            raise ScenarioError(self.scenario.source, "", f"value {name!r} was never captured")
        return self.values[name] + int(spec.get("plus", "0"))

    def judge_int(self, exp: Expectations, path: str, spec: Any, actual: int | None) -> None:
        """Compare ``actual`` with an int64 expectation: exact, or ``{"between": [lo, hi]}``
        (both ends included, each a decimal string or a captured reference; with
        ``capture``, the value found is captured under that name)."""
        if isinstance(spec, Mapping) and "between" in spec:
            low, high = (self.value(end) for end in spec["between"])
            if actual is None or not low <= actual <= high:
                exp.mismatches.append(Mismatch(path, f"between {low} and {high}", render(actual)))
            if "capture" in spec and actual is not None:  # even out of range: the others
                self.capture(spec["capture"], actual)  # are then judged against it
            return
        exp.equal(path, self.value(spec), actual)

    def group(self, symbol: str) -> str:
        return self._name(symbol)

    def advance(self, ms: int) -> None:
        self.drop_connection()
        self.target.advance_time(ms)

    def close(self) -> None:
        for pending in self.pending.values():
            pending.close()
        self.pending.clear()
        self.drop_connection()

    def _name(self, symbol: str) -> str:
        name = f"lethe-{self.scenario.id}-{symbol}-{self.token}"
        name = _ILLEGAL.sub("_", name)
        if len(name) > _MAX_NAME:
            name = f"lethe-{self.token}-{symbol}"[:_MAX_NAME]
        return name


class _Absent:
    """What a target's answer lacks (a config DescribeConfigs did not list): equal to
    no expected value, and shown as ``absent``, never as a string the target sent."""

    def __repr__(self) -> str:
        return "absent"


#: The actual value of something the target's answer does not contain.
ABSENT: Any = _Absent()


def render(value: Any) -> str:
    """Expected/actual values as report text: JSON (strings in double quotes, lists,
    objects, null; bytes as ``{"utf8": ...}`` or ``{"hex": ...}`` as ``lethe dump
    --json`` writes them), so a diff shows values as a JSON document holds them,
    never as Python reprs; :data:`ABSENT` as ``absent``."""
    if value is ABSENT:
        return "absent"
    return json.dumps(_jsonable(value), ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        try:
            return {"utf8": raw.decode("utf-8")}
        except UnicodeDecodeError:
            return {"hex": raw.hex()}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_jsonable(v) for v in value]
        return sorted(items, key=json.dumps) if isinstance(value, set | frozenset) else items
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


class Expectations:
    """Mismatches of one step; :meth:`equal` compares one field."""

    def __init__(self) -> None:
        self.mismatches: list[Mismatch] = []

    def equal(self, path: str, expected: Any, actual: Any) -> bool:
        if expected == actual:
            return True
        self.mismatches.append(Mismatch(path, render(expected), render(actual)))
        return False

    def error(self, path: str, expected: int, actual: int) -> bool:
        """Error codes, rendered as Kafka's names with their numbers."""
        if expected == actual:
            return True
        self.mismatches.append(Mismatch(path, _error(expected), _error(actual)))
        return False

    def missing(self, path: str, what: str) -> None:
        self.mismatches.append(Mismatch(path, what, "nothing"))


def _error(code: int) -> str:
    return f"{error_name(code)} ({code})"
