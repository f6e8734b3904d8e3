"""Connection and request-memory limits as Kafka's ``SocketServer`` applies them (sans-IO).

Theory of operation
-------------------
Kafka bounds what clients can make a broker hold with four settings, all read
from the broker's config at the moment they are checked (they are dynamic in
Kafka, and a swapped config applies to the next connection or read):

``max.connections`` (Int.MaxValue)
    broker-wide. When it is reached Kafka's acceptor *waits* for a slot
    (``ConnectionQuotas.waitForConnectionSlot``): new connections stay in the
    listen backlog, connected but unanswered, until another one closes.
    :meth:`ConnectionQuotas.admit` says :attr:`Admission.WAIT`.
``max.connections.per.ip`` (Int.MaxValue) and ``max.connections.per.ip.overrides`` ("")
    per client address. A connection beyond it is accepted and closed at once
    (``TooManyConnectionsException``, logged as "Rejected connection from IP,
    address already has the configured maximum of N connections.");
    :attr:`Admission.REJECT`. The overrides are ``host:count`` pairs separated
    by commas (the last ``:`` splits, so IPv6 literals work); lethe matches
    them against the peer's address text, so give addresses, not host names.
``queued.max.request.bytes`` (-1: unbounded)
    the memory for received requests. Kafka allocates a request's buffer from a
    pool of that size and, when the pool is empty, stops reading from the
    sockets until handled requests give memory back (a non-strict pool: the
    read that empties it may overshoot). :func:`reading_allowed` is that test
    over the bytes the connections hold unhandled.

Besides, a connection whose request is parked (a Fetch waiting, a large
CreatePartitions) is muted, as Kafka mutes its channel: nothing more is read
from it until the response is sent, so a pipelining client cannot make the
broker buffer without bound (:meth:`~.session.BrokerSession.wants_data`).

Not modelled: per-listener ``listener.name.X.max.connections``, the protected
inter-broker listener, ``max.connection.creation.rate``, and closing the least
recently used connections when a dynamic change lowers ``max.connections``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from lethe_reference.config import BrokerConfig

__all__ = ["Admission", "ConnectionQuotas", "parse_ip_overrides", "reading_allowed"]


class Admission(enum.Enum):
    ACCEPT = "accept"
    WAIT = "wait"  # broker-wide limit: try again once a connection closes
    REJECT = "reject"  # per-address limit: close the new connection at once


def parse_ip_overrides(text: str) -> dict[str, int]:
    """``max.connections.per.ip.overrides``: ``host:count,...`` (last ``:`` splits)."""
    overrides: dict[str, int] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        host, sep, count = item.rpartition(":")
        if not sep or not count.strip().lstrip("-").isdigit():
            raise ValueError(f"invalid max.connections.per.ip.overrides entry {item!r}")
        overrides[host.strip().strip("[]")] = int(count)
    return overrides


class ConnectionQuotas:
    """Open connections per address and in total, against the current config."""

    def __init__(self, config: Callable[[], BrokerConfig]) -> None:
        self._config = config
        self.counts: dict[str, int] = {}
        self.total = 0

    def limit_for(self, address: str) -> int:
        config = self._config()
        try:
            overrides = parse_ip_overrides(config.get_str("max.connections.per.ip.overrides") or "")
        except ValueError:
            overrides = {}  # a malformed list: the default limit for everyone
        return overrides.get(address, config.get_int("max.connections.per.ip"))

    def slot_available(self) -> bool:
        return self.total < self._config().get_int("max.connections")

    def admit(self, address: str) -> Admission:
        """Count a new connection from ``address`` if it may be served."""
        if not self.slot_available():
            return Admission.WAIT
        count = self.counts.get(address, 0)
        if count >= self.limit_for(address):
            return Admission.REJECT
        self.counts[address] = count + 1
        self.total += 1
        return Admission.ACCEPT

    def release(self, address: str) -> None:
        """An admitted connection from ``address`` closed."""
        count = self.counts.get(address, 0) - 1
        if count > 0:
            self.counts[address] = count
        else:
            self.counts.pop(address, None)
        self.total = max(0, self.total - 1)


def reading_allowed(config: BrokerConfig, queued_bytes: int) -> bool:
    """Whether the sockets may be read with ``queued_bytes`` received and unhandled."""
    limit = config.get_int("queued.max.request.bytes")
    return limit <= 0 or queued_bytes < limit
