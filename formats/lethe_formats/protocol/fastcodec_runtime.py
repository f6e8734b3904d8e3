"""What the generated fast codecs call at run time (see :mod:`fastcodec`).

The generated functions are plain Python over ``bytes`` and a ``bytearray``;
the few steps that are loops rather than one expression live here: unsigned
varints, a tagged-field section of unknown fields, writing a tagged section,
and splitting the output around the large values that were not copied. None of
them reports an error: they raise, and the caller runs the Construct codec.
"""

from __future__ import annotations

import uuid
from typing import Any

from lethe_formats.protocol.schema import RawTaggedField
from lethe_formats.varint import (
    encode_uvarint,
    encode_varint,
    encode_varlong,
    read_varint,
    read_varlong,
)

__all__ = ["OWN_BUFFER_BYTES", "Bail", "join_parts", "runtime_names"]

#: ``bytes``/``records`` values at least this long are passed through uncopied.
OWN_BUFFER_BYTES = 32 * 1024


class Bail(Exception):  # noqa: N818 - not an error: a request to take the slow path
    """Something the fast path does not vouch for: run the Construct codec."""


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    """A Kafka unsigned varint of at most 5 bytes and 32 bits, else :class:`Bail`."""
    result = 0
    for shift in (0, 7, 14, 21, 28):
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result > 0xFFFFFFFF:
                raise Bail
            return result, pos
    raise Bail


def _unknown_tags(data: bytes, pos: int) -> tuple[tuple[RawTaggedField, ...], int]:
    """A tagged section of a struct that knows no tags: every field is kept raw."""
    count, pos = _uvarint(data, pos)
    if count > len(data) - pos:
        raise Bail
    unknown = []
    for _ in range(count):
        tag, pos = _uvarint(data, pos)
        size, pos = _uvarint(data, pos)
        end = pos + size
        if end > len(data):
            raise Bail
        unknown.append(RawTaggedField(tag, data[pos:end]))
        pos = end
    return tuple(unknown), pos


def _write_tagged(
    buf: bytearray, big: list[tuple[int, Any]] | None, entries: list[tuple[int, Any]]
) -> None:
    """The tagged-field section from (tag, payload) entries, ascending tags."""
    entries.sort(key=lambda entry: entry[0])
    buf += encode_uvarint(len(entries))
    for tag, data in entries:
        buf += encode_uvarint(tag)
        size = len(data)
        buf += encode_uvarint(size)
        if size >= OWN_BUFFER_BYTES and big is not None:
            big.append((len(buf), data if type(data) is bytes else bytes(data)))
        else:
            buf += data


def join_parts(buf: bytearray, big: list[tuple[int, Any]]) -> list[Any]:
    """``buf`` split at the noted offsets with the large values in between."""
    parts: list[Any] = []
    start = 0
    for offset, value in big:
        if offset > start:
            parts.append(bytes(buf[start:offset]))
        parts.append(value)
        start = offset
    if len(buf) > start:
        parts.append(bytes(buf[start:]))
    return parts


def runtime_names() -> dict[str, Any]:
    """The globals every generated function sees (names as the generator writes them)."""
    return {
        "_Bail": Bail,
        "_uvarint": _uvarint,
        "_uvarint_bytes": encode_uvarint,
        "_unknown_tags": _unknown_tags,
        "_write_tagged": _write_tagged,
        "_read_varint": read_varint,
        "_read_varlong": read_varlong,
        "_encode_varint": encode_varint,
        "_encode_varlong": encode_varlong,
        "_UUID": uuid.UUID,
        "_Raw": RawTaggedField,
        "_MISSING": Bail,  # any unique object: a decoded value is never this class
        "_BIG": OWN_BUFFER_BYTES,
    }
