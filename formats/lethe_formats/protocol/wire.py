"""Construct codecs for the protocol's primitive types, bounded and typed.

Theory of operation
-------------------
Kafka's message specs use a dozen primitive types. Each one is a small raw
Construct here; ``schema``/``compiler`` assemble them per (message, version).
Every parse reads from a stream whose ``tell()`` is the absolute position in
the decoded buffer (``primitives.Window``), so errors name the byte where the
fault is. No length is trusted: it is compared with the bytes really left
before anything is read or allocated.

Two length encodings exist, chosen by the message version (KIP-482)::

    classic (non-flexible)                 compact (flexible versions)
    string  int16 len, -1 = null, bytes    string  uvarint len+1, 0 = null, bytes
    bytes   int32 len, -1 = null, bytes    bytes   uvarint len+1, 0 = null, bytes
    array   int32 count, -1 = null, items  array   uvarint count+1, 0 = null, items
    nullable struct: int8 marker (-1 = null, 1 = present) then the struct, in both


    uvarint: 7 bits a byte, low group first, high bit = more; at most 5 bytes
             (Kafka's ByteUtils.readUnsignedVarint), value < 2**32
    uuid:    16 bytes, most significant half first
    bool:    one byte, any non-zero byte reads as true (Java ``readByte() != 0``)

A negative classic length other than -1 is rejected (Kafka reads any negative
length as null; accepting -5 would make re-encoding change the bytes). Strings
are capped at 32767 UTF-8 bytes in both encodings, as Kafka's generated readers
and writers are.
"""

from __future__ import annotations

import io
import struct
import uuid
from typing import IO, TYPE_CHECKING, Any

from construct import Construct, SizeofError

from lethe_formats.errors import TruncatedError, VarintError
from lethe_formats.primitives import FixedInt, Int16, Int32, field_name, remaining
from lethe_formats.protocol.exceptions import MalformedMessageError
from lethe_formats.protocol.regions import in_memory

__all__ = [
    "STRING_MAX_BYTES",
    "Array",
    "Bool",
    "Bytes",
    "Float64",
    "NullableStruct",
    "String",
    "UInt16",
    "UInt32",
    "UnsignedVarInt",
    "Uuid",
    "read_length",
    "write_length",
]

STRING_MAX_BYTES = 0x7FFF

if TYPE_CHECKING:
    AnyConstruct = Construct[Any, Any]
else:
    AnyConstruct = Construct


def _read_exact(stream: IO[bytes], size: int, path: str) -> bytes:
    position = stream.tell()
    data = stream.read(size)
    if len(data) < size:
        name = field_name(path)
        raise TruncatedError(f"data ends inside {name}", position=position, field=name)
    return bytes(data)


class _UnsignedVarInt(AnyConstruct):
    """Kafka's unsigned varint (tag numbers, sizes, compact lengths)."""

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> int:
        start = stream.tell()
        result = 0
        for index in range(5):
            byte = stream.read(1)
            if not byte:
                name = field_name(path)
                raise TruncatedError(f"data ends inside {name}", position=start, field=name)
            result |= (byte[0] & 0x7F) << (7 * index)
            if not byte[0] & 0x80:
                if result > 0xFFFFFFFF:
                    break
                return result
        name = field_name(path)
        raise VarintError(f"{name}: unsigned varint too long", position=start, field=name)

    def _build(self, obj: int, stream: IO[bytes], context: Any, path: str) -> int:
        if not 0 <= obj <= 0xFFFFFFFF:
            raise ValueError(f"{field_name(path)}: {obj} is not an unsigned 32-bit value")
        raw = obj
        out = bytearray()
        while raw >= 0x80:
            out.append((raw & 0x7F) | 0x80)
            raw >>= 7
        out.append(raw)
        stream.write(bytes(out))
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("a varint has no fixed size", path=path)


UnsignedVarInt = _UnsignedVarInt()
UInt16 = FixedInt(">H")
UInt32 = FixedInt(">I")


class _Float64(AnyConstruct):
    def _parse(self, stream: IO[bytes], context: Any, path: str) -> float:
        return float(struct.unpack(">d", _read_exact(stream, 8, path))[0])

    def _build(self, obj: float, stream: IO[bytes], context: Any, path: str) -> Any:
        stream.write(struct.pack(">d", obj))
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        return 8


class _Bool(AnyConstruct):
    def _parse(self, stream: IO[bytes], context: Any, path: str) -> bool:
        return _read_exact(stream, 1, path) != b"\x00"

    def _build(self, obj: bool, stream: IO[bytes], context: Any, path: str) -> bool:
        stream.write(b"\x01" if obj else b"\x00")
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        return 1


class _Uuid(AnyConstruct):
    def _parse(self, stream: IO[bytes], context: Any, path: str) -> uuid.UUID:
        return uuid.UUID(bytes=_read_exact(stream, 16, path))

    def _build(self, obj: uuid.UUID, stream: IO[bytes], context: Any, path: str) -> Any:
        stream.write(obj.bytes)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        return 16


Float64 = _Float64()
Bool = _Bool()
Uuid = _Uuid()


def read_length(
    stream: IO[bytes], context: Any, path: str, *, compact: bool, classic: AnyConstruct
) -> int:
    """Read a length or count: -1 means null; any other negative is malformed."""
    position = stream.tell()
    if compact:
        return int(UnsignedVarInt._parsereport(stream, context, path)) - 1
    length = int(classic._parsereport(stream, context, path))
    if length < -1:
        name = field_name(path)
        raise MalformedMessageError(
            f"{name} has invalid length {length}", position=position, field=name
        )
    return length


def write_length(
    length: int, stream: IO[bytes], context: Any, path: str, *, compact: bool, classic: AnyConstruct
) -> None:
    """Write a length or count (-1 = null) in the compact or classic form."""
    if compact:
        UnsignedVarInt._build(length + 1, stream, context, path)
    else:
        classic._build(length, stream, context, path)


def _null_error(stream: IO[bytes], path: str, position: int) -> MalformedMessageError:
    name = field_name(path)
    return MalformedMessageError(
        f"non-nullable field {name} was serialized as null", position=position, field=name
    )


def _overrun(length: int, what: str, stream: IO[bytes], path: str, position: int) -> TruncatedError:
    name = field_name(path)
    return TruncatedError(
        f"{name} claims {length} {what}, only {remaining(stream)} bytes left",
        position=position,
        field=name,
    )


class Bytes(AnyConstruct):
    """``bytes``/``records``: a length then raw bytes, ``None`` for null.

    :class:`String` reuses the framing (null, length checks, overrun) and
    changes only the classic length width, the claim limit and the codec.
    """

    #: Width of the length in non-flexible versions.
    classic: AnyConstruct = Int32

    def __init__(self, *, compact: bool, nullable: bool) -> None:
        super().__init__()
        self.compact = compact
        self.nullable = nullable

    def _check_claim(self, length: int, position: int, path: str) -> None:
        """Refuse a claimed length before reading it (no limit for bytes)."""

    def _decode(self, raw: bytes) -> Any:
        return raw

    def _encode(self, obj: Any, path: str) -> bytes:
        return bytes(obj)

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> Any:
        position = stream.tell()
        length = read_length(stream, context, path, compact=self.compact, classic=self.classic)
        if length == -1:
            if self.nullable:
                return None
            raise _null_error(stream, path, position)
        self._check_claim(length, position, path)
        if length > remaining(stream):
            raise _overrun(length, "bytes", stream, path, position)
        return self._decode(bytes(stream.read(length)))

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        if obj is None:
            if not self.nullable:
                raise ValueError(f"non-nullable field {field_name(path)} is None")
            write_length(-1, stream, context, path, compact=self.compact, classic=self.classic)
            return obj
        keep = (
            getattr(stream, "keeps_regions", False) and not in_memory(obj) and type(obj) is not str
        )
        data = obj if keep else self._encode(obj, path)  # a region to encode_buffers (.regions)
        write_length(len(data), stream, context, path, compact=self.compact, classic=self.classic)
        stream.write(data)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


class String(Bytes):
    """A UTF-8 string (invalid sequences read as U+FFFD, as Java decodes them)."""

    classic = Int16

    def _check_claim(self, length: int, position: int, path: str) -> None:
        if length > STRING_MAX_BYTES:
            name = field_name(path)
            raise MalformedMessageError(
                f"string field {name} had invalid length {length}", position=position, field=name
            )

    def _decode(self, raw: bytes) -> str:
        return raw.decode("utf-8", errors="replace")

    def _encode(self, obj: Any, path: str) -> bytes:
        data: bytes = obj.encode("utf-8")
        if len(data) > STRING_MAX_BYTES:
            raise ValueError(f"{field_name(path)}: {len(data)} bytes is longer than 32767")
        return data


class Array(AnyConstruct):
    """A count then that many ``element`` values, as a tuple (``None`` for null).

    The count is checked against the bytes left before the loop starts, with
    Kafka's rule (``count > remaining`` is an error whatever the element size),
    so a claimed 2**31 elements costs nothing.
    """

    def __init__(self, element: AnyConstruct, *, compact: bool, nullable: bool) -> None:
        super().__init__()
        self.element = element
        self.compact = compact
        self.nullable = nullable

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> tuple[Any, ...] | None:
        position = stream.tell()
        count = read_length(stream, context, path, compact=self.compact, classic=Int32)
        if count == -1:
            if self.nullable:
                return None
            raise _null_error(stream, path, position)
        if count > remaining(stream):
            raise _overrun(count, "elements", stream, path, position)
        element = self.element
        return tuple(element._parsereport(stream, context, path) for _ in range(count))

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        if obj is None:
            if not self.nullable:
                raise ValueError(f"non-nullable field {field_name(path)} is None")
            write_length(-1, stream, context, path, compact=self.compact, classic=Int32)
            return obj
        write_length(len(obj), stream, context, path, compact=self.compact, classic=Int32)
        for item in obj:
            self.element._build(item, stream, context, path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


class NullableStruct(AnyConstruct):
    """A struct field that may be null (DescribeTopicPartitions' ``Cursor``).

    Kafka's generated code writes one marker byte first, -1 for null and 1 for a
    value, and reads any negative marker as null.
    """

    def __init__(self, struct_codec: AnyConstruct) -> None:
        super().__init__()
        self.struct_codec = struct_codec

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> Any:
        marker = _read_exact(stream, 1, path)[0]
        if marker >= 0x80:
            return None
        return self.struct_codec._parsereport(stream, context, path)

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        if obj is None:
            stream.write(b"\xff")
            return obj
        stream.write(b"\x01")
        self.struct_codec._build(obj, stream, context, path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


def build_bytes(codec: AnyConstruct, obj: Any, context: Any, path: str) -> bytes:
    """Build ``obj`` with ``codec`` into fresh bytes (tagged field payloads)."""
    out = io.BytesIO()
    codec._build(obj, out, context, path)
    return out.getvalue()
