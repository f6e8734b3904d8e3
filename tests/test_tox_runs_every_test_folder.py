"""Every folder of tests is run by some tox environment, so CI cannot skip one silently."""

from __future__ import annotations

import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tox_commands() -> str:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini")
    env_list = {name.strip() for name in parser["tox"]["env_list"].split(",")}
    return "\n".join(
        parser[section].get("commands", "")
        for section in parser.sections()
        if section.removeprefix("testenv:") in env_list
    )


def test_each_test_folder_is_named_by_a_default_tox_env() -> None:
    commands = _tox_commands()
    folders = sorted(
        path.parent.relative_to(ROOT).parts[1] for path in (ROOT / "tests").glob("*/**/test_*.py")
    )
    missing = sorted({f for f in folders if f"tests/{f}" not in commands})
    assert missing == []
