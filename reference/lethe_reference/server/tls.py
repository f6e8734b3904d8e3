"""TLS at the broker's edge: contexts per listener, and the handshake of one connection.

Theory of operation
-------------------
An SSL or SASL_SSL listener's connection is accepted as plain TCP (so the
connection quotas count it, as Kafka counts a channel before its handshake),
then upgraded with ``StreamWriter.start_tls``; the session above it sees only
decrypted bytes and never knows TLS is there (the protocol stays sans-IO).
Such a listener is started with :func:`start_tls_server`, whose connections
do not read until the upgrade: the client's ClientHello arrives at once, and
bytes a plain stream reader took first would be lost to the handshake.

:func:`listener_contexts` builds every TLS listener's ``ssl.SSLContext`` from
its resolved ``ssl.*`` settings (:mod:`lethe_formats.security.tls`); it runs
before any port is bound or the log directory touched, so a missing keystore,
a wrong password or an unsupported setting stops the start with a config
error naming it and nothing initialised.

:func:`handshake` runs one server handshake, bounded by
``connections.max.idle.ms`` (Kafka closes a channel idle that long, one that
never finishes its handshake included). Anything that goes wrong (a plaintext
client on a TLS port, an untrusted or missing client certificate under
``ssl.client.auth=required``, a handshake that never completes, a reset) is
logged as ``event=tls-handshake-failed`` and answered by closing the
connection, which is what a Kafka broker's client sees too (Kafka logs
"Failed authentication with <peer> (SSL handshake failed)" and closes).
On success the principal is the client certificate's (``User:<DN>``) if the
client presented a verified one, else ``User:ANONYMOUS``.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from lethe_formats.security.principal_mapping import NoMatchingRuleError
from lethe_formats.security.tls import SslConfigError, certificate_principal, server_context

from lethe_reference.protocol.listeners import ListenerConfigError, ListenerSecurity

__all__ = ["handshake", "listener_contexts", "start_tls_server"]

_log = logging.getLogger("lethe_reference.server")


def listener_contexts(listeners: Iterable[ListenerSecurity]) -> dict[str, ssl.SSLContext]:
    """Listener name -> server TLS context for each SSL/SASL_SSL listener;
    ListenerConfigError naming the listener and the setting if one is unusable."""
    contexts = {}
    for listener in listeners:
        if not listener.tls:
            continue
        try:
            contexts[listener.name] = server_context(listener.ssl_settings)
        except SslConfigError as error:
            raise ListenerConfigError(
                f"listener {listener.name}: {error} (settings are read as "
                f"listener.name.{listener.name.lower()}.ssl.* first, then ssl.*)"
            ) from None
    return contexts


async def handshake(
    writer: asyncio.StreamWriter,
    context: ssl.SSLContext,
    *,
    timeout_s: float,
    connection_id: int,
    peer: str,
    rules: str = "DEFAULT",
) -> str | None:
    """Upgrade ``writer``'s connection to TLS; the principal (the client certificate's
    DN mapped by ``rules``, ``ssl.principal.mapping.rules``), or None if the handshake
    failed or no rule maps the DN (logged; the caller closes the connection)."""
    try:
        await asyncio.wait_for(
            writer.start_tls(context, ssl_handshake_timeout=timeout_s), timeout_s
        )
    except (ssl.SSLError, ConnectionError, OSError, TimeoutError) as error:
        reason = (
            "no handshake within connections.max.idle.ms"
            if isinstance(error, TimeoutError)
            else repr(error)
        )
        _log.info(
            "event=tls-handshake-failed conn=%d peer=%s error=%s", connection_id, peer, reason
        )
        return None
    tls = writer.get_extra_info("ssl_object")
    der = tls.getpeercert(binary_form=True) if tls is not None else None
    try:
        return certificate_principal(der, rules)
    except NoMatchingRuleError as error:  # Kafka fails the connection too
        _log.info(
            "event=tls-principal-unmapped conn=%d peer=%s error=%s", connection_id, peer, error
        )
        return None


class _UnreadUntilTls(asyncio.StreamReaderProtocol):
    """A stream protocol that reads nothing until ``start_tls`` takes the transport over."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # runs before the transport starts reading, so no byte reaches the plain reader
        if isinstance(transport, asyncio.ReadTransport):
            transport.pause_reading()
        super().connection_made(transport)


async def start_tls_server(
    accept: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
    limit: int = 2**16,
    **where: Any,
) -> asyncio.Server:
    """``asyncio.start_server`` for a TLS listener (``where``: host/port or sock).

    ``limit`` is the stream reader's buffer limit, as ``asyncio.start_server`` takes it.
    """
    loop = asyncio.get_running_loop()

    def factory() -> asyncio.StreamReaderProtocol:
        reader = asyncio.StreamReader(limit=limit, loop=loop)
        return _UnreadUntilTls(reader, accept, loop=loop)

    return await loop.create_server(factory, **where)
