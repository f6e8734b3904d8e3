"""Scenarios as typed values, built from files the schema has already accepted.

A scenario file (fixtures/scenarios/<profile>/<id>.json, format in
fixtures/scenarios/README.md) becomes a frozen :class:`Scenario`. The parts
every step shares (setup, requirements, capabilities) are typed fields; a
step keeps its validated JSON object (``Step.data``) because each op reads its
own fields, and ``Step.path`` is its JSON path, so a mismatch can point at the
exact expectation in the file.

Helpers here convert the fixture encodings: int64 decimal strings
(:func:`int64`), bytes as ``null`` / UTF-8 string / ``{"hex": ...}``
(:func:`to_bytes`), and error names or codes (:func:`error_code`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lethe_formats.protocol.error_codes import ErrorCode

__all__ = [
    "CAPABILITY_OF_OP",
    "TIME_CONTROL",
    "VIRTUAL",
    "WALL",
    "ReplaySpec",
    "Scenario",
    "ScenarioError",
    "Step",
    "TopicSpec",
    "WallClock",
    "error_code",
    "int64",
    "to_bytes",
    "wall_clock_broker_configs",
]

#: Ops that need a capability, and which one (the loader checks ``requires``).
CAPABILITY_OF_OP: Mapping[str, str] = {
    "advance_time": "clock-control",
    "restart": "restart",
    "crash_restart": "crash",
    "trigger_cleaning": "trigger-cleaning",
    "check_files": "log-dir",
    "restart_with_files": "edit-log-dir",
    "pause_fetching": "cluster-control",
    "resume_fetching": "cluster-control",
    "move_leader": "cluster-control",
    "stop_broker": "cluster-control",
    "start_broker": "cluster-control",
    "send_delete_records": "cluster-control",
    "expect_pending": "cluster-control",
    "await_response": "cluster-control",
    "create_acls": "principals",
    "inject_failure": "inject-failure",
    "init_transactions": "transactions",
    "begin_transaction": "transactions",
    "commit_transaction": "transactions",
    "abort_transaction": "transactions",
    "send_offsets_to_transaction": "transactions",
    "describe_transactions": "transactions",
    "list_transactions": "transactions",
    "write_txn_markers": "transactions",
}

#: The two clocks a scenario's steps may be limited to (``step.clock``).
VIRTUAL = "virtual"
WALL = "wall"
#: Capabilities a step limited to the virtual clock may use without listing them in
#: ``requires``: the virtual path is taken only where the target has them.
TIME_CONTROL = frozenset({"clock-control", "trigger-cleaning"})


class ScenarioError(Exception):
    """A scenario that cannot be run as written; names the file and the JSON path."""

    def __init__(self, source: str, path: str, message: str) -> None:
        super().__init__(f"{source}: {path}: {message}" if path else f"{source}: {message}")
        self.source = source
        self.path = path
        self.message = message


@dataclass(frozen=True, slots=True)
class TopicSpec:
    symbol: str
    partitions: int
    configs: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ReplaySpec:
    """Batches of a fixture partition folder to produce (``first``/``count`` slice them)."""

    log: str
    partition_dir: str
    first: int = 0
    count: int | None = None
    topic: str | None = None
    partition: int | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReplaySpec:
        return cls(
            data["log"],
            data["partition_dir"],
            data.get("first", 0),
            data.get("count"),
            data.get("topic"),
            data.get("partition"),
        )


@dataclass(frozen=True, slots=True)
class Step:
    index: int
    op: str
    data: Mapping[str, Any]
    requirements: frozenset[str]
    #: ``virtual`` or ``wall``: the step runs on that clock's path only; None: on both
    clock: str | None = None

    @property
    def path(self) -> str:
        return f"steps[{self.index}]"

    def on(self, clock: str) -> bool:
        """Whether the step belongs to the path of ``clock`` (``virtual`` or ``wall``)."""
        return self.clock is None or self.clock == clock


@dataclass(frozen=True, slots=True)
class WallClock:
    """``wall_clock`` of a scenario with a path for each clock (README, *Time*).

    ``broker_configs`` are the broker settings the wall path assumes (small
    intervals, so background work happens within seconds): a launcher puts them
    in the config of the broker it starts. ``virtual_only`` maps each
    requirement only the virtual path shows to why a wall clock cannot show it.
    """

    broker_configs: Mapping[str, str]
    virtual_only: Mapping[str, str]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WallClock:
        return cls(
            dict(data.get("broker_configs", {})),
            {
                requirement: entry["why"]
                for entry in data.get("virtual_only", ())
                for requirement in entry["requirements"]
            },
        )


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    description: str
    source: str
    requirements: tuple[str, ...]
    profile: str
    requires: frozenset[str]
    topics: tuple[TopicSpec, ...]
    absent_topics: tuple[str, ...]
    replay: tuple[ReplaySpec, ...]
    steps: tuple[Step, ...]
    #: ``setup.broker_configs``: settings for the scenario's own broker (own-log-dir)
    broker_configs: Mapping[str, str] = field(default_factory=dict)
    #: a path for each clock (steps with ``clock``); None: one path for every target
    wall_clock: WallClock | None = None

    def steps_on(self, clock: str | None) -> tuple[Step, ...]:
        """The steps of one clock's path (None: every step, a scenario with one path)."""
        if clock is None:
            return self.steps
        return tuple(step for step in self.steps if step.on(clock))

    @property
    def failure_kinds(self) -> frozenset[str]:
        """The kinds of the scenario's ``inject_failure`` steps."""
        return frozenset(str(s.data["kind"]) for s in self.steps if s.op == "inject_failure")

    def needs(self, clock: str | None) -> frozenset[str]:
        """Capabilities the path of ``clock`` needs: ``requires`` plus, on the virtual
        path, clock-control and what its time-control steps use."""
        if clock != VIRTUAL:
            return self.requires
        used = {CAPABILITY_OF_OP.get(op) for step in self.steps_on(VIRTUAL) for op in _ops(step)}
        return self.requires | {"clock-control"} | (TIME_CONTROL & used)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str | Path) -> Scenario:
        setup = data["setup"]
        return cls(
            id=data["id"],
            description=data["description"],
            source=str(source),
            requirements=tuple(data["requirements"]),
            profile=data["profile"],
            requires=frozenset(data["requires"]),
            topics=tuple(
                TopicSpec(t["name"], t["partitions"], dict(t.get("configs", {})))
                for t in setup["topics"]
            ),
            absent_topics=tuple(setup.get("absent_topics", ())),
            replay=tuple(ReplaySpec.from_json(r) for r in setup.get("replay", ())),
            steps=tuple(
                Step(i, s["op"], s, frozenset(s.get("requirements", ())), s.get("clock"))
                for i, s in enumerate(data["steps"])
            ),
            broker_configs=dict(setup.get("broker_configs", {})),
            wall_clock=WallClock.from_json(data["wall_clock"]) if "wall_clock" in data else None,
        )


def _ops(step: Step) -> list[str]:
    """The step's op and, for a ``wait``, the op it repeats."""
    ops = [step.op]
    if step.op == "wait":
        ops.append(step.data["until"]["op"])
    return ops


def wall_clock_broker_configs(scenarios: Iterable[Scenario]) -> dict[str, str]:
    """The broker settings every given scenario's wall path assumes, merged: what a
    launcher puts in the config of a broker it starts for a wall-clock run.

    Two scenarios asking different values for one setting is a fixture mistake
    (ScenarioError naming both), never resolved silently.
    """
    merged: dict[str, str] = {}
    owner: dict[str, str] = {}
    for scenario in scenarios:
        if scenario.wall_clock is None:
            continue
        for name, value in scenario.wall_clock.broker_configs.items():
            if merged.setdefault(name, value) != value:
                raise ScenarioError(
                    scenario.source,
                    "$.wall_clock.broker_configs",
                    f"{name}={value} differs from {merged[name]} in {owner[name]}",
                )
            owner.setdefault(name, scenario.source)
    return merged


def int64(text: str) -> int:
    """A fixture int64 (a decimal string; the schema checked its form)."""
    return int(text)


def to_bytes(value: str | Mapping[str, str] | None) -> bytes | None:
    """``null`` -> None, a string -> its UTF-8 bytes, ``{"hex": ...}`` -> those bytes."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes.fromhex(value["hex"])


def error_code(value: str | int) -> int:
    """An error given by Kafka's name (``OFFSET_OUT_OF_RANGE``) or its number.

    An unknown name is a scenario mistake: KeyError, which the loader reports.
    """
    if isinstance(value, int):
        return value
    return int(ErrorCode[value])
