"""Several reference brokers replicating in one process: the cluster entry point.

Theory of operation
-------------------
:class:`EmbeddedCluster` starts ``size`` :class:`~lethe_reference.broker.Broker`
objects, each with its own log directory (``<base_dir>/broker-<id>``), its own
``node.id`` (1, 2, 3, ...) and its own loopback port, served by
:class:`~lethe_reference.server.app.BrokerServer` on one event loop in one
background thread (named ``lethe-cluster``). They share

* one clock (pass ``ManualClock`` for virtual time and drive it with
  :meth:`EmbeddedCluster.advance`), and
* one :class:`~lethe_reference.cluster.controller.ClusterController`, which
  every broker's :class:`~lethe_reference.cluster.membership.Member` asks who
  leads what.

A topic created on any broker (CreateTopics with a replication factor, up to
the number of live brokers) exists on all of them; followers replicate with
real Fetch requests (:mod:`lethe_reference.cluster.fetcher`), so the high
watermark, the low watermark and the DeleteRecords purgatory behave as on a
Kafka cluster.

Virtual time. :meth:`advance` does not jump: it moves the clock to each
moment some broker has work due (a follower's long poll expiring, an ISR
check, retention, a purgatory deadline), runs every broker's due work there
until none is left, and repeats up to the target, as a real cluster would
live through those milliseconds. After :data:`MAX_STEPS` stops it jumps the
rest (periodic tasks then run once, see :mod:`lethe_reference.scheduler`).

Operator controls (for tests and the conformance kit): :meth:`pause_fetching`
/ :meth:`resume_fetching` a follower of one partition (the broker stays
alive), :meth:`move_leader` (an election, the leader epoch goes up),
:meth:`stop_broker` (clean shutdown: it leaves every ISR and its port closes)
and :meth:`start_broker` (it comes back on the same port and log dir as a
follower). :meth:`partition_state` reads the controller.

KIP-694 (with ``delete.topic.partition.enable``): a reduction is shared by
every broker, and its deletion waits while a broker holding a replica of a
removed partition is stopped; a broker that starts again learns the pending
reductions and lets held deletions finish (:mod:`lethe_reference.cluster.reduction`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from lethe_reference.broker import Broker
from lethe_reference.clock import Clock, ManualClock, SystemClock
from lethe_reference.cluster import reduction as cluster_reduction
from lethe_reference.cluster.controller import ClusterController, PartitionState
from lethe_reference.cluster.membership import Member, member_of
from lethe_reference.metadata import new_topic_id
from lethe_reference.server.app import BrokerServer
from lethe_reference.server.defaults import broker_config
from lethe_reference.server.loop_thread import LoopThread

__all__ = ["MAX_STEPS", "EmbeddedCluster"]

T = TypeVar("T")
_TIMEOUT_S = 30.0
#: Stops of one :meth:`EmbeddedCluster.advance` before it jumps the rest.
MAX_STEPS = 20_000
#: Rounds of "run what is due now" at one instant before giving up on quiescence.
_MAX_ROUNDS = 100


class EmbeddedCluster:
    """``size`` brokers on loopback ports sharing a controller and a clock."""

    def __init__(
        self,
        base_dir: str | Path,
        size: int = 3,
        *,
        overrides: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        host: str = "127.0.0.1",
        durable: bool = False,
    ) -> None:
        if size < 1:
            raise ValueError(f"a cluster needs at least one broker, got {size}")
        self.base_dir = Path(base_dir)
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.host = host
        self.durable = durable
        self.overrides = dict(overrides or {})
        self.node_ids = tuple(range(1, size + 1))
        self.controller = ClusterController(self.node_ids)
        self.cluster_id = str(new_topic_id())
        self._servers: dict[int, BrokerServer] = {}
        self._ports: dict[int, int] = dict.fromkeys(self.node_ids, 0)
        self._runner = LoopThread("lethe-cluster", _TIMEOUT_S)

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> EmbeddedCluster:
        if self._runner.running:
            raise RuntimeError("the cluster is already running")
        self._runner.start()
        for node in self.node_ids:
            self._submit(self._start_broker(node))
        return self

    def stop(self) -> None:
        if not self._runner.running:
            return
        try:
            for node in list(self._servers):
                self._submit(self._stop_broker(node))
        finally:
            self._runner.stop()

    def __enter__(self) -> EmbeddedCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- access ------------------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        """``host:port`` of every running broker, comma-separated."""
        return ",".join(self.address(n) for n in sorted(self._servers))

    def address(self, node: int) -> str:
        return f"{self.host}:{self._ports[node]}"

    def port(self, node: int) -> int:
        return self._ports[node]

    def running(self, node: int) -> bool:
        return node in self._servers

    def broker(self, node: int) -> Broker:
        """Broker ``node``'s state (read it through :meth:`call`)."""
        return self._servers[node].broker

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` in the loop thread (where every broker lives)."""
        if self._runner.is_current():
            return fn()

        async def run() -> T:
            return fn()

        return self._submit(run())

    def partition_state(self, topic: str, partition: int) -> PartitionState | None:
        return self.call(lambda: self.controller.state((topic, partition)))

    # --- operator controls ----------------------------------------------------------------

    def pause_fetching(self, node: int, topic: str, partition: int) -> None:
        """Broker ``node`` stops fetching the partition, staying alive (a stalled follower)."""
        self.call(lambda: self._member(node).pause((topic, partition)))

    def resume_fetching(self, node: int, topic: str, partition: int) -> None:
        self.call(lambda: self._member(node).resume((topic, partition)))

    def move_leader(self, topic: str, partition: int, node: int) -> PartitionState:
        """Elect ``node`` leader of the partition (an assigned live replica)."""
        return self.call(lambda: self.controller.move_leader((topic, partition), node))

    def stop_broker(self, node: int) -> None:
        """Clean shutdown of one broker: it leaves every ISR; its port closes."""
        self._submit(self._stop_broker(node))

    def start_broker(self, node: int) -> None:
        """Start a stopped broker again on its log dir and port."""
        self._submit(self._start_broker(node))

    # --- time --------------------------------------------------------------------------------

    def advance(self, ms: int) -> None:
        """Live through ``ms`` of virtual time (module docstring)."""
        if not isinstance(self.clock, ManualClock):
            raise TypeError("advance() needs the cluster to run on a ManualClock")
        clock = self.clock

        def step() -> None:
            target = clock.now_ms() + ms
            self._settle()
            for _ in range(MAX_STEPS):
                due = self._next_due()
                if due is None or due > target:
                    break
                clock.set(max(due, clock.now_ms()))
                self._settle()
            clock.set(target)
            self._settle()

        self.call(step)

    def _next_due(self) -> int | None:
        dues = [s.broker.next_due_ms() for s in self._servers.values()]
        known = [d for d in dues if d is not None]
        return min(known) if known else None

    def _settle(self) -> None:
        """Run every broker's due work at the current instant until none is left."""
        now = self.clock.now_ms()
        for _ in range(_MAX_ROUNDS):
            ran = [name for s in list(self._servers.values()) for name in s.run_due()]
            due = self._next_due()
            if not ran or due is None or due > now:
                return

    # --- internals ---------------------------------------------------------------------------

    def _member(self, node: int) -> Member:
        member = member_of(self.broker(node))
        if member is None:
            raise RuntimeError(f"broker {node} is not a cluster member")
        return member

    def _peer(self, node: int) -> Broker | None:
        server = self._servers.get(node)
        return None if server is None else server.broker

    def _wake(self, node: int) -> None:
        server = self._servers.get(node)
        if server is not None:
            server.poke()

    async def _start_broker(self, node: int) -> None:
        settings = dict(self.overrides) | {"node.id": str(node)}
        broker = Broker(
            self.base_dir / f"broker-{node}",
            config=broker_config(overrides=settings),
            clock=self.clock,
            host=self.host,
            port=self._ports[node],
            node_id=node,
            cluster_id=self.cluster_id,
            durable=self.durable,
            own_controller=False,
        )
        server = BrokerServer(broker, self.host, self._ports[node])
        await server.start()
        self._ports[node] = server.port
        self._servers[node] = server
        member = Member(broker, self.controller, self._peer, self._wake)
        member.attach()
        if node in self.controller.alive or not self.controller.partitions:
            self.controller.register(member)
        else:
            self.controller.broker_started(member)
        cluster_reduction.broker_started(member)  # KIP-694: held deletions resume

    async def _stop_broker(self, node: int) -> None:
        server = self._servers.pop(node, None)
        if server is None:
            return
        member = member_of(server.broker)
        self.controller.broker_stopped(node)
        if member is not None:
            member.detach()
        await server.stop()

    def _submit(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self._runner.submit(coroutine)
