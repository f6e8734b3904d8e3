"""The ``lethe`` front end: every subcommand is listed, and a run loads only its own."""

from __future__ import annotations

import subprocess
import sys

from lethe_formats.fixtures import fixtures_root
from lethe_tools.cli import COMMAND_MODULES, build_parser


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
