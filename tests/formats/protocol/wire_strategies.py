"""Hypothesis strategies derived from the DSL's field specs.

``message_values(cls, version)`` draws any value of a message class that is
valid at ``version``: fields present in the version get random values of their
wire type (None where the version allows null), absent fields keep their
default, and flexible versions get random unknown tagged fields (tags from 1000
up, ascending, so they never collide with known tags). encode -> decode must
return the drawn value unchanged.
"""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import strategies as st
from lethe_formats.protocol.compiler import is_flexible
from lethe_formats.protocol.headers import RequestHeader, ResponseHeader
from lethe_formats.protocol.registry import apis
from lethe_formats.protocol.schema import (
    ArrayType,
    FieldSpec,
    FieldType,
    RawTaggedField,
    Struct,
    StructType,
    struct_fields,
)

__all__ = ["every_message_version", "message_values", "struct_values"]

_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "varint": 32, "varlong": 64}

_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)


def _type_values(wire: FieldType, version: int, flexible: bool) -> st.SearchStrategy[Any]:
    kind = wire.kind
    if kind in _INT_BITS:
        bits = _INT_BITS[kind]
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    simple: dict[str, st.SearchStrategy[Any]] = {
        "uint16": st.integers(0, 0xFFFF),
        "uint32": st.integers(0, 0xFFFFFFFF),
        "float64": st.floats(allow_nan=False),
        "bool": st.booleans(),
        "uuid": st.binary(min_size=16, max_size=16).map(lambda b: uuid.UUID(bytes=b)),
        "string": _TEXT,
        "bytes": st.binary(max_size=12),
        "records": st.binary(max_size=24),
    }
    if kind in simple:
        return simple[kind]
    if isinstance(wire, ArrayType):
        element = _type_values(wire.element, version, flexible)
        return st.lists(element, max_size=3).map(tuple)
    if isinstance(wire, StructType):
        return struct_values(wire.cls, version, flexible)
    raise TypeError(f"no strategy for {wire!r}")


def _field_values(spec: FieldSpec, version: int, flexible: bool) -> st.SearchStrategy[Any]:
    values = _type_values(spec.type, version, flexible)
    if version in spec.nullable:
        return st.none() | values
    return values


def _unknown_tags() -> st.SearchStrategy[tuple[RawTaggedField, ...]]:
    return st.lists(
        st.tuples(st.integers(1000, 1010), st.binary(max_size=6)),
        max_size=2,
        unique_by=lambda item: item[0],
    ).map(lambda items: tuple(RawTaggedField(tag, data) for tag, data in sorted(items)))


def struct_values(cls: type[Struct], version: int, flexible: bool) -> st.SearchStrategy[Any]:
    """Values of ``cls`` valid at ``version`` (nested structs included)."""
    fields: dict[str, st.SearchStrategy[Any]] = {
        spec.name: _field_values(spec, version, flexible)
        for spec, _ in struct_fields(cls)
        if spec.present(version, flexible)
    }
    if flexible:
        fields["_unknown_tagged_fields"] = _unknown_tags()
    return st.fixed_dictionaries(fields).map(lambda kwargs: cls(**kwargs))


def message_values(cls: type[Struct], version: int) -> st.SearchStrategy[Any]:
    """Values of the top-level message ``cls`` valid at ``version``."""
    return struct_values(cls, version, is_flexible(cls, version))


def every_message_version() -> list[tuple[type[Struct], int]]:
    """(class, version) of every request and response the registry knows, and the headers."""
    cases: list[tuple[type[Struct], int]] = []
    for spec in apis().values():
        for version in range(spec.min_version, spec.max_version + 1):
            cases.extend((cls, version) for cls in (spec.request, spec.response))
    cases.extend((RequestHeader, version) for version in range(3))
    cases.extend((ResponseHeader, version) for version in range(2))
    return cases
