"""A declarative table per message, compiled to Construct per version.

Theory of operation
-------------------
Kafka describes each coordinator record with a field list: every field has a
type, the versions it exists in, the versions it may be null in and, for
flexible versions, an optional tag. lethe writes the same facts as
:class:`Field` rows of a :class:`StructSpec` (one per message or nested
struct) and :func:`compile_struct` turns a spec into a Construct ``Struct``
for one version, so there is one definition per message and never a copy per
version. The compiled struct is wrapped in :class:`DataclassAdapter`: callers
get the message's frozen dataclass, never a ``Container``.

A top-level message (:func:`message_schema`) is ``version int16`` followed by
the body of that version, chosen by a ``Switch``::

    0       2
    +-------+------------------------------------------+
    |version| fields of that version [+ tagged fields] |
    +-------+------------------------------------------+

Fields absent from a version take the dataclass default when decoding and are
dropped when encoding (all such fields are "ignorable" in Kafka's specs). A
flexible struct's dataclass has ``unknown_tags``: tags this table does not
name, kept raw so that the record re-encodes to identical bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING, Any

from construct import Adapter, Construct, Flag, Struct, Switch, this

from lethe_formats.coordinator._fields import (
    KArray,
    KBytes,
    KString,
    NullableStruct,
    TaggedFields,
    Uuid,
)
from lethe_formats.errors import CorruptRecordError, FormatError
from lethe_formats.primitives import ExpectEnd, FixedInt, Int8, Int16, Int32, Int64

__all__ = [
    "ALL",
    "NEVER",
    "ArrayOf",
    "DataclassAdapter",
    "Field",
    "MessageSpec",
    "Reject",
    "StructSpec",
    "UnknownRecordTypeError",
    "UnsupportedVersionError",
    "Versions",
    "compile_struct",
    "fields_at",
    "message_schema",
    "only",
    "present",
    "since",
    "struct_spec",
    "version_cases",
]

if TYPE_CHECKING:
    _AnyAdapter = Adapter[Any, Any, Any, Any]
    _AnyConstruct = Construct[Any, Any]
else:
    _AnyAdapter = Adapter
    _AnyConstruct = Construct

MAX_VERSION = 0x7FFF


class UnknownRecordTypeError(FormatError):
    """A key version (record type) Kafka 4.0's group coordinator does not define
    among those decoded here; Kafka's loader skips such records with a warning."""


class UnsupportedVersionError(FormatError):
    """A value version outside the message's valid versions."""


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive version range; ``Versions(3)`` is Kafka's ``"3+"``."""

    low: int
    high: int = MAX_VERSION

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    def each(self) -> range:
        return range(self.low, self.high + 1)


ALL = Versions(0)
NEVER = Versions(1, 0)


def since(version: int) -> Versions:
    """Kafka's ``"N+"``."""
    return Versions(version)


def only(version: int) -> Versions:
    """Kafka's ``"N"``."""
    return Versions(version, version)


@dataclass(frozen=True, slots=True)
class ArrayOf:
    """An array type; ``element`` is a scalar name or a nested StructSpec."""

    element: Kind


@dataclass(frozen=True, slots=True)
class Field:
    """One row of a message table: name (the dataclass attribute), type, versions."""

    name: str
    kind: Kind
    versions: Versions = ALL
    nullable: Versions = NEVER
    tag: int | None = None
    #: a tagged field written even when null (see ``TaggedFields``)
    write_null: bool = False


_REGISTRY: dict[type[Any], StructSpec] = {}


@dataclass(frozen=True, slots=True)
class StructSpec:
    """The field table of one message or nested struct, and its dataclass."""

    cls: type[Any]
    fields: tuple[Field, ...]

    def __post_init__(self) -> None:
        _REGISTRY[self.cls] = self


Kind = str | ArrayOf | StructSpec


@dataclass(frozen=True, slots=True)
class MessageSpec:
    """A top-level message: its table, valid versions and flexible versions."""

    name: str
    struct: StructSpec
    versions: Versions
    flexible: Versions = NEVER

    def __post_init__(self) -> None:
        if self.versions.high == MAX_VERSION:
            raise ValueError(f"{self.name}: a message needs a finite version range")


_SCALARS: dict[str, Construct[Any, Any]] = {
    "int8": Int8,
    "int16": Int16,
    "int32": Int32,
    "int64": Int64,
    "uint16": FixedInt(">H"),
    "bool": Flag,  # Kafka reads any non-zero byte as true
}


def struct_spec(cls: type[Any]) -> StructSpec:
    """The field table of a message or nested struct dataclass (renderers walk it)."""
    return _REGISTRY[cls]


def present(spec_field: Field, version: int, flexible: bool) -> bool:
    """Whether ``spec_field`` exists in ``version`` (tagged fields only when flexible)."""
    return _present(spec_field, version, flexible)


def _present(spec_field: Field, version: int, flexible: bool) -> bool:
    return version in spec_field.versions and (spec_field.tag is None or flexible)


def fields_at(cls: type[Any], version: int, flexible: bool) -> tuple[str, ...]:
    """Names of the fields ``cls`` (a message or nested struct) has in ``version``."""
    spec = _REGISTRY[cls]
    return tuple(f.name for f in spec.fields if _present(f, version, flexible))


def _construct(
    kind: Kind, version: int, flexible: bool, nullable: bool, tagged: bool = False
) -> Construct[Any, Any]:
    if isinstance(kind, ArrayOf):
        element = _construct(kind.element, version, flexible, False)
        return KArray(element, flexible=flexible, nullable=nullable)
    if isinstance(kind, StructSpec):
        struct = compile_struct(kind, version, flexible)
        return NullableStruct(struct, tagged=tagged) if nullable else struct
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "string":
        return KString(flexible=flexible, nullable=nullable)
    if kind == "bytes":
        return KBytes(flexible=flexible, nullable=nullable)
    if kind == "uuid":
        return Uuid()
    raise ValueError(f"unknown field type {kind!r}")


class DataclassAdapter(_AnyAdapter):
    """Container <-> the spec's frozen dataclass, tagged fields included."""

    def __init__(
        self,
        subcon: Construct[Any, Any],
        spec: StructSpec,
        regular: list[str],
        tagged: list[str] | None,
    ) -> None:
        super().__init__(subcon)
        self.spec = spec
        self.regular = regular
        self.tagged = tagged

    def _decode(self, obj: Any, context: Any, path: str) -> Any:
        values = {name: obj[name] for name in self.regular}
        if self.tagged is not None:
            values.update(obj["_tagged"]["known"])
            values["unknown_tags"] = obj["_tagged"]["unknown"]
        return self.spec.cls(**values)

    def _encode(self, obj: Any, context: Any, path: str) -> dict[str, Any]:
        values = {name: getattr(obj, name) for name in self.regular}
        if self.tagged is not None:
            known = {name: getattr(obj, name) for name in self.tagged}
            values["_tagged"] = {"known": known, "unknown": getattr(obj, "unknown_tags", ())}
        return values


def compile_struct(spec: StructSpec, version: int, flexible: bool) -> Construct[Any, Any]:
    """The Construct of ``spec`` at ``version`` (flexible or classic encoding)."""
    present = [f for f in spec.fields if _present(f, version, flexible)]
    regular = [f for f in present if f.tag is None]
    parts: list[Any] = [
        f.name / _construct(f.kind, version, flexible, version in f.nullable) for f in regular
    ]
    tagged: list[str] | None = None
    if flexible:
        known = {
            f.tag: (
                f.name,
                _construct(f.kind, version, True, version in f.nullable, True),
                f.write_null,
            )
            for f in present
            if f.tag is not None
        }
        parts.append("_tagged" / TaggedFields(known))
        tagged = [name for name, _, _ in known.values()]
    return DataclassAdapter(Struct(*parts), spec, [f.name for f in regular], tagged)


class Reject(_AnyConstruct):
    """Parsing fails with ``error``: the Switch default for undefined versions."""

    def __init__(self, error: type[FormatError], message: Callable[[Any], str]) -> None:
        super().__init__()
        self.error = error
        self.message = message

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> Any:
        raise self.error(self.message(context), position=stream.tell() - 2, field="version")

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        raise ValueError(self.message(context))


class _VersionedAdapter(_AnyAdapter):
    """``{version, body}`` <-> the body dataclass with its ``version`` field set."""

    def _decode(self, obj: Any, context: Any, path: str) -> Any:
        return replace(obj["body"], version=obj["version"])

    def _encode(self, obj: Any, context: Any, path: str) -> dict[str, Any]:
        return {"version": obj.version, "body": obj}


def message_schema(
    cases: dict[int, Construct[Any, Any]],
    default: Construct[Any, Any],
    *,
    strict_end: bool = True,
) -> Construct[Any, Any]:
    """``version int16`` + the case for that version (+ nothing after, if strict).

    ``default`` handles versions without a case: a :class:`Reject`, or a layout.
    """
    parts: list[Any] = ["version" / Int16, "body" / Switch(this.version, cases, default=default)]
    if strict_end:
        parts.append("_end" / ExpectEnd(CorruptRecordError, "bytes left after the message"))
    return _VersionedAdapter(Struct(*parts))


def version_cases(spec: MessageSpec) -> dict[int, Construct[Any, Any]]:
    """One compiled body per valid version of ``spec``."""
    return {v: compile_struct(spec.struct, v, v in spec.flexible) for v in spec.versions.each()}
