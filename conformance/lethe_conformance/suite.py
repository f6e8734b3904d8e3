"""The suite's versions: what every report states so a verdict names what judged it.

Theory of operation
-------------------
A conformance verdict is only as good as the expectations behind it. Like
JSON-Schema-Test-Suite and toml-test, lethe's catalog and scenarios are a
versioned product: ``fixtures/suite.json`` holds ``catalog_version``,
``scenarios_version`` and ``verified_against`` (the broker, version and commit
id whose verified run, ``conformance/verified/``, the expectations were checked
on: Apache Kafka 4.0.0). :func:`load_suite` reads it; every report (JSON,
Markdown, terminal) states it beside lethe's version and the target's
advertised API ranges. A missing or malformed file is a :class:`SuiteError`
(the run cannot say what judged it, so it does not start).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lethe_formats.fixtures import fixtures_root

__all__ = ["Suite", "SuiteError", "load_suite"]


class SuiteError(Exception):
    """fixtures/suite.json missing or malformed: one line naming the file and the key."""


@dataclass(frozen=True, slots=True)
class Suite:
    """The versions a report states (module docstring)."""

    catalog_version: str
    scenarios_version: str
    #: broker, version, commit_id, report
    verified_against: dict[str, str]

    def as_json(self) -> dict[str, Any]:
        return {
            "catalog_version": self.catalog_version,
            "scenarios_version": self.scenarios_version,
            "verified_against": dict(self.verified_against),
        }


def load_suite(path: Path | None = None) -> Suite:
    source = path or fixtures_root() / "suite.json"
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SuiteError(f"{source}: cannot read the suite's versions: {error}") from None
    if not isinstance(data, dict):
        raise SuiteError(f"{source}: expected an object")
    verified = data.get("verified_against")
    keys = ("broker", "version", "commit_id", "report")
    if not isinstance(verified, dict) or not all(isinstance(verified.get(k), str) for k in keys):
        raise SuiteError(f"{source}: verified_against needs {', '.join(keys)} as strings")
    versions = []
    for key in ("catalog_version", "scenarios_version"):
        value = data.get(key)
        if not isinstance(value, str) or not value:
            raise SuiteError(f"{source}: {key} must be a non-empty string")
        versions.append(value)
    return Suite(versions[0], versions[1], {k: verified[k] for k in keys})
