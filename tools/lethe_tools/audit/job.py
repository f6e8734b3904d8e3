"""The ``lethe audit`` job: read the log dirs once, write the tables, run the checks, report.

Theory of operation
-------------------
::

    discover (listing) -> kafka-log(level=audit), persisted      lethe_tools.audit.tables
        -> OUT/<table>/ Parquet for each of the eight tables       (schemas.TABLES order)
        -> tables read back from Parquet
        -> lethe_tools.audit.checks.run_all(spark, tables, now_ms) -> findings
        -> lethe_tools.audit.report.write(findings, report_dir)

The checks run on the tables as written, read back from Parquet, so what
they judge is exactly what a user finds under ``OUT``; the cached read is
released first. ``now_ms`` is the time every age is measured against
(retention, delete horizons): ``--now`` makes a run reproducible.

Outcome (:class:`JobResult`): rows per table and the problems count. Exit
status, decided like ``lethe verify``'s: 0 when no file had a problem, 1 when
the problems table is not empty (every table and the report are still
written), 2 for a setup error (no Java, nothing to audit) before any work.
Findings of the checks (reclaimable bytes, tombstones past their horizon)
are what an audit reports, not failures, and do not change the status.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

from lethe_tools.audit import checks, report
from lethe_tools.audit.checks import Findings
from lethe_tools.audit.schemas import TABLES
from lethe_tools.audit.tables import read_tables

__all__ = ["SMALL_TABLES", "JobResult", "default_report", "run_checks", "run_job", "write_tables"]

#: Tables written as a single Parquet file (a handful of rows per partition or file).
SMALL_TABLES = frozenset({"partitions", "segments", "checkpoints", "offsets", "problems"})

Say = Callable[[str], None]


@dataclass(slots=True)
class JobResult:
    """What a run wrote: rows per table, and the checks' findings."""

    out: str
    rows: dict[str, int] = field(default_factory=dict)
    findings: Findings | None = None
    report: str = ""

    @property
    def problems(self) -> int:
        return self.rows.get("problems", 0)


def default_report(out: str) -> str:
    """``OUT/report``; for an ``hdfs://``-style OUT a local ``lethe-audit-report`` (the
    report is written by the driver with plain file I/O)."""
    return os.path.abspath("lethe-audit-report") if "://" in out else os.path.join(out, "report")


def write_tables(tables: dict[str, DataFrame], out: str, say: Say) -> None:
    """Each table as Parquet under ``out/<table>/`` (replacing an earlier run's)."""
    for name in TABLES:
        frame = tables[name].coalesce(1) if name in SMALL_TABLES else tables[name]
        frame.write.mode("overwrite").parquet(os.path.join(out, name))
        say(f"wrote {name}")


def read_back(spark: SparkSession, out: str) -> dict[str, DataFrame]:
    """The tables as written, with their declared schemas."""
    return {
        name: spark.read.schema(schema).parquet(os.path.join(out, name))
        for name, schema in TABLES.items()
    }


def run_checks(
    spark: SparkSession, tables: dict[str, DataFrame], now_ms: int, report_dir: str, say: Say
) -> Findings:
    """The checks over the written tables, then the report (HTML + JSON) in ``report_dir``."""
    say("running checks")
    findings = checks.run_all(spark, tables, now_ms)
    report.write(findings, report_dir)
    say(f"report written to {report_dir}")
    return findings


def run_job(
    spark: SparkSession,
    paths: list[str],
    out: str,
    now_ms: int,
    *,
    report_dir: str | None = None,
    say: Say = lambda text: None,
) -> JobResult:
    """The whole audit of ``paths`` into ``out``; see the module docstring."""
    out = out if "://" in out else os.path.abspath(out)  # hdfs://, s3a://: as given
    read = read_tables(spark, paths)
    say(f"decoding {', '.join(paths)}")
    try:
        # Fill the cache with every task at once; a coalesced write of a small
        # table would otherwise pull the whole decode into one task.
        entries = read.union.count()
        say(f"decoded {entries} rows (every table but records, which is written from its own read)")
        write_tables(read.tables, out, say)
    finally:
        read.release()
    tables = read_back(spark, out)
    result = JobResult(out, {name: frame.count() for name, frame in tables.items()})
    result.report = report_dir if report_dir is not None else default_report(out)
    result.findings = run_checks(spark, tables, now_ms, result.report, say)
    return result
