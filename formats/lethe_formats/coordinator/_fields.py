"""Construct fields for Kafka's generated-message encoding, classic and flexible.

Theory of operation
-------------------
The records of ``__consumer_offsets`` are Kafka "data" messages: the same
encoding as protocol messages, with a version chosen per record. A message
version is either *classic* or *flexible* (KIP-482); the field types encode
differently in the two::

    type        classic (non-flexible)              flexible
    int8..int64 big-endian fixed width              same
    uuid        16 bytes                            same
    string      int16 length, UTF-8 (-1 = null)     uvarint(length + 1) (0 = null)
    bytes       int32 length (-1 = null)            uvarint(length + 1) (0 = null)
    array       int32 count (-1 = null), elements   uvarint(count + 1), elements
    struct      its fields                          its fields, then tagged fields
    tagged      (none)                              uvarint count, then per field:
                                                      uvarint tag | uvarint size | data

Tags must be strictly increasing. A tag this code does not know is kept as
raw bytes so a record re-encodes to the bytes it came from.

Unsigned varints are at most 5 bytes (Kafka's ``readUnsignedVarint``). Every
length or count is checked against the bytes really left before anything is
read or allocated: a corrupt length is a typed error naming the field and the
position, never a ``MemoryError``. Strings decode with ``surrogateescape`` so
invalid UTF-8 survives a round trip (Java would replace it; we keep it).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

from construct import Construct, SizeofError
from construct.core import BytesIOWithOffsets

from lethe_formats.errors import CorruptRecordError, TruncatedError, VarintError
from lethe_formats.primitives import field_name, remaining
from lethe_formats.storage.kafka_uuid import KafkaUuid
from lethe_formats.varint import encode_uvarint

__all__ = [
    "KArray",
    "KBytes",
    "KString",
    "NullableStruct",
    "TaggedFields",
    "UVarInt",
    "Uuid",
    "encode_uvarint",
]

if TYPE_CHECKING:
    _AnyConstruct = Construct[Any, Any]
else:
    _AnyConstruct = Construct

UVARINT_MAX_BYTES = 5


def _read_exact(stream: IO[bytes], size: int, name: str, position: int) -> bytes:
    data = stream.read(size)
    if len(data) < size:
        raise TruncatedError(f"data ends inside {name}", position=position, field=name)
    return bytes(data)


def read_uvarint(stream: IO[bytes], name: str) -> int:
    """One unsigned varint from ``stream``; longer than 5 bytes is a VarintError."""
    start = stream.tell()
    value = 0
    for index in range(UVARINT_MAX_BYTES):
        byte = _read_exact(stream, 1, name, start)[0]
        value |= (byte & 0x7F) << (7 * index)
        if not byte & 0x80:
            return value
    raise VarintError(f"{name}: unsigned varint longer than 5 bytes", position=start, field=name)


class UVarInt(_AnyConstruct):
    """An unsigned varint (lengths, counts, tags in flexible versions)."""

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> int:
        return read_uvarint(stream, field_name(path))

    def _build(self, obj: int, stream: IO[bytes], context: Any, path: str) -> int:
        stream.write(encode_uvarint(obj))
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("a varint has no fixed size", path=path)


class _Sized(_AnyConstruct):
    """Length-prefixed data: int16/int32 length (classic) or uvarint length + 1.

    ``_length`` returns None for null; ``_write_length`` writes the prefix.
    """

    def __init__(self, *, flexible: bool, nullable: bool, width: int) -> None:
        super().__init__()
        self.flexible = flexible
        self.nullable = nullable
        self.width = width

    def _length(self, stream: IO[bytes], name: str) -> int | None:
        position = stream.tell()
        if self.flexible:
            length = read_uvarint(stream, name) - 1
        else:
            raw = _read_exact(stream, self.width, name, position)
            length = int.from_bytes(raw, "big", signed=True)
        if length < 0:
            if length == -1 and self.nullable:
                return None
            what = "null" if length == -1 else f"length {length}"
            raise CorruptRecordError(f"{name}: invalid {what}", position=position, field=name)
        left = remaining(stream)
        if length > left:
            raise TruncatedError(
                f"{name} claims {length} bytes, only {left} left", position=position, field=name
            )
        return length

    def _write_length(self, length: int | None, stream: IO[bytes], name: str) -> None:
        if length is None and not self.nullable:
            raise ValueError(f"{name} may not be null")
        if self.flexible:
            stream.write(encode_uvarint(0 if length is None else length + 1))
            return
        value = -1 if length is None else length
        limit = 1 << (8 * self.width - 1)
        if value >= limit:
            raise ValueError(f"{name}: length {value} does not fit {self.width} bytes")
        stream.write(value.to_bytes(self.width, "big", signed=True))

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


class KString(_Sized):
    """A Kafka ``string`` (int16 length classic, compact in flexible versions)."""

    def __init__(self, *, flexible: bool, nullable: bool = False) -> None:
        super().__init__(flexible=flexible, nullable=nullable, width=2)

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> str | None:
        name = field_name(path)
        length = self._length(stream, name)
        if length is None:
            return None
        return bytes(stream.read(length)).decode("utf-8", "surrogateescape")

    def _build(self, obj: str | None, stream: IO[bytes], context: Any, path: str) -> Any:
        data = None if obj is None else obj.encode("utf-8", "surrogateescape")
        self._write_length(None if data is None else len(data), stream, field_name(path))
        if data is not None:
            stream.write(data)
        return obj


class KBytes(_Sized):
    """A Kafka ``bytes`` (int32 length classic, compact in flexible versions)."""

    def __init__(self, *, flexible: bool, nullable: bool = False) -> None:
        super().__init__(flexible=flexible, nullable=nullable, width=4)

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> bytes | None:
        length = self._length(stream, field_name(path))
        return None if length is None else bytes(stream.read(length))

    def _build(self, obj: bytes | None, stream: IO[bytes], context: Any, path: str) -> Any:
        self._write_length(None if obj is None else len(obj), stream, field_name(path))
        if obj is not None:
            stream.write(bytes(obj))
        return obj


class KArray(_Sized):
    """A Kafka array of ``element``; the result is a tuple (None when null).

    Every element takes at least one byte, so a count above the bytes left is
    rejected before the loop starts.
    """

    def __init__(self, element: Construct[Any, Any], *, flexible: bool, nullable: bool = False):
        super().__init__(flexible=flexible, nullable=nullable, width=4)
        self.element = element

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> tuple[Any, ...] | None:
        count = self._length(stream, field_name(path))
        if count is None:
            return None
        return tuple(self.element._parsereport(stream, context, path) for _ in range(count))

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        items = None if obj is None else list(obj)
        self._write_length(None if items is None else len(items), stream, field_name(path))
        for item in items or ():
            self.element._build(item, stream, context, path)
        return obj


class Uuid(_AnyConstruct):
    """16 raw bytes as a :class:`KafkaUuid` (printed in Kafka's base64 form)."""

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> KafkaUuid:
        return KafkaUuid(_read_exact(stream, 16, field_name(path), stream.tell()))

    def _build(self, obj: KafkaUuid, stream: IO[bytes], context: Any, path: str) -> Any:
        stream.write(obj.raw)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        return 16


class NullableStruct(_AnyConstruct):
    """A nullable struct field, with a presence marker before the struct.

    Untagged: int8 -1 for null, 1 followed by the struct. Tagged: an unsigned
    varint, 0 for null, 1 followed by the struct (Kafka reads ``<= 0`` as null).
    """

    def __init__(self, struct: Construct[Any, Any], *, tagged: bool = False) -> None:
        super().__init__()
        self.struct = struct
        self.tagged = tagged

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> Any:
        name = field_name(path)
        if self.tagged:
            present = read_uvarint(stream, name) > 0
        else:
            marker = _read_exact(stream, 1, name, stream.tell())
            present = int.from_bytes(marker, "big", signed=True) >= 0
        return self.struct._parsereport(stream, context, path) if present else None

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        if obj is None:
            stream.write(b"\x00" if self.tagged else b"\xff")
        else:
            stream.write(b"\x01")
            self.struct._build(obj, stream, context, path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


class TaggedFields(_AnyConstruct):
    """The tagged-field section ending every struct of a flexible version.

    ``known`` maps tag -> (field name, construct, write_null). Parsing returns
    ``{"known": {name: value}, "unknown": ((tag, raw bytes), ...)}``; building
    takes the same shape, writes known fields whose value is not None (and
    null ones too where ``write_null``: Kafka writes a null tagged struct whose
    spec default is JSON ``null`` as a 1-byte "absent" marker), merges the
    unknown ones and orders everything by tag.
    """

    def __init__(self, known: Mapping[int, tuple[str, Construct[Any, Any], bool]]) -> None:
        super().__init__()
        self.known = dict(known)

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> dict[str, Any]:
        name = field_name(path)
        position = stream.tell()
        count = read_uvarint(stream, name)
        if count > remaining(stream):
            raise TruncatedError(
                f"{name}: {count} tagged fields cannot fit", position=position, field=name
            )
        known: dict[str, Any] = {}
        unknown: list[tuple[int, bytes]] = []
        last = -1
        for _ in range(count):
            at = stream.tell()
            tag = read_uvarint(stream, name)
            if tag <= last:
                raise CorruptRecordError(
                    f"{name}: tag {tag} out of order after {last}", position=at, field=name
                )
            last = tag
            size_at = stream.tell()
            size = read_uvarint(stream, name)
            if size > remaining(stream):
                raise TruncatedError(
                    f"{name}: tag {tag} claims {size} bytes, only {remaining(stream)} left",
                    position=size_at,
                    field=name,
                )
            if tag in self.known:
                field, construct, _ = self.known[tag]
                known[field] = _parse_exactly(
                    construct, stream, size, context, f"{path} -> {field}"
                )
            else:
                unknown.append((tag, bytes(stream.read(size))))
        return {"known": known, "unknown": tuple(unknown)}

    def _build(self, obj: Mapping[str, Any], stream: IO[bytes], context: Any, path: str) -> Any:
        entries: list[tuple[int, bytes]] = list(obj.get("unknown", ()))
        values = obj.get("known", {})
        for tag, (field, construct, write_null) in self.known.items():
            if values.get(field) is not None or write_null:
                inner = io.BytesIO()
                construct._build(values.get(field), inner, context, f"{path} -> {field}")
                entries.append((tag, inner.getvalue()))
        entries.sort(key=lambda entry: entry[0])
        stream.write(encode_uvarint(len(entries)))
        for tag, data in entries:
            stream.write(encode_uvarint(tag) + encode_uvarint(len(data)) + data)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


def _parse_exactly(
    construct: Construct[Any, Any], stream: IO[bytes], size: int, context: Any, path: str
) -> Any:
    """Parse ``construct`` from exactly the next ``size`` bytes of ``stream``."""
    substream = BytesIOWithOffsets.from_reading(stream, size, path)
    value = construct._parsereport(substream, context, path)
    left = remaining(substream)
    if left:
        name = field_name(path)
        raise CorruptRecordError(
            f"{left} bytes left unread inside tagged field {name}",
            position=substream.tell(),
            field=name,
        )
    return value
