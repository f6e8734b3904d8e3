"""Compile DSL classes to Construct codecs per (class, version, flexible); encode/decode.

Theory of operation
-------------------
:func:`compile_struct` turns one :class:`~lethe_formats.protocol.schema.Struct`
subclass at one version into a :class:`StructCodec`: the fields present in that
version, in declaration order, each with the codec its type takes in that
version (classic or compact lengths, nullable or not), followed in flexible
versions by a :class:`TaggedSection`. Results are cached, so each
(class, version, flexible) is compiled once. A struct in a flexible version::

    +-----------------+-----+-----------------+--------------------------------+
    | regular field 1 | ... | regular field n | tagged fields                  |
    +-----------------+-----+-----------------+--------------------------------+
    tagged fields = uvarint count, then count x (uvarint tag, uvarint size, size bytes),
                    ascending tags; a known tag is written only when not default

Parsing a struct builds the dataclass directly; fields absent in the version
take their declared default. Building checks that every field absent in the
version still holds its default (else :class:`UnsupportedVersionError`, unless
the field is ``ignorable``), that non-flexible versions carry no tagged fields,
then writes the present fields. Unknown tagged fields are kept in
``_unknown_tagged_fields`` and written back merged by tag, as Kafka's
``RawTaggedFieldWriter`` does, so decode -> encode reproduces the bytes.

These Construct codecs are the definition, and the error reporter. The entry
points (:func:`decode_prefix`, :func:`decode`, :func:`encode`,
:func:`encode_buffers`) first try plain functions that
:mod:`~lethe_formats.protocol.fastcodec` generates from the same codec tree,
several times faster; whenever those raise anything, the Construct codec runs
and decides (value or exact error). ``LETHE_PROTOCOL_CONSTRUCT=1`` or
:func:`use_fast_codecs` turns the fast path off.
"""

from __future__ import annotations

import io
import os
from typing import IO, Any, TypeVar, cast

from construct import SizeofError
from construct.core import BytesIOWithOffsets

from lethe_formats.errors import FormatError, TruncatedError
from lethe_formats.primitives import Int8, Int16, Int32, Int64, VarInt, VarLong, Window, remaining
from lethe_formats.protocol import fastcodec
from lethe_formats.protocol.exceptions import MalformedMessageError, UnsupportedVersionError
from lethe_formats.protocol.regions import ByteRegion, in_memory
from lethe_formats.protocol.schema import (
    ArrayType,
    FieldSpec,
    FieldType,
    RawTaggedField,
    Struct,
    StructType,
    message_info,
    struct_fields,
)
from lethe_formats.protocol.wire import (
    AnyConstruct,
    Array,
    Bool,
    Bytes,
    Float64,
    NullableStruct,
    String,
    UInt16,
    UInt32,
    UnsignedVarInt,
    Uuid,
    build_bytes,
)

__all__ = [
    "StructCodec",
    "TaggedSection",
    "compile_struct",
    "decode",
    "decode_prefix",
    "encode",
    "encode_buffers",
    "fast_codec",
    "is_flexible",
    "use_fast_codecs",
]

S = TypeVar("S", bound=Struct)

_FIXED: dict[str, AnyConstruct] = {
    "int8": Int8,
    "int16": Int16,
    "int32": Int32,
    "int64": Int64,
    "uint16": UInt16,
    "uint32": UInt32,
    "varint": VarInt,
    "varlong": VarLong,
    "float64": Float64,
    "bool": Bool,
    "uuid": Uuid,
}


def type_codec(
    wire: FieldType, version: int, flexible: bool, *, compact: bool, nullable: bool
) -> AnyConstruct:
    """The codec of ``wire`` in ``version`` (``compact`` lengths, null allowed or not)."""
    if nullable and not wire.can_be_null:
        raise TypeError(f"{wire!r} cannot be nullable")
    if wire.kind in _FIXED:
        return _FIXED[wire.kind]
    if wire.kind == "string":
        return String(compact=compact, nullable=nullable)
    if wire.kind in ("bytes", "records"):
        return Bytes(compact=compact, nullable=nullable)
    if isinstance(wire, ArrayType):
        element = type_codec(wire.element, version, flexible, compact=compact, nullable=False)
        return Array(element, compact=compact, nullable=nullable)
    if isinstance(wire, StructType):
        codec = compile_struct(wire.cls, version, flexible)
        return NullableStruct(codec) if nullable else codec
    raise TypeError(f"no codec for {wire!r}")


def field_codec(spec: FieldSpec, version: int, flexible: bool) -> AnyConstruct:
    compact = flexible and (spec.flexible is None or version in spec.flexible)
    nullable = version in spec.nullable
    return type_codec(spec.type, version, flexible, compact=compact, nullable=nullable)


class TaggedSection(AnyConstruct):
    """The tagged-fields section at the end of a struct in a flexible version.

    Parses to ``(known values by field name, unknown RawTaggedFields)``; builds
    from the struct object itself.
    """

    def __init__(self, known: dict[int, tuple[str, AnyConstruct, Any]]) -> None:
        super().__init__()
        self.known = known

    def _parse(
        self, stream: IO[bytes], context: Any, path: str
    ) -> tuple[dict[str, Any], tuple[RawTaggedField, ...]]:
        position = stream.tell()
        where = f"{path} -> tagged_fields"
        count = UnsignedVarInt._parsereport(stream, context, where)
        if count > remaining(stream):
            raise TruncatedError(
                f"{count} tagged fields claimed, only {remaining(stream)} bytes left",
                position=position,
                field="tagged_fields",
            )
        values: dict[str, Any] = {}
        unknown: list[RawTaggedField] = []
        for _ in range(count):
            tag = UnsignedVarInt._parsereport(stream, context, f"{where} -> tag")
            size_at = stream.tell()
            size = UnsignedVarInt._parsereport(stream, context, f"{where} -> size")
            if size > remaining(stream):
                raise TruncatedError(
                    f"tagged field {tag} claims {size} bytes, only {remaining(stream)} left",
                    position=size_at,
                    field="tagged_fields",
                )
            start = stream.tell()
            data = bytes(stream.read(size))
            if tag in self.known:
                name, codec, _ = self.known[tag]
                if name in values:
                    raise MalformedMessageError(
                        f"tagged field {tag} appears twice", position=size_at, field=name
                    )
                values[name] = self._parse_known(data, start, codec, context, f"{path} -> {name}")
            else:
                unknown.append(RawTaggedField(tag, data))
        return values, tuple(unknown)

    @staticmethod
    def _parse_known(data: bytes, start: int, codec: AnyConstruct, context: Any, path: str) -> Any:
        sub = BytesIOWithOffsets(data, cast(IO[bytes], None), start)
        value = codec._parsereport(sub, context, path)
        if sub.tell() != start + len(data):
            raise MalformedMessageError(
                f"tagged field of {len(data)} bytes, value used {sub.tell() - start}",
                position=sub.tell(),
                field=path.rsplit("-> ", 1)[-1],
            )
        return value

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        entries: list[tuple[int, bytes]] = []
        for tag, (name, codec, default) in self.known.items():
            value = getattr(obj, name)
            if value != default:
                entries.append((tag, build_bytes(codec, value, context, f"{path} -> {name}")))
        entries.extend((raw.tag, raw.data) for raw in obj._unknown_tagged_fields)
        entries.sort(key=lambda entry: entry[0])
        UnsignedVarInt._build(len(entries), stream, context, path)
        for tag, data in entries:
            UnsignedVarInt._build(tag, stream, context, path)
            UnsignedVarInt._build(len(data), stream, context, path)
            stream.write(data)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


class StructCodec(AnyConstruct):
    """One struct class at one version: parses to and builds from the dataclass."""

    def __init__(self, cls: type[Struct], version: int, flexible: bool) -> None:
        super().__init__()
        self.cls = cls
        self.version = version
        self.flexible = flexible
        self.regular: list[tuple[str, AnyConstruct]] = []
        self.absent: list[tuple[FieldSpec, Any]] = []
        known: dict[int, tuple[str, AnyConstruct, Any]] = {}
        for spec, default in struct_fields(cls):
            if not spec.present(version, flexible):
                self.absent.append((spec, default))
            elif spec.is_tagged(version):
                if spec.tag in known:
                    raise TypeError(f"{cls.__name__}: tag {spec.tag} used twice in v{version}")
                known[spec.tag] = (spec.name, field_codec(spec, version, flexible), default)  # type: ignore[index]
            else:
                self.regular.append((spec.name, field_codec(spec, version, flexible)))
        self.tags = TaggedSection(dict(sorted(known.items()))) if flexible else None

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> Struct:
        values: dict[str, Any] = {}
        for name, codec in self.regular:
            values[name] = codec._parsereport(stream, context, f"{path} -> {name}")
        if self.tags is not None:
            tagged, unknown = self.tags._parsereport(stream, context, path)
            values.update(tagged)
            values["_unknown_tagged_fields"] = unknown
        return self.cls(**values)

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        if not isinstance(obj, self.cls):
            raise TypeError(f"expected {self.cls.__name__}, got {type(obj).__name__}")
        self._check_absent(obj)
        for name, codec in self.regular:
            codec._build(getattr(obj, name), stream, context, f"{path} -> {name}")
        if self.tags is not None:
            self.tags._build(obj, stream, context, path)
        return obj

    def _check_absent(self, obj: Struct) -> None:
        for spec, default in self.absent:
            if not spec.ignorable and getattr(obj, spec.name) != default:
                raise UnsupportedVersionError(
                    f"{self.cls.__name__}.{spec.name} is set, but version {self.version} "
                    f"does not have it",
                    version=self.version,
                    field=spec.name,
                )
        if self.tags is None and obj._unknown_tagged_fields:
            raise UnsupportedVersionError(
                f"{self.cls.__name__} has tagged fields, but version {self.version} "
                f"does not support them",
                version=self.version,
                field="_unknown_tagged_fields",
            )

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


_COMPILED: dict[tuple[type[Struct], int, bool], StructCodec] = {}


def compile_struct(cls: type[Struct], version: int, flexible: bool) -> StructCodec:
    """The (cached) codec of ``cls`` at ``version``."""
    key = (cls, version, flexible)
    codec = _COMPILED.get(key)
    if codec is None:
        codec = _COMPILED[key] = StructCodec(cls, version, flexible)
    return codec


def is_flexible(cls: type[Struct], version: int) -> bool:
    """Is ``version`` of message ``cls`` a flexible version?"""
    return version in message_info(cls).flexible


def _codec(cls: type[Struct], version: int) -> StructCodec:
    info = message_info(cls)
    if version not in info.valid:
        raise UnsupportedVersionError(
            f"{info.name} has no version {version} (valid: {info.valid})",
            api_key=info.api_key,
            version=version,
        )
    return compile_struct(cls, version, version in info.flexible)


#: Whether encode/decode try the generated codecs of :mod:`fastcodec` first (the
#: Construct codecs run whenever they bail). ``LETHE_PROTOCOL_CONSTRUCT=1`` in the
#: environment turns them off, :func:`use_fast_codecs` at run time (equivalence tests).
_fast_enabled = os.environ.get("LETHE_PROTOCOL_CONSTRUCT", "") != "1"

_FAST: dict[tuple[type[Struct], int], fastcodec.FastCodec] = {}


def use_fast_codecs(enabled: bool) -> bool:
    """Turn the generated fast path on or off; return the previous setting."""
    global _fast_enabled
    previous, _fast_enabled = _fast_enabled, enabled
    return previous


def fast_codec(cls: type[Struct], version: int) -> fastcodec.FastCodec:
    """The generated codec of message ``cls`` at ``version`` (checked like :func:`_codec`)."""
    fast = _FAST.get((cls, version))
    if fast is None:
        fast = _FAST[(cls, version)] = fastcodec.generate(_codec(cls, version))
    return fast


def _fast_encode(msg: Struct, version: int) -> tuple[bytearray, list[tuple[int, Any]]] | None:
    """The generated encoder's output, or None when it bailed (or is off)."""
    if not _fast_enabled:
        return None
    fast = fast_codec(type(msg), version)
    buf = bytearray()
    big: list[tuple[int, Any]] = []
    try:
        fast.encode(msg, buf, big)
    except Exception:  # any doubt: the Construct codec decides
        return None
    return buf, big


def encode(msg: Struct, version: int) -> bytes:
    """The wire bytes of ``msg`` at ``version`` (no size prefix, no header)."""
    done = _fast_encode(msg, version)
    if done is not None:
        buf, big = done
        if not big:
            return bytes(buf)
        parts = fastcodec.join_parts(buf, big)
        return b"".join(part if type(part) is bytes else bytes(part) for part in parts)
    out = io.BytesIO()
    _codec(type(msg), version).build_stream(msg, out)
    return out.getvalue()


#: Writes at least this long are kept as buffers of their own by :func:`encode_buffers`.
_OWN_BUFFER_BYTES = fastcodec.OWN_BUFFER_BYTES


class _Buffers:
    """A write-only stream that keeps large writes (record sets) as they are, uncopied,
    and gathers the small ones between them into bytearrays. A large
    :class:`~.regions.ByteRegion` stays the same object (read by whoever sends it);
    a small one is read here."""

    #: ``Bytes`` fields hand this stream a region as it is (:mod:`.regions`)
    keeps_regions = True

    def __init__(self) -> None:
        self.parts: list[bytes | ByteRegion] = []
        self._small = bytearray()
        self._size = 0

    def write(self, data: bytes | ByteRegion) -> int:
        size = len(data)
        self._size += size
        if size < _OWN_BUFFER_BYTES:
            self._small += data if in_memory(data) else bytes(data)
            return size
        if self._small:
            self.parts.append(bytes(self._small))
            self._small = bytearray()
        self.parts.append(data if type(data) is bytes or not in_memory(data) else bytes(data))
        return size

    def tell(self) -> int:
        return self._size

    def finish(self) -> list[bytes | ByteRegion]:
        if self._small:
            self.parts.append(bytes(self._small))
            self._small = bytearray()
        return self.parts


def encode_buffers(msg: Struct, version: int) -> list[bytes | ByteRegion]:
    """:func:`encode` as a list of buffers whose concatenation is its bytes: a Fetch
    response's record sets are passed through as the objects the message holds (bytes,
    or a file region a server sends with ``sendfile``), so a server can write them
    without copying megabytes into one string first."""
    done = _fast_encode(msg, version)
    if done is not None:
        return fastcodec.join_parts(*done)
    out = _Buffers()
    _codec(type(msg), version).build_stream(msg, cast(IO[bytes], out))  # write/tell suffice
    return out.finish()


def decode_prefix(cls: type[S], version: int, data: bytes, pos: int = 0) -> tuple[S, int]:
    """Decode one ``cls`` at ``version`` starting at ``data[pos]``; return it and
    the position after it. Error positions are offsets into ``data``."""
    if _fast_enabled and pos >= 0:
        fast = fast_codec(cls, version)
        try:
            value, end = fast.decode(data if type(data) is bytes else bytes(data), pos)
        except Exception:  # any doubt: the Construct codec decides
            pass
        else:
            return cast(S, value), end
    codec = _codec(cls, version)
    stream = Window(data, 0)
    stream.seek(pos)
    try:
        value = codec.parse_stream(stream)
    except FormatError:
        raise
    except (ValueError, OverflowError) as error:  # defensive: no raw error escapes
        raise MalformedMessageError(
            str(error), position=stream.tell(), field=cls.__name__
        ) from None
    return cast(S, value), stream.tell()


def decode(cls: type[S], version: int, data: bytes, *, base: int = 0) -> S:
    """Decode exactly ``data`` as ``cls`` at ``version``; bytes left over are an
    error. ``base`` is added to error positions (where ``data`` sits in a frame)."""
    try:
        value, end = decode_prefix(cls, version, data)
    except FormatError as error:
        raise error.at(offset=base) from None
    if end != len(data):
        raise MalformedMessageError(
            f"{len(data) - end} bytes left after {cls.__name__} v{version}",
            position=base + end,
            field=cls.__name__,
        )
    return value
