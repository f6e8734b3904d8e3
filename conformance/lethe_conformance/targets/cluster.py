"""Capability ``cluster-control``: a scenario on several brokers the runner can act on.

Theory of operation
-------------------
Some KIP-107 rules only show with replication: a DeleteRecords sent to a
follower, a low watermark over several replicas, a response held until the
followers catch up. A scenario that ``requires`` ``cluster-control`` runs,
setup to cleanup, on a :class:`ClusterTarget`: a cluster of
:data:`CLUSTER_SIZE` brokers the runner can

* connect to one broker (:meth:`ClusterTarget.connect_to`),
* stop a follower fetching a partition while it stays alive
  (:meth:`ClusterTarget.pause_fetching` / :meth:`ClusterTarget.resume_fetching`),
* elect another replica leader (:meth:`ClusterTarget.move_leader`),
* stop and start one broker (:meth:`ClusterTarget.stop_broker` /
  :meth:`ClusterTarget.start_broker`),
* see whether a broker holds a request in a purgatory
  (:meth:`ClusterTarget.held_requests`), so a request sent without waiting has
  surely arrived before the next step acts.

Broker ids differ between targets, so scenarios name brokers by *role*
(:data:`ROLES`): the leader and the followers of the scenario's first topic's
partition 0 as Metadata lists them right after setup (followers in replica
order). A role keeps naming the same broker for the whole scenario, even
after the leader moved.

:class:`EmbeddedClusterTarget` is the reference implementation: an
:class:`~lethe_reference.embedded_cluster.EmbeddedCluster` of three brokers
on one virtual clock (or the system clock, for the wall paths), started per
scenario by the embedded target
(:meth:`~lethe_conformance.targets.embedded.EmbeddedTarget.clustered`). A
launched target starts three broker processes
(:meth:`~lethe_conformance.targets.launched.LaunchedTarget.clustered`). A
bootstrap target does not offer the capability: its control hook has no
actions for it, so such scenarios are not applicable there.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import Literal, Protocol

from lethe_reference.clock import ManualClock, SystemClock
from lethe_reference.embedded_cluster import EmbeddedCluster

from lethe_conformance.client.connection import DEFAULT_REQUEST_TIMEOUT, KafkaConnection
from lethe_conformance.targets.base import Capabilities, Target
from lethe_conformance.targets.profiles import ProfilesOnce

__all__ = [
    "CLUSTER_CONTROL",
    "CLUSTER_SIZE",
    "ROLES",
    "ClusterHost",
    "ClusterTarget",
    "EmbeddedClusterTarget",
]

CLUSTER_CONTROL = "cluster-control"
CLUSTER_SIZE = 3
#: How scenarios name brokers (module docstring).
ROLES = ("leader", "follower-1", "follower-2")


class ClusterTarget(Target, Protocol):
    """A target of several brokers the runner can act on (capability ``cluster-control``)."""

    def connect_to(self, node_id: int) -> KafkaConnection:
        """A new connection to broker ``node_id``."""
        ...

    def pause_fetching(self, node_id: int, topic: str, partition: int) -> None:
        """Broker ``node_id`` stops replicating the partition and stays alive."""
        ...

    def resume_fetching(self, node_id: int, topic: str, partition: int) -> None: ...

    def move_leader(self, topic: str, partition: int, node_id: int) -> None:
        """Elect ``node_id`` (an assigned live replica) leader of the partition."""
        ...

    def stop_broker(self, node_id: int) -> None:
        """Shut one broker down cleanly (it leaves every ISR)."""
        ...

    def start_broker(self, node_id: int) -> None:
        """Start a stopped broker again on its log dir and address."""
        ...

    def held_requests(self, node_id: int) -> int:
        """How many DeleteRecords requests broker ``node_id`` holds in its purgatory;
        CapabilityMissingError where the target has no view of it (a launched broker:
        the runner then watches the wire, :mod:`lethe_conformance.scenarios.ops.cluster`)."""
        ...


class ClusterHost(Target, Protocol):
    """A target that can start a cluster of its own for one scenario (embedded, launched)."""

    def clustered(
        self, overrides: Mapping[str, str] | None = None
    ) -> AbstractContextManager[ClusterTarget]:
        """:data:`CLUSTER_SIZE` started brokers of their own, same settings with
        ``overrides`` on top (a wall path's ``wall_clock.broker_configs``); closed on exit."""
        ...


class EmbeddedClusterTarget(ProfilesOnce):
    """Three reference brokers in one process on a virtual clock (module docstring)."""

    def __init__(
        self,
        *,
        overrides: Mapping[str, str],
        start_ms: int,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        clock: Literal["virtual", "wall"] = "virtual",
    ) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="lethe-cluster-"))
        self._clock: Literal["virtual", "wall"] = clock
        self._cluster = EmbeddedCluster(
            self._dir,
            CLUSTER_SIZE,
            overrides=overrides,
            clock=ManualClock(start_ms) if clock == "virtual" else SystemClock(),
        )
        self._request_timeout = request_timeout

    def __enter__(self) -> EmbeddedClusterTarget:
        self._cluster.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def name(self) -> str:
        return "embedded-cluster"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(clock=self._clock, cluster_control=True)

    def connect(self) -> KafkaConnection:
        """A connection to the first running broker (any broker answers Metadata)."""
        node = next(n for n in self._cluster.node_ids if self._cluster.running(n))
        return self.connect_to(node)

    def connect_to(self, node_id: int) -> KafkaConnection:
        return KafkaConnection.open(
            self._cluster.host, self._cluster.port(node_id), request_timeout=self._request_timeout
        )

    def advance_time(self, ms: int) -> None:
        self._cluster.advance(ms)

    def restart(self) -> None:
        raise NotImplementedError("a cluster scenario restarts single brokers (stop/start)")

    def trigger_cleaning(self) -> None:
        raise NotImplementedError("no trigger-cleaning on the cluster target")

    def pause_fetching(self, node_id: int, topic: str, partition: int) -> None:
        self._cluster.pause_fetching(node_id, topic, partition)

    def resume_fetching(self, node_id: int, topic: str, partition: int) -> None:
        self._cluster.resume_fetching(node_id, topic, partition)

    def move_leader(self, topic: str, partition: int, node_id: int) -> None:
        self._cluster.move_leader(topic, partition, node_id)

    def stop_broker(self, node_id: int) -> None:
        self._cluster.stop_broker(node_id)

    def start_broker(self, node_id: int) -> None:
        self._cluster.start_broker(node_id)

    def held_requests(self, node_id: int) -> int:
        cluster = self._cluster
        if not cluster.running(node_id):
            return 0
        return cluster.call(lambda: len(cluster.broker(node_id).purgatories.delete_records))

    def close(self) -> None:
        self._cluster.stop()
        shutil.rmtree(self._dir, ignore_errors=True)
