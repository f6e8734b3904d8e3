"""Reports of a conformance run: one JSON-able document, four renderings.

``data``      :func:`report_data`: the run as plain JSON data (the single source)
``text``      :func:`render_matrix`: the terminal matrix, grouped by profile
``markdown``  :func:`render_markdown`
``html``      :func:`render_html`: one self-contained file (inline CSS, no external assets)
``writers``   :func:`write_reports` (report.json, report.md, report.html) and
              :func:`write_incomplete` for a run that could not finish

Every renderer reads the document from :func:`report_data`, never the run
itself, so the JSON file holds everything any view shows.
"""

from lethe_conformance.report.data import (
    NOT_COVERED,
    NOT_OBSERVABLE,
    NOT_SELECTED,
    incomplete_data,
    report_data,
)
from lethe_conformance.report.html import render_html
from lethe_conformance.report.markdown import render_markdown
from lethe_conformance.report.text import render_matrix
from lethe_conformance.report.writers import write_incomplete, write_reports

__all__ = [
    "NOT_COVERED",
    "NOT_OBSERVABLE",
    "NOT_SELECTED",
    "incomplete_data",
    "render_html",
    "render_markdown",
    "render_matrix",
    "report_data",
    "write_incomplete",
    "write_reports",
]
