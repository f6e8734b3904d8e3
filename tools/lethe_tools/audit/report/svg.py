"""Two small SVG charts for the report, written by hand so the page needs no library.

Theory of operation
-------------------
The report is one self-contained HTML file (no script, no network), so plots
are inline SVG: :func:`stacked_bars` draws one horizontal bar per topic split
by kind (bytes reclaimable by the log-start rule, consumed retention,
DeleteRecords), :func:`histogram` draws vertical bars per bucket (tombstone
ages). Every label and value is escaped; sizes are in SVG user units and the
chart scales with the page through ``viewBox``.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["PALETTE", "histogram", "human_bytes", "stacked_bars"]

PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2")
_WIDTH = 720
_ROW = 22
_LABEL = 200


def human_bytes(value: int) -> str:
    """1536 -> '1.5 KiB'; exact below 1 KiB."""
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{value} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"


def _legend(kinds: Sequence[str], y: int) -> list[str]:
    parts = []
    for i, kind in enumerate(kinds):
        x = _LABEL + i * 170
        parts.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{PALETTE[i]}"/>')
        parts.append(f'<text x="{x + 16}" y="{y + 11}" font-size="12">{escape(kind)}</text>')
    return parts


def stacked_bars(rows: Sequence[tuple[str, Sequence[int]]], kinds: Sequence[str]) -> str:
    """One bar per ``(label, values per kind)`` row; empty input gives a short note."""
    if not rows or not any(sum(values) for _, values in rows):
        return '<p class="none">Nothing reclaimable.</p>'
    top = max(sum(values) for _, values in rows)
    height = 30 + _ROW * len(rows)
    parts = [f'<svg viewBox="0 0 {_WIDTH} {height}" role="img" class="chart">']
    parts += _legend(kinds, 4)
    span = _WIDTH - _LABEL - 90
    for i, (label, values) in enumerate(rows):
        y = 26 + i * _ROW
        parts.append(
            f'<text x="{_LABEL - 6}" y="{y + 14}" font-size="12" text-anchor="end">'
            f"{escape(label)}</text>"
        )
        x = float(_LABEL)
        for k, value in enumerate(values):
            width = span * value / top
            if width > 0:
                parts.append(
                    f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="{_ROW - 6}" '
                    f'fill="{PALETTE[k % len(PALETTE)]}"><title>{escape(kinds[k])}: '
                    f"{value} bytes</title></rect>"
                )
            x += width
        parts.append(
            f'<text x="{x + 4:.1f}" y="{y + 14}" font-size="12">'
            f"{escape(human_bytes(sum(values)))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def histogram(buckets: Sequence[tuple[str, int]]) -> str:
    """Vertical bars of ``(label, count)``; all-zero input gives a short note."""
    if not buckets or not any(count for _, count in buckets):
        return '<p class="none">No tombstones on disk.</p>'
    top = max(count for _, count in buckets)
    height, base = 200, 170
    step = (_WIDTH - 40) / len(buckets)
    parts = [f'<svg viewBox="0 0 {_WIDTH} {height}" role="img" class="chart">']
    for i, (label, count) in enumerate(buckets):
        bar = 140 * count / top
        x = 20 + i * step
        parts.append(
            f'<rect x="{x + 6:.1f}" y="{base - bar:.1f}" width="{step - 12:.1f}" '
            f'height="{bar:.1f}" fill="{PALETTE[0]}"><title>{count}</title></rect>'
        )
        parts.append(
            f'<text x="{x + step / 2:.1f}" y="{base - bar - 4:.1f}" font-size="12" '
            f'text-anchor="middle">{count}</text>'
        )
        parts.append(
            f'<text x="{x + step / 2:.1f}" y="{base + 16}" font-size="12" '
            f'text-anchor="middle">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
