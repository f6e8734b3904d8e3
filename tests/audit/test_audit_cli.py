"""``lethe audit``: arguments, exit status 0/1/2, the Java check, pyspark imported lazily."""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import GOLDEN
from lethe_tools.audit.session import JavaNotFoundError, find_java
from lethe_tools.cli import build_parser
from lethe_tools.commands.audit import parse_now, run

CODECS = GOLDEN / "codecs"
SEGMENT = "golden-codecs-0/00000000000000000000.log"


def _lethe(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "lethe_tools.cli", *args]
    return subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=600, check=False
    )


def _damaged(tmp_path: Path) -> Path:
    root = tmp_path / "codecs"
    shutil.copytree(CODECS, root)
    data = bytearray((root / SEGMENT).read_bytes())
    data[100] ^= 0xFF  # inside the first batch: its CRC no longer matches
    (root / SEGMENT).write_bytes(bytes(data))
    return root


def test_now_takes_epoch_milliseconds_or_iso_8601_with_a_zone() -> None:
    assert parse_now("1700000000000") == 1_700_000_000_000
    assert parse_now("2023-11-14T22:13:20Z") == 1_700_000_000_000
    assert parse_now("2023-11-14T23:13:20+01:00") == 1_700_000_000_000
    with pytest.raises(argparse.ArgumentTypeError):
        parse_now("2023-11-14T22:13:20")
    with pytest.raises(argparse.ArgumentTypeError):
        parse_now("yesterday")


def test_audit_is_a_subcommand_and_other_commands_do_not_import_pyspark() -> None:
    assert "audit" in build_parser().format_help()
    code = (
        "import sys; from lethe_tools.cli import build_parser; "
        "build_parser('verify'); build_parser('audit'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'pyarrow')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _fake_java(tmp_path: Path, version_line: str) -> dict[str, str]:
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    return {"JAVA_HOME": str(home), "PATH": os.environ.get("PATH", "")}


@pytest.mark.parametrize(
    ("line", "major"),
    [
        ('openjdk version "17.0.9" 2023-10-17', 17),
        ('openjdk version "21" 2023-09-19', 21),
    ],
)
def test_java_17_or_newer_is_accepted(tmp_path: Path, line: str, major: int) -> None:
    assert find_java(_fake_java(tmp_path, line)).major == major


@pytest.mark.parametrize(
    "line", ['openjdk version "11.0.2" 2019-01-15', 'java version "1.8.0_392"']
)
def test_older_java_is_refused_in_one_line(tmp_path: Path, line: str) -> None:
    with pytest.raises(JavaNotFoundError, match="needs Java 17 or newer") as caught:
        find_java(_fake_java(tmp_path, line))
    assert "\n" not in str(caught.value)


def test_missing_java_is_a_one_line_message_and_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-jdk")}
    done = _lethe("audit", str(CODECS), "--out", str(tmp_path / "out"), env=env)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Java 17" in done.stderr
    assert not (tmp_path / "out").exists()
    with pytest.raises(JavaNotFoundError, match="no java on PATH"):
        find_java({"PATH": str(tmp_path)})


def test_no_log_dir_is_exit_2(tmp_path: Path) -> None:
    done = _lethe("audit", str(tmp_path))
    assert done.returncode == 2
    assert "no Kafka log dir found" in done.stderr


class _SharedSession:
    """The tests' session, handed to ``run`` without letting it stop it."""

    def __init__(self, spark: Any) -> None:
        self._spark = spark

    def __getattr__(self, name: str) -> Any:
        return getattr(self._spark, name)

    def stop(self) -> None:
        return None


def _run(spark: Any, monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    from lethe_tools.audit import session

    monkeypatch.setattr(session, "start_session", lambda master: _SharedSession(spark))
    args = build_parser("audit").parse_args(["audit", *argv])
    status: int = run(args)
    return status


def test_a_clean_log_dir_exits_0(
    spark: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(spark, monkeypatch, str(CODECS), "--out", str(tmp_path), "--now", "0") == 0
    out = capsys.readouterr().out
    assert "records: 37 rows" in out and "problems: 0 rows" in out


def test_problems_exit_1_and_every_table_is_still_written(
    spark: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _damaged(tmp_path)
    assert _run(spark, monkeypatch, str(root), "--out", str(tmp_path / "out")) == 1
    out = capsys.readouterr().out
    assert "problems: 1 rows" in out and "records: 37 rows" in out
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if p.name != "report") == sorted(
        [
            "partitions",
            "segments",
            "batches",
            "records",
            "indexes",
            "checkpoints",
            "offsets",
            "problems",
        ]
    )


def test_the_real_command_runs_spark_and_reports_progress(tmp_path: Path) -> None:
    root = _damaged(tmp_path)
    done = _lethe("audit", str(root), "--master", "local[1]", "--out", str(tmp_path / "out"))
    assert done.returncode == 1, done.stderr
    assert "problems: 1 rows" in done.stdout
    assert "lethe audit: wrote records" in done.stderr
    assert "lethe audit: decoding " in done.stderr
    assert "INFO" not in done.stderr and "log level" not in done.stderr
