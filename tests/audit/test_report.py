"""The audit report from hand-built Findings (no Spark): JSON fields, HTML escaping, plots."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from lethe_tools.audit.checks.model import CheckResult, Findings, HistogramBucket
from lethe_tools.audit.report import HTML_FILE, JSON_FILE, write
from lethe_tools.audit.report.svg import human_bytes

NOW = 1_800_000_000_000  # 2027-01-15 08:00:00 UTC
EVIL = '<script>alert("x")</script>'


def _findings() -> Findings:
    found = CheckResult(
        name="compaction",
        title="Keys kept twice & more",
        definition="A finding is a record <below> a later one.",
        count=3,
        bytes=2048,
        records=3,
        samples=[
            {
                "check": "compaction",
                "topic": "t&<1>",
                "partition": 0,
                "file": "/d/t-0/00000000000000000000.log",
                "position": 61,
                "offset": 7,
                "bytes": 1024,
                "records": 1,
                "message": EVIL,
            }
        ],
        metrics={"compacted_logs_checked": 2, "note": "<b>"},
    )
    clean = CheckResult(name="integrity", title="Integrity", definition="CRC failures.")
    return Findings(
        now_ms=NOW,
        checks=[found, clean],
        reclaimable_by_topic={
            "zeta": {"below_log_start": 100},
            "alpha<": {"consumed_retention": 300, "delete_records": 50},
        },
        tombstone_ages=[
            HistogramBucket("< 1 min", 0, 60_000, 2),
            HistogramBucket(">= 30 d", 2_592_000_000, None, 5),
        ],
        problems=4,
    )


@pytest.fixture
def written(tmp_path: Path) -> tuple[dict[str, Any], str]:
    paths = write(_findings(), tmp_path / "report")
    assert sorted(p.name for p in paths) == sorted([HTML_FILE, JSON_FILE])
    data = json.loads((tmp_path / "report" / JSON_FILE).read_text(encoding="utf-8"))
    return data, (tmp_path / "report" / HTML_FILE).read_text(encoding="utf-8")


def test_json_summary_carries_every_figure(written: tuple[dict[str, Any], str]) -> None:
    data, _ = written
    assert (data["format"], data["version"], data["now_ms"], data["problems"]) == (
        "lethe-audit-report",
        1,
        NOW,
        4,
    )
    checks = data["checks"]
    assert isinstance(checks, list)
    first, second = checks
    assert {k: first[k] for k in ("name", "found", "count", "bytes", "records")} == {
        "name": "compaction",
        "found": True,
        "count": 3,
        "bytes": 2048,
        "records": 3,
    }
    assert first["metrics"] == {"compacted_logs_checked": 2, "note": "<b>"}
    assert first["samples"][0]["message"] == EVIL  # JSON keeps the text as it is
    assert (second["name"], second["found"], second["samples"]) == ("integrity", False, [])
    assert list(data["reclaimable_by_topic"]) == ["alpha<", "zeta"]  # sorted by topic
    assert data["reclaimable_by_topic"]["alpha<"] == {
        "consumed_retention": 300,
        "delete_records": 50,
    }
    assert data["tombstone_ages"][1] == {
        "label": ">= 30 d",
        "low_ms": 2_592_000_000,
        "high_ms": None,
        "count": 5,
    }


def test_html_escapes_everything_from_the_data(written: tuple[dict[str, Any], str]) -> None:
    _, html = written
    assert "<script" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "t&amp;&lt;1&gt;" in html and "alpha&lt;" in html
    assert "Keys kept twice &amp; more" in html
    assert "A finding is a record &lt;below&gt; a later one." in html
    assert "<b>" not in html


def test_html_has_both_plots_and_the_verdicts(written: tuple[dict[str, Any], str]) -> None:
    _, html = written
    assert html.count("<svg") == 2
    bars = re.findall(r"<title>([^<]*): (\d+) bytes</title>", html)
    assert sorted((kind.split(" ")[0], int(n)) for kind, n in bars) == [
        ("DeleteRecords", 50),
        ("KIP-68", 300),
        ("below", 100),
    ]
    assert re.findall(r"<title>(\d+)</title>", html) == ["2", "5"]  # histogram bars
    assert f"2027-01-15 08:00:00.000 UTC ({NOW} ms)" in html
    assert "4 problems decoding the files" in html
    assert '<span class="found">3 found</span>' in html
    assert '<span class="clean">nothing found</span>' in html
    assert "2 more in the findings not shown." in html


def test_empty_findings_give_notes_instead_of_plots(tmp_path: Path) -> None:
    write(Findings(now_ms=0), tmp_path)
    html = (tmp_path / HTML_FILE).read_text(encoding="utf-8")
    data = json.loads((tmp_path / JSON_FILE).read_text(encoding="utf-8"))
    assert "<svg" not in html
    assert "Nothing reclaimable." in html and "No tombstones on disk." in html
    assert (data["checks"], data["reclaimable_by_topic"], data["tombstone_ages"]) == ([], {}, [])


def test_a_rewrite_replaces_the_report_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    write(_findings(), tmp_path)
    write(Findings(now_ms=NOW, problems=0), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([HTML_FILE, JSON_FILE])
    assert json.loads((tmp_path / JSON_FILE).read_text(encoding="utf-8"))["checks"] == []


def test_a_now_outside_the_calendar_still_renders(tmp_path: Path) -> None:
    write(Findings(now_ms=2**62), tmp_path)
    assert str(2**62) in (tmp_path / HTML_FILE).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("value", "text"),
    [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"), (3 * 2**30, "3.0 GiB")],
)
def test_human_bytes(value: int, text: str) -> None:
    assert human_bytes(value) == text
