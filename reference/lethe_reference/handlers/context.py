"""What a handler knows about the request it serves, besides the request body.

The connection layer (:mod:`lethe_reference.protocol.connection`) builds one
:class:`RequestContext` per decoded request from the request header and the
connection it arrived on, and hands it to
:func:`lethe_reference.handlers.dispatch.dispatch` together with the typed
body. Handlers read the version from here (``ctx.api_version``) because the
body dataclass is the same class for every version; they never need the
correlation id (the connection layer puts it into the response header), but it
is kept for log lines.

``principal`` is Kafka's ``KafkaPrincipal`` string: ``User:ANONYMOUS`` on a
PLAINTEXT listener, ``User:<name>`` after SASL authentication on a
SASL_PLAINTEXT one (:mod:`lethe_reference.protocol.sasl`). ``client_host`` is
the peer's address, which ACL host fields are matched against ("" when the
connection has no peer address, e.g. in unit tests: only ``*`` hosts match).
``listener`` names the listener the connection came through (responses that
advertise addresses use its endpoint, :mod:`.endpoints`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ANONYMOUS", "RequestContext"]

#: Kafka's ``KafkaPrincipal.ANONYMOUS`` as a string.
ANONYMOUS = "User:ANONYMOUS"


@dataclass(frozen=True)
class RequestContext:
    """One request's header fields plus the connection it arrived on."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    connection_id: int
    principal: str = ANONYMOUS
    client_host: str = ""
    listener: str = "PLAINTEXT"
