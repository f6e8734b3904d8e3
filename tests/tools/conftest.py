"""Fixtures for the tools tests: the golden files and a way to run ``lethe``."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_tools.cli import main
from tools_support import Run


@pytest.fixture(scope="session")
def golden() -> Path:
    """fixtures/golden: files written by Kafka 4.0 (see its README.md)."""
    return fixtures_root() / "golden"


@pytest.fixture
def lethe(capsysbinary: pytest.CaptureFixture[bytes]) -> Callable[..., Run]:
    """``lethe(*argv)`` runs the CLI in-process and captures stdout/stderr."""

    def run(*argv: str) -> Run:
        capsysbinary.readouterr()
        status = main(list(argv))
        captured = capsysbinary.readouterr()
        return Run(status, captured.out.decode("utf-8"), captured.err.decode("utf-8"))

    return run


@pytest.fixture
def copy_case(golden: Path, tmp_path: Path) -> Callable[[str], Path]:
    """``copy_case("codecs")`` copies a golden case folder into tmp_path."""

    def copy(case: str) -> Path:
        target = tmp_path / case.replace("/", "-")
        shutil.copytree(golden / case, target)
        return target

    return copy
