"""Reading scenario files: JSON, the schema, then the rules a schema cannot state.

Theory of operation
-------------------
A broken scenario must stop the run with a message that says where, never
become a silent skip or a misleading FAIL of the target. Loading a file goes
through four gates, each raising :class:`~lethe_conformance.scenarios.model.ScenarioError`
with the file and a location:

1. JSON syntax: the line and column of the error;
2. the schema (``fixtures/schema/scenario.schema.json``, draft 2020-12), with
   ``jsonschema``: the JSON path of the most relevant error, e.g.
   ``$.steps[3].expect.partitions[0].low_watermark``;
3. cross-field rules: ``id`` equals the file name; step ``requirements`` are a
   subset of the scenario's; every capability an op needs is in ``requires``
   (also inside ``wait.until``); error names are Kafka's; replayed topics are
   declared in setup and the fixture folders exist; every ``{"ref": name}``
   names a value an earlier step of the same path captured; a scenario with a
   path per clock (steps with ``clock``) has ``wall_clock``, lists no time-control
   capability in ``requires`` (only its virtual steps use them), and
   ``wall_clock.virtual_only`` names exactly the requirements no wall-path step
   shows; no absolute record timestamp depends on the date of the run
   (:mod:`lethe_conformance.scenarios.dates`);
4. every requirement ID exists in the requirement catalog (the message names
   the scenario and the ID). By default the catalog is fixtures/requirements/;
   ``known_requirements`` gives another set of IDs, and ``check_catalog=False``
   skips the gate (for drafting scenarios before their requirements exist).

:func:`load_scenarios` also refuses two files with the same ``id``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.error_codes import ErrorCode

from lethe_conformance.scenarios.dates import check_dates
from lethe_conformance.scenarios.model import (
    CAPABILITY_OF_OP,
    TIME_CONTROL,
    VIRTUAL,
    WALL,
    Scenario,
    ScenarioError,
)

__all__ = [
    "known_requirement_ids",
    "load_scenario",
    "load_scenarios",
    "scenario_files",
    "scenarios_root",
]


def scenarios_root() -> Path:
    return fixtures_root() / "scenarios"


@cache
def _validator() -> Any:
    schema = json.loads((fixtures_root() / "schema" / "scenario.schema.json").read_text())
    return Draft202012Validator(schema)


def scenario_files(root: Path | None = None) -> list[Path]:
    """Every ``*.json`` under ``root`` (default: fixtures/scenarios), sorted."""
    return sorted((root or scenarios_root()).rglob("*.json"))


@cache
def _catalog_ids(folder: Path) -> frozenset[str]:
    ids: set[str] = set()
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and isinstance(data.get("requirements"), list):
            ids.update(r["id"] for r in data["requirements"] if isinstance(r, dict) and "id" in r)
    return frozenset(ids)


def known_requirement_ids(root: Path | None = None) -> frozenset[str]:
    """Every requirement ID in the catalog files (fixtures/requirements/*.json)."""
    return _catalog_ids(root or fixtures_root() / "requirements")


def load_scenarios(
    paths: Iterable[Path] | None = None,
    *,
    known_requirements: frozenset[str] | None = None,
    check_catalog: bool = True,
) -> list[Scenario]:
    """Load and check every file (default: all of fixtures/scenarios); ids must be unique."""
    if check_catalog and known_requirements is None:
        known_requirements = known_requirement_ids()
    scenarios: list[Scenario] = []
    seen: dict[str, str] = {}
    for path in scenario_files() if paths is None else paths:
        scenario = load_scenario(
            path, known_requirements=known_requirements, check_catalog=check_catalog
        )
        if scenario.id in seen:
            raise ScenarioError(
                str(path), "$.id", f"id {scenario.id!r} is also used by {seen[scenario.id]}"
            )
        seen[scenario.id] = str(path)
        scenarios.append(scenario)
    return scenarios


def load_scenario(
    path: Path,
    *,
    known_requirements: frozenset[str] | None = None,
    check_catalog: bool = True,
) -> Scenario:
    """One scenario file through all four gates (see the module docstring)."""
    source = str(path)
    data = _parse(path)
    error = _most_specific(list(_validator().iter_errors(data)))
    if error is not None:
        raise ScenarioError(source, error.json_path, error.message)
    _check_rules(data, path)
    if check_catalog:
        known = known_requirements if known_requirements is not None else known_requirement_ids()
        _check_known(data, source, known)
    return Scenario.from_json(data, source)


def _parse(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioError(str(path), "", f"cannot read: {error}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise ScenarioError(str(path), where, f"invalid JSON: {error.msg}") from None


def _most_specific(errors: list[Any]) -> Any:
    """The error nearest the fault: the deepest one, leaving out the ``unevaluatedProperties``
    complaints that a failing inner schema causes further up (its properties then count as
    unevaluated), unless those are all there is."""
    if not errors:
        return None
    precise = [e for e in errors if e.validator != "unevaluatedProperties"] or errors
    return max(precise, key=lambda e: (len(e.absolute_path), e.validator not in _WEAK))


_WEAK = frozenset({"anyOf", "oneOf", "allOf", "if"})


def _check_rules(data: Mapping[str, Any], path: Path) -> None:
    source = str(path)
    if data["id"] != path.stem:
        raise ScenarioError(source, "$.id", f"id {data['id']!r} differs from the file name")
    covered = set(data["requirements"])
    requires = set(data["requires"])
    _check_clocks(data, source)
    for index, step in enumerate(data["steps"]):
        where = f"$.steps[{index}]"
        extra = set(step.get("requirements", ())) - covered
        if extra:
            raise ScenarioError(
                source,
                f"{where}.requirements",
                f"{sorted(extra)} not in the scenario's requirements",
            )
        if "principal" in step and "principals" not in requires:
            raise ScenarioError(
                source, where, "a step's principal needs 'principals' in $.requires"
            )
        if "broker" in step and "cluster-control" not in requires:
            raise ScenarioError(
                source, where, "a step's broker needs 'cluster-control' in $.requires"
            )
        for op in _ops(step):
            needed = CAPABILITY_OF_OP.get(op)
            implied = step.get("clock") == VIRTUAL and needed in TIME_CONTROL
            if needed is not None and needed not in requires and not implied:
                raise ScenarioError(source, where, f"op {op!r} needs {needed!r} in $.requires")
        if step["op"] == "produce" and "transaction" in step:
            if "transactions" not in requires:
                raise ScenarioError(source, where, "a transactional produce needs 'transactions'")
            if "replay" in step or any("producer" in b for b in step["batches"]):
                raise ScenarioError(
                    source, where, "a transactional produce builds its batches: no replay/producer"
                )
        if step["op"] == "produce" and "replay" in step:
            _check_fixture(step["replay"], source, f"{where}.replay")
        if step["op"] == "restart_with_files":
            _check_copies(step["files"], source, f"{where}.files")
    for clock in (VIRTUAL, WALL) if "wall_clock" in data else (None,):
        _check_captures(data["steps"], source, clock)
    for json_path, name in _error_names(data, "$"):
        if name not in ErrorCode.__members__:
            raise ScenarioError(source, json_path, f"unknown Kafka error name {name!r}")
    _check_setup(data["setup"], source)
    check_dates(data, source)
    if data["setup"].get("broker_configs") and "own-log-dir" not in requires:
        raise ScenarioError(
            source, "$.setup.broker_configs", "broker settings need 'own-log-dir' in $.requires"
        )


def _check_captures(steps: list[Mapping[str, Any]], source: str, clock: str | None) -> None:
    """Every ``{"ref": name}`` of a path names a value an earlier step of it captured."""
    captured: set[str] = set()
    for index, step in enumerate(steps):
        if clock is not None and step.get("clock", clock) != clock:
            continue
        for json_path, name, captures in _refs(step, f"$.steps[{index}]"):
            if captures:  # an expectation capturing the value it found (context.py)
                captured.add(name)
            elif name not in captured:
                path = "" if clock is None else f" on the {clock} clock's path"
                raise ScenarioError(
                    source, json_path, f"value {name!r} is captured by no earlier step{path}"
                )
        capture = step.get("capture", {})
        captured.update([capture] if isinstance(capture, str) else capture.values())


def _check_clocks(data: Mapping[str, Any], source: str) -> None:
    """The rules of a scenario with a path per clock (README, *Time*)."""
    clocked = [i for i, step in enumerate(data["steps"]) if "clock" in step]
    if "wall_clock" not in data:
        if clocked:
            raise ScenarioError(
                source, f"$.steps[{clocked[0]}].clock", "a step's clock needs $.wall_clock"
            )
        return
    listed = TIME_CONTROL & set(data["requires"])
    if listed:
        raise ScenarioError(
            source,
            "$.requires",
            f"{sorted(listed)} would keep the wall path from running: "
            "only steps with clock 'virtual' may use them",
        )
    shown_on_wall: set[str] = set()
    tied: set[str] = set()
    for step in data["steps"]:
        tied.update(step.get("requirements", ()))
        if step.get("clock", WALL) == WALL:
            shown_on_wall.update(step.get("requirements", ()))
    untied = set(data["requirements"]) - tied
    virtual_only = [
        (index, requirement)
        for index, entry in enumerate(data["wall_clock"].get("virtual_only", ()))
        for requirement in entry["requirements"]
    ]
    named = {requirement for _, requirement in virtual_only}
    for index, requirement in virtual_only:
        if requirement in shown_on_wall or requirement in untied or requirement not in tied:
            raise ScenarioError(
                source,
                f"$.wall_clock.virtual_only[{index}]",
                f"{requirement} is shown on the wall path too (or by no step)",
            )
    missing = tied - shown_on_wall - named
    if missing:
        raise ScenarioError(
            source,
            "$.wall_clock.virtual_only",
            f"{sorted(missing)}: shown by virtual-clock steps only, so list them with the reason",
        )


def _check_setup(setup: Mapping[str, Any], source: str) -> None:
    topics = {t["name"]: t["partitions"] for t in setup["topics"]}
    for index, replay in enumerate(setup.get("replay", ())):
        where = f"$.setup.replay[{index}]"
        if replay["topic"] not in topics:
            raise ScenarioError(
                source, f"{where}.topic", f"{replay['topic']!r} is not a setup topic"
            )
        _check_fixture(replay, source, where)


def _check_fixture(replay: Mapping[str, Any], source: str, where: str) -> None:
    folder = fixtures_root() / replay["log"] / replay["partition_dir"]
    if not folder.is_dir():
        raise ScenarioError(source, where, f"fixture folder {folder} does not exist")


def _check_copies(files: list[Mapping[str, Any]], source: str, where: str) -> None:
    for number, file in enumerate(files):
        folder = file.get("copy_segments_from")
        if folder is not None and not (fixtures_root() / folder).is_dir():
            raise ScenarioError(
                source,
                f"{where}[{number}].copy_segments_from",
                f"fixture folder {folder} does not exist",
            )


def _check_known(data: Mapping[str, Any], source: str, known: frozenset[str]) -> None:
    for index, requirement in enumerate(data["requirements"]):
        if requirement not in known:
            raise ScenarioError(
                source,
                f"$.requirements[{index}]",
                f"scenario {data['id']!r} names unknown requirement ID {requirement!r}",
            )


def _ops(step: Mapping[str, Any]) -> Iterator[str]:
    yield step["op"]
    if step["op"] == "wait":
        yield from _ops(step["until"])


def _refs(value: Any, path: str) -> Iterator[tuple[str, str, bool]]:
    """(JSON path, name, False) of every ``{"ref": name}`` value reference in a step, and
    (JSON path, name, True) of every ``{"between": ..., "capture": name}``, in document
    order (a reference after the capturing expectation may use the value)."""
    if isinstance(value, dict):
        if isinstance(value.get("ref"), str):
            yield f"{path}.ref", value["ref"], False
        if "between" in value and isinstance(value.get("capture"), str):
            yield f"{path}.capture", value["capture"], True
        for key, item in value.items():
            yield from _refs(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _refs(item, f"{path}[{index}]")


def _error_names(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(JSON path, name) of every error given by name, anywhere in the document."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "error" and isinstance(item, str):
                yield f"{path}.{key}", item
            else:
                yield from _error_names(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _error_names(item, f"{path}[{index}]")
