"""The declarative message DSL: typed dataclasses whose fields carry wire metadata.

Theory of operation
-------------------
A message is written once, as a frozen slots dataclass deriving from
:class:`Struct`. Each field's default is a :func:`proto` call that records the
field's wire type and the versions it exists in (Kafka's ``versions``,
``nullableVersions``, ``tag``/``taggedVersions``, ``default``). The dataclass
*is* the typed value handed to callers; the metadata is read back through
``dataclasses.fields`` by :mod:`~lethe_formats.protocol.compiler`, which turns
(class, version, flexible) into a Construct codec. There is never a copy of a
schema per version: a version is just a filter over one field list.

:func:`message` marks a top-level class with its API key, kind and version
ranges (``valid``, ``flexible``). Nested structs (array elements, struct-typed
fields) need no decorator: they inherit the flexible flag of their message.

Every struct has ``_unknown_tagged_fields``: tagged fields a decoder did not
know, kept as (tag, raw bytes) so re-encoding reproduces the input exactly (as
Kafka's ``_unknownTaggedFields``). It must be empty in non-flexible versions.

Versions are written as Kafka writes them: ``"0+"``, ``"3-7"``, ``"5"``,
``"none"``.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeVar

__all__ = [
    "BOOL",
    "BYTES",
    "FLOAT64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "RECORDS",
    "STRING",
    "UINT16",
    "UINT32",
    "UUID",
    "VARINT",
    "VARLONG",
    "ZERO_UUID",
    "ArrayType",
    "FieldSpec",
    "FieldType",
    "MessageInfo",
    "Primitive",
    "RawTaggedField",
    "Struct",
    "StructType",
    "Versions",
    "array",
    "message",
    "message_info",
    "proto",
    "struct_fields",
]

ZERO_UUID = uuid.UUID(int=0)

S = TypeVar("S", bound="Struct")


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive version range; ``high=None`` is open-ended, ``low > high`` is empty."""

    low: int
    high: int | None

    @classmethod
    def parse(cls, text: str) -> Versions:
        """``"0+"``, ``"3-7"``, ``"5"`` or ``"none"``."""
        text = text.strip()
        if text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        low, _, high = text.partition("-")
        return cls(int(low), int(high or low))

    def __contains__(self, version: object) -> bool:
        if not isinstance(version, int):
            return False
        return self.low <= version and (self.high is None or version <= self.high)

    def is_empty(self) -> bool:
        return self.high is not None and self.low > self.high

    def __str__(self) -> str:
        if self.is_empty():
            return "none"
        if self.high is None:
            return f"{self.low}+"
        return f"{self.low}" if self.low == self.high else f"{self.low}-{self.high}"


class RawTaggedField(NamedTuple):
    """A tagged field the decoder did not know: its tag and its raw value bytes."""

    tag: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Struct:
    """Base of every message and nested struct (adds the unknown-tag store)."""

    _unknown_tagged_fields: tuple[RawTaggedField, ...] = dataclasses.field(
        default=(), kw_only=True, repr=False
    )


# --------------------------------------------------------------------------- types


class FieldType:
    """A wire type. ``kind`` names the encoding the compiler picks a codec for."""

    kind: str = ""
    #: Whether Kafka lets the type be null (strings, bytes, records, arrays).
    can_be_null: bool = False

    def default(self) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.kind


class Primitive(FieldType):
    """A fixed-form scalar (ints, bool, float64, uuid) or a string/bytes type."""

    def __init__(self, kind: str, default: Any, *, can_be_null: bool = False) -> None:
        self.kind = kind
        self._default = default
        self.can_be_null = can_be_null

    def default(self) -> Any:
        return self._default


class ArrayType(FieldType):
    """``[]element``; the element is a primitive or a :class:`Struct` subclass."""

    kind = "array"
    can_be_null = True

    def __init__(self, element: FieldType | type[Struct]) -> None:
        self.element = as_type(element)

    def default(self) -> Any:
        return ()

    def __repr__(self) -> str:
        return f"[]{self.element!r}"


class StructType(FieldType):
    """A nested struct, as an array element or a single struct-typed field."""

    kind = "struct"
    #: Kafka allows ``nullableVersions`` on a struct field (a marker byte first).
    can_be_null = True

    def __init__(self, cls: type[Struct]) -> None:
        self.cls = cls

    def default(self) -> Any:
        return self.cls()

    def __repr__(self) -> str:
        return self.cls.__name__


INT8 = Primitive("int8", 0)
INT16 = Primitive("int16", 0)
INT32 = Primitive("int32", 0)
INT64 = Primitive("int64", 0)
UINT16 = Primitive("uint16", 0)
UINT32 = Primitive("uint32", 0)
VARINT = Primitive("varint", 0)
VARLONG = Primitive("varlong", 0)
FLOAT64 = Primitive("float64", 0.0)
BOOL = Primitive("bool", False)
UUID = Primitive("uuid", ZERO_UUID)
STRING = Primitive("string", "", can_be_null=True)
BYTES = Primitive("bytes", b"", can_be_null=True)
#: Raw record-batch bytes (Produce/Fetch); decoded by ``lethe_formats.records``.
RECORDS = Primitive("records", None, can_be_null=True)


def as_type(value: FieldType | type[Struct]) -> FieldType:
    if isinstance(value, FieldType):
        return value
    if isinstance(value, type) and issubclass(value, Struct):
        return StructType(value)
    raise TypeError(f"not a wire type: {value!r}")


def array(element: FieldType | type[Struct]) -> ArrayType:
    """``[]element``: an array of a primitive type or of a nested struct."""
    return ArrayType(element)


# -------------------------------------------------------------------------- fields


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """Wire metadata of one field (the name comes from the dataclass field)."""

    type: FieldType
    versions: Versions
    nullable: Versions
    tag: int | None
    tagged: Versions
    flexible: Versions | None
    ignorable: bool
    name: str = ""

    def present(self, version: int, flexible: bool) -> bool:
        """Does the field exist on the wire in ``version``?"""
        if version not in self.versions:
            return False
        return not self.is_tagged(version) or flexible

    def is_tagged(self, version: int) -> bool:
        return self.tag is not None and version in self.tagged


_MISSING: Any = object()
_META = "lethe_protocol"


def proto(
    type_: FieldType | type[Struct],
    versions: str,
    *,
    nullable: str = "none",
    tag: int | None = None,
    tagged: str | None = None,
    default: Any = _MISSING,
    ignorable: bool = False,
    flexible: str | None = None,
) -> Any:
    """Declare a field: its wire type and the versions it exists in.

    ``nullable``: versions in which null (``None``) may be sent. ``tag``: the
    field is a tagged field in ``tagged`` versions (default: ``versions``),
    written only when it differs from its default. ``default``: the value when
    the field is absent (Kafka's ``"default"``; otherwise 0, ``""``, ``b""``,
    false, empty tuple, zero UUID, or the nested struct's defaults).
    ``ignorable``: a non-default value in a version without the field is
    dropped instead of raising (Kafka's ``"ignorable": true``). ``flexible``:
    per-field override of the message's flexible versions (``"none"`` keeps
    the classic int16 string in request header v2).
    """
    wire = as_type(type_)
    spec = FieldSpec(
        type=wire,
        versions=Versions.parse(versions),
        nullable=Versions.parse(nullable),
        tag=tag,
        tagged=Versions.parse(tagged if tagged is not None else versions),
        flexible=Versions.parse(flexible) if flexible is not None else None,
        ignorable=ignorable,
    )
    metadata = {_META: spec}
    if default is not _MISSING:
        return dataclasses.field(default=default, metadata=metadata)
    if isinstance(wire, StructType):
        return dataclasses.field(default_factory=wire.cls, metadata=metadata)
    return dataclasses.field(default=wire.default(), metadata=metadata)


_FIELDS: dict[type[Struct], tuple[tuple[FieldSpec, Any], ...]] = {}


def struct_fields(cls: type[Struct]) -> tuple[tuple[FieldSpec, Any], ...]:
    """``(spec, default)`` of every wire field of ``cls``, in declaration order."""
    cached = _FIELDS.get(cls)
    if cached is None:
        cached = _FIELDS[cls] = _collect_fields(cls)
    return cached


def _collect_fields(cls: type[Struct]) -> tuple[tuple[FieldSpec, Any], ...]:
    out: list[tuple[FieldSpec, Any]] = []
    for item in dataclasses.fields(cls):
        spec = item.metadata.get(_META)
        if spec is None:
            if item.name == "_unknown_tagged_fields":
                continue
            raise TypeError(f"{cls.__name__}.{item.name} has no proto() declaration")
        if item.default_factory is not dataclasses.MISSING:
            default = item.default_factory()
        else:
            default = item.default
        out.append((dataclasses.replace(spec, name=item.name), default))
    return tuple(out)


# ------------------------------------------------------------------------ messages


@dataclass(frozen=True, slots=True)
class MessageInfo:
    """What :func:`message` attaches to a top-level class."""

    api_key: int | None
    kind: Literal["request", "response", "header"]
    valid: Versions
    flexible: Versions
    name: str


def message(
    *,
    api_key: int | None,
    kind: Literal["request", "response", "header"],
    valid: str,
    flexible: str,
) -> Callable[[type[S]], type[S]]:
    """Mark ``cls`` as a top-level message (apply above ``@dataclass``)."""

    def apply(cls: type[S]) -> type[S]:
        info = MessageInfo(
            api_key, kind, Versions.parse(valid), Versions.parse(flexible), cls.__name__
        )
        cls.__lethe_message__ = info  # type: ignore[attr-defined]
        MESSAGES.append(cls)
        return cls

    return apply


#: Every class decorated with :func:`message`, in import order.
MESSAGES: list[type[Struct]] = []


def message_info(cls: type[Struct]) -> MessageInfo:
    """The :class:`MessageInfo` of a top-level message class."""
    info = getattr(cls, "__lethe_message__", None)
    if not isinstance(info, MessageInfo):
        raise TypeError(f"{cls.__name__} is not decorated with @message")
    return info
