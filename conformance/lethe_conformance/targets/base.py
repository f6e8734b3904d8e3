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
``trigger-cleaning``  :meth:`Target.trigger_cleaning` makes the log cleaner run now.

Profiles are not declared but *discovered* (``profiles.py``): ApiVersions
for extension APIs, DescribeConfigs for extension configs.

A :class:`Target` is used from one thread. ``connect()`` returns a fresh
connection each time; the runner reconnects after a restart or a clock jump.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from lethe_conformance.client.connection import KafkaConnection

__all__ = [
    "ALL_CAPABILITIES",
    "CLOCK_CONTROL",
    "LOG_DIR",
    "RESTART",
    "TRIGGER_CLEANING",
    "Capabilities",
    "CapabilityMissingError",
    "ControlError",
    "Target",
]

CLOCK_CONTROL = "clock-control"
LOG_DIR = "log-dir"
RESTART = "restart"
TRIGGER_CLEANING = "trigger-cleaning"
ALL_CAPABILITIES = frozenset({CLOCK_CONTROL, LOG_DIR, RESTART, TRIGGER_CLEANING})


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
    trigger_cleaning: bool = False
    sasl: bool = False

    def names(self) -> frozenset[str]:
        """The capability names this target has, as scenarios' ``requires`` spell them."""
        names = set()
        if self.clock == "virtual":
            names.add(CLOCK_CONTROL)
        if self.log_dir is not None:
            names.add(LOG_DIR)
        if self.restart:
            names.add(RESTART)
        if self.trigger_cleaning:
            names.add(TRIGGER_CLEANING)
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
