"""The audit's report: ``report.html`` (plots, figures, definitions) and ``report.json``.

:func:`write` is what ``lethe audit`` calls after the checks; it takes the
plain :class:`~lethe_tools.audit.checks.model.Findings` (no Spark), so the
report can be rendered and tested without a session.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from lethe_tools.audit.checks.model import Findings
from lethe_tools.audit.report.html import render
from lethe_tools.audit.report.summary import summary

__all__ = ["HTML_FILE", "JSON_FILE", "write"]

HTML_FILE = "report.html"
JSON_FILE = "report.json"


def _replace(path: Path, text: str) -> None:
    """Write through a temporary file so a reader never sees half a report."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write(findings: Findings, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write both files into ``out_dir`` (created if needed); returns their paths."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    html, data = folder / HTML_FILE, folder / JSON_FILE
    _replace(data, json.dumps(summary(findings), indent=1, sort_keys=False) + "\n")
    _replace(html, render(findings))
    return [html, data]
