"""Generated plain-Python codecs for the protocol messages: the fast path.

Theory of operation
-------------------
The Construct codecs of :mod:`~lethe_formats.protocol.compiler` are the
definition: they name every fault with its field and byte position. They are
also slow (a stream object, a parse path string and a report frame per
field), and a broker decodes and encodes a message per request. So for each
compiled :class:`~lethe_formats.protocol.compiler.StructCodec` this module
writes the Python source of two plain functions, as :mod:`dataclasses` writes
``__init__``, and compiles them once:

* ``decode(data, pos) -> (value, end)`` over ``bytes``, with
  ``struct.unpack_from``, inline unsigned varints, slices and a direct call of
  the dataclass;
* ``encode(value, buf, big)``, appending to a ``bytearray``; a ``bytes`` or
  ``records`` value of at least ``OWN_BUFFER_BYTES`` is not copied but noted
  in ``big`` as (offset in ``buf``, the value itself), so a Fetch response's
  record sets go out as the objects the message holds (only ``len()`` is asked
  of them; ``bytes()`` only of small ones).

The source is generated from the StructCodec tree itself (the field list,
``field_codec``'s compact/nullable choices, tagged and absent fields), so there
is still one definition per message. The generated code never reports an
error: on anything unusual (truncation, a bad length, a null where none is
allowed, a duplicate tag, a value out of range, any exception at all) it
raises, and the caller runs the Construct codec, which then returns the value
or raises the exact :class:`~lethe_formats.errors.FormatError`. Every check the
Construct codec makes on input is made here too, so the fast path never
returns a value the Construct path would refuse.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

from lethe_formats.primitives import Int8, Int16, Int32, Int64, VarInt, VarLong
from lethe_formats.protocol.fastcodec_runtime import OWN_BUFFER_BYTES, join_parts, runtime_names
from lethe_formats.protocol.schema import FieldSpec, Struct
from lethe_formats.protocol.wire import (
    STRING_MAX_BYTES,
    AnyConstruct,
    Array,
    Bool,
    Bytes,
    Float64,
    NullableStruct,
    String,
    UInt16,
    UInt32,
    Uuid,
)

__all__ = ["OWN_BUFFER_BYTES", "FastCodec", "StructLayout", "generate", "join_parts"]

Decoder = Callable[[bytes, int], tuple[Any, int]]
Encoder = Callable[[Any, bytearray, "list[tuple[int, Any]] | None"], None]


class TaggedLayout(Protocol):
    """What the generator reads of a ``TaggedSection``."""

    known: dict[int, tuple[str, AnyConstruct, Any]]


class StructLayout(Protocol):
    """What the generator reads of a ``StructCodec`` (no import cycle)."""

    cls: type[Struct]
    regular: list[tuple[str, AnyConstruct]]
    absent: list[tuple[FieldSpec, Any]]

    @property
    def tags(self) -> TaggedLayout | None: ...


class FastCodec(NamedTuple):
    """The generated pair of one (class, version, flexible)."""

    decode: Decoder
    encode: Encoder


#: Fixed-width codecs: struct format character (None: written by hand).
_FIXED_FORMATS: dict[int, str] = {
    id(Int8): "b",
    id(Int16): "h",
    id(Int32): "i",
    id(Int64): "q",
    id(UInt16): "H",
    id(UInt32): "I",
    id(Float64): "d",
}


class _Read(NamedTuple):
    """Where generated decode code goes: indent, names of the buffer and position."""

    indent: int
    data: str
    pos: str

    def deeper(self, levels: int = 1) -> _Read:
        return self._replace(indent=self.indent + levels)


class _Write(NamedTuple):
    """Where generated encode code goes: indent, names of the buffer and big-value list."""

    indent: int
    buf: str
    big: str

    def deeper(self, levels: int = 1) -> _Write:
        return self._replace(indent=self.indent + levels)


def _classic_width(wire: Bytes | Array) -> str:
    """Struct format of a non-flexible length: int16 for strings, else int32."""
    return "h" if isinstance(wire, String) else "i"


def _runs(regular: list[tuple[str, AnyConstruct]]) -> list[list[tuple[str, AnyConstruct]]]:
    """The fields in order, consecutive fixed-width ints and floats grouped (one struct call)."""
    runs: list[list[tuple[str, AnyConstruct]]] = []
    for field, wire in regular:
        fixed = id(wire) in _FIXED_FORMATS
        if fixed and runs and id(runs[-1][-1][1]) in _FIXED_FORMATS:
            runs[-1].append((field, wire))
        else:
            runs.append([(field, wire)])
    return runs


def _run_struct(run: list[tuple[str, AnyConstruct]]) -> struct.Struct:
    return struct.Struct(">" + "".join(_FIXED_FORMATS[id(wire)] for _, wire in run))


class _Source:
    """Lines of Python source with indentation and fresh local names."""

    def __init__(self, env: dict[str, Any]) -> None:
        self.lines: list[str] = []
        self.env = env
        self._names = itertools.count()

    def fresh(self, stem: str) -> str:
        return f"{stem}{next(self._names)}"

    def const(self, value: Any, stem: str = "k") -> str:
        """A name bound to ``value`` in the generated functions' globals."""
        name = f"_{stem}{len(self.env)}"
        self.env[name] = value
        return name

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)


class _Generator:
    """Writes the decode and encode source of every struct codec it is given."""

    def __init__(self) -> None:
        self.env: dict[str, Any] = runtime_names()
        self.done: dict[int, tuple[str, str]] = {}
        self.chunks: list[str] = []

    # ------------------------------------------------------------------ structs

    def struct(self, codec: StructLayout) -> tuple[str, str]:
        """Names of the decode and encode functions of ``codec`` (generated once)."""
        names = self.done.get(id(codec))
        if names is not None:
            return names
        index = len(self.done)
        names = self.done[id(codec)] = (f"_dec{index}", f"_enc{index}")
        self.chunks.append(self._decoder(codec, names[0]))
        self.chunks.append(self._encoder(codec, names[1]))
        return names

    def _decoder(self, codec: StructLayout, name: str) -> str:
        src = _Source(self.env)
        src.emit(0, f"def {name}(d, p):")
        args: list[str] = []
        for run in _runs(codec.regular):
            targets = [src.fresh("v") for _ in run]
            fields = [field for field, _ in run]
            args.extend(f"{field}={target}" for field, target in zip(fields, targets, strict=True))
            if len(run) == 1:
                self.decode_value(src, _Read(1, "d", "p"), run[0][1], targets[0])
                continue
            packer = _run_struct(run)
            src.emit(1, f"{', '.join(targets)} = {src.const(packer.unpack_from, 'unpack')}(d, p)")
            src.emit(1, f"p += {packer.size}")
        cls = src.const(codec.cls, "cls")
        if codec.tags is None:
            src.emit(1, f"return {cls}({', '.join(args)}), p")
            return "\n".join(src.lines)
        known = self._decode_tagged(src, codec.tags)
        args.append("_unknown_tagged_fields=tuple(unknown)")  # () stays ()
        if not known:
            src.emit(1, f"return {cls}({', '.join(args)}), p")
            return "\n".join(src.lines)
        src.emit(1, f"kw = dict({', '.join(args)})")
        for field, target in known:
            src.emit(1, f"if {target} is not _MISSING:")
            src.emit(2, f"kw[{field!r}] = {target}")
        src.emit(1, f"return {cls}(**kw), p")
        return "\n".join(src.lines)

    def _decode_tagged(self, src: _Source, tags: TaggedLayout) -> list[tuple[str, str]]:
        """Emit the tagged section; return (field, local) of each known tag."""
        known = [(field, src.fresh("t")) for field, _, _ in tags.known.values()]
        for _, target in known:
            src.emit(1, f"{target} = _MISSING")
        src.emit(1, "if d[p] == 0:")  # the common case: no tagged field at all
        src.emit(2, "p += 1")
        src.emit(2, "unknown = ()")
        src.emit(1, "else:")
        if not known:
            src.emit(2, "unknown, p = _unknown_tags(d, p)")
            return known
        src.emit(2, "unknown = []")
        src.emit(2, "count, p = _uvarint(d, p)")
        src.emit(2, "if count > len(d) - p:")
        src.emit(3, "raise _Bail")
        src.emit(2, "for _ in range(count):")
        src.emit(3, "tag, p = _uvarint(d, p)")
        src.emit(3, "size, p = _uvarint(d, p)")
        src.emit(3, "end = p + size")
        src.emit(3, "if end > len(d):")
        src.emit(4, "raise _Bail")
        keyword = "if"
        for (tag, (_, wire, _)), (_, target) in zip(tags.known.items(), known, strict=True):
            src.emit(3, f"{keyword} tag == {tag}:")
            keyword = "elif"
            src.emit(4, f"if {target} is not _MISSING:")
            src.emit(5, "raise _Bail")
            src.emit(4, "sub = d[p:end]")
            src.emit(4, "q = 0")
            self.decode_value(src, _Read(4, "sub", "q"), wire, target)
            src.emit(4, "if q != size:")
            src.emit(5, "raise _Bail")
        src.emit(3, "else:")
        src.emit(4, "unknown.append(_Raw(tag, d[p:end]))")
        src.emit(3, "p = end")
        return known

    def _encoder(self, codec: StructLayout, name: str) -> str:
        src = _Source(self.env)
        cls = src.const(codec.cls, "cls")
        src.emit(0, f"def {name}(o, buf, big):")
        src.emit(1, f"if not isinstance(o, {cls}):")
        src.emit(2, "raise _Bail")
        for spec, default in codec.absent:
            if not spec.ignorable:
                src.emit(1, f"if o.{spec.name} != {src.const(default)}:")
                src.emit(2, "raise _Bail")
        if codec.tags is None:
            src.emit(1, "if o._unknown_tagged_fields:")
            src.emit(2, "raise _Bail")
        for run in _runs(codec.regular):
            if len(run) > 1:
                pack = src.const(_run_struct(run).pack, "pack")
                src.emit(1, f"buf += {pack}({', '.join(f'o.{field}' for field, _ in run)})")
                continue
            value = src.fresh("v")
            src.emit(1, f"{value} = o.{run[0][0]}")
            self.encode_value(src, _Write(1, "buf", "big"), run[0][1], value)
        if codec.tags is not None:
            self._encode_tagged(src, codec.tags)
        src.emit(1, "return None")
        return "\n".join(src.lines)

    def _encode_tagged(self, src: _Source, tags: TaggedLayout) -> None:
        if not tags.known:
            src.emit(1, "if not o._unknown_tagged_fields:")
            src.emit(2, "buf.append(0)")
            src.emit(2, "return None")
        src.emit(1, "entries = []")
        for tag, (field, wire, default) in tags.known.items():
            value = src.fresh("v")
            src.emit(1, f"{value} = o.{field}")
            src.emit(1, f"if {value} != {src.const(default)}:")
            src.emit(2, "t = bytearray()")
            self.encode_value(src, _Write(2, "t", "None"), wire, value)
            src.emit(2, f"entries.append(({tag}, t))")
        src.emit(1, "if o._unknown_tagged_fields:")
        src.emit(2, "entries.extend((raw.tag, raw.data) for raw in o._unknown_tagged_fields)")
        src.emit(1, "if entries:")
        src.emit(2, "_write_tagged(buf, big, entries)")
        src.emit(1, "else:")
        src.emit(2, "buf.append(0)")

    # ------------------------------------------------------------------- values

    def decode_value(self, src: _Source, at: _Read, wire: AnyConstruct, target: str) -> None:
        """Emit code reading one ``wire`` value at ``at.data[at.pos]`` into ``target``."""
        i, d, p = at
        fmt = _FIXED_FORMATS.get(id(wire))
        if fmt is not None:
            unpack = src.const(struct.Struct(">" + fmt).unpack_from, "unpack")
            src.emit(i, f"{target} = {unpack}({d}, {p})[0]")
            src.emit(i, f"{p} += {struct.calcsize('>' + fmt)}")
        elif wire is Bool:
            src.emit(i, f"{target} = {d}[{p}] != 0")
            src.emit(i, f"{p} += 1")
        elif wire is Uuid:
            src.emit(i, f"if {p} + 16 > len({d}):")
            src.emit(i + 1, "raise _Bail")
            src.emit(i, f"{target} = _UUID(bytes={d}[{p}:{p} + 16])")
            src.emit(i, f"{p} += 16")
        elif wire is VarInt or wire is VarLong:
            reader = "_read_varint" if wire is VarInt else "_read_varlong"
            src.emit(i, f"{target}, {p} = {reader}({d}, {p})")
        elif isinstance(wire, Bytes):
            self._decode_bytes(src, at, wire, target)
        elif isinstance(wire, Array):
            self._decode_array(src, at, wire, target)
        elif isinstance(wire, NullableStruct):
            src.emit(i, f"marker = {d}[{p}]")
            src.emit(i, f"{p} += 1")
            src.emit(i, "if marker >= 0x80:")
            src.emit(i + 1, f"{target} = None")
            src.emit(i, "else:")
            self.decode_value(src, at.deeper(), wire.struct_codec, target)
        elif hasattr(wire, "regular"):
            decoder, _ = self.struct(wire)  # type: ignore[arg-type]
            src.emit(i, f"{target}, {p} = {decoder}({d}, {p})")
        else:
            raise TypeError(f"no fast decoder for {wire!r}")

    def _decode_length(self, src: _Source, at: _Read, wire: Bytes | Array, target: str) -> None:
        """A length or count into ``target``: -1 is null, below -1 bails."""
        i, d, p = at
        if wire.compact:
            src.emit(i, f"{target} = {d}[{p}]")
            src.emit(i, f"if {target} < 0x80:")
            src.emit(i + 1, f"{p} += 1")
            src.emit(i, "else:")
            src.emit(i + 1, f"{target}, {p} = _uvarint({d}, {p})")
            src.emit(i, f"{target} -= 1")
            return
        width = _classic_width(wire)
        unpack = src.const(struct.Struct(">" + width).unpack_from, "unpack")
        src.emit(i, f"{target} = {unpack}({d}, {p})[0]")
        src.emit(i, f"{p} += {struct.calcsize('>' + width)}")
        src.emit(i, f"if {target} < -1:")
        src.emit(i + 1, "raise _Bail")

    def _decode_bytes(self, src: _Source, at: _Read, wire: Bytes, target: str) -> None:
        i, d, p = at
        is_string = isinstance(wire, String)
        size = src.fresh("n")
        self._decode_length(src, at, wire, size)
        src.emit(i, f"if {size} == -1:")
        src.emit(i + 1, f"{target} = None" if wire.nullable else "raise _Bail")
        src.emit(i, "else:")
        end = src.fresh("e")
        src.emit(i + 1, f"{end} = {p} + {size}")
        limit = f" or {size} > {STRING_MAX_BYTES}" if is_string else ""
        src.emit(i + 1, f"if {end} > len({d}){limit}:")
        src.emit(i + 2, "raise _Bail")
        if is_string:
            src.emit(i + 1, f"{target} = {d}[{p}:{end}].decode('utf-8', 'replace')")
        else:
            src.emit(i + 1, f"{target} = {d}[{p}:{end}]")
        src.emit(i + 1, f"{p} = {end}")

    def _decode_array(self, src: _Source, at: _Read, wire: Array, target: str) -> None:
        i, d, p = at
        count = src.fresh("c")
        self._decode_length(src, at, wire, count)
        src.emit(i, f"if {count} == -1:")
        src.emit(i + 1, f"{target} = None" if wire.nullable else "raise _Bail")
        src.emit(i, "else:")
        src.emit(i + 1, f"if {count} > len({d}) - {p}:")
        src.emit(i + 2, "raise _Bail")
        items = src.fresh("items")
        item = src.fresh("item")
        src.emit(i + 1, f"{items} = []")
        src.emit(i + 1, f"for _ in range({count}):")
        self.decode_value(src, at.deeper(2), wire.element, item)
        src.emit(i + 2, f"{items}.append({item})")
        src.emit(i + 1, f"{target} = tuple({items})")

    def encode_value(self, src: _Source, at: _Write, wire: AnyConstruct, value: str) -> None:
        """Emit code appending ``value`` as ``wire`` to ``at.buf``."""
        i, buf, big = at
        fmt = _FIXED_FORMATS.get(id(wire))
        if fmt is not None:
            pack = src.const(struct.Struct(">" + fmt).pack, "pack")
            src.emit(i, f"{buf} += {pack}({value})")
        elif wire is Bool:
            src.emit(i, f"{buf} += b'\\x01' if {value} else b'\\x00'")
        elif wire is Uuid:
            src.emit(i, f"{buf} += {value}.bytes")
        elif wire is VarInt or wire is VarLong:
            writer = "_encode_varint" if wire is VarInt else "_encode_varlong"
            src.emit(i, f"{buf} += {writer}({value})")
        elif isinstance(wire, Bytes):
            self._encode_bytes(src, at, wire, value)
        elif isinstance(wire, Array):
            self._encode_array(src, at, wire, value)
        elif isinstance(wire, NullableStruct):
            src.emit(i, f"if {value} is None:")
            src.emit(i + 1, f"{buf} += b'\\xff'")
            src.emit(i, "else:")
            src.emit(i + 1, f"{buf}.append(1)")
            self.encode_value(src, at.deeper(), wire.struct_codec, value)
        elif hasattr(wire, "regular"):
            _, encoder = self.struct(wire)  # type: ignore[arg-type]
            src.emit(i, f"{encoder}({value}, {buf}, {big})")
        else:
            raise TypeError(f"no fast encoder for {wire!r}")

    def _encode_length(self, src: _Source, at: _Write, wire: Bytes | Array, size: str) -> None:
        i, buf, _ = at
        if wire.compact:
            src.emit(i, f"if {size} < 0x7F:")
            src.emit(i + 1, f"{buf}.append({size} + 1)")
            src.emit(i, "else:")
            src.emit(i + 1, f"{buf} += _uvarint_bytes({size} + 1)")
        else:
            pack = src.const(struct.Struct(">" + _classic_width(wire)).pack, "pack")
            src.emit(i, f"{buf} += {pack}({size})")

    def _encode_null(self, src: _Source, at: _Write, wire: Bytes | Array) -> None:
        i, buf, _ = at
        if not wire.nullable:
            src.emit(i, "raise _Bail")
        elif wire.compact:
            src.emit(i, f"{buf}.append(0)")
        else:
            src.emit(i, f"{buf} += {src.const(struct.pack('>' + _classic_width(wire), -1))}")

    def _encode_bytes(self, src: _Source, at: _Write, wire: Bytes, value: str) -> None:
        i, buf, big = at
        src.emit(i, f"if {value} is None:")
        self._encode_null(src, at.deeper(), wire)
        src.emit(i, "else:")
        size = src.fresh("n")
        raw = src.fresh("r")
        if isinstance(wire, String):
            src.emit(i + 1, f"{raw} = {value}.encode('utf-8')")
            src.emit(i + 1, f"{size} = len({raw})")
            src.emit(i + 1, f"if {size} > {STRING_MAX_BYTES}:")
            src.emit(i + 2, "raise _Bail")
            self._encode_length(src, at.deeper(), wire, size)
            src.emit(i + 1, f"{buf} += {raw}")
            return
        # Only len() is asked of a large value, and it is passed on as it is.
        src.emit(i + 1, f"{size} = len({value})")
        own = f"{size} >= _BIG and {big} is not None" if big != "None" else "False"
        src.emit(i + 1, f"if type({value}) is bytes or {own}:")
        src.emit(i + 2, f"{raw} = {value}")
        src.emit(i + 1, "else:")
        src.emit(i + 2, f"{raw} = bytes({value})")
        src.emit(i + 2, f"if len({raw}) != {size}:")
        src.emit(i + 3, "raise _Bail")
        self._encode_length(src, at.deeper(), wire, size)
        if big == "None":
            src.emit(i + 1, f"{buf} += {raw}")
            return
        src.emit(i + 1, f"if {size} >= _BIG and {big} is not None:")
        src.emit(i + 2, f"{big}.append((len({buf}), {raw}))")
        src.emit(i + 1, "else:")
        src.emit(i + 2, f"{buf} += {raw}")

    def _encode_array(self, src: _Source, at: _Write, wire: Array, value: str) -> None:
        i = at.indent
        src.emit(i, f"if {value} is None:")
        self._encode_null(src, at.deeper(), wire)
        src.emit(i, "else:")
        size = src.fresh("n")
        src.emit(i + 1, f"{size} = len({value})")
        self._encode_length(src, at.deeper(), wire, size)
        item = src.fresh("item")
        src.emit(i + 1, f"for {item} in {value}:")
        self.encode_value(src, at.deeper(2), wire.element, item)

    # ------------------------------------------------------------------- output

    def compile(self, root: StructLayout) -> FastCodec:
        decoder, encoder = self.struct(root)
        code = compile("\n\n".join(self.chunks), f"<lethe fastcodec {root.cls.__name__}>", "exec")
        exec(code, self.env)  # the source is generated above from the schema only
        return FastCodec(self.env[decoder], self.env[encoder])


def generate(codec: StructLayout) -> FastCodec:
    """The generated decode and encode functions of one compiled struct codec."""
    return _Generator().compile(codec)
