"""Fixtures for the formats tests: paths into fixtures/golden (data written by Kafka 4.0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root


@pytest.fixture(scope="session")
def golden_root() -> Path:
    """fixtures/golden: one folder per case (see its README.md)."""
    return fixtures_root() / "golden"


@pytest.fixture(scope="session")
def codecs_log(golden_root: Path) -> Path:
    """The codecs case's first segment: none, gzip, raw snappy and lz4 batches."""
    return golden_root / "codecs" / "golden-codecs-0" / "00000000000000000000.log"


@pytest.fixture(scope="session")
def codecs_log_22(golden_root: Path) -> Path:
    """The codecs case's second segment: zstd, xerial snappy and Java gzip batches."""
    return golden_root / "codecs" / "golden-codecs-0" / "00000000000000000022.log"


@pytest.fixture(scope="session")
def txn_log_dir(golden_root: Path) -> Path:
    """golden-txn-0 before cleaning: data, COMMIT and ABORT marker batches."""
    return golden_root / "transactions" / "pass0" / "golden-txn-0"
