"""Check compaction: keys kept more than once in the cleaned part, held to the relational oracle.

Three independent statements of the rule must agree on every fixture: the
Spark check, the sqlite oracle (lethe_tools.audit.oracle, over the Parquet
tables) and a plain walk of the decoded segments (checks_support). A copy of
golden compaction pass0 (never cleaned) given a cleaner-offset-checkpoint
above its end must show duplicate keys; golden pass1/pass2, which Kafka
cleaned, must show none. The transactions pass0 copy adds records of the
aborted transaction (its ``.txnindex`` entry).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from checks_support import Env, compaction_violations, make_env, rows, under
from conftest import GOLDEN
from lethe_tools.audit import oracle
from lethe_tools.audit.checks import compaction as check
from lethe_tools.audit.checks.model import AuditOptions

COMPACTION = (GOLDEN / "compaction").resolve()
TRANSACTIONS = (GOLDEN / "transactions").resolve()


@pytest.fixture(scope="module")
def env(spark: Any, audit_out: tuple[Path, Any], tmp_path_factory: pytest.TempPathFactory) -> Env:
    return make_env(spark, audit_out, tmp_path_factory.mktemp("checks"))


@pytest.fixture(scope="module")
def found(env: Env) -> list[dict[str, Any]]:
    return rows(check.findings(env.tables, env.logs))


@pytest.fixture(scope="module")
def truth(env: Env) -> oracle.OracleResult:
    return oracle.run([env.out, env.audit.out])


def _spark(found: list[dict[str, Any]], logdir: Path) -> set[tuple[str, int, str]]:
    return {
        (
            str(r["file"]),
            int(r["offset"]),
            "aborted" if "aborted" in str(r["message"]) else "shadowed",
        )
        for r in under(found, logdir)
    }


def _oracle(truth: oracle.OracleResult, logdir: Path) -> set[tuple[str, int, str]]:
    prefix = str(logdir.resolve()) + "/"
    return {(v.file, v.offset, v.kind) for v in truth.violations if v.file.startswith(prefix)}


def test_pass0_with_a_high_cleaner_offset_keeps_keys_twice(
    env: Env, found: list[dict[str, Any]], truth: oracle.OracleResult
) -> None:
    dirty = env.dirs["compact-dirty"]
    expected = compaction_violations(dirty)
    assert expected and {kind for *_, kind in expected} == {"shadowed"}
    assert _spark(found, dirty) == expected
    assert _oracle(truth, dirty) == expected


def test_aborted_transaction_records_in_a_cleaned_part(
    env: Env, found: list[dict[str, Any]], truth: oracle.OracleResult
) -> None:
    dirty = env.dirs["txn-dirty"]
    expected = compaction_violations(dirty)
    assert {kind for *_, kind in expected} == {"aborted", "shadowed"}
    assert _spark(found, dirty) == expected
    assert _oracle(truth, dirty) == expected


@pytest.mark.parametrize(
    "case",
    [COMPACTION / "pass1", COMPACTION / "pass2", *(TRANSACTIONS / f"pass{n}" for n in (1, 2, 3))],
    ids=lambda p: f"{p.parent.name}-{p.name}",
)
def test_logs_kafka_cleaned_keep_each_key_once(
    case: Path, found: list[dict[str, Any]], truth: oracle.OracleResult
) -> None:
    assert compaction_violations(case) == set()
    assert under(found, case) == []
    assert _oracle(truth, case) == set()


def test_oracle_keeps_the_last_record_of_each_key(env: Env, truth: oracle.OracleResult) -> None:
    dirty = env.dirs["compact-dirty"]
    prefix = str(dirty) + "/"
    kept = {(row.key_hash, row.offset) for row in truth.kept if row.file.startswith(prefix)}
    shadowed = [v for v in truth.violations if v.file.startswith(prefix)]
    assert len({key for key, _ in kept}) == len(kept), "one record per key"
    last = dict(kept)
    assert all(v.kept_at == last[v.key_hash] and v.offset < v.kept_at for v in shadowed)


def test_check_and_oracle_agree_everywhere(
    found: list[dict[str, Any]], truth: oracle.OracleResult
) -> None:
    assert oracle.disagreements(found, truth) == []
    assert len(found) == len(truth.violations)


def test_the_job_option_reports_no_disagreement(env: Env) -> None:
    ctx = env.context(0, AuditOptions(oracle_dirs=(str(env.out), str(env.audit.out))))
    metrics = check.run(ctx).metrics
    assert metrics["oracle_disagreements"] == 0
    assert metrics["compacted_logs_checked"] == oracle.run([env.out, env.audit.out]).cleaned_logs
