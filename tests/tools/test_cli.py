"""The ``lethe`` front end: every subcommand is listed, and a run loads only its own."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_tools.cli import COMMAND_MODULES, SUMMARIES, build_parser


def test_help_lists_every_subcommand() -> None:
    text = build_parser().format_help()
    for name in COMMAND_MODULES:
        assert name in text


def test_a_verify_run_does_not_import_the_other_commands() -> None:
    case = fixtures_root() / "golden" / "codecs"
    probe = (
        "import sys\n"
        "from lethe_tools.cli import main\n"
        f"status = main(['verify', {str(case)!r}])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith("
        "('lethe_tools.inspect.dump', 'lethe_tools.fixturegen', 'lethe_tools.commands.dump')))\n"
        "print(status, loaded)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert run.stdout.strip() == "0 []"


def test_an_unknown_subcommand_is_a_usage_error() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "lethe_tools.cli", "bogus"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "invalid choice: 'bogus'" in run.stderr


def run_lethe(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lethe_tools.cli", *argv],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_version_is_the_installed_distributions() -> None:
    run = run_lethe("--version")
    assert (run.returncode, run.stdout) == (0, f"lethe {metadata.version('lethe')}\n")


def test_the_listing_imports_no_subcommand_module() -> None:
    probe = (
        "import sys, contextlib, io\n"
        "from lethe_tools.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('lethe_reference', 'lethe_conformance', 'lethe_tools.commands.')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
        f"print(all(name in out.getvalue() for name in {COMMAND_MODULES!r}))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert run.stdout.splitlines() == ["[]", "True"]


def parsers_of(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, Any]]:
    """(full name, parser) of ``parser`` and every sub-parser below it."""
    found: list[tuple[str, Any]] = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child_name, child in action.choices.items():
                found += parsers_of(child, f"{name} {child_name}")
    return found


@pytest.mark.parametrize("command", COMMAND_MODULES)
def test_every_subcommand_has_a_plain_description_and_its_listed_summary(command: str) -> None:
    parser = build_parser(command)
    (listed,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert [c.help for c in listed._choices_actions] == [SUMMARIES[command]]
    for name, sub in parsers_of(listed.choices[command], command):
        text = sub.format_help()
        assert sub.description, f"lethe {name} has no description"
        assert "``" not in text and not re.search(r":[a-z]+:`", text), f"lethe {name}: markup"


@pytest.mark.parametrize(
    "argv",
    [
        ("dump", "{missing}"),
        ("dump", "--files", "{missing}"),
        ("verify", "{missing}"),
        ("checkpoint", "read", "{missing}", "--kind", "offsets"),
        ("checkpoint", "validate", "{missing}", "--kind", "offsets"),
        ("verify", "{empty}"),
        ("verify", "{unknown}"),
        ("dump", "{empty}"),
        ("dump",),
    ],
)
def test_unusable_input_is_exit_2_with_one_line_and_no_output(
    argv: tuple[str, ...], tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not Kafka's")
    (tmp_path / "notes.txt").write_text("not Kafka's")
    paths = {
        "missing": str(tmp_path / "nope"),
        "empty": str(tmp_path / "empty"),
        "unknown": str(tmp_path / "notes.txt"),
    }
    run = run_lethe(*(arg.format(**paths) for arg in argv))
    assert (run.returncode, run.stdout, len(run.stderr.splitlines())) == (2, "", 1), run


def test_dump_of_a_folder_is_its_kafka_files_in_name_order(tmp_path: Path) -> None:
    partition = fixtures_root() / "golden" / "delete-records" / "golden-delrec-0"
    names = sorted(p.name for p in partition.iterdir())
    listed = ",".join(str(partition / name) for name in names)
    by_folder, by_files = run_lethe("dump", str(partition)), run_lethe("dump", "--files", listed)
    assert (by_folder.returncode, by_files.returncode) == (0, 0)
    assert by_folder.stdout == by_files.stdout
    lines = by_folder.stdout.splitlines()
    dumped = [line[len("Dumping ") :] for line in lines if line.startswith("Dumping ")]
    assert dumped == [str(partition / name) for name in names]


def test_the_clean_shutdown_marker_dumps_and_verifies(tmp_path: Path) -> None:
    marker = fixtures_root() / "golden" / "delete-records" / ".kafka_cleanshutdown"
    assert marker.read_bytes() == b'{"version":0,"brokerEpoch":9}'  # as Kafka 4.0 wrote it
    run = run_lethe("dump", str(marker))
    assert (run.returncode, run.stdout) == (0, f"Dumping {marker}\nversion: 0\nbrokerEpoch: 9\n")
    assert run_lethe("verify", str(marker)).returncode == 0
    broken = tmp_path / ".kafka_cleanshutdown"
    broken.write_text('{"version":0}')
    run = run_lethe("verify", str(broken))
    assert run.returncode == 1
    assert run.stdout.startswith(f"{broken}: line 1: byte 0: brokerEpoch: ")
