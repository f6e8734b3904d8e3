"""Construct building blocks for Kafka's record formats, with typed errors.

Theory of operation
-------------------
Every schema in ``records/`` is assembled from the small classes here. They
differ from Construct's stock fields in one way that matters: a fault raises a
:class:`~lethe_formats.errors.FormatError` subclass naming the field and the
**absolute** byte position, never a bare ``StreamError``.

Absolute positions come for free from the streams. A top-level decoder parses a
:class:`Window` whose ``tell()`` reports file positions, and every length
prefix opens its sub-stream with Construct's ``BytesIOWithOffsets``, whose
``tell()`` adds the parent's offset. So ``stream.tell()`` is always the file
position of the next byte. (Decompressed data has no file position; errors in
it are relocated to the compressed block, see :func:`relocate`.)

Field names are taken from Construct's parse path (``(parsing) -> records ->
key`` becomes ``records.key``), so the schemas name their fields once.

Nothing here ever allocates a length it has not checked against the bytes that
are really left in the stream: a corrupt ``2 GiB`` length is an error, not a
``MemoryError``.

Building blocks::

    Int8 Int16 Int32 Int64 UInt32     big-endian fixed ints
    VarInt  (<= 5 bytes, int32)       zig-zag base-128, low group first
    VarLong (<= 10 bytes, int64)
    VarBytes / Int32Bytes             length (-1 = null) + bytes
    HeaderKeyBytes                    varint length, must be >= 0
    SizePrefixed(length, subcon)      exact-size sub-stream, bounded
    Checksummed(crc, fn, subcon)      a CRC followed by the bytes it covers
    CountedArray(count, subcon)       count read earlier, negative is invalid
    ExpectEnd(error)                  nothing may follow
    Ensure(check, error, field)       a rule on fields already parsed
"""

from __future__ import annotations

import io
import struct
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, cast

from construct import (
    Construct,
    Container,
    ListContainer,
    SizeofError,
    Subconstruct,
)
from construct.core import BytesIOWithOffsets, evaluate

from lethe_formats.errors import (
    ChecksumError,
    CorruptRecordError,
    FormatError,
    InvalidRecordError,
    TruncatedError,
)
from lethe_formats.varint import encode_varint, encode_varlong, read_varint, read_varlong

__all__ = [
    "AnySubconstruct",
    "Checksummed",
    "CountedArray",
    "Ensure",
    "ExpectEnd",
    "HeaderKeyBytes",
    "Int8",
    "Int16",
    "Int32",
    "Int32Bytes",
    "Int64",
    "NullableBytes",
    "SizePrefixed",
    "UInt32",
    "VarBytes",
    "VarInt",
    "VarLong",
    "Window",
    "ZigZagVarInt",
    "field_name",
    "relocate",
    "remaining",
]

ErrorClass = type[FormatError]

# Construct's runtime classes are not generic; its stubs are. Subclass through
# aliases that are parameterised only for the type checker.
if TYPE_CHECKING:
    _IntConstruct = Construct[int, int]
    _BytesConstruct = Construct[bytes | None, bytes | None]
    _NoneConstruct = Construct[None, None]
    AnySubconstruct = Subconstruct[Any, Any, Any, Any]
else:
    _IntConstruct = _BytesConstruct = _NoneConstruct = Construct
    AnySubconstruct = Subconstruct


class Window(BytesIOWithOffsets):
    """A stream over ``data`` whose ``tell()`` reports ``base`` + offset.

    Decoders wrap the bytes of one entry in a Window anchored at the entry's
    file position, so every error raised while parsing it is already absolute.
    """

    def __init__(self, data: bytes, base: int = 0) -> None:
        super().__init__(data, cast(IO[bytes], None), base)


def field_name(path: str) -> str:
    """``(parsing) -> _batch -> records -> key`` -> ``records.key``.

    Components starting with ``_`` name grouping levels, not fields.
    """
    parts = [p.strip() for p in path.split("->")]
    return ".".join(p for p in parts[1:] if p and not p.startswith("_")) or "value"


def remaining(stream: IO[bytes]) -> int:
    """Bytes left in ``stream`` after the current position (no read, no copy)."""
    here = stream.tell()
    end = stream.seek(0, io.SEEK_END)
    stream.seek(here)
    return int(end - here)


def relocate(error: FormatError, position: int, note: str) -> FormatError:
    """Copy of ``error`` moved to ``position`` with ``note`` prepended.

    Used for faults inside decompressed data: their own offsets are not file
    positions, so they are reported at the compressed block, and the message
    keeps the offset inside the decompressed bytes.
    """
    clone = type(error).__new__(type(error))
    clone.__dict__.update(error.__dict__)
    clone.message = f"{note}: {error.message}"
    clone.args = (clone.message,)
    clone.position = position
    return clone


class FixedInt(_IntConstruct):
    """A big-endian fixed-width integer; a short read is a TruncatedError."""

    def __init__(self, fmt: str) -> None:
        super().__init__()
        self.packer = struct.Struct(fmt)

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> int:
        position = stream.tell()
        data = stream.read(self.packer.size)
        if len(data) < self.packer.size:
            name = field_name(path)
            raise TruncatedError(f"data ends inside {name}", position=position, field=name)
        return int(self.packer.unpack(data)[0])

    def _build(self, obj: int, stream: IO[bytes], context: Any, path: str) -> Any:
        try:
            stream.write(self.packer.pack(obj))
        except struct.error as error:
            raise ValueError(f"{field_name(path)}: {obj!r} does not fit: {error}") from None
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        return int(self.packer.size)


Int8 = FixedInt(">b")
Int16 = FixedInt(">h")
Int32 = FixedInt(">i")
Int64 = FixedInt(">q")
UInt32 = FixedInt(">I")


class ZigZagVarInt(_IntConstruct):
    """Kafka's zig-zag varint of ``bits`` (32 or 64) width, bounded like Kafka.

    The bytes are gathered one by one up to the maximum length, then decoded
    by :mod:`lethe_formats.varint` so both paths share one definition of the
    limits (more than 5/10 bytes, or a value wider than the type: VarintError).
    """

    def __init__(self, bits: int) -> None:
        super().__init__()
        self.bits = bits
        self.max_bytes = 5 if bits == 32 else 10
        self.reader = read_varint if bits == 32 else read_varlong
        self.encoder = encode_varint if bits == 32 else encode_varlong

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> int:
        start = stream.tell()
        name = field_name(path)
        raw = bytearray()
        while len(raw) < self.max_bytes:
            byte = stream.read(1)
            if not byte:
                raise TruncatedError(f"data ends inside {name}", position=start, field=name)
            raw += byte
            if not byte[0] & 0x80:
                break
        try:
            value, _ = self.reader(raw, 0, name)
        except FormatError as error:
            raise error.at(offset=start) from None
        return value

    def _build(self, obj: int, stream: IO[bytes], context: Any, path: str) -> Any:
        try:
            stream.write(self.encoder(obj))
        except ValueError as error:
            raise ValueError(f"{field_name(path)}: {error}") from None
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("a varint has no fixed size", path=path)


VarInt = ZigZagVarInt(32)
VarLong = ZigZagVarInt(64)


class NullableBytes(_BytesConstruct):
    """``length`` then that many bytes; a negative length means null.

    Kafka reads any negative key/value length as null (``DefaultRecord`` and
    ``LegacyRecord`` test ``size < 0``) and writes -1. With ``nullable=False``
    (header keys) a negative length is an InvalidRecordError, as in Kafka.
    """

    def __init__(self, lengthfield: Construct[int, int], *, nullable: bool = True) -> None:
        super().__init__()
        self.lengthfield = lengthfield
        self.nullable = nullable

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> bytes | None:
        position = stream.tell()
        length = self.lengthfield._parsereport(stream, context, path)
        name = field_name(path)
        if length < 0:
            if self.nullable:
                return None
            raise InvalidRecordError(
                f"Invalid negative {name} size {length}", position=position, field=name
            )
        if length > remaining(stream):
            raise TruncatedError(
                f"{name} claims {length} bytes, only {remaining(stream)} left",
                position=position,
                field=name,
            )
        return bytes(stream.read(length))

    def _build(self, obj: bytes | None, stream: IO[bytes], context: Any, path: str) -> Any:
        if obj is None:
            if not self.nullable:
                raise ValueError(f"{field_name(path)} may not be null")
            self.lengthfield._build(-1, stream, context, path)
        else:
            self.lengthfield._build(len(obj), stream, context, path)
            stream.write(bytes(obj))
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


VarBytes = NullableBytes(VarInt)
HeaderKeyBytes = NullableBytes(VarInt, nullable=False)
Int32Bytes = NullableBytes(Int32)


class SizePrefixed(AnySubconstruct):
    """A length field, then ``subcon`` parsed from exactly that many bytes.

    Unlike Construct's ``Prefixed`` the length is checked before anything is
    read: below ``minimum`` it is a CorruptRecordError, beyond the bytes left
    it is ``overrun`` (TruncatedError for a log entry, InvalidRecordError for
    a record inside a batch). ``inner`` converts truncation inside the
    sub-stream (Kafka's "Found invalid record structure"). Bytes the subcon
    leaves unread are ``leftover``. Building measures the subcon's bytes.
    """

    def __init__(
        self,
        lengthfield: Construct[int, int],
        subcon: Construct[Any, Any],
        *,
        minimum: int = 0,
        overrun: ErrorClass = TruncatedError,
        inner: ErrorClass | None = None,
        leftover: ErrorClass = CorruptRecordError,
        field: str | None = None,
    ) -> None:
        super().__init__(subcon)
        self.field = field
        self.lengthfield = lengthfield
        self.minimum = minimum
        self.overrun = overrun
        self.inner = inner
        self.leftover = leftover

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> Any:
        position = stream.tell()
        name = self.field or field_name(path)
        length = self.lengthfield._parsereport(stream, context, f"{path} -> {name}")
        if length < self.minimum:
            raise CorruptRecordError(
                f"{name} {length} is smaller than the minimum {self.minimum}",
                position=position,
                field=name,
            )
        left = remaining(stream)
        if length > left:
            raise self.overrun(
                f"{name} claims {length} bytes, only {left} left", position=position, field=name
            )
        substream = BytesIOWithOffsets.from_reading(stream, length, path)
        try:
            obj = self.subcon._parsereport(substream, context, path)
        except TruncatedError as error:
            if self.inner is None:
                raise
            raise _convert(error, self.inner) from None
        unread = remaining(substream)
        if unread:
            raise self.leftover(
                f"{unread} bytes left unread inside {name} {length}",
                position=substream.tell(),
                field=name,
            )
        return obj

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        inner = io.BytesIO()
        built = self.subcon._build(obj, inner, context, path)
        data = inner.getvalue()
        self.lengthfield._build(len(data), stream, context, path)
        stream.write(data)
        return built

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


def _convert(error: FormatError, klass: ErrorClass) -> FormatError:
    converted = klass(error.message, file=error.file, position=error.position, field=error.field)
    converted.__cause__ = error
    return converted


class Checksummed(AnySubconstruct):
    """A checksum field followed by the bytes it covers, up to the stream's end.

    Kafka puts the CRC *before* the bytes it covers (v2: CRC at 17 covers
    [21, end); v0/v1: CRC at 12 covers magic..end), so a plain ``Checksum``
    cannot be used: parsing hashes the rest of the enclosing sub-stream, then
    parses ``subcon`` from it; building builds ``subcon`` first and writes the
    hash in front. The parse result is the subcon's container plus
    ``crc`` (stored) and ``crc_valid``. A mismatch raises ChecksumError at the
    CRC field unless the context parameter ``verify_crc`` is False. Covered
    bytes the subcon leaves unread raise ``leftover`` (when given): the CRC
    swallows the rest of the sub-stream, so a size prefix around it can no
    longer see them.
    """

    def __init__(
        self,
        checksumfield: Construct[int, int],
        hashfunc: Callable[[bytes], int],
        subcon: Construct[Any, Any],
        *,
        leftover: type[FormatError] | None = None,
        leftover_field: str = "size",
    ) -> None:
        super().__init__(subcon)
        self.checksumfield = checksumfield
        self.hashfunc = hashfunc
        self.leftover = leftover
        self.leftover_field = leftover_field

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> Container[Any]:
        position = stream.tell()
        stored = self.checksumfield._parsereport(stream, context, f"{path} -> crc")
        start = stream.tell()
        covered = stream.read()
        computed = self.hashfunc(covered)
        valid = stored == computed
        if not valid and context._params.get("verify_crc", True):
            raise ChecksumError(stored, computed, position=position, field="crc")
        covered_stream = BytesIOWithOffsets(covered, stream, start)
        obj = self.subcon._parsereport(covered_stream, context, path)
        unread = start + len(covered) - covered_stream.tell()
        if unread and self.leftover is not None:
            raise self.leftover(
                f"{unread} bytes left unread inside {self.leftover_field}",
                position=covered_stream.tell(),
                field=self.leftover_field,
            )
        obj["crc"] = stored
        obj["crc_valid"] = valid
        return obj  # type: ignore[no-any-return]

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        inner = io.BytesIO()
        built = self.subcon._build(obj, inner, context, path)
        data = inner.getvalue()
        self.checksumfield._build(self.hashfunc(data), stream, context, path)
        stream.write(data)
        return built

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


class CountedArray(AnySubconstruct):
    """``count`` (evaluated from the context) elements of ``subcon``.

    A negative count is ``negative`` (Kafka: InvalidRecordException "Found
    invalid number of record headers" / "invalid record count"). A huge count
    cannot make us loop long: every element needs at least one byte, so the
    parse stops at the end of the bounded sub-stream with a typed error, which
    ``truncated`` (when given) converts: fewer records than the count says is
    Kafka's InvalidRecordException, not a torn write. ``at`` (a context
    lambda, typically a ``Tell`` taken before the count) locates the count
    field for the error.
    """

    def __init__(
        self,
        count: Any,
        subcon: Construct[Any, Any],
        *,
        what: str,
        negative: ErrorClass = InvalidRecordError,
        truncated: ErrorClass | None = None,
        at: Any = None,
    ) -> None:
        super().__init__(subcon)
        self.count = count
        self.at = at
        self.what = what
        self.negative = negative
        self.truncated = truncated

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> ListContainer[Any]:
        count = evaluate(self.count, context)
        if count < 0:
            position = stream.tell() if self.at is None else evaluate(self.at, context)
            raise self.negative(
                f"Found invalid {self.what} {count}", position=position, field=self.what
            )
        out: ListContainer[Any] = ListContainer()
        try:
            for index in range(count):
                context._index = index
                out.append(self.subcon._parsereport(stream, context, path))
        except TruncatedError as error:
            if self.truncated is None:
                raise
            raise _convert(error, self.truncated) from None
        return out

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        for index, element in enumerate(obj):
            context._index = index
            self.subcon._build(element, stream, context, path)
        return obj

    def _sizeof(self, context: Any, path: str) -> int:
        raise SizeofError("variable size", path=path)


class ExpectEnd(_NoneConstruct):
    """Nothing may follow: leftover bytes raise ``error`` with ``message``."""

    def __init__(self, error: ErrorClass, message: str) -> None:
        super().__init__()
        self.error = error
        self.message = message
        self.flagbuildnone = True

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> None:
        left = remaining(stream)
        if left:
            raise self.error(
                f"{self.message} ({left} bytes)", position=stream.tell(), field=field_name(path)
            )

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        return None

    def _sizeof(self, context: Any, path: str) -> int:
        return 0


class Ensure(_NoneConstruct):
    """A rule over fields parsed so far: ``check(context)`` returns None or a message.

    The error is raised at ``back`` bytes before the current position, i.e. at
    the field the rule is about. Building checks nothing.
    """

    def __init__(
        self, check: Callable[[Any], str | None], error: ErrorClass, field: str, back: int
    ) -> None:
        super().__init__()
        self.check = check
        self.error = error
        self.field = field
        self.back = back
        self.flagbuildnone = True

    def _parse(self, stream: IO[bytes], context: Any, path: str) -> None:
        problem = self.check(context)
        if problem is not None:
            raise self.error(problem, position=stream.tell() - self.back, field=self.field)

    def _build(self, obj: Any, stream: IO[bytes], context: Any, path: str) -> Any:
        return None

    def _sizeof(self, context: Any, path: str) -> int:
        return 0
