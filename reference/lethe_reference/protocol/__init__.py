"""Sans-IO Kafka connection for the broker side: bytes in, events out, responses to bytes.

``state`` holds the per-connection transition table, ``events`` the values
:meth:`~.connection.BrokerConnection.next_event` returns, ``connection`` the
one stateful object. No sockets and no asyncio here (see ``lethe_reference.server``).
"""

from lethe_reference.protocol.connection import BrokerConnection, ResponseEncodingError
from lethe_reference.protocol.events import (
    NEED_DATA,
    PAUSED,
    ConnectionClosed,
    Event,
    ProtocolError,
    RequestReceived,
)
from lethe_reference.protocol.state import ConnectionState, LocalProtocolError

__all__ = [
    "NEED_DATA",
    "PAUSED",
    "BrokerConnection",
    "ConnectionClosed",
    "ConnectionState",
    "Event",
    "LocalProtocolError",
    "ProtocolError",
    "RequestReceived",
    "ResponseEncodingError",
]
