"""Helpers for the audit tests: Parquet tables as Python rows, kafka-dump-log output parsed.

``dump.txt`` (fixtures/golden/README.md) holds, per file, a line
``### bin/kafka-dump-log.sh --files <relative path> ...`` and that command's
verbatim output. Only what the tests compare is parsed: batch lines
(``baseOffset: ... isvalid: true``), record lines (``| offset: ...``), offset
index lines (``offset: N position: P``) and time index lines
(``timestamp: T offset: N``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

_COMMAND = "### bin/kafka-dump-log.sh --files "
_PAIR = re.compile(r"(\w+): (\[[^\]]*\]|\S+)")


def table_rows(out: Path, table: str) -> list[dict[str, Any]]:
    """Every row of a table the job wrote, as dicts."""
    rows: list[dict[str, Any]] = pq.read_table(out / table).to_pylist()
    return rows


def dump_sections(dump: Path) -> dict[Path, list[str]]:
    """Absolute file path -> stdout lines of its first kafka-dump-log command."""
    text = dump.read_bytes().decode("utf-8", errors="surrogateescape")
    sections: dict[Path, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n"):
        if line.startswith("### "):
            current = None
            if line.startswith(_COMMAND):
                name = line[len(_COMMAND) :].split(" ")[0]
                path = (dump.parent / name).resolve()
                if path not in sections:
                    current = sections[path] = []
        elif current is not None:
            current.append(line)
    return sections


def metadata(line: str) -> dict[str, str]:
    """``name: value`` pairs of a dump line up to ``key:``/``payload:`` (printed data)."""
    text = line[2:] if line.startswith("| ") else line
    for stop in (" key: ", " payload: "):
        if stop in text:
            text = text[: text.index(stop)]
    return {name: value for name, value in _PAIR.findall(text)}


def batch_lines(lines: list[str]) -> list[dict[str, str]]:
    return [metadata(line) for line in lines if line.startswith("baseOffset: ")]


def record_lines(lines: list[str]) -> list[dict[str, str]]:
    return [metadata(line) for line in lines if line.startswith("| offset: ")]


def index_lines(lines: list[str], first: str) -> list[dict[str, str]]:
    return [metadata(line) for line in lines if line.startswith(f"{first}: ")]


def golden_dumps(golden: Path) -> list[Path]:
    return sorted(golden.rglob("dump.txt"))
