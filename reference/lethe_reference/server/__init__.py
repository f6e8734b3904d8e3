"""The asyncio edge of the reference broker: the only package that imports asyncio.

``app`` serves a :class:`~lethe_reference.broker.Broker` over TCP
(:class:`~.app.BrokerServer`); ``main`` runs it in the foreground with signal
handling (``lethe broker``); ``defaults`` holds the quickstart static config.
``output`` is a connection's outgoing queue (one write per read, ``sendfile`` when
asked), ``socket_buffers`` Kafka's socket buffer sizes, ``tls`` the TLS edge and
``held_ports`` listening sockets kept across restarts.
"""

from lethe_reference.server.app import BrokerServer
from lethe_reference.server.defaults import QUICKSTART_PROPERTIES, broker_config
from lethe_reference.server.main import configure_logging, parse_listen, run_broker

__all__ = [
    "QUICKSTART_PROPERTIES",
    "BrokerServer",
    "broker_config",
    "configure_logging",
    "parse_listen",
    "run_broker",
]
