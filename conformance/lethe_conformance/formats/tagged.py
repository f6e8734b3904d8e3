"""Tagged JSON: how decoded values are written in format cases, and how they compare.

Theory of operation
-------------------
JSON numbers lose precision above 2^53 and JSON has no bytes type, so the
format cases (like toml-test's tagged JSON) spell values out:

* int64 fields (offsets, timestamps, producer ids) are decimal **strings**;
  narrower integers (int8/16/32, uint32 CRCs) are JSON numbers. Which fields
  are which is listed per kind in ``fixtures/formats/README.md``.
* bytes are ``{"utf8": "..."}`` (valid UTF-8 text) or ``{"hex": "..."}``
  (any bytes, lower- or upper-case hex); ``null`` is a null key or value.
  The two spellings are interchangeable: they compare equal when they encode
  the same bytes, so an implementation may always answer in hex.

:func:`compare` walks expected and actual side by side and returns every
difference with a JSON path (``$.records[2].key``). Types are compared, not
only values: ``"5"`` (an int64) is not ``5`` (an int32), ``true`` is not
``1``, and floats are never equal to anything. Objects must have exactly the
expected keys.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["bytes_value", "compare", "int64", "is_bytes_tag", "tag_bytes_to_bytes"]

_BYTES_KEYS = ({"hex"}, {"utf8"})


def int64(value: int) -> str:
    """An int64 as the cases write it: a decimal string."""
    return str(value)


def bytes_value(data: bytes | None) -> dict[str, str] | None:
    """``null``, ``{"utf8": ...}`` for printable UTF-8 text, else ``{"hex": ...}``."""
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": data.hex()}
    if text.isprintable():
        return {"utf8": text}
    return {"hex": data.hex()}


def is_bytes_tag(value: object) -> bool:
    """True for ``{"hex": str}`` or ``{"utf8": str}``."""
    return (
        isinstance(value, dict)
        and set(value) in _BYTES_KEYS
        and all(isinstance(v, str) for v in value.values())
    )


def tag_bytes_to_bytes(value: dict[str, str]) -> bytes:
    """The bytes a tag stands for; ValueError for bad hex."""
    if "hex" in value:
        return bytes.fromhex(value["hex"])
    return value["utf8"].encode("utf-8", "surrogatepass")


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "number"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if is_bytes_tag(value):
        return "bytes"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _compare_bytes(expected: dict[str, str], actual: object, path: str) -> list[str]:
    if not is_bytes_tag(actual):
        return [f"{path}: expected bytes {_show(expected)}, got {_kind(actual)} {_show(actual)}"]
    assert isinstance(actual, dict)
    want = tag_bytes_to_bytes(expected)
    try:
        got = tag_bytes_to_bytes(actual)
    except ValueError:
        return [f"{path}: {_show(actual)} is not valid hex"]
    if want != got:
        return [f"{path}: expected bytes {want.hex()} {_show(expected)}, got bytes {got.hex()}"]
    return []


def _compare_object(expected: dict[str, Any], actual: object, path: str) -> list[str]:
    if not isinstance(actual, dict) or is_bytes_tag(actual):
        return [f"{path}: expected an object, got {_kind(actual)} {_show(actual)}"]
    problems = [f"{path}.{key}: missing" for key in expected if key not in actual]
    problems += [f"{path}.{key}: unexpected member" for key in actual if key not in expected]
    for key, value in expected.items():
        if key in actual:
            problems += compare(value, actual[key], f"{path}.{key}")
    return problems


def _compare_array(expected: list[Any], actual: object, path: str) -> list[str]:
    if not isinstance(actual, list):
        return [f"{path}: expected an array, got {_kind(actual)} {_show(actual)}"]
    problems = []
    if len(actual) != len(expected):
        problems.append(f"{path}: expected {len(expected)} items, got {len(actual)}")
    for i, (want, got) in enumerate(zip(expected, actual, strict=False)):
        problems += compare(want, got, f"{path}[{i}]")
    return problems


def compare(expected: object, actual: object, path: str = "$") -> list[str]:
    """Every difference between ``expected`` and ``actual`` (empty when equal)."""
    if is_bytes_tag(expected):
        assert isinstance(expected, dict)
        return _compare_bytes(expected, actual, path)
    if isinstance(expected, dict):
        return _compare_object(expected, actual, path)
    if isinstance(expected, list):
        return _compare_array(expected, actual, path)
    if _kind(expected) != _kind(actual) or _kind(expected) == "float" or expected != actual:
        return [
            f"{path}: expected {_kind(expected)} {_show(expected)}, "
            f"got {_kind(actual)} {_show(actual)}"
        ]
    return []
