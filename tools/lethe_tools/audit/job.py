"""The ``lethe audit`` job: decode the log dirs once in tasks that write Parquet, check, report.

Theory of operation
-------------------
::

    discover (listing) -> kafka-log(level=write) tasks               lethe_tools.audit.sink
        each task: its files decoded once, every table's rows
        -> OUT/<table>/part-<task>.parquet (pyarrow)  -> (table, file, rows) to the driver
        -> tables read from Parquet
        -> lethe_tools.audit.checks.run_all(spark, tables, now_ms) -> findings
        -> lethe_tools.audit.report.write(findings, report_dir)

No row passes through the JVM on the way to Parquet, each file is read once,
and the tables are complete when the tasks end (a partitions row gets its
checkpoint columns in its task): the checks are the first Spark SQL work.
They run on the tables as written, read from Parquet, so what they judge is
exactly what a user finds under ``OUT``. Rows per table come from the tasks' own counts of what they
wrote. ``now_ms`` is the time every age is measured against (retention,
delete horizons): ``--now`` makes a run reproducible.

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

from lethe_tools.audit import checks, report, sink
from lethe_tools.audit.checks import Findings
from lethe_tools.audit.datasource import FORMAT, absolute
from lethe_tools.audit.schemas import TABLES

__all__ = [
    "TASKS_PER_CORE",
    "WRITE_PARTITION_BYTES",
    "JobResult",
    "default_report",
    "read_back",
    "run_checks",
    "run_job",
    "write_tables",
]

#: At least this many decode tasks per core, so a slow (compressed) file evens out.
TASKS_PER_CORE = 4
#: Bytes of segments per decode task beyond that. Each task costs Spark and its Python
#: worker about 70 ms on top of the decoding (measured on local masters), so the job
#: asks for tasks four times the data source's default size.
WRITE_PARTITION_BYTES = 512 * 1024 * 1024

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


def write_tables(spark: SparkSession, paths: list[str], out: str, say: Say) -> dict[str, int]:
    """Every table of ``paths`` as Parquet under ``out/<table>/`` (replacing an earlier
    run's); returns rows per table. See the module docstring."""
    sink.clear(out, TABLES)
    tasks = TASKS_PER_CORE * spark.sparkContext.defaultParallelism
    written = (
        spark.read.format(FORMAT)
        .option("paths", absolute(paths))
        .option("level", "write")
        .option("out", out)
        .option("minPartitions", str(tasks))
        .option("partitionBytes", str(WRITE_PARTITION_BYTES))
        .load()
        .collect()
    )
    rows = dict.fromkeys(TABLES, 0)
    for row in written:
        rows[row["table"]] += int(row["rows"])
    say(f"decoded {sum(rows.values())} rows into {len(written)} Parquet files")
    sink.write_empty(out, [name for name, count in rows.items() if not count])
    for name in TABLES:
        say(f"wrote {name}: {rows[name]} rows")
    return rows


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
    say(f"decoding {', '.join(paths)}")
    rows = write_tables(spark, paths, out, say)
    tables = read_back(spark, out)
    result = JobResult(out, rows)
    result.report = report_dir if report_dir is not None else default_report(out)
    result.findings = run_checks(spark, tables, now_ms, result.report, say)
    return result
