"""The embedded reference broker as a target: virtual clock, readable log dir, restarts.

Theory of operation
-------------------
:class:`EmbeddedTarget` starts ``lethe_reference.embedded.EmbeddedBroker`` (the
reference broker's public entry point; this is the only module of
lethe_conformance that imports lethe_reference) on a loopback port, in a log
directory of its own (a temporary one unless given), on a manual clock:

* :meth:`advance_time` moves the clock and runs whatever became due
  (retention, checkpoints, ``.deleted`` file removal) before returning, so a
  scenario that waits five minutes of broker time takes milliseconds;
* the log dir is a local path, so on-disk expectations can be checked;
* :meth:`restart` is a clean shutdown and a new broker on the same log dir,
  clock and port.
* :meth:`restart_editing` stops the broker, lets the runner change files in
  its log dir and starts it again; :meth:`isolated` starts a broker of its own
  on a fresh log dir (capabilities ``edit-log-dir`` and ``own-log-dir``);
  :meth:`clustered` starts three brokers of its own replicating in one process
  (capability ``cluster-control``, :mod:`lethe_conformance.targets.cluster`).
* :meth:`inject_failure` arms an environmental failure in the running broker
  (capability ``inject-failure``; ``lethe_reference.injected_failures``).

Broker settings: Kafka's quickstart ``server.properties`` (the reference
broker's default) with the few settings the golden Kafka broker ran with to
make background work frequent (``log.retention.check.interval.ms``,
``log.flush.start.offset.checkpoint.interval.ms``, ``log.cleaner.backoff.ms``
1000; ``group.initial.rebalance.delay.ms`` 0; fixtures/golden/README.md,
"Broker settings") and the extension switches of :data:`PROFILE_SETTINGS`
(``delete.topic.partition.enable``, ``lethe.kip68.enable``, ``lethe.kip87.enable``: the
target offers every profile);
``overrides`` go on top; ``faults`` sets ``lethe.faults``, the reference
broker's deliberate faults (``lethe conformance faults``, conformance/FAULTS.md),
which :func:`known_faults` lists. Like Kafka, the first retention
pass still waits ``log.initial.task.delay.ms`` (30 s) after startup.

Principals (capability ``principals``): the broker also serves a SASL_PLAINTEXT
listener with SASL/PLAIN accounts ``admin`` and ``alice`` and Kafka's
``StandardAuthorizer`` (:data:`SECURITY_SETTINGS`). ``admin`` and
``User:ANONYMOUS`` (the PLAINTEXT listener's principal, which :meth:`connect`
uses) are super users, so every scenario that does not act as a principal
runs exactly as on a broker without an authorizer; role ``user`` (``alice``)
has no ACLs until a scenario grants some, and ``allow.everyone.if.no.acl.found``
is false, Kafka's default.

The clock starts at :data:`DEFAULT_START_MS` (2027-01-15T08:00:00Z), after every
timestamp in the golden data, so runs are reproducible. ``clock="wall"`` runs the
broker on the system clock instead, as a launched broker runs: no clock-control,
no trigger-cleaning, no cluster-control; scenarios then take their wall-clock path
(its background work driven by the settings given in ``overrides``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Literal

from lethe_reference import faults as reference_faults
from lethe_reference.clock import Clock, ManualClock, SystemClock
from lethe_reference.embedded import EmbeddedBroker
from lethe_reference.server.defaults import broker_config

from lethe_conformance.client.connection import (
    DEFAULT_REQUEST_TIMEOUT,
    KafkaConnection,
    PlainCredentials,
)
from lethe_conformance.targets.base import (
    CLOCK_CONTROL,
    FAILURE_PROVIDED_BY,
    Capabilities,
    CapabilityMissingError,
)
from lethe_conformance.targets.cluster import EmbeddedClusterTarget
from lethe_conformance.targets.profiles import ProfilesOnce

__all__ = [
    "CREDENTIALS",
    "DEFAULT_START_MS",
    "GOLDEN_BROKER_SETTINGS",
    "SECURITY_SETTINGS",
    "EmbeddedTarget",
    "known_faults",
]

DEFAULT_START_MS = 1_800_000_000_000
GOLDEN_BROKER_SETTINGS: Mapping[str, str] = {
    "log.retention.check.interval.ms": "1000",
    "log.flush.start.offset.checkpoint.interval.ms": "1000",
    "log.cleaner.backoff.ms": "1000",
    "group.initial.rebalance.delay.ms": "0",
}
#: Extensions switched on so the target offers every profile (a switched-off one is
#: invisible: lethe_reference.config.extensions).
PROFILE_SETTINGS: Mapping[str, str] = {
    "delete.topic.partition.enable": "true",
    "lethe.kip68.enable": "true",
    "lethe.kip87.enable": "true",
}
#: The SASL accounts of the principal roles (capability ``principals``).
CREDENTIALS: Mapping[str, PlainCredentials] = {
    "admin": PlainCredentials("admin", "admin-secret"),
    "user": PlainCredentials("alice", "alice-secret"),
}
_JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" '
    + " ".join(f'user_{c.username}="{c.password}"' for c in CREDENTIALS.values())
    + ";"
)
#: A SASL_PLAINTEXT listener with PLAIN, and Kafka's StandardAuthorizer (module docstring).
SECURITY_SETTINGS: Mapping[str, str] = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:admin;User:ANONYMOUS",
    "allow.everyone.if.no.acl.found": "false",
    "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": _JAAS,
}


class EmbeddedTarget(ProfilesOnce):
    """See the module docstring; use as a context manager (or call start/close)."""

    def __init__(
        self,
        log_dir: str | Path | None = None,
        *,
        overrides: Mapping[str, str] | None = None,
        start_ms: int = DEFAULT_START_MS,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        faults: Sequence[str] = (),
        clock: Literal["virtual", "wall"] = "virtual",
    ) -> None:
        self._owned_dir = log_dir is None
        self._log_dir = (
            Path(tempfile.mkdtemp(prefix="lethe-target-")) if log_dir is None else Path(log_dir)
        )
        settings = (
            dict(GOLDEN_BROKER_SETTINGS)
            | dict(PROFILE_SETTINGS)
            | dict(SECURITY_SETTINGS)
            | dict(overrides or {})
        )
        if faults:  # deliberate faults (lethe_reference/faults.py): lethe conformance faults
            settings[reference_faults.CONFIG_NAME] = ",".join(faults)
        self._settings = settings
        self._start_ms = start_ms
        self._clock = clock
        broker_clock: Clock = ManualClock(start_ms) if clock == "virtual" else SystemClock()
        self._broker = EmbeddedBroker(
            self._log_dir,
            config=broker_config(overrides=settings),
            clock=broker_clock,
            sasl_port=0,
        )
        self._request_timeout = request_timeout

    def start(self) -> EmbeddedTarget:
        self._broker.start()
        return self

    def __enter__(self) -> EmbeddedTarget:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def name(self) -> str:
        return "embedded" if self._clock == "virtual" else "embedded-wall"

    @property
    def bootstrap(self) -> str:
        return self._broker.bootstrap

    @property
    def capabilities(self) -> Capabilities:
        virtual = self._clock == "virtual"
        return Capabilities(
            clock=self._clock,
            log_dir=self._log_dir,
            restart=True,
            crash=True,
            trigger_cleaning=virtual,
            edit_log_dir=True,
            own_log_dir=True,
            cluster_control=virtual,
            principals=True,
            inject_failure=True,
            failure_kinds=frozenset(FAILURE_PROVIDED_BY),
        )

    def connect(self) -> KafkaConnection:
        return KafkaConnection.open(
            self._broker.host, self._broker.port, request_timeout=self._request_timeout
        )

    def connect_as(self, role: str) -> KafkaConnection:
        """A connection to the SASL_PLAINTEXT listener, authenticated as ``role``."""
        host, _, port = self._broker.sasl_bootstrap.rpartition(":")
        return KafkaConnection.open(
            host, int(port), request_timeout=self._request_timeout, sasl=CREDENTIALS[role]
        )

    def principal_of(self, role: str) -> str:
        return f"User:{CREDENTIALS[role].username}"

    def advance_time(self, ms: int) -> None:
        if self._clock != "virtual":
            raise CapabilityMissingError(self.name, CLOCK_CONTROL)
        self._broker.advance(ms)

    def restart(self) -> None:
        self._broker.restart()

    def restart_editing(self, edit: Callable[[Path], None]) -> None:
        """Stop the broker cleanly, let ``edit`` change its log dir, start it again (same dir,
        clock and port): a restart with a file changed while the broker was down."""
        self._broker.stop(keep_ports=True)
        try:
            edit(self._log_dir)
        finally:
            self._broker.start()

    def crash_restart(self) -> None:
        """A crash (capability ``crash``): the broker's state is dropped with no shutdown
        work, and a fresh broker recovers the same log dir (same clock and port)."""
        self._broker.crash_restart()

    def recover(self) -> None:
        """Before a scenario: a broker an earlier scenario left stopped (a failed restart)
        starts again on its log dir and port, so one broken scenario fails no other."""
        if not self._broker.running:
            self._broker.stop(keep_ports=True)
            self._broker.start()

    @contextmanager
    def isolated(
        self, overrides: Mapping[str, str] | None = None, *, failures: frozenset[str] = frozenset()
    ) -> Iterator[EmbeddedTarget]:
        """A broker of its own on a fresh temporary log dir, with this one's settings
        (``overrides`` on top: a scenario's ``setup.broker_configs``) and clock start
        (own-log-dir); stopped, and its dir removed, on exit. ``failures`` needs nothing
        here: the embedded broker fails inside, whatever its settings."""
        with EmbeddedTarget(
            overrides=dict(self._settings) | dict(overrides or {}),
            start_ms=self._start_ms,
            request_timeout=self._request_timeout,
            clock=self._clock,
        ) as other:
            yield other

    @contextmanager
    def clustered(self) -> Iterator[EmbeddedClusterTarget]:
        """Three reference brokers of their own replicating in one process, with this
        target's settings and clock start (cluster-control); stopped on exit."""
        with EmbeddedClusterTarget(
            overrides=self._settings,
            start_ms=self._start_ms,
            request_timeout=self._request_timeout,
        ) as cluster:
            yield cluster

    def inject_failure(self, kind: str, topic: str, partitions: list[int]) -> None:
        """Arm ``kind`` on ``topic``'s ``partitions`` (``EmbeddedBroker.inject_failure``);
        a restart clears it."""
        self._broker.inject_failure(kind, topic, partitions)

    def trigger_cleaning(self) -> None:
        """Run the reference broker's log cleaner now (``EmbeddedBroker.trigger_cleaning``)."""
        self._broker.trigger_cleaning()

    def close(self) -> None:
        self._broker.stop()
        if self._owned_dir:
            shutil.rmtree(self._log_dir, ignore_errors=True)


def known_faults() -> dict[str, tuple[tuple[str, ...], str, str]]:
    """The reference broker's deliberate faults: name -> (requirement IDs, description,
    module of lethe_reference where it acts)."""
    return {
        f.name: (f.requirements, f.description, f.where) for f in reference_faults.FAULTS.values()
    }
