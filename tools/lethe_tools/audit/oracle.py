"""An independent relational oracle of what compaction should keep in the cleaned part.

Theory of operation
-------------------
The ``compaction`` check (:mod:`lethe_tools.audit.checks.compaction`) is a
Spark query built from window functions. This module states the same rule a
second time, in plain SQL over plain rows, so that tests (and, behind an
option, the job) can hold the Spark query to it. Nothing here imports Spark:
the audit's Parquet tables are read with pyarrow, loaded into an in-memory
sqlite3 database, and queried with ``EXISTS`` / ``NOT EXISTS`` only::

    OUT/partitions, segments, checkpoints, records, indexes   (Parquet, pyarrow)
        -> sqlite tables part, seg, ckpt, rec, txn             (one INSERT each)
        -> view live_log     one row per live partition dir: log_start, cleaner_offset
        -> view cleaned      non-control records of live segments in [log_start, cleaner_offset)
        -> view data         cleaned AND NOT EXISTS a covering aborted transaction, key not null
        -> kept              data d WHERE NOT EXISTS a data record of d's key at a higher offset
        -> violations        data d WHERE EXISTS  ... (kind "shadowed"),
                             cleaned records with an aborted transaction (kind "aborted")

The rule (the check's definition): the cleaned part of a live log is
``[log_start, cleaner_offset)``, ``log_start`` being the larger of the
``log-start-offset-checkpoint`` entry and the first live segment's base
offset, ``cleaner_offset`` the ``cleaner-offset-checkpoint`` entry; a log
without that entry has no cleaned part. In it compaction keeps, per key, only
the record with the highest offset; control records and null keys take no
part; a transactional record of producer P at an offset in ``[first, last)``
of a ``.txnindex`` entry of P in the same partition directory belongs to an
aborted transaction and must be gone.

The oracle derives the log start and cleaner offsets from the *checkpoints*
and *segments* tables itself (not from the joined columns of ``partitions``)
and keys partition directories by path, so it shares no code with the Spark
side beyond the decoded rows.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow.parquet as pq

__all__ = ["OracleResult", "OracleRow", "disagreements", "load", "run"]

#: sqlite table <- (Parquet table, columns read)
_SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "part": ("partitions", ("logdir", "path", "topic", "partition", "dir_kind")),
    "seg": ("segments", ("file", "base_offset", "extra_suffix")),
    "ckpt": ("checkpoints", ("logdir", "kind", "topic", "partition", "offset")),
    "rec": (
        "records",
        (
            "topic",
            "partition",
            "file",
            "batch_position",
            "offset",
            "key_hash",
            "key_size",
            "value_size",
            "is_control",
            "is_transactional",
            "producer_id",
        ),
    ),
    "txn": ("indexes", ("file", "kind", "producer_id", "first_offset", "last_offset")),
}
#: Columns computed while loading: the directory of a row's file.
_DIR_OF = {"seg": "file", "rec": "file", "txn": "file"}

_VIEWS = """
CREATE INDEX seg_dir ON seg(dir, extra_suffix);
CREATE INDEX rec_file ON rec(file);
CREATE INDEX txn_dir ON txn(dir, producer_id);
CREATE TEMP VIEW live_log AS
SELECT p.path AS dir, p.topic, p.partition,
       (SELECT MIN(s.base_offset) FROM seg s
         WHERE s.dir = p.path AND s.extra_suffix = '') AS first_base,
       (SELECT MAX(c.offset) FROM ckpt c
         WHERE c.logdir = p.logdir AND c.kind = 'log-start-offset-checkpoint'
           AND c.topic = p.topic AND c.partition = p.partition) AS start_entry,
       (SELECT MAX(c.offset) FROM ckpt c
         WHERE c.logdir = p.logdir AND c.kind = 'cleaner-offset-checkpoint'
           AND c.topic = p.topic AND c.partition = p.partition) AS cleaner_offset
  FROM part p
 WHERE p.dir_kind = 'live';
CREATE TEMP VIEW bounds AS
SELECT dir, topic, partition, cleaner_offset,
       CASE WHEN start_entry IS NOT NULL AND start_entry > first_base
            THEN start_entry ELSE first_base END AS log_start
  FROM live_log
 WHERE cleaner_offset IS NOT NULL AND first_base IS NOT NULL;
CREATE TEMP VIEW cleaned AS
SELECT r.*, b.log_start, b.cleaner_offset,
       r.is_transactional = 1 AND EXISTS (
         SELECT 1 FROM txn t
          WHERE t.kind = 'txnindex' AND t.dir = r.dir AND t.producer_id = r.producer_id
            AND r.offset >= t.first_offset AND r.offset < t.last_offset) AS aborted
  FROM rec r
  JOIN seg s ON s.file = r.file AND s.extra_suffix = ''
  JOIN bounds b ON b.dir = s.dir
 WHERE r.offset >= b.log_start AND r.offset < b.cleaner_offset AND r.is_control = 0;
CREATE TABLE data AS
SELECT * FROM cleaned WHERE aborted = 0 AND key_hash IS NOT NULL;
CREATE INDEX data_key ON data(dir, key_hash, offset);
"""

_KEPT = """
SELECT d.topic, d.partition, d.file, d.batch_position, d.offset, d.key_hash, NULL
  FROM data d
 WHERE NOT EXISTS (SELECT 1 FROM data e
                    WHERE e.dir = d.dir AND e.key_hash = d.key_hash AND e.offset > d.offset)
"""

_SHADOWED = """
SELECT d.topic, d.partition, d.file, d.batch_position, d.offset, d.key_hash,
       (SELECT MAX(e.offset) FROM data e WHERE e.dir = d.dir AND e.key_hash = d.key_hash)
  FROM data d
 WHERE EXISTS (SELECT 1 FROM data e
                WHERE e.dir = d.dir AND e.key_hash = d.key_hash AND e.offset > d.offset)
"""

_ABORTED = """
SELECT c.topic, c.partition, c.file, c.batch_position, c.offset, c.key_hash, NULL
  FROM cleaned c WHERE c.aborted = 1
"""

_ORDER = " ORDER BY 1, 2, 5, 3"


@dataclass(frozen=True, slots=True, order=True)
class OracleRow:
    """One record of the cleaned part: kept, or a violation of ``kind``.

    ``kept_at`` is, for a ``shadowed`` record, the offset of its key's last
    record in the cleaned part (the one compaction keeps); else None.
    """

    topic: str
    partition: int
    offset: int
    file: str
    batch_position: int
    key_hash: int | str | None  # as the records table holds it; compared, never read
    kind: str
    kept_at: int | None = None


@dataclass(frozen=True, slots=True)
class OracleResult:
    """What compaction keeps in the cleaned parts, and what is there but should not be."""

    kept: tuple[OracleRow, ...]
    violations: tuple[OracleRow, ...]
    cleaned_logs: int

    def violation_keys(self) -> set[tuple[str, int]]:
        """(file, offset) of every violation: what the Spark check must find."""
        return {(row.file, row.offset) for row in self.violations}


def _rows(out_dir: str, table: str, columns: Sequence[str]) -> list[dict[str, Any]]:
    path = os.path.join(out_dir, table)
    rows: list[dict[str, Any]] = pq.read_table(path, columns=list(columns)).to_pylist()
    return rows


def _create(conn: sqlite3.Connection, name: str, columns: Sequence[str]) -> None:
    extra = ["dir"] if name in _DIR_OF else []
    conn.execute(f"CREATE TABLE {name}_raw ({', '.join([*columns, *extra])})")


def _insert(
    conn: sqlite3.Connection, name: str, columns: Sequence[str], rows: Iterable[Any]
) -> None:
    names = [*columns, *(["dir"] if name in _DIR_OF else [])]
    marks = ", ".join("?" for _ in names)
    source = _DIR_OF.get(name)

    def values(row: Mapping[str, Any]) -> tuple[Any, ...]:
        found = tuple(row[c] for c in columns)
        return (*found, os.path.dirname(row[source])) if source else found

    conn.executemany(
        f"INSERT INTO {name}_raw ({', '.join(names)}) VALUES ({marks})", map(values, rows)
    )


def load(out_dirs: Sequence[str | os.PathLike[str]]) -> sqlite3.Connection:
    """An in-memory database of the tables under each ``out_dirs`` entry, views created.

    Rows are de-duplicated per table, so overlapping outputs (the same log dir
    audited twice) describe each record once.
    """
    conn = sqlite3.connect(":memory:")
    for name, (_, columns) in _SOURCES.items():
        _create(conn, name, columns)
    for out in out_dirs:
        for name, (table, columns) in _SOURCES.items():
            _insert(conn, name, columns, _rows(os.fspath(out), table, columns))
    for name in _SOURCES:
        # A row is a fact about a file: the same row from two outputs is one fact.
        conn.execute(f"CREATE TABLE {name} AS SELECT DISTINCT * FROM {name}_raw")
        conn.execute(f"DROP TABLE {name}_raw")
    conn.executescript(_VIEWS)
    return conn


def _select(conn: sqlite3.Connection, sql: str, kind: str) -> list[OracleRow]:
    return [
        OracleRow(topic, partition, offset, file, position, key, kind, kept_at)
        for topic, partition, file, position, offset, key, kept_at in conn.execute(sql + _ORDER)
    ]


def run(out_dirs: Sequence[str | os.PathLike[str]]) -> OracleResult:
    """The oracle over the audit output directories ``out_dirs`` (their tables concatenated)."""
    conn = load(out_dirs)
    try:
        kept = _select(conn, _KEPT, "kept")
        violations = sorted(
            _select(conn, _SHADOWED, "shadowed") + _select(conn, _ABORTED, "aborted")
        )
        (logs,) = conn.execute("SELECT COUNT(*) FROM bounds").fetchone()
    finally:
        conn.close()
    return OracleResult(tuple(kept), tuple(violations), int(logs))


def disagreements(findings: Iterable[Mapping[str, Any]], result: OracleResult) -> list[str]:
    """Where compaction findings (rows with ``file`` and ``offset``) differ from the oracle.

    Empty when the two agree; otherwise one line per record found by only one side.
    """
    found = {(str(row["file"]), int(row["offset"])) for row in findings}
    expected = result.violation_keys()
    lines = [f"only the check: {file} offset {offset}" for file, offset in sorted(found - expected)]
    lines += [
        f"only the oracle: {file} offset {offset}" for file, offset in sorted(expected - found)
    ]
    return lines
