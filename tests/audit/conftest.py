"""One SparkSession (local[2]) per test process, and one audit of the fixture log dirs.

Starting Spark takes seconds, so every test module shares the session and the
audit of ``fixtures/golden`` + ``fixtures/logs``; tests read its Parquet
tables back with pyarrow and compare them with values from real Kafka
(``dump.txt``, ``case.json``) or lethe's single-process decoders.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.fixtures import fixtures_root

GOLDEN = fixtures_root() / "golden"
LOGS = fixtures_root() / "logs"
NOW_MS = 1_800_000_000_000


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from lethe_tools.audit.session import start_session

    session = start_session("local[2]", app_name="lethe audit tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def audit_out(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The job run once over every fixture log dir: (out dir, JobResult)."""
    from lethe_tools.audit.job import run_job

    out = tmp_path_factory.mktemp("audit") / "out"
    result = run_job(spark, [str(GOLDEN), str(LOGS)], str(out), NOW_MS)
    return out, result
