"""Which address a response advertises: the one of the listener the request came in on.

Kafka answers Metadata, DescribeCluster and FindCoordinator with each broker's
endpoint *for the listener of the request* (``metadataCache.getAliveBrokerNodes
(request.context.listenerName)``), so a client that bootstrapped on the SASL
port keeps talking SASL. The server records every extra listener's advertised
``(host, port)`` in ``broker.extensions`` (:data:`EXTENSION_KEY`, by listener
name); the main PLAINTEXT listener is ``broker.host`` / ``broker.port``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_reference.handlers.context import RequestContext

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["EXTENSION_KEY", "advertised_endpoint"]

EXTENSION_KEY = "listener_endpoints"


def advertised_endpoint(broker: Broker, ctx: RequestContext) -> tuple[str, int]:
    """``(host, port)`` of this broker on the request's listener."""
    endpoints: dict[str, tuple[str, int]] = broker.extensions.get(EXTENSION_KEY, {})
    return endpoints.get(ctx.listener, (broker.host, broker.port))
