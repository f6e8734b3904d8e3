"""Writing the report files, and never leaving a stale one looking complete.

Theory of operation
-------------------
:func:`write_reports` writes ``report.json``, ``report.md`` and
``report.html`` into a folder (created if missing). Each file goes to a
temporary name first and is renamed into place, so a reader never sees half
a file. :func:`write_incomplete` is for a run that could not start or finish:
it writes ``report.json`` with ``complete: false`` and the error, and removes
``report.md`` / ``report.html`` left by an earlier run, so nothing in the
folder presents itself as this run's complete report.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lethe_conformance.report.html import render_html
from lethe_conformance.report.markdown import render_markdown

__all__ = ["JSON_NAME", "write_incomplete", "write_reports"]

JSON_NAME = "report.json"
MARKDOWN_NAME = "report.md"
HTML_NAME = "report.html"


def _write(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def _json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=False) + "\n"


def write_reports(folder: Path, data: Mapping[str, Any]) -> list[Path]:
    """The three files, JSON last (its ``complete`` flag vouches for the others)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / MARKDOWN_NAME, folder / HTML_NAME, folder / JSON_NAME]
    _write(paths[0], render_markdown(data))
    _write(paths[1], render_html(data))
    _write(paths[2], _json(data))
    return paths


def write_incomplete(folder: Path, data: Mapping[str, Any]) -> Path:
    """``report.json`` saying complete=false; stale Markdown/HTML removed."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in (MARKDOWN_NAME, HTML_NAME):
        (folder / name).unlink(missing_ok=True)
    path = folder / JSON_NAME
    _write(path, _json(data))
    return path
