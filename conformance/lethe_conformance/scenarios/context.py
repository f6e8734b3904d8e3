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
:meth:`RunContext.value` resolves both forms.

The connection is opened lazily and dropped after anything that may have cut
it (a restart, a clock jump that can outlast ``connections.max.idle.ms``);
the next request reconnects.

:class:`Expectations` collects :class:`~lethe_conformance.outcomes.Mismatch`
values for one step: each names the JSON path of the expectation in the
scenario file, what was expected and what the target gave.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from typing import Any

from lethe_formats.protocol.error_codes import error_name

from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.model import Scenario, ScenarioError
from lethe_conformance.targets.base import Target

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

    @property
    def virtual_clock(self) -> bool:
        return self.target.capabilities.clock == "virtual"

    def conn(self) -> KafkaConnection:
        if self._conn is None:
            self._conn = self.target.connect()
        return self._conn

    def drop_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def topic(self, symbol: str) -> str:
        """The real name of a topic symbol; a name that is not a symbol is literal."""
        return self.topics.get(symbol, symbol)

    def symbol(self, name: str) -> str:
        """The symbol of a real topic name (for messages), else the name."""
        for symbol, real in self.topics.items():
            if real == name:
                return symbol
        return name

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

    def group(self, symbol: str) -> str:
        return self._name(symbol)

    def advance(self, ms: int) -> None:
        self.drop_connection()
        self.target.advance_time(ms)

    def close(self) -> None:
        self.drop_connection()

    def _name(self, symbol: str) -> str:
        name = f"lethe-{self.scenario.id}-{symbol}-{self.token}"
        name = _ILLEGAL.sub("_", name)
        if len(name) > _MAX_NAME:
            name = f"lethe-{self.token}-{symbol}"[:_MAX_NAME]
        return name


def render(value: Any) -> str:
    """Expected/actual values as report text: strings quoted, bytes as repr."""
    if isinstance(value, str):
        return repr(value)
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
