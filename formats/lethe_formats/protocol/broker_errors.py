"""Kafka errors as exceptions: one class per error code, generated from the table.

Theory of operation
-------------------
Handlers report a failure by raising a :class:`KafkaError`; the layer that
writes the response turns it into ``error_code`` (and, where the message has
one, ``error_message``). The classes are *data-driven*: one subclass per
:class:`~lethe_formats.protocol.error_codes.ErrorCode`, built from the table
(name ``PolicyViolationError`` for ``POLICY_VIOLATION``), so a code and its
retriable flag and default text are written in exactly one place. Get a class
with :func:`error_class` (to raise or to catch) or an instance with
:func:`error_for_code`::

    raise error_for_code(ErrorCode.POLICY_VIOLATION, "cleanup.policy is compact")
    except error_class(ErrorCode.OFFSET_OUT_OF_RANGE): ...

A code the table does not know (a newer broker's) gets its own subclass of
:class:`UnknownKafkaError` that keeps the number, so a client decoding a
response never loses or rewrites a code (kafka-python's ``for_code`` does the
same).
"""

from __future__ import annotations

from typing import ClassVar

from lethe_formats.protocol.error_codes import ErrorCode

__all__ = ["KafkaError", "UnknownKafkaError", "error_class", "error_for_code", "raise_for_code"]


class KafkaError(Exception):
    """A failure a broker reports with a Kafka error code."""

    code: ClassVar[int] = ErrorCode.UNKNOWN_SERVER_ERROR.value
    name: ClassVar[str] = ErrorCode.UNKNOWN_SERVER_ERROR.name
    retriable: ClassVar[bool] = False
    default_message: ClassVar[str] = ErrorCode.UNKNOWN_SERVER_ERROR.message

    def __init__(self, message: str | None = None) -> None:
        self.message = message if message is not None else self.default_message
        super().__init__(self.message)

    def __str__(self) -> str:
        return f"{self.name} ({self.code}): {self.message}"


class UnknownKafkaError(KafkaError):
    """Base of the classes made for codes the table does not know."""

    retriable = False
    default_message = "Unknown error code."


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Error"


def _make(code: int, name: str, retriable: bool, message: str, base: type[KafkaError]) -> type:
    attributes = {
        "code": code,
        "name": name,
        "retriable": retriable,
        "default_message": message,
        "__doc__": f"Kafka error {code} {name}: {message}",
        "__module__": __name__,
    }
    return type(_class_name(name), (base,), attributes)


_CLASSES: dict[int, type[KafkaError]] = {
    member.value: _make(member.value, member.name, member.retriable, member.message, KafkaError)
    for member in ErrorCode
    if member is not ErrorCode.NONE
}


def error_class(code: int) -> type[KafkaError]:
    """The exception class of ``code`` (made once, and kept, for unknown codes)."""
    if code == ErrorCode.NONE:
        raise ValueError("error code 0 (NONE) is not an error")
    klass = _CLASSES.get(code)
    if klass is None:
        name = f"UNKNOWN_ERROR_CODE_{code}".replace("-", "MINUS_")
        klass = _CLASSES[code] = _make(
            code, name, False, UnknownKafkaError.default_message, UnknownKafkaError
        )
    return klass


def error_for_code(code: int, message: str | None = None) -> KafkaError:
    """An exception for ``code`` (``message`` None: the table's default text)."""
    return error_class(code)(message)


def raise_for_code(code: int, message: str | None = None) -> None:
    """Raise the exception for ``code`` unless it is 0 (NONE); for decoded responses."""
    if code != ErrorCode.NONE:
        raise error_for_code(code, message)
