"""Any broker by bootstrap address, with optional log dir, SASL and control hook.

Theory of operation
-------------------
:class:`BootstrapTarget` knows only ``host:port``, or several, comma-separated
as Kafka's ``bootstrap.servers``: a cluster reached by address. Its connections
are :class:`~lethe_conformance.client.routed.RoutedConnection` objects: they
bootstrap through the first address that answers and send each partition's
requests to its leader (Metadata), each group's to its coordinator
(FindCoordinator), following a leader that moves. What else it can do is what
the user grants it:

* ``log_dir``: a path where the runner can read the broker's log directory
  (a local broker, a mounted volume); without it, on-disk checks are not
  applicable;
* ``sasl``: SASL credentials (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512) for a
  ``SASL_PLAINTEXT`` or ``SASL_SSL`` listener; every connection authenticates
  with them;
* ``tls``: an ``ssl.SSLContext`` for an ``SSL`` or ``SASL_SSL`` listener
  (trusted CAs, and a client certificate for mutual TLS); every connection,
  to the bootstrap address and to each leader and coordinator, speaks TLS;
* ``user``: a second principal's SASL credentials. With both, the
  target has capability ``principals``: role ``admin`` is ``sasl`` (it must
  be allowed everything, e.g. a super user, and may create ACLs) and role
  ``user`` is this one, which must start with no ACLs on the scenarios'
  topics (the broker must run an authorizer with
  ``allow.everyone.if.no.acl.found=false``);
* ``control``: a :class:`ControlHook`, a command the runner calls to act on
  the broker. Without one the target runs on the wall clock, cannot be
  restarted, and the runner waits for time-based behaviour with bounded
  polling (so such scenarios configure small retention values).

The control hook contract (``--lethe-control CMD``): the runner runs ``CMD``
(split like a shell would, no shell involved) with one action appended::

    CMD advance-time MS      move the broker's clock MS milliseconds forward and
                             return once the work that became due has run
    CMD trigger-cleaning     run the log cleaner now and return when it finished
    CMD restart              stop the broker cleanly, start it on the same log dir
                             and port; the runner then waits until it answers

Exit status 0 means done; anything else is an ERROR of the scenario, reported
with the command's stderr. A hook that cannot do some action is declared with
``actions`` (the default is all three), so the runner never calls it for that
action and reports the scenarios needing it as not applicable. Every call is
bounded by ``timeout_s``.
"""

from __future__ import annotations

import shlex
import ssl
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lethe_conformance.client.connection import (
    DEFAULT_REQUEST_TIMEOUT,
    KafkaConnection,
    PlainCredentials,
)
from lethe_conformance.client.errors import TargetUnreachableError
from lethe_conformance.client.routed import RoutedConnection
from lethe_conformance.targets.base import (
    CLOCK_CONTROL,
    PRINCIPALS,
    RESTART,
    TRIGGER_CLEANING,
    Capabilities,
    CapabilityMissingError,
    ControlError,
)
from lethe_conformance.targets.profiles import ProfilesOnce

__all__ = [
    "ADVANCE_TIME",
    "HOOK_ACTIONS",
    "BootstrapTarget",
    "ControlHook",
    "parse_bootstrap",
    "parse_bootstrap_servers",
]

ADVANCE_TIME = "advance-time"
RESTART_ACTION = "restart"
TRIGGER_CLEANING_ACTION = "trigger-cleaning"
HOOK_ACTIONS = frozenset({ADVANCE_TIME, RESTART_ACTION, TRIGGER_CLEANING_ACTION})
_RECONNECT_POLL_S = 0.2


def parse_bootstrap(address: str) -> tuple[str, int]:
    """``host:port`` (IPv6 as ``[::1]:9092``) -> (host, port); ValueError names the input."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"bootstrap address {address!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


def parse_bootstrap_servers(addresses: str) -> tuple[tuple[str, int], ...]:
    """``HOST:PORT[,HOST:PORT...]`` (``bootstrap.servers``) -> the addresses, in order;
    ValueError names the bad one."""
    listed = [a.strip() for a in addresses.split(",")]
    if not any(listed):
        raise ValueError(f"bootstrap address {addresses!r} is not HOST:PORT")
    return tuple(parse_bootstrap(a) for a in listed if a)


@dataclass(frozen=True, slots=True)
class ControlHook:
    """The command the runner calls to act on the broker (see the module docstring)."""

    command: tuple[str, ...]
    actions: frozenset[str] = HOOK_ACTIONS
    timeout_s: float = 120.0

    @classmethod
    def parse(
        cls, command: str | Sequence[str], actions: frozenset[str] | None = None
    ) -> ControlHook:
        argv = tuple(shlex.split(command) if isinstance(command, str) else command)
        if not argv:
            raise ValueError("the control hook command is empty")
        unknown = (actions or HOOK_ACTIONS) - HOOK_ACTIONS
        if unknown:
            raise ValueError(f"unknown control hook actions {sorted(unknown)}")
        return cls(argv, actions if actions is not None else HOOK_ACTIONS)

    def run(self, *args: str) -> None:
        """Run ``command + args``; ControlError on a non-zero exit or a timeout."""
        argv = [*self.command, *args]
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=self.timeout_s, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ControlError(f"control hook {shlex.join(argv)} failed: {error}") from None
        if done.returncode != 0:
            raise ControlError(
                f"control hook {shlex.join(argv)} exited {done.returncode}: "
                f"{done.stderr.strip() or done.stdout.strip()}"
            )


class BootstrapTarget(ProfilesOnce):
    """A broker reached through ``host:port``; see the module docstring."""

    def __init__(
        self,
        address: str,
        *,
        log_dir: str | Path | None = None,
        sasl: PlainCredentials | None = None,
        user: PlainCredentials | None = None,
        tls: ssl.SSLContext | None = None,
        control: ControlHook | None = None,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        restart_timeout_s: float = 120.0,
    ) -> None:
        self._addresses = parse_bootstrap_servers(address)
        self._log_dir = None if log_dir is None else Path(log_dir)
        self._sasl = sasl
        self._tls = tls
        self._roles = {} if sasl is None or user is None else {"admin": sasl, "user": user}
        self._control = control
        self._request_timeout = request_timeout
        self._restart_timeout_s = restart_timeout_s

    @property
    def name(self) -> str:
        return ",".join(_joined(host, port) for host, port in self._addresses)

    @property
    def capabilities(self) -> Capabilities:
        actions = self._control.actions if self._control is not None else frozenset()
        return Capabilities(
            clock="virtual" if ADVANCE_TIME in actions else "wall",
            log_dir=self._log_dir,
            restart=RESTART_ACTION in actions,
            trigger_cleaning=TRIGGER_CLEANING_ACTION in actions,
            sasl=self._sasl is not None,
            principals=bool(self._roles),
        )

    def connect(self) -> KafkaConnection:
        return RoutedConnection.open_first(
            self._addresses, request_timeout=self._request_timeout, sasl=self._sasl, tls=self._tls
        )

    def connect_as(self, role: str) -> KafkaConnection:
        """A connection authenticated as ``role`` (capability ``principals``)."""
        if role not in self._roles:
            raise CapabilityMissingError(self.name, PRINCIPALS)
        return RoutedConnection.open_first(
            self._addresses,
            request_timeout=self._request_timeout,
            sasl=self._roles[role],
            tls=self._tls,
        )

    def principal_of(self, role: str) -> str:
        if role not in self._roles:
            raise CapabilityMissingError(self.name, PRINCIPALS)
        return f"User:{self._roles[role].username}"

    def advance_time(self, ms: int) -> None:
        self._hook(ADVANCE_TIME, CLOCK_CONTROL).run(ADVANCE_TIME, str(ms))

    def trigger_cleaning(self) -> None:
        self._hook(TRIGGER_CLEANING_ACTION, TRIGGER_CLEANING).run(TRIGGER_CLEANING_ACTION)

    def restart(self) -> None:
        self._hook(RESTART_ACTION, RESTART).run(RESTART_ACTION)
        self._wait_until_serving()

    def close(self) -> None:
        """Nothing to release: the broker is not ours."""

    def _hook(self, action: str, capability: str) -> ControlHook:
        if self._control is None or action not in self._control.actions:
            raise CapabilityMissingError(self.name, capability)
        return self._control

    def _wait_until_serving(self) -> None:
        deadline = time.monotonic() + self._restart_timeout_s
        while True:
            try:
                self.connect().close()
                return
            except TargetUnreachableError as error:
                if time.monotonic() >= deadline:
                    raise ControlError(
                        f"{self.name} did not serve again within {self._restart_timeout_s} s "
                        f"after restart: {error}"
                    ) from None
                time.sleep(_RECONNECT_POLL_S)


def _joined(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
