"""What a target is to the runner: an address plus declared capabilities.

Theory of operation
-------------------
The runner never asks "is this the embedded broker?": it asks what the target
can do. A scenario lists the capabilities it needs (``requires``); a target
lacking one gets NOT_APPLICABLE for that scenario, never FAIL. Capability
names, as scenarios spell them:

``clock-control``     time moves only when the runner says so (:meth:`Target.advance_time`):
                      a virtual clock, or a control hook that advances the broker's clock.
                      Without it the target runs on the wall clock and the runner
                      waits with bounded polling instead.
``log-dir``           the runner can read the broker's log directory (:attr:`Capabilities.log_dir`).
``restart``           :meth:`Target.restart` stops and starts the broker on the same log dir.
``crash``             :meth:`CrashTarget.crash_restart` kills the broker with no shutdown work
                      (SIGKILL: no flush, no checkpoints, no ``.kafka_cleanshutdown``) and
                      starts it again on the same log dir: recovery after a crash. Needs a
                      broker the runner owns (embedded, launched).
``trigger-cleaning``  :meth:`Target.trigger_cleaning` makes the log cleaner run now.
``edit-log-dir``      :meth:`LocalTarget.restart_editing` stops the broker, lets the runner
                      change files in its log directory, and starts it again on that dir
                      (a checkpoint corrupted between a shutdown and a startup).
``own-log-dir``       :meth:`LocalTarget.isolated` gives a scenario a broker of its own on a
                      fresh log directory (root checkpoints no other scenario writes to).
``cluster-control``   the scenario runs on a cluster of brokers of its own that the runner
                      acts on (:mod:`lethe_conformance.targets.cluster`: brokers by role,
                      pause a follower, move a leader, stop a broker); embedded target only.
``principals``        the target enforces ACLs and the runner can connect as two SASL
                      principals (:class:`PrincipalTarget`): ``admin``, allowed everything
                      (a super user), and ``user``, which starts with no ACLs. Scenarios
                      grant ``user`` rights with CreateAcls and act as it.
``inject-failure``    :meth:`FailureTarget.inject_failure` makes the broker's *environment*
                      fail (a log dir going offline, an unexpected error while deleting),
                      so Kafka's answers to such failures can be observed. The embedded
                      target fails inside the broker (every kind); a launched one causes
                      the kinds its launcher declares from outside, on files
                      (``Capabilities.failure_kinds``; a scenario needing another kind is
                      NOT_APPLICABLE, :data:`FAILURE_PROVIDED_BY` says why).

``transactions``      the target serves Kafka's transactions (KIP-98): ApiVersions lists
                      AddPartitionsToTxn, AddOffsetsToTxn, EndTxn and TxnOffsetCommit.
                      Not declared but discovered, like a profile
                      (:data:`~lethe_conformance.targets.profiles.PROTOCOL_CAPABILITIES`):
                      a target without them grades the scenarios that use
                      transactions NOT_APPLICABLE, naming what it lacks.

``edit-log-dir``, ``own-log-dir`` and ``inject-failure`` need the runner to own
the broker process: the embedded and launched targets have them; a broker reached
by address does not (a control hook's ``restart`` is one action, with no moment in
between; the runner cannot know which of its disks to fail).

Profiles are not declared but *discovered* (``profiles.py``): ApiVersions
for extension APIs, DescribeConfigs for extension configs.

A :class:`Target` is used from one thread. ``connect()`` returns a fresh
connection each time; the runner reconnects after a restart or a clock jump.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from lethe_conformance.client.connection import KafkaConnection

__all__ = [
    "ALL_CAPABILITIES",
    "CLOCK_CONTROL",
    "CLUSTER_CONTROL",
    "CRASH",
    "DISCOVERED_CAPABILITIES",
    "EDIT_LOG_DIR",
    "FAILURE_PROVIDED_BY",
    "INJECT_FAILURE",
    "LOG_DIR",
    "OWN_LOG_DIR",
    "PRINCIPALS",
    "PROVIDED_BY",
    "RESTART",
    "ROLES",
    "TRANSACTIONS",
    "TRIGGER_CLEANING",
    "Capabilities",
    "CapabilityMissingError",
    "ControlError",
    "CrashTarget",
    "FailureTarget",
    "LocalTarget",
    "PrincipalTarget",
    "Target",
]

CLOCK_CONTROL = "clock-control"
LOG_DIR = "log-dir"
RESTART = "restart"
CRASH = "crash"
TRIGGER_CLEANING = "trigger-cleaning"
EDIT_LOG_DIR = "edit-log-dir"
OWN_LOG_DIR = "own-log-dir"
CLUSTER_CONTROL = "cluster-control"
PRINCIPALS = "principals"
INJECT_FAILURE = "inject-failure"
TRANSACTIONS = "transactions"
ALL_CAPABILITIES = frozenset(
    {
        CLUSTER_CONTROL,
        CLOCK_CONTROL,
        LOG_DIR,
        RESTART,
        CRASH,
        TRIGGER_CLEANING,
        EDIT_LOG_DIR,
        OWN_LOG_DIR,
        PRINCIPALS,
        INJECT_FAILURE,
    }
)
#: Capabilities a target does not declare but shows in ApiVersions (``profiles.py``).
DISCOVERED_CAPABILITIES = frozenset({TRANSACTIONS})
#: What would give a target each capability: the report's "why" of a NOT_APPLICABLE.
PROVIDED_BY: dict[str, str] = {
    CLOCK_CONTROL: "the embedded target, or a --control hook declaring advance-time",
    LOG_DIR: "--log-dir, --launch, or the embedded target",
    RESTART: "--launch, the embedded target, or a --control hook declaring restart",
    CRASH: "--launch or the embedded target (the runner owns the process)",
    TRIGGER_CLEANING: "the embedded target, or a --control hook declaring trigger-cleaning",
    EDIT_LOG_DIR: "--launch or the embedded target (the runner owns the process)",
    OWN_LOG_DIR: "--launch or the embedded target (the runner owns the process)",
    CLUSTER_CONTROL: "the embedded target, or --launch with a cluster launcher (kafka)",
    PRINCIPALS: "--sasl-user and --user-sasl-user, --launch, or the embedded target",
    INJECT_FAILURE: "the embedded target, or --launch with a launcher declaring failures",
    TRANSACTIONS: "a target advertising AddPartitionsToTxn (24), AddOffsetsToTxn (25), "
    "EndTxn (26) and TxnOffsetCommit (28) in ApiVersions",
}
#: Who can cause each failure kind of ``inject_failure``: the report's "why" when a
#: target with inject-failure cannot cause the kind a scenario needs.
FAILURE_PROVIDED_BY: dict[str, str] = {
    "log-dir-offline": "the embedded target, or a launcher declaring [failures.log-dir-offline]",
    "delete-error": "the embedded target only: an unexpected error inside the broker's "
    "delete cannot be caused from outside its process (files, signals)",
    "offsets-unreadable": "the embedded target only: a read error of chosen partitions "
    "cannot be caused from outside the broker's process",
    "replica-deletion-error": "the embedded target only: a failure of one replica deletion "
    "cannot be caused from outside the broker's process",
}
#: The principal roles a scenario names (capability ``principals``).
ROLES = ("admin", "user")


class CapabilityMissingError(Exception):
    """An action the target cannot do (the runner grades it NOT_APPLICABLE)."""

    def __init__(self, target: str, capability: str) -> None:
        super().__init__(f"target {target} has no {capability!r} capability")
        self.target = target
        self.capability = capability


class ControlError(Exception):
    """A control action (hook command, restart) failed: graded ERROR."""


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a target can do; see the module docstring for the names."""

    clock: Literal["virtual", "wall"] = "wall"
    log_dir: Path | None = None
    restart: bool = False
    crash: bool = False
    trigger_cleaning: bool = False
    sasl: bool = False
    cluster_control: bool = False
    edit_log_dir: bool = False
    own_log_dir: bool = False
    principals: bool = False
    inject_failure: bool = False
    #: with ``inject_failure``: the failure kinds the target can cause
    failure_kinds: frozenset[str] = frozenset()

    def names(self) -> frozenset[str]:
        """The capability names this target has, as scenarios' ``requires`` spell them."""
        names = set()
        if self.clock == "virtual":
            names.add(CLOCK_CONTROL)
        if self.log_dir is not None:
            names.add(LOG_DIR)
        if self.cluster_control:
            names.add(CLUSTER_CONTROL)
        if self.restart:
            names.add(RESTART)
        if self.crash:
            names.add(CRASH)
        if self.trigger_cleaning:
            names.add(TRIGGER_CLEANING)
        if self.edit_log_dir:
            names.add(EDIT_LOG_DIR)
        if self.own_log_dir:
            names.add(OWN_LOG_DIR)
        if self.principals:
            names.add(PRINCIPALS)
        if self.inject_failure:
            names.add(INJECT_FAILURE)
        return frozenset(names)


class Target(Protocol):
    """A broker under test, as the runner drives it."""

    @property
    def name(self) -> str:
        """How reports name the target (e.g. ``embedded`` or ``host:port``)."""
        ...

    @property
    def capabilities(self) -> Capabilities: ...

    def connect(self) -> KafkaConnection:
        """A new, version-negotiated (and authenticated) connection."""
        ...

    def profiles(self) -> frozenset[str]:
        """The profiles the target offers (discovered once, then cached)."""
        ...

    def advance_time(self, ms: int) -> None:
        """Move the target's clock ``ms`` forward and let due work run (clock-control)."""
        ...

    def restart(self) -> None:
        """Stop and start the broker on the same log dir; returns once it serves again."""
        ...

    def trigger_cleaning(self) -> None:
        """Run the log cleaner now (trigger-cleaning)."""
        ...

    def close(self) -> None:
        """Release what the target holds (stop an embedded broker)."""
        ...


class LocalTarget(Target, Protocol):
    """A target whose broker the runner owns (capabilities edit-log-dir, own-log-dir)."""

    def restart_editing(self, edit: Callable[[Path], None]) -> None:
        """Stop the broker cleanly, call ``edit(log_dir)``, start it on the same log dir."""
        ...

    def isolated(
        self, overrides: Mapping[str, str] | None = None, *, failures: frozenset[str] = ...
    ) -> AbstractContextManager[Target]:
        """A started broker of its own on a fresh log dir, same settings (``overrides``, a
        scenario's ``setup.broker_configs``, on top), able to survive the failure kinds
        ``failures`` its scenario injects; closed on exit."""
        ...


class CrashTarget(Target, Protocol):
    """A target with capability ``crash``."""

    def crash_restart(self) -> None:
        """Kill the broker with no shutdown work, start it on the same log dir; returns
        once it serves again."""
        ...


class PrincipalTarget(Target, Protocol):
    """A target with capability ``principals``: connections as a named role."""

    def connect_as(self, role: str) -> KafkaConnection:
        """A new connection authenticated as ``role`` (one of :data:`ROLES`)."""
        ...

    def principal_of(self, role: str) -> str:
        """The ``KafkaPrincipal`` string of ``role`` (``User:<name>``), as ACLs name it."""
        ...


class FailureTarget(Target, Protocol):
    """A target with capability ``inject-failure``: the runner owns the broker process."""

    def inject_failure(self, kind: str, topic: str, partitions: list[int]) -> None:
        """Arm the environmental failure ``kind`` (``log-dir-offline``, ``delete-error``,
        ``offsets-unreadable``, ``replica-deletion-error``) on ``topic``'s ``partitions``
        of the running broker."""
        ...
