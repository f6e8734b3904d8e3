"""Typed errors of the protocol layer: bad frames, bad message bytes, unknown APIs.

Two families meet here and must not be confused:

* **Decoding faults** (:class:`MalformedMessageError`, :class:`FrameTooLargeError`,
  plus :class:`~lethe_formats.errors.TruncatedError` and
  :class:`~lethe_formats.errors.VarintError` reused from the record layer) are
  :class:`~lethe_formats.errors.FormatError` subclasses: they name the field and
  the absolute byte position inside the buffer that was decoded. A broker that
  meets one while parsing a request does what Kafka does with an unparsable
  request: it closes the connection (``InvalidRequestException``).
* **Lookup and version faults** (:class:`UnknownApiKeyError`,
  :class:`UnsupportedVersionError`) say which part of ``(api_key, version)``
  was not found, like etl-parser's GuidNotFound / VersionNotFound. Encoding a
  field that is set to a non-default value in a version that lacks it is also an
  :class:`UnsupportedVersionError`: Kafka's generated ``write()`` throws
  ``UnsupportedVersionException`` in that case, and silently dropping the value
  would hide a handler bug.

Kafka error codes for these live in ``error_codes`` (the one table); this
module adds its classes to ``lethe_formats.errors.KAFKA_ERROR_CODES`` (the one
class-to-code mapping) when imported: UNSUPPORTED_VERSION for version faults,
INVALID_REQUEST for the rest (a broker closes the connection on those anyway).
"""

from __future__ import annotations

from lethe_formats.errors import KAFKA_ERROR_CODES, FormatError
from lethe_formats.protocol.error_codes import ErrorCode

__all__ = [
    "FrameTooLargeError",
    "MalformedMessageError",
    "ProtocolError",
    "UnknownApiKeyError",
    "UnsupportedVersionError",
]


class ProtocolError(FormatError):
    """Base of the errors raised by ``lethe_formats.protocol``."""


class MalformedMessageError(ProtocolError):
    """Message bytes that break the wire rules: a negative length other than -1,
    null in a non-nullable field, a string over 32767 bytes, a tagged field whose
    declared size disagrees with its content, bytes left after the message."""


class FrameTooLargeError(ProtocolError):
    """A size prefix above the configured maximum (Kafka's
    ``InvalidReceiveException``: "Invalid receive (size = N larger than M)").
    Raised before any buffer of that size is allocated."""

    def __init__(self, size: int, maximum: int, *, position: int | None = None) -> None:
        super().__init__(
            f"Invalid receive (size = {size} larger than {maximum})",
            position=position,
            field="size",
        )
        self.size = size
        self.maximum = maximum


class UnknownApiKeyError(ProtocolError):
    """An API key no message is defined for."""

    def __init__(self, api_key: int) -> None:
        super().__init__(f"unknown API key {api_key}", field="api_key")
        self.api_key = api_key


class UnsupportedVersionError(ProtocolError):
    """A known API at a version outside its range, or a value that the chosen
    version cannot carry (Kafka's ``UnsupportedVersionException``)."""

    def __init__(
        self,
        message: str,
        *,
        api_key: int | None = None,
        version: int | None = None,
        field: str | None = None,
        position: int | None = None,
    ) -> None:
        super().__init__(message, field=field, position=position)
        self.api_key = api_key
        self.version = version


KAFKA_ERROR_CODES.update(
    {
        ProtocolError: ErrorCode.INVALID_REQUEST,
        MalformedMessageError: ErrorCode.INVALID_REQUEST,
        FrameTooLargeError: ErrorCode.INVALID_REQUEST,
        UnknownApiKeyError: ErrorCode.INVALID_REQUEST,
        UnsupportedVersionError: ErrorCode.UNSUPPORTED_VERSION,
    }
)
