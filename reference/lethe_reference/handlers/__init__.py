"""Request handlers: one module per API family, a dispatch table keyed by API key.

:mod:`.dispatch` holds the table and the ``@handles`` decorator, :mod:`.context`
the :class:`~.context.RequestContext` every handler receives. Handler modules
are plain functions over the :class:`~lethe_reference.broker.Broker` state and
typed protocol dataclasses: no sockets, no asyncio, no bytes.
"""
