"""The shape of an authored case, and the helpers every authoring module shares.

Theory of operation
-------------------
An authoring module returns :class:`Authored` values: the case's path stem
(``record-batch/valid/codec-gzip``), the JSON object written to
``fixtures/formats/<stem>.json``, and the input bytes (so an invalid case can
be derived from a valid one without re-reading files). :func:`valid` and
:func:`invalid` build the JSON objects with the members in a fixed order, so
re-authoring gives byte-identical files.

Invalid cases name the valid case they were derived from and say, in one
sentence, the single change made (``mutation``); :func:`patched` applies a
byte patch and reports what it replaced.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Authored", "file_input", "invalid", "patched", "valid"]


@dataclass(frozen=True)
class Authored:
    """One case: where it goes, what it says, and its input bytes."""

    stem: str
    case: dict[str, Any]
    data: bytes

    @property
    def kind(self) -> str:
        return self.stem.split("/")[0]


def file_input(
    fixtures: Path, relative: str, offset: int = 0, length: int | None = None
) -> tuple[dict[str, Any], bytes]:
    """An input that points into a fixture file: (JSON member, the bytes it selects)."""
    whole = (fixtures / relative).read_bytes()
    end = len(whole) if length is None else offset + length
    ref: dict[str, Any] = {"file": relative, "sha256": hashlib.sha256(whole).hexdigest()}
    if offset or length is not None:
        ref["offset"] = offset
        ref["length"] = end - offset
    return ref, whole[offset:end]


def _input(data: bytes, text: bool) -> dict[str, str]:
    return {"text": data.decode("utf-8")} if text else {"hex": data.hex()}


def valid(
    stem: str,
    description: str,
    data: bytes,
    expected: Any,
    *,
    provenance: str,
    source: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
    text: bool = False,
) -> Authored:
    """A valid case; ``source`` (a file reference) replaces the inline input."""
    case: dict[str, Any] = {
        "description": description,
        "kind": stem.split("/", maxsplit=1)[0],
        "input": source if source is not None else _input(data, text),
    }
    if context is not None:
        case["context"] = context
    case |= {"valid": True, "expected": expected, "provenance": provenance}
    return Authored(f"{stem.split('/', maxsplit=1)[0]}/valid/{stem.split('/')[1]}", case, data)


def invalid(  # noqa: PLR0917 - a case reads best positionally
    origin: Authored,
    name: str,
    description: str,
    data: bytes,
    error: str,
    change: str,
    *,
    position: int | None = None,
    line: int | None = None,
    text: bool = False,
) -> Authored:
    """An invalid case derived from ``origin`` by exactly one change."""
    assert name == error or name.startswith(error + "-"), f"{name} must be named after {error}"
    case: dict[str, Any] = {
        "description": description,
        "kind": origin.kind,
        "input": _input(data, text),
    }
    if "context" in origin.case:
        case["context"] = origin.case["context"]
    case |= {"valid": False, "error": error}
    if position is not None:
        case["position"] = position
    if line is not None:
        case["line"] = line
    case["mutation"] = {"from": origin.stem, "change": change}
    return Authored(f"{origin.kind}/invalid/{name}", case, data)


def patched(data: bytes, at: int, new: bytes) -> tuple[bytes, str]:
    """``data`` with ``new`` written at ``at``: (bytes, "bytes X at N: old -> new")."""
    old = data[at : at + len(new)]
    assert old != new, "a patch must change something"
    return data[:at] + new + data[at + len(new) :], f"bytes at {at}: {old.hex()} -> {new.hex()}"
