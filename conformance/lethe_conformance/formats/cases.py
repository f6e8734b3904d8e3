"""Loading format cases: find them, validate them, resolve their inputs.

Theory of operation
-------------------
A case is one JSON file, ``fixtures/formats/<kind>/<valid|invalid>/<name>.json``
(schema: ``fixtures/schema/format-case.schema.json``). Loading checks, for
every file, before any implementation runs:

1. it parses as JSON and validates against the schema;
2. its folder agrees with its ``kind`` and ``valid`` members;
3. its input resolves: inline hex or text, or a byte range of a file under
   ``fixtures/`` whose sha256 matches (the range must lie inside the file,
   and the path may not leave ``fixtures/``). Text kinds (``checkpoint``,
   ``partition-metadata``) get ``{"text": ...}``, binary kinds
   ``{"hex": ...}``; a file input is converted accordingly.

Any failure is a :class:`CaseFileError` naming the file: a broken suite is
reported as such, never run as if it were complete. The resolved
:class:`Case` carries the exact request an adapter receives
(:meth:`Case.request`), so in-process and subprocess adapters see the same
thing. This module imports no decoder: it serves any implementation.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = [
    "BINARY_KINDS",
    "KINDS",
    "TEXT_KINDS",
    "Case",
    "CaseFileError",
    "default_cases_dir",
    "default_fixtures_root",
    "load_case",
    "load_cases",
]

TEXT_KINDS = ("checkpoint", "partition-metadata")
BINARY_KINDS = (
    "record-batch",
    "log-segment",
    "record",
    "control-record",
    "offset-index",
    "time-index",
    "txn-index",
    "producer-snapshot",
)
KINDS = BINARY_KINDS + TEXT_KINDS
SCHEMA_NAME = "format-case.schema.json"


class CaseFileError(Exception):
    """A case file that cannot be used; the message names the file."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


def default_fixtures_root() -> Path:
    """``fixtures/`` of an installed lethe (package ``lethe_fixtures``) or of a checkout."""
    spec = importlib.util.find_spec("lethe_fixtures")
    if spec is not None and spec.submodule_search_locations is not None:
        for location in spec.submodule_search_locations:
            if (Path(location) / "formats").is_dir():
                return Path(location)
    checkout = Path(__file__).resolve().parents[3] / "fixtures"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError("no fixtures/ found: pass the cases directory explicitly")


def default_cases_dir() -> Path:
    return default_fixtures_root() / "formats"


@dataclass(frozen=True)
class Case:
    """A validated case with its input resolved to inline hex or text."""

    id: str
    path: Path
    kind: str
    description: str
    valid: bool
    input: dict[str, str]
    context: dict[str, Any] | None
    expected: Any
    error: str | None
    position: int | None
    line: int | None

    def request(self) -> dict[str, Any]:
        """What an adapter receives: ``{"kind", "input"[, "context"]}``."""
        request: dict[str, Any] = {"kind": self.kind, "input": self.input}
        if self.context is not None:
            request["context"] = self.context
        return request


@cache
def _validator(schema_path: Path) -> Any:
    """The case schema's validator (jsonschema is imported here, not at module load,
    so an adapter process that only needs ``KINDS`` starts fast)."""
    from jsonschema import (  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415
        Draft202012Validator,
    )

    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _schema_for(cases_dir: Path) -> Path:
    beside = cases_dir.parent / "schema" / SCHEMA_NAME
    return beside if beside.is_file() else default_fixtures_root() / "schema" / SCHEMA_NAME


def _file_bytes(path: Path, ref: dict[str, Any], fixtures: Path) -> bytes:
    relative = PurePosixPath(ref["file"])
    if relative.is_absolute() or ".." in relative.parts:
        raise CaseFileError(path, f"input file {ref['file']} leaves fixtures/")
    target = fixtures / relative
    if not target.is_file():
        raise CaseFileError(path, f"input file {ref['file']} does not exist")
    whole = target.read_bytes()
    if hashlib.sha256(whole).hexdigest() != ref["sha256"]:
        raise CaseFileError(path, f"input file {ref['file']} does not match its sha256")
    offset = ref.get("offset", 0)
    length = ref.get("length", len(whole) - offset)
    if offset + length > len(whole):
        raise CaseFileError(path, f"byte range {offset}+{length} is past the end of {ref['file']}")
    return whole[offset : offset + length]


def _resolve_input(path: Path, kind: str, raw: dict[str, Any], fixtures: Path) -> dict[str, str]:
    text_kind = kind in TEXT_KINDS
    if "hex" in raw or "text" in raw:
        if ("text" in raw) != text_kind:
            want = "text" if text_kind else "hex"
            raise CaseFileError(path, f"kind {kind} takes a {want!r} input")
        return dict(raw)
    data = _file_bytes(path, raw, fixtures)
    if not text_kind:
        return {"hex": data.hex()}
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        raise CaseFileError(path, f"input file {raw['file']} is not UTF-8 text") from None


def load_case(path: Path, cases_dir: Path) -> Case:
    """Read, validate and resolve one case file."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CaseFileError(path, f"unreadable: {exc}") from None
    errors = sorted(_validator(_schema_for(cases_dir)).iter_errors(raw), key=lambda e: e.path)
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(top)"
        raise CaseFileError(path, f"does not match the case schema at {where}: {errors[0].message}")
    relative = path.relative_to(cases_dir)
    folder = "valid" if raw["valid"] else "invalid"
    if relative.parts[:2] != (raw["kind"], folder) or len(relative.parts) != 3:
        raise CaseFileError(
            path, f"a {folder} {raw['kind']} case belongs in {raw['kind']}/{folder}/"
        )
    return Case(
        id=relative.with_suffix("").as_posix(),
        path=path,
        kind=raw["kind"],
        description=raw["description"],
        valid=raw["valid"],
        input=_resolve_input(path, raw["kind"], raw["input"], cases_dir.parent),
        context=raw.get("context"),
        expected=raw.get("expected"),
        error=raw.get("error"),
        position=raw.get("position"),
        line=raw.get("line"),
    )


def load_cases(cases_dir: Path | None = None, kinds: Iterable[str] | None = None) -> list[Case]:
    """Every case under ``cases_dir`` (default: the installed suite), sorted by id,
    optionally only ``kinds``; raises CaseFileError for the first bad file."""
    root = cases_dir if cases_dir is not None else default_cases_dir()
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a directory of format cases")
    wanted = set(kinds) if kinds is not None else set(KINDS)
    unknown = wanted - set(KINDS)
    if unknown:
        raise ValueError(f"unknown kind(s): {', '.join(sorted(unknown))}")
    paths = sorted(root.rglob("*.json"))
    for path in paths:
        parts = path.relative_to(root).parts
        if len(parts) != 3 or parts[0] not in KINDS or parts[1] not in ("valid", "invalid"):
            raise CaseFileError(path, "not in a <kind>/valid/ or <kind>/invalid/ folder")
    selected = [p for p in paths if p.relative_to(root).parts[0] in wanted]
    return [load_case(path, root) for path in selected]
