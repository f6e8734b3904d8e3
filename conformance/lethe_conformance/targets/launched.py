"""A broker the runner starts itself from a launcher file: Kafka, lethe broker, any other.

Theory of operation
-------------------
:class:`LaunchedTarget` turns a :class:`~lethe_conformance.targets.launcher.LauncherSpec`
into running nodes (:class:`~lethe_conformance.targets.processes.Node`) in a
scratch folder, and offers every moment a scenario needs through the
processes, on the wall clock:

=================  ==============================================================
capability         how
=================  ==============================================================
``log-dir``        node 1's ``data/`` folder (``log.dirs`` of the config)
``restart``        the launcher's stop signal (SIGTERM), wait for the exit, start
``edit-log-dir``   stop, the runner edits the log dir, start (:meth:`restart_editing`)
``own-log-dir``    a new LaunchedTarget of one node in a folder of its own, with the
                   scenario's ``setup.broker_configs`` on top (:meth:`isolated`)
``principals``     the launcher's ``principals`` on its ``sasl`` port
``cluster-control`` three nodes of their own (:meth:`clustered`, launchers with
                   ``cluster = true``; a wall path's broker settings on top):
                   stop/start a broker, pause a follower with SIGSTOP (the whole
                   broker freezes, so it also stops heartbeating: the scenario's
                   settings keep it unfenced), connect to one broker, move a
                   leader with the broker's own admin APIs (:meth:`move_leader`);
                   there is no view of a purgatory (:meth:`held_requests` is
                   CapabilityMissingError), so the runner sees a held request
                   on the wire
=================  ==============================================================

:meth:`move_leader` elects a chosen replica as an operator would on Kafka
(AlterPartitionReassignments, then ElectLeaders PREFERRED; :mod:`.elections`),
sending both to the nodes' ``controller`` listener when the launcher has one.

:meth:`crash_restart` kills a node (SIGKILL) and starts it again: Kafka's
recovery after an unclean shutdown. There is no ``clock-control`` (the
broker runs on the wall clock; ``wait`` polls) and no ``trigger-cleaning``:
the launcher's settings make the cleaner and retention run every second by
themselves. ``inject-failure`` covers the kinds the launcher's ``failures``
declare, the ones the runner can cause from outside the process
(:mod:`~lethe_conformance.targets.outside_failures`), and only on a broker of
the scenario's own started with that kind's settings (``isolated(failures=...)``:
a failed log dir must not outlive its scenario).

A launcher's ``offers`` limits the table to what the broker really has (Tansu,
memory-only and without a config file, offers none of them: only the wire), and
its ``wall_clock.wait_cap_s`` caps the scenarios' wall-clock waits
(:attr:`wait_cap_s`). A one-node broker that numbers itself in Metadata (Tansu
is node 111) is reached as the one launched node.

Every start ends with a readiness check: each node's ``plaintext`` port answers
ApiVersions and its Metadata lists every node of the cluster, within the
launcher's ``readiness.timeout_s``; a node that exits meanwhile fails the start
with the tail of its output. Closing the target kills whatever still runs and
removes the scratch folder (kept with ``keep_scratch``, for a post-mortem).
"""

from __future__ import annotations

import base64
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from lethe_conformance.client import calls
from lethe_conformance.client.connection import (
    DEFAULT_REQUEST_TIMEOUT,
    KafkaConnection,
)
from lethe_conformance.client.errors import ClientError
from lethe_conformance.targets import elections
from lethe_conformance.targets.base import (
    CLUSTER_CONTROL,
    CRASH,
    EDIT_LOG_DIR,
    INJECT_FAILURE,
    LOG_DIR,
    OWN_LOG_DIR,
    PRINCIPALS,
    RESTART,
    Capabilities,
    CapabilityMissingError,
    ControlError,
)
from lethe_conformance.targets.launcher import PLAINTEXT, LauncherSpec
from lethe_conformance.targets.outside_failures import fail_log_dir
from lethe_conformance.targets.processes import DEFAULT_PORT_RANGE, Node, free_ports
from lethe_conformance.targets.profiles import ProfilesOnce

__all__ = ["LaunchedTarget"]

_READY_POLL_S = 0.5
_PREPARE_TIMEOUT_S = 180.0
CONTROLLER = "controller"
SASL = "sasl"


def kafka_uuid() -> str:
    """A random cluster id as Kafka prints one (URL-safe base64 of 16 bytes, no padding).

    Never one starting with ``-``: a command line would read it as an option
    (``kafka-storage.sh format --cluster-id -9i4...`` fails), which is why Kafka's
    ``Uuid.randomUuid`` draws again in that case; so does this.
    """
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


class LaunchedTarget(ProfilesOnce):
    """Nodes started from a launcher (module docstring); use as a context manager."""

    def __init__(
        self,
        spec: LauncherSpec,
        *,
        home: Path | None = None,
        scratch: Path | None = None,
        overrides: Mapping[str, str] | None = None,
        cluster_size: int = 1,
        port_range: tuple[int, int] = DEFAULT_PORT_RANGE,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        host: str = "127.0.0.1",
        keep_scratch: bool = False,
        binary: Path | None = None,
        failures: frozenset[str] = frozenset(),
    ) -> None:
        spec.check_home(home)
        self.spec = spec
        self._home = home
        self._binary = spec.binary.resolve(binary, spec.name) if spec.binary else None
        self._owned = scratch is None
        self._scratch = scratch or Path(tempfile.mkdtemp(prefix=f"lethe-{spec.name}-"))
        self._overrides = dict(overrides or {})
        self._size = cluster_size
        self._port_range = port_range
        self._request_timeout = request_timeout
        self._host = host
        self._keep = keep_scratch
        self._cluster_id = kafka_uuid()
        #: the failure kinds this broker was started to survive (launcher ``failures``)
        self._failures = failures & frozenset(spec.failures)
        self._children = 0
        self.nodes: dict[int, Node] = {}
        #: nodes frozen by pause_fetching (they cannot answer anything)
        self._paused: set[int] = set()

    # --- lifecycle -------------------------------------------------------------------

    def start(self) -> LaunchedTarget:
        try:
            ports = free_ports(len(self.spec.ports) * self._size, self._port_range, self._host)
            for index in range(self._size):
                node_id = index + 1
                own = ports[index * len(self.spec.ports) : (index + 1) * len(self.spec.ports)]
                self.nodes[node_id] = Node(
                    node_id,
                    self._scratch / f"node-{node_id}",
                    dict(zip(self.spec.ports, own, strict=True)),
                )
            for node_id in self.nodes:
                self._launch(node_id)
            self._wait_ready(list(self.nodes))
        except BaseException:
            self.close()
            raise
        return self

    def __enter__(self) -> LaunchedTarget:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        for node in self.nodes.values():
            node.close(self.spec.signals.kill)
        if self._owned and not self._keep:
            shutil.rmtree(self._scratch, ignore_errors=True)

    # --- what the runner asks --------------------------------------------------------------

    @property
    def name(self) -> str:
        first = self.nodes.get(1)
        where = f"{self._host}:{first.ports[PLAINTEXT]}" if first else "not started"
        return f"{self.spec.name} ({where})"

    @property
    def log_dir(self) -> Path:
        return self.nodes[1].log_dir

    @property
    def capabilities(self) -> Capabilities:
        offers = self.spec.offers
        return Capabilities(
            clock="wall",
            log_dir=self.log_dir if LOG_DIR in offers else None,
            restart=RESTART in offers,
            crash=CRASH in offers,
            edit_log_dir=EDIT_LOG_DIR in offers,
            own_log_dir=OWN_LOG_DIR in offers,
            sasl=bool(self.spec.principals),
            principals=bool(self.spec.principals)
            and SASL in self.spec.ports
            and PRINCIPALS in offers,
            cluster_control=self.spec.cluster and CLUSTER_CONTROL in offers,
            inject_failure=bool(self.spec.failures),
            failure_kinds=frozenset(self.spec.failures),
        )

    @property
    def wait_cap_s(self) -> float | None:
        """The launcher's cap on wall-clock waits (``wall_clock.wait_cap_s``), or None."""
        return self.spec.wait_cap_s

    def connect(self) -> KafkaConnection:
        return self.connect_to(self.answering()[0] if self.answering() else 1)

    def connect_to(self, node_id: int) -> KafkaConnection:
        """A connection to the node Metadata calls ``node_id``; a one-node broker that
        numbers itself (Tansu is node 111 whatever ``{node_id}`` says) is that node."""
        node = self.nodes.get(node_id)
        if node is None and len(self.nodes) == 1:
            node = next(iter(self.nodes.values()))
        if node is None:
            raise ControlError(f"{self.spec.name}: Metadata names broker {node_id}, not launched")
        return KafkaConnection.open(
            self._host, node.ports[PLAINTEXT], request_timeout=self._request_timeout
        )

    def connect_as(self, role: str) -> KafkaConnection:
        if role not in self.spec.principals or SASL not in self.spec.ports:
            raise CapabilityMissingError(self.name, PRINCIPALS)
        return KafkaConnection.open(
            self._host,
            self.nodes[1].ports[SASL],
            request_timeout=self._request_timeout,
            sasl=self.spec.principals[role],
        )

    def principal_of(self, role: str) -> str:
        if role not in self.spec.principals:
            raise CapabilityMissingError(self.name, PRINCIPALS)
        return f"User:{self.spec.principals[role].username}"

    def advance_time(self, ms: int) -> None:
        raise CapabilityMissingError(self.name, "clock-control")

    def trigger_cleaning(self) -> None:
        raise CapabilityMissingError(self.name, "trigger-cleaning")

    def inject_failure(self, kind: str, topic: str, partitions: list[int]) -> None:
        """Cause ``kind`` from outside (module docstring): only the kinds this broker was
        started to survive; a kind the launcher does not declare is not applicable."""
        if kind not in self._failures:
            offered = kind in self.spec.failures
            raise CapabilityMissingError(
                self.name,
                f"{INJECT_FAILURE} {kind}"
                + (" (only on a broker of the scenario's own)" if offered else ""),
            )
        node = self.nodes[1]
        fail_log_dir((node.log_dir, node.spare_log_dir), topic, partitions)

    def restart(self) -> None:
        """Clean restart of every node: stop signal, wait for the exit, start, readiness."""
        self.restart_editing(lambda _: None)

    def restart_editing(self, edit: Callable[[Path], None]) -> None:
        """Stop every node cleanly, ``edit(log dir of node 1)``, start them again."""
        for node_id in self.nodes:
            self.stop_broker(node_id)
        try:
            edit(self.log_dir)
        finally:
            for node_id in self.nodes:
                self._launch(node_id)
            self._wait_ready(list(self.nodes))

    def crash_restart(self) -> None:
        """SIGKILL every node (no shutdown work), start them again, wait until they serve."""
        for node in self.nodes.values():
            node.crash(self.spec.signals.kill)
        for node_id in self.nodes:
            self._launch(node_id)
        self._wait_ready(list(self.nodes))

    def recover(self) -> None:
        """Before a scenario: start again any node that is not running (a broken earlier
        scenario must not fail the next ones)."""
        down = [n for n, node in self.nodes.items() if not node.running]
        for node_id in down:
            self._launch(node_id)
        if down:
            self._wait_ready(down)

    @contextmanager
    def isolated(
        self, overrides: Mapping[str, str] | None = None, *, failures: frozenset[str] = frozenset()
    ) -> Iterator[LaunchedTarget]:
        """One node of its own on a fresh log dir, ``overrides`` on top (own-log-dir),
        started with the settings that let it survive the failure kinds ``failures``."""
        with self._child(1, overrides, failures) as other:
            yield other

    @contextmanager
    def clustered(self, overrides: Mapping[str, str] | None = None) -> Iterator[LaunchedTarget]:
        """Three nodes of their own forming one cluster, ``overrides`` on top (the
        settings a scenario's wall path assumes; cluster-control)."""
        if not self.spec.cluster or CLUSTER_CONTROL not in self.spec.offers:
            raise CapabilityMissingError(self.name, CLUSTER_CONTROL)
        with self._child(3, overrides) as cluster:
            yield cluster

    # --- cluster-control -------------------------------------------------------------------

    def stop_broker(self, node_id: int) -> None:
        """A clean stop; a paused node is resumed first, or it could not shut down."""
        if node_id in self._paused:
            self.resume_fetching(node_id, "", -1)
        signals = self.spec.signals
        self.nodes[node_id].stop(signals.stop, signals.stop_timeout_s, signals.kill)
        if self._size > 1:
            self._await_gone(node_id)

    def start_broker(self, node_id: int) -> None:
        self._launch(node_id)
        self._wait_ready([node_id])

    def pause_fetching(self, node_id: int, topic: str, partition: int) -> None:
        """Freeze the follower's whole process (the launcher's pause signal)."""
        self.nodes[node_id].signal(self.spec.signals.pause)
        self._paused.add(node_id)

    def resume_fetching(self, node_id: int, topic: str, partition: int) -> None:
        self.nodes[node_id].signal(self.spec.signals.resume)
        self._paused.discard(node_id)

    def move_leader(self, topic: str, partition: int, node_id: int) -> None:
        """Elect ``node_id`` leader of the partition (:mod:`.elections`)."""
        elections.move_leader(self, topic, partition, node_id)

    def held_requests(self, node_id: int) -> int:
        raise CapabilityMissingError(self.name, "held-requests (a view of the purgatory)")

    # --- internals ----------------------------------------------------------------------------

    def answering(self) -> list[int]:
        """Running nodes that are not paused, by id."""
        return [n for n, node in self.nodes.items() if node.running and n not in self._paused]

    def admin_connection(self, node_id: int) -> KafkaConnection:
        """Node ``node_id``'s ``controller`` listener when the launcher has one (KRaft
        controllers take admin requests directly), else its ``plaintext`` one."""
        port = CONTROLLER if CONTROLLER in self.spec.ports else PLAINTEXT
        return KafkaConnection.open(
            self._host, self.nodes[node_id].ports[port], request_timeout=self._request_timeout
        )

    def _await_gone(self, node_id: int) -> None:
        """Until no answering node's Metadata lists ``node_id`` (Kafka: the controller
        fenced it at the end of its controlled shutdown), so the next step meets a
        cluster that knows the broker is gone."""
        deadline = time.monotonic() + self.spec.ready_timeout_s
        while time.monotonic() < deadline:
            try:
                views = []
                for other in self.answering():
                    with self.connect_to(other) as conn:
                        views.append({b.node_id for b in calls.metadata(conn, []).brokers})
                if all(node_id not in view for view in views):
                    return
            except ClientError:
                pass
            time.sleep(_READY_POLL_S)
        raise ControlError(f"node {node_id} stopped, but the cluster still lists it")

    @contextmanager
    def _child(
        self,
        size: int,
        overrides: Mapping[str, str] | None,
        failures: frozenset[str] = frozenset(),
    ) -> Iterator[LaunchedTarget]:
        self._children += 1
        folder = self._scratch / f"own-{self._children}"
        child = LaunchedTarget(
            self.spec,
            home=self._home,
            scratch=folder,
            overrides=self._overrides | dict(overrides or {}),
            cluster_size=size,
            port_range=self._port_range,
            request_timeout=self._request_timeout,
            host=self._host,
            binary=self._binary,
            failures=failures,
        )
        try:
            with child:
                yield child
        finally:
            if not self._keep:
                shutil.rmtree(folder, ignore_errors=True)

    def _values(self, node: Node) -> dict[str, str]:
        principals = self.spec.principals
        admin, user = principals.get("admin"), principals.get("user")
        voters = ",".join(
            f"{n.node_id}@{self._host}:{n.ports[CONTROLLER]}"
            for n in self.nodes.values()
            if CONTROLLER in n.ports
        )
        lethe = Path(sys.executable).with_name("lethe")
        values = {
            "home": str(self._home or ""),
            "bin": str(self._binary or ""),
            "python": sys.executable,
            "lethe": str(lethe) if lethe.exists() else (shutil.which("lethe") or "lethe"),
            "node_id": str(node.node_id),
            "node_dir": str(node.folder),
            "log_dir": str(node.log_dir),
            "spare_log_dir": str(node.spare_log_dir),
            "config_path": str(node.folder / self.spec.config_file),
            "host": self._host,
            "cluster_id": self._cluster_id,
            "cluster_size": str(self._size),
            "voters": voters,
            "replication_factor": str(min(3, self._size)),
            "admin_user": admin.username if admin else "",
            "admin_password": admin.password if admin else "",
            "user_user": user.username if user else "",
            "user_password": user.password if user else "",
        }
        values.update({f"port_{name}": str(port) for name, port in node.ports.items()})
        return values

    def _launch(self, node_id: int) -> None:
        """Write the node's config, prepare a fresh log dir once, start the process."""
        node = self.nodes[node_id]
        values = self._values(node)
        lines = [self.spec.render(self.spec.template, values).strip()]
        settings = dict(self.spec.settings)
        for kind in sorted(self._failures):
            failure = self.spec.failures[kind]
            settings |= {k: self.spec.render(v, values) for k, v in failure.items()}
        settings |= self._overrides
        lines += [f"{key}={value}" for key, value in settings.items()]
        Path(values["config_path"]).write_text("\n".join(lines) + "\n", encoding="utf-8")
        env = {k: self.spec.render(v, values) for k, v in self.spec.env.items()}
        if not node.prepared:
            for command in self.spec.prepare:
                argv = [self.spec.render(part, values) for part in command]
                node.run_once(argv, env, _PREPARE_TIMEOUT_S)
            node.prepared = True
        node.start([self.spec.render(part, values) for part in self.spec.start], env)

    def _wait_ready(self, node_ids: list[int]) -> None:
        """Every node answers and its Metadata lists the whole cluster (module docstring)."""
        deadline = time.monotonic() + self.spec.ready_timeout_s
        pending = list(node_ids)
        last = ""
        while pending:
            node = self.nodes[pending[0]]
            if not node.running:
                raise ControlError(
                    f"{self.spec.name} node {node.node_id} exited with status "
                    f"{node.exit_status()} while starting: {node.output_tail()}"
                )
            try:
                with self.connect_to(node.node_id) as conn:
                    brokers = calls.metadata(conn, []).brokers
                if len(brokers) >= sum(1 for n in self.nodes.values() if n.running):
                    pending.pop(0)
                    continue
                last = f"Metadata lists {len(brokers)} brokers"
            except ClientError as error:
                last = str(error)
            if time.monotonic() >= deadline:
                raise ControlError(
                    f"{self.spec.name} node {node.node_id} not ready within "
                    f"{self.spec.ready_timeout_s} s: {last}"
                )
            time.sleep(_READY_POLL_S)
