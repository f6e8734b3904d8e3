"""The dispatch table: API key -> handler function, filled by :func:`handles`.

Theory of operation
-------------------
Each API family has one module in :mod:`lethe_reference.handlers` (``metadata``,
``topics``, ``configs``, ``partition_ops``, ...). A handler is a plain function::

    @handles(ApiKey.METADATA)
    def handle(broker: Broker, ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
        ...

It returns the typed response body, or a
:class:`~lethe_reference.purgatory.Deferred` of it when the answer has to wait
(Fetch ``max_wait_ms``, DeleteRecords). The connection layer owns the response
header and the encoding; handlers never see bytes.

:func:`load_handlers` imports every module of the package once, subpackages
included (found with ``pkgutil``, as the protocol registry finds message
modules), which runs the ``@handles`` decorators. :func:`dispatch` looks the key up and calls the
handler.

Extension APIs. ``@handles(key, enabled=fn)`` registers a handler that is
served only while ``fn(broker)`` is true (KIP-694's DeletePartitions with
``delete.topic.partition.enable``). While it is false the key is exactly an
unknown one: :func:`handled_api_keys` leaves it out, so ApiVersions does not
advertise it and the connection layer refuses it (closing the connection, as
Kafka does for a key it does not serve), and :func:`dispatch` raises
:class:`NoHandlerError`. ``handled_api_keys()`` without a broker lists only
the APIs that are always served.

Errors. A handler reports per-topic or per-partition errors inside its response,
as Kafka does. An exception that escapes a handler is Kafka's
``KafkaApis.handleError`` case: if the handler was registered with an
``error_response`` builder, that builder turns the error code into a whole-request
error response (``AbstractRequest.getErrorResponse``); a
:class:`~lethe_formats.protocol.broker_errors.KafkaError` keeps its code, any
other exception becomes UNKNOWN_SERVER_ERROR (-1). Every Kafka request has
such a builder, so every handler that can raise should register one. Without a
builder the exception propagates and the connection layer closes the
connection (logged as a broker bug).
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from lethe_formats.protocol.api_keys import api_name
from lethe_formats.protocol.broker_errors import KafkaError
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.schema import Struct

from lethe_reference.handlers.context import RequestContext
from lethe_reference.purgatory import Deferred

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "GATES",
    "HANDLERS",
    "ErrorResponseBuilder",
    "Handler",
    "HandlerResult",
    "NoHandlerError",
    "dispatch",
    "handled_api_keys",
    "handles",
    "load_handlers",
]

_log = logging.getLogger(__name__)

HandlerResult = Struct | Deferred[Any]
Handler = Callable[["Broker", RequestContext, Any], HandlerResult]
#: (request, error code, message) -> whole-request error response.
ErrorResponseBuilder = Callable[[Any, ErrorCode, str | None], Struct]
H = TypeVar("H", bound=Callable[..., Any])

HANDLERS: dict[int, Handler] = {}
ERROR_RESPONSES: dict[int, ErrorResponseBuilder] = {}
#: API key -> whether a broker serves it (extension APIs only).
GATES: dict[int, Callable[[Broker], bool]] = {}


class NoHandlerError(LookupError):
    """A request for an API key no handler serves (the connection is closed)."""

    def __init__(self, api_key: int) -> None:
        super().__init__(f"no handler for {api_name(api_key)} ({api_key})")
        self.api_key = api_key


@dataclass(frozen=True)
class _Registration:
    api_key: int
    error_response: ErrorResponseBuilder | None


def handles(
    api_key: int,
    *,
    error_response: ErrorResponseBuilder | None = None,
    enabled: Callable[[Broker], bool] | None = None,
) -> Callable[[H], H]:
    """Register the decorated function as the handler of ``api_key`` (served only
    while ``enabled(broker)`` when given; see "Extension APIs")."""
    registration = _Registration(int(api_key), error_response)
    if enabled is not None:
        GATES[registration.api_key] = enabled

    def register(fn: H) -> H:
        existing = HANDLERS.get(registration.api_key)
        if existing is not None and existing is not fn:
            raise TypeError(f"two handlers for {api_name(registration.api_key)}")
        HANDLERS[registration.api_key] = fn
        if registration.error_response is not None:
            ERROR_RESPONSES[registration.api_key] = registration.error_response
        return fn

    return register


_PACKAGE = __name__.rpartition(".")[0]
_NOT_HANDLERS = frozenset({"dispatch", "context"})


@cache
def _import_handler_modules() -> None:
    """Every module and subpackage module below the package (a family may be a package)."""
    package = importlib.import_module(_PACKAGE)
    for module in pkgutil.walk_packages(package.__path__, prefix=f"{_PACKAGE}."):
        if module.name.rpartition(".")[2] not in _NOT_HANDLERS:
            importlib.import_module(module.name)


def load_handlers() -> dict[int, Handler]:
    """Import every handler module once; returns the table."""
    _import_handler_modules()
    return HANDLERS


def handled_api_keys(broker: Broker | None = None) -> frozenset[int]:
    """The API keys ``broker`` serves (what ApiVersions advertises); without a
    broker, the keys every broker serves (no extension API)."""
    return frozenset(
        key
        for key in load_handlers()
        if key not in GATES or (broker is not None and GATES[key](broker))
    )


def dispatch(broker: Broker, ctx: RequestContext, request: Struct) -> HandlerResult:
    """Run the handler of ``ctx.api_key`` (see the module docstring for errors)."""
    handler = load_handlers().get(ctx.api_key)
    gate = GATES.get(ctx.api_key)
    if handler is None or (gate is not None and not gate(broker)):
        raise NoHandlerError(ctx.api_key)
    try:
        return handler(broker, ctx, request)
    except Exception as error:
        builder = ERROR_RESPONSES.get(ctx.api_key)
        if builder is None:
            raise
        code, message = _error_code(error)
        _log.log(
            logging.INFO if isinstance(error, KafkaError) else logging.ERROR,
            "%s v%d from %s (correlation id %d) failed: %s",
            api_name(ctx.api_key),
            ctx.api_version,
            ctx.client_id,
            ctx.correlation_id,
            error,
            exc_info=not isinstance(error, KafkaError),
        )
        return builder(request, code, message)


def _error_code(error: Exception) -> tuple[ErrorCode, str | None]:
    if isinstance(error, KafkaError):
        known = ErrorCode._value2member_map_.get(error.code)
        if isinstance(known, ErrorCode):
            return known, error.message
        return ErrorCode.UNKNOWN_SERVER_ERROR, error.message
    return ErrorCode.UNKNOWN_SERVER_ERROR, None
