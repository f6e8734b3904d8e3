"""A connection to a whole cluster reached by address: each request goes where Kafka's
clients send it.

Theory of operation
-------------------
:class:`RoutedConnection` is the connection to the first bootstrap address that
answers (``bootstrap.servers``: the rest are tried in order only if it does not),
and keeps one more connection per broker it had to reach, opened lazily at the
address Metadata advertises, with the same credentials. Every typed request
(:meth:`request`) is routed by :mod:`lethe_conformance.client.routing`: first the
view learns what it lacks (Metadata for the request's topics, FindCoordinator for
its group, FindCoordinator key type 1 for its transactional id, through the bootstrap
connection), then each part goes to its broker
and the answers are merged. Raw requests (:meth:`request_raw`), version
negotiation and everything not about a partition or a group use the bootstrap
connection, as before.

A stale answer (:func:`~lethe_conformance.client.routing.stale`: the leader or
coordinator moved) makes the connection forget that part, ask the cluster again
and resend the part when, and only when, its destination changed, at most
:data:`FOLLOW_LIMIT` times. Anything else a broker answers is returned unchanged:
judging is the runner's job, and a step that still gets a retriable answer is
retried by the runner within its bound (``scenarios/readiness.py``).

On a single broker nothing changes: every destination is that broker.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Sequence

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages.find_coordinator import (
    KEY_TYPE_GROUP,
    KEY_TYPE_TRANSACTION,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
)
from lethe_formats.protocol.schema import Struct, message_info

from lethe_conformance.client import routing
from lethe_conformance.client.connection import (
    DEFAULT_REQUEST_TIMEOUT,
    KafkaConnection,
    PlainCredentials,
)
from lethe_conformance.client.errors import ClientError, TargetUnreachableError

__all__ = ["FOLLOW_LIMIT", "RoutedConnection"]

#: Times one part of a request follows a moved leader or coordinator.
FOLLOW_LIMIT = 3
_FIND_COORDINATOR_BATCH_FROM = 4


class RoutedConnection(KafkaConnection):
    """A bootstrap connection that routes typed requests (module docstring)."""

    def __init__(self, sock: socket.socket, target: str, request_timeout: float) -> None:
        super().__init__(sock, target, request_timeout)
        self.view = routing.ClusterView()
        self._sasl: PlainCredentials | None = None
        self._tls: ssl.SSLContext | None = None
        self._nodes: dict[int, KafkaConnection] = {}

    @classmethod
    def open_first(
        cls,
        addresses: Sequence[tuple[str, int]],
        *,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        sasl: PlainCredentials | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> RoutedConnection:
        """A connection through the first of ``addresses`` that answers."""
        failures: list[str] = []
        for host, port in addresses:
            try:
                conn = cls.open(host, port, request_timeout=request_timeout, sasl=sasl, tls=tls)
            except TargetUnreachableError as error:
                failures.append(str(error))
                continue
            assert isinstance(conn, RoutedConnection)
            conn._sasl, conn._tls = sasl, tls
            return conn
        listed = ",".join(f"{host}:{port}" for host, port in addresses)
        raise TargetUnreachableError(listed, None, "; ".join(failures) or "no address given")

    def close(self) -> None:
        for node in self._nodes.values():
            node.close()
        self._nodes.clear()
        super().close()

    def request(
        self, body: Struct, *, version: int | None = None, timeout: float | None = None
    ) -> Struct:
        if not _routable(body):
            return super().request(body, version=version, timeout=timeout)
        api_key = message_info(type(body)).api_key
        assert api_key is not None
        chosen = self.version_for(api_key) if version is None else version
        self._learn(body)
        answers = [
            self._follow(node, part, chosen, timeout)
            for node, part in routing.split(body, self.view)
        ]
        return routing.merge(body, answers)

    # --- internals --------------------------------------------------------------------------

    def _follow(
        self, node: int | None, part: Struct, version: int, timeout: float | None
    ) -> Struct:
        answer = self._send(node, part, version, timeout)
        for _ in range(FOLLOW_LIMIT):
            if not routing.stale(answer):
                return answer
            self._forget(part)
            self._learn(part)
            moved = routing.split(part, self.view)
            if len(moved) != 1 or moved[0][0] == node:
                return answer  # still there, or now spread: the answer stands
            node = moved[0][0]
            answer = self._send(node, part, version, timeout)
        return answer

    def _send(self, node: int | None, body: Struct, version: int, timeout: float | None) -> Struct:
        if node is None:
            return super().request(body, version=version, timeout=timeout)
        conn = self._node(node)
        try:
            return conn.request(body, version=version, timeout=timeout)
        except ClientError:
            self._nodes.pop(node, None)
            self.view = routing.ClusterView()
            raise

    def _node(self, node: int) -> KafkaConnection:
        found = self._nodes.get(node)
        if found is None:
            host, port = self.view.brokers[node]
            found = self._nodes[node] = KafkaConnection.open(
                host, port, request_timeout=self.request_timeout, sasl=self._sasl, tls=self._tls
            )
        return found

    def _learn(self, body: Struct) -> None:
        wanted = routing.needs(body, self.view)
        if wanted.topics:
            asked = tuple(MetadataRequestTopic(name=t) for t in wanted.topics)
            request = MetadataRequest(topics=asked, allow_auto_topic_creation=False)
            self.view.learn_metadata(super().call(request, MetadataResponse))
        if wanted.group is not None:
            self.view.learn_coordinator(wanted.group, self._find(wanted.group))
        if wanted.transactional_id is not None:
            found = self._find(wanted.transactional_id, KEY_TYPE_TRANSACTION)
            self.view.learn_coordinator(wanted.transactional_id, found, transaction=True)
        coordinator = wanted.group is not None or wanted.transactional_id is not None
        # every address: a broker config, ListTransactions, a coordinator (FindCoordinator
        # names one broker; a view of one broker would send everything to the bootstrap)
        if wanted.brokers or len(self.view.brokers) <= (1 if coordinator else 0):
            request = MetadataRequest(topics=(), allow_auto_topic_creation=False)
            self.view.learn_metadata(super().call(request, MetadataResponse))

    def _find(self, key: str, key_type: int = KEY_TYPE_GROUP) -> FindCoordinatorResponse:
        chosen = self.version_for(ApiKey.FIND_COORDINATOR)
        if chosen >= _FIND_COORDINATOR_BATCH_FROM:
            request = FindCoordinatorRequest(key_type=key_type, coordinator_keys=(key,))
        else:
            request = FindCoordinatorRequest(key=key, key_type=key_type)
        return super().call(request, FindCoordinatorResponse, version=chosen)

    def _forget(self, part: Struct) -> None:
        group = routing.group_of(part)
        if group is not None:
            self.view.forget_group(group)
        transactional_id = routing.transaction_of(part)
        if transactional_id is not None:
            self.view.forget_transaction(transactional_id)
        self.view.forget_topics(self.view.topics)


def _routable(body: Struct) -> bool:
    return type(body) in routing.ROUTED
