"""Typed decoding errors, each carrying where the fault is and what Kafka calls it.

Every error a decoder raises names the file (when known), the absolute byte
position and the field being read, so an operator reading ``lethe verify``
output can open a hex editor at the right place. Positions are absolute within
the buffer or file: decoders that work on a slice re-anchor errors with
:meth:`FormatError.at` before letting them escape.

The mapping from error class to Kafka's error code lives here and nowhere
else (``KAFKA_ERROR_CODES``); the broker uses it when a client sends a batch
that fails validation. The codes themselves are members of the one Kafka error
table, :class:`lethe_formats.protocol.error_codes.ErrorCode` (``protocol``
classes add their own entries when imported).
"""

from __future__ import annotations

from typing import Self

from lethe_formats.protocol.error_codes import ErrorCode

__all__ = [
    "KAFKA_ERROR_CODES",
    "CheckpointError",
    "ChecksumError",
    "CorruptIndexError",
    "CorruptRecordError",
    "DecompressionError",
    "FormatError",
    "InvalidRecordError",
    "TruncatedError",
    "UnsupportedCompressionError",
    "UnsupportedMagicError",
    "VarintError",
    "kafka_error_code",
    "printable",
]


def printable(text: str) -> str:
    """``text`` with every non-printable character escaped (``\\x1b``, ``\\u200b``).

    Messages quote file names and bytes read from damaged files; echoed raw, a
    control character could rewrite the operator's terminal (ESC sequences) or
    forge output lines (CR, LF). Printable characters, the space included, are
    kept as they are. A byte that was not UTF-8 in a file name (decoded by Python
    as a lone surrogate, U+DC80..U+DCFF) is shown as that byte, ``\\xNN``.
    """
    if text.isprintable():
        return text
    return "".join(_escape(char) for char in text)


def _escape(char: str) -> str:
    if char.isprintable():
        return char
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


class FormatError(Exception):
    """Bytes or text that do not follow a Kafka format.

    ``position`` is the absolute byte offset of the faulty field (or, for
    text files, the 1-based line number with ``line=True``).
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        position: int | None = None,
        field: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.position = position
        self.field = field
        self.line = line

    def at(self, *, file: str | None = None, offset: int = 0) -> Self:
        """Return this error re-anchored: ``offset`` is added to the position
        and ``file`` fills in a missing file name. Used when a decoder that saw
        only a slice hands the error to a caller that knows the whole file."""
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.args = self.args
        if self.position is not None:
            clone.position = self.position + offset
        if clone.file is None:
            clone.file = file
        return clone

    def location(self) -> str:
        """``file: byte N: field`` (parts that are unknown are left out; control
        characters escaped, see :func:`printable`)."""
        parts = []
        if self.file is not None:
            parts.append(self.file)
        if self.line is not None:
            parts.append(f"line {self.line}")
        if self.position is not None:
            parts.append(f"byte {self.position}")
        if self.field is not None:
            parts.append(self.field)
        return printable(": ".join(parts))

    def __str__(self) -> str:
        where = self.location()
        message = printable(self.message)
        return f"{where}: {message}" if where else message


class TruncatedError(FormatError):
    """The data ends inside a field or inside a length-prefixed structure."""


class CorruptRecordError(FormatError):
    """A record or batch is structurally invalid (Kafka's CorruptRecordException)."""


class ChecksumError(CorruptRecordError):
    """A stored CRC does not match the one computed over the covered bytes."""

    def __init__(self, stored: int, computed: int, **where: object) -> None:
        super().__init__(
            f"Record is corrupt (stored crc = {stored}, computed crc = {computed})",
            **where,  # type: ignore[arg-type]
        )
        self.stored = stored
        self.computed = computed


class DecompressionError(CorruptRecordError):
    """Compressed records Kafka's own reader refuses (a codec stream it cannot
    read: LZ4 dependent blocks, a bad gzip trailer, corrupt snappy or zstd...).

    Kafka wraps these in a plain ``KafkaException``, which its Produce path
    answers with UNKNOWN_SERVER_ERROR and kafka-dump-log dies on."""


class InvalidRecordError(FormatError):
    """A record that decodes but breaks a record-level rule (InvalidRecordException)."""


class VarintError(CorruptRecordError):
    """A varint/varlong longer than Kafka allows (5 or 10 bytes)."""


class UnsupportedMagicError(CorruptRecordError):
    """A magic byte other than 0, 1 or 2."""


class UnsupportedCompressionError(FormatError):
    """A compression codec id Kafka does not define, or not allowed for the magic."""


class CorruptIndexError(FormatError):
    """An offset, time or transaction index that fails Kafka's sanity checks."""


class CheckpointError(FormatError):
    """A checkpoint text file Kafka's CheckpointFile reader would reject."""


#: Kafka error codes (``org.apache.kafka.common.protocol.Errors``) reported
#: for each decoding failure when it reaches a client. Looked up by MRO so a
#: subclass inherits its parent's code.
KAFKA_ERROR_CODES: dict[type[FormatError], int] = {
    FormatError: ErrorCode.CORRUPT_MESSAGE,
    CorruptRecordError: ErrorCode.CORRUPT_MESSAGE,
    DecompressionError: ErrorCode.UNKNOWN_SERVER_ERROR,
    TruncatedError: ErrorCode.CORRUPT_MESSAGE,
    InvalidRecordError: ErrorCode.INVALID_RECORD,
    UnsupportedCompressionError: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
    CorruptIndexError: ErrorCode.KAFKA_STORAGE_ERROR,
    CheckpointError: ErrorCode.KAFKA_STORAGE_ERROR,
}


def kafka_error_code(error: FormatError) -> int:
    """The Kafka error code a broker answers with for ``error``."""
    for klass in type(error).__mro__:
        if klass in KAFKA_ERROR_CODES:
            return KAFKA_ERROR_CODES[klass]
    return ErrorCode.UNKNOWN_SERVER_ERROR
