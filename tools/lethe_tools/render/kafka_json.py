"""Kafka's generated ``JsonConverter`` output for coordinator records, as Jackson prints it.

Theory of operation
-------------------
``kafka-dump-log --offsets-decoder`` prints each ``__consumer_offsets`` key and
value through the message's generated ``JsonConverter.write(message, version)``
and Jackson's ``ObjectNode.toString()``. The converter walks the message's
fields in schema order and writes those present in the version (a tagged field
only when it differs from its default), named in camelCase; Jackson then
prints compactly (no spaces) with these value forms (a tagged struct field is
compared with an empty struct, so a null one is written):

* integers as numbers, strings as JSON strings (only ``"`` ``\\`` and control
  characters escaped: ``\\b \\t \\n \\f \\r``, others as ``\\u00XX`` with
  upper-case hex; everything else, non-ASCII included, printed as is);
* bytes (``BinaryNode``) as standard base64 with padding;
* a Kafka Uuid as its base64url text (``Uuid.toString``); null as ``null``.

lethe's coordinator tables (:mod:`lethe_formats.coordinator`) hold the same
facts (fields, versions, tags), so :func:`message_json` walks them.
"""

from __future__ import annotations

import base64
import dataclasses
from typing import Any

from lethe_formats.coordinator._message import StructSpec, present, struct_spec
from lethe_formats.storage.kafka_uuid import KafkaUuid

__all__ = ["camel", "json_text", "message_json"]

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def camel(name: str) -> str:
    """``commit_timestamp`` -> ``commitTimestamp`` (Kafka's field names)."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def _string(text: str) -> str:
    out = []
    for char in text:
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif char < " ":
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def json_text(value: Any) -> str:
    """Jackson's compact text of a JSON value built from dicts, lists and scalars."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_string(k)}:{json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(json_text(item) for item in value) + "]"
    raise TypeError(f"no JSON form for {type(value).__name__}")


def _value(value: Any, version: int, flexible: bool) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, KafkaUuid):
        return str(value)
    if isinstance(value, tuple):
        return [_value(item, version, flexible) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return message_json(value, version, flexible)
    return value


def _is_default(kind: object, value: Any, default: Any) -> bool:
    """A tagged field is written only when it is not its default. For a struct the
    generated check compares with an empty struct, so null always counts as set."""
    if isinstance(kind, StructSpec):
        return False
    return bool(value == default)


def message_json(message: Any, version: int, flexible: bool) -> dict[str, Any]:
    """The ``JsonConverter.write`` tree of a coordinator dataclass at ``version``."""
    defaults = {f.name: f.default for f in dataclasses.fields(message)}
    node: dict[str, Any] = {}
    for field in struct_spec(type(message)).fields:
        if not present(field, version, flexible):
            continue
        value = getattr(message, field.name)
        if field.tag is not None and _is_default(field.kind, value, defaults.get(field.name)):
            continue
        node[camel(field.name)] = _value(value, version, flexible)
    return node
