"""The connection state machine as a table (h11 ``_state.py``, h2's state machine).

One connection, seen from the broker (state, input -> next state)::

    OPEN       request read             -> IN_FLIGHT
    OPEN       bad bytes                -> ERROR      (reported once; the caller closes)
    IN_FLIGHT  response sent            -> OPEN
    IN_FLIGHT  no response (acks=0)     -> OPEN
    any        peer closed / close      -> CLOSED     (absorbing)

An acks=0 Produce that failed has no response to carry the error, so Kafka
closes the connection instead (``IN_FLIGHT --close--> CLOSED``); the producer
notices and refreshes its metadata.

``IN_FLIGHT`` is Kafka's muted channel: ``SocketServer`` mutes a connection when
it hands a request to the request handlers and unmutes it when the response has
been written, so at most one request per connection is being handled and
responses leave in request order. Bytes that arrive meanwhile are buffered.

Every (state, input) pair missing from :data:`TRANSITIONS` is a broker bug (for
example sending a response when no request is in flight) and raises
:class:`LocalProtocolError`, leaving the state unchanged.
"""

from __future__ import annotations

import enum

__all__ = ["TRANSITIONS", "ConnectionState", "Input", "LocalProtocolError", "StateMachine"]


class ConnectionState(enum.Enum):
    #: Reading: the next complete frame becomes a request.
    OPEN = "open"
    #: A request is being handled; reading is muted until its response is sent.
    IN_FLIGHT = "in flight"
    #: The peer broke the protocol (or acks=0 produce failed): close, read nothing.
    ERROR = "error"
    #: Closed; absorbing.
    CLOSED = "closed"


class Input(enum.Enum):
    REQUEST = "request"
    RESPONSE = "response"
    NO_RESPONSE = "no response"
    BAD_INPUT = "bad input"
    PEER_CLOSED = "peer closed"
    CLOSE = "close"


class LocalProtocolError(RuntimeError):
    """The broker itself used the connection wrongly (a bug, never the peer's fault)."""


_S, _I = ConnectionState, Input

TRANSITIONS: dict[tuple[ConnectionState, Input], ConnectionState] = {
    (_S.OPEN, _I.REQUEST): _S.IN_FLIGHT,
    (_S.OPEN, _I.BAD_INPUT): _S.ERROR,
    (_S.OPEN, _I.PEER_CLOSED): _S.CLOSED,
    (_S.OPEN, _I.CLOSE): _S.CLOSED,
    (_S.IN_FLIGHT, _I.RESPONSE): _S.OPEN,
    (_S.IN_FLIGHT, _I.NO_RESPONSE): _S.OPEN,
    (_S.IN_FLIGHT, _I.PEER_CLOSED): _S.CLOSED,
    (_S.IN_FLIGHT, _I.CLOSE): _S.CLOSED,
    (_S.ERROR, _I.PEER_CLOSED): _S.CLOSED,
    (_S.ERROR, _I.CLOSE): _S.CLOSED,
    (_S.CLOSED, _I.PEER_CLOSED): _S.CLOSED,
    (_S.CLOSED, _I.CLOSE): _S.CLOSED,
}


class StateMachine:
    """Current state plus :meth:`process`, which follows :data:`TRANSITIONS`."""

    def __init__(self) -> None:
        self.state = ConnectionState.OPEN

    def process(self, event: Input) -> ConnectionState:
        target = TRANSITIONS.get((self.state, event))
        if target is None:
            raise LocalProtocolError(
                f"no transition for {event.value!r} in state {self.state.value}"
            )
        self.state = target
        return target
