"""Check delete-horizon: tombstones and markers past their KIP-534 horizon, tombstones without one.

Golden facts (fixtures/golden/README.md, dump.txt): compaction pass1 keeps its
tombstones in batches with ``deleteHorizonMs`` 1795289305712, pass2 has none
left; transactions pass2 gives the markers of finished transactions a
horizon, pass3 has removed them. Expected records come from decoding the
segments directly (checks_support).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from checks_support import (
    Env,
    logdirs,
    make_env,
    markers_past_horizon,
    rows,
    tombstones_past_horizon,
    tombstones_without_horizon,
    under,
)
from conftest import GOLDEN, LOGS, NOW_MS
from lethe_formats.model import LegacyMessage, RecordBatch
from lethe_formats.records import decode_log
from lethe_tools.audit.checks import horizons as check

COMPACTION = (GOLDEN / "compaction").resolve()
TRANSACTIONS = (GOLDEN / "transactions").resolve()
PASS1_HORIZON = 1795289305712  # dump.txt: deleteHorizonMs: OptionalLong[1795289305712]


@pytest.fixture(scope="module")
def env(spark: Any, audit_out: tuple[Path, Any], tmp_path_factory: pytest.TempPathFactory) -> Env:
    return make_env(spark, audit_out, tmp_path_factory.mktemp("checks"))


def _kinds(found: list[dict[str, Any]], logdir: Path) -> dict[str, set[tuple[str, int]]]:
    kinds: dict[str, set[tuple[str, int]]] = {}
    for row in under(found, logdir):
        kind = str(row["message"]).split(" (")[0].split(" past")[0].split(" in the")[0]
        kinds.setdefault(kind, set()).add((str(row["file"]), int(row["offset"])))
    return kinds


@pytest.fixture(scope="module")
def at_now(env: Env) -> list[dict[str, Any]]:
    return rows(check.findings(env.tables, env.logs, NOW_MS))


def test_golden_pass1_tombstones_are_past_their_horizon_once_now_reaches_it(env: Env) -> None:
    pass1 = COMPACTION / "pass1"
    found = rows(check.findings(env.tables, env.logs, PASS1_HORIZON))
    expected = tombstones_past_horizon(pass1, PASS1_HORIZON)
    assert expected, "pass1 keeps tombstones with a horizon"
    assert _kinds(found, pass1) == {"tombstone": expected}
    assert all(f"horizon {PASS1_HORIZON}" in str(r["message"]) for r in under(found, pass1))


def test_golden_pass1_tombstones_are_not_past_their_horizon_before_it(env: Env) -> None:
    found = rows(check.findings(env.tables, env.logs, PASS1_HORIZON - 1))
    assert under(found, COMPACTION) == []
    assert tombstones_past_horizon(COMPACTION / "pass1", PASS1_HORIZON - 1) == set()


def test_golden_pass2_has_no_tombstone_left(at_now: list[dict[str, Any]]) -> None:
    assert under(at_now, COMPACTION / "pass2") == []
    assert tombstones_past_horizon(COMPACTION / "pass2", NOW_MS) == set()


def test_golden_transaction_markers_past_their_horizon_in_pass2_only(
    at_now: list[dict[str, Any]],
) -> None:
    expected = markers_past_horizon(TRANSACTIONS / "pass2", NOW_MS)
    assert len(expected) == 2, "pass2 gives both finished transactions' markers a horizon"
    assert _kinds(at_now, TRANSACTIONS / "pass2") == {"marker": expected}
    for name in ("pass0", "pass1", "pass3"):
        assert under(at_now, TRANSACTIONS / name) == [], name


def test_tombstones_without_horizon_in_a_cleaned_part(
    env: Env, at_now: list[dict[str, Any]]
) -> None:
    dirty = env.dirs["compact-dirty"]
    expected = tombstones_without_horizon(dirty)
    assert expected, "pass0's tombstones have no horizon; the checkpoint calls them cleaned"
    assert _kinds(at_now, dirty) == {"tombstone without horizon": expected}
    # the same pass0 with no cleaner-offset-checkpoint entry: no cleaned part, nothing
    assert under(at_now, COMPACTION / "pass0") == []


def test_job_metrics_equal_the_single_process_decoding(env: Env) -> None:
    result = env.audit.findings.check("delete-horizon")
    dirs = [d for root in (GOLDEN, LOGS) for d in logdirs(root)]
    expected = {
        "tombstones_past_horizon": sum(len(tombstones_past_horizon(d, NOW_MS)) for d in dirs),
        "markers_past_horizon": sum(len(markers_past_horizon(d, NOW_MS)) for d in dirs),
        "tombstones_without_horizon": sum(len(tombstones_without_horizon(d)) for d in dirs),
    }
    assert {k: result.metrics[k] for k in expected} == expected
    assert result.count == sum(expected.values())


def _tombstone_timestamps(logdir: Path) -> list[int]:
    """Timestamps of every non-control null-value record of the live segments (decode_log)."""
    found = []
    for part in sorted(p for p in logdir.iterdir() if p.is_dir()):
        for log in sorted(part.glob("[0-9]" * 20 + ".log")):
            for entry in decode_log(log.read_bytes(), file=str(log), verify_crc=False):
                if isinstance(entry, RecordBatch) and not entry.header.is_control:
                    found += [entry.timestamp_of(r) for r in entry.records if r.value is None]
                elif isinstance(entry, LegacyMessage):
                    inner = entry.inner or (entry,)
                    found += [
                        -1 if m.timestamp is None else m.timestamp for m in inner if m.value is None
                    ]
    return found


def test_tombstone_age_histogram_counts_every_tombstone_on_disk(env: Env) -> None:
    ages = [
        max(NOW_MS - ts, 0)
        for root in (GOLDEN, LOGS)
        for d in logdirs(root)
        for ts in _tombstone_timestamps(d)
    ]
    assert ages
    expected = [
        sum(1 for age in ages if low <= age and (high is None or age < high))
        for _, low, high in check.AGE_BUCKETS
    ]
    histogram = env.audit.findings.tombstone_ages
    assert [(b.label, b.count) for b in histogram] == [
        (label, n) for (label, _, _), n in zip(check.AGE_BUCKETS, expected, strict=True)
    ]
