"""Check consumed-retention: segments every group has consumed, older than the retention time.

The golden consumer-offsets case holds the commits of three groups for
``golden-orders`` 0..2 (README: golden-billing, golden-audit, golden-stream),
but not that topic's partitions; the fixture adds golden-orders-0/1/2 beside
a copy of it (three one-batch segments each, timestamps from 1.7e12 ms).
Expected: the min committed offset per partition from decoding the
``__consumer_offsets`` segments with lethe's coordinator decoders, capped at
the ``replication-offset-checkpoint`` entry, and the prefix of segments whose
next base offset is at or below it and whose largest timestamp is before now.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from checks_support import (
    ORDERS_TS,
    Env,
    consumed_segments,
    live_logs,
    make_env,
    min_committed,
    rows,
    under,
)
from conftest import NOW_MS
from lethe_tools.audit.checks import consumed as check
from lethe_tools.audit.checks import run_check

EARLY_MS = ORDERS_TS - 1


@pytest.fixture(scope="module")
def env(spark: Any, audit_out: tuple[Path, Any], tmp_path_factory: pytest.TempPathFactory) -> Env:
    return make_env(spark, audit_out, tmp_path_factory.mktemp("checks"))


@pytest.fixture(scope="module")
def late(env: Env) -> Any:
    """The check's output as run_all collects it (findings, per-topic reclaimable bytes)."""
    return run_check(check, env.context(NOW_MS))[1]


def test_min_committed_offsets_are_the_groups_latest_commits(env: Env) -> None:
    got = {
        (r["topic"], r["partition"]): r["min_committed"]
        for r in rows(check.min_committed(env.tables, env.logs))
        if str(r["logdir"]) == str(env.dirs["orders"])
    }
    expected = min_committed(env.dirs["orders"])
    assert got == expected
    # README: billing overwrote its p1 commit; audit committed p1 at 1 -> min 1
    assert expected == {("golden-orders", 0): 3, ("golden-orders", 1): 1, ("golden-orders", 2): 2}


def test_a_late_now_deletes_each_partitions_consumed_first_segment(env: Env, late: Any) -> None:
    orders = env.dirs["orders"]
    expected = consumed_segments(orders, min_committed(orders), NOW_MS)
    found = under(rows(late.findings), orders)
    assert {str(r["file"]): r["bytes"] for r in found} == expected
    assert sorted(Path(f).name for f in expected) == ["00000000000000000000.log"] * 3
    assert late.reclaimable["consumed_retention"]["golden-orders"] == sum(expected.values())


def test_delete_records_at_the_min_committed_offset_reclaims_the_same_segments(
    env: Env, late: Any
) -> None:
    orders = env.dirs["orders"]
    minimum = min_committed(orders)
    expected = 0
    for number in range(3):
        logs = live_logs(orders / f"golden-orders-{number}")
        for log, following in itertools.pairwise(logs):
            if int(following.stem) <= minimum[("golden-orders", number)]:
                expected += log.stat().st_size
    assert late.reclaimable["delete_records"]["golden-orders"] == expected > 0


def test_an_early_now_deletes_nothing(env: Env) -> None:
    early = run_check(check, env.context(EARLY_MS))[1]
    assert under(rows(early.findings), env.dirs["orders"]) == []
    assert "golden-orders" not in early.reclaimable["consumed_retention"]
    assert consumed_segments(env.dirs["orders"], min_committed(env.dirs["orders"]), EARLY_MS) == {}


def test_a_topic_no_group_committed_for_is_never_deleted(env: Env, late: Any) -> None:
    assert under(rows(late.findings), env.dirs["quiet"]) == []
    assert "quiet-orders" not in late.reclaimable["consumed_retention"]
    assert min_committed(env.dirs["quiet"]) == {}


def test_the_shared_audit_has_commits_but_no_committed_partition(env: Env) -> None:
    # golden consumer-offsets holds commits for golden-orders, whose partitions it did not copy
    result = env.audit.findings.check("consumed-retention")
    assert (result.count, result.metrics["partitions_with_commits"]) == (0, 0)
