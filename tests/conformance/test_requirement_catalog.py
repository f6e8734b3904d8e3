"""The requirement catalog (fixtures/requirements/) is well-formed and its references resolve.

Theory of operation: the catalog is data that scenarios, baselines and reports refer to
by ID, so these tests pin what every consumer relies on:

- every profile file validates against ``fixtures/schema/requirements.schema.json``
  (JSON Schema draft 2020-12), and ``sources.json`` against its ``sources_file`` def;
- IDs have the stable ``KIP<n>-<AREA>-<n>`` form, match their file's profile, are unique,
  and ``issued.txt`` (append-only) holds exactly the active and retired IDs, so an ID can
  neither vanish nor be renumbered unnoticed;
- statements are one line, unique, and open with the keyword of their ``level``;
- ``kafka_version`` is present exactly when ``implemented_by_kafka`` is true, and a
  ``decision`` exactly where the KIP is silent or Kafka departs from it;
- every reference resolves: ``kip_section`` and ``kip`` sources name a heading of the KIP
  text (indexed in ``sources.json``), ``kafka-facts`` sources a section, ``golden`` sources
  a case folder, ``lethe-readme`` sources a heading of the repository README, and
  ``related`` / ``replaced_by`` an issued ID;
- ``sources.json`` matches the KIP texts and kafka-facts.md it indexes, checked against
  the read-only shared copies (``LETHE_SHARED_DIR``, default ``../shared`` beside the
  checkout) when this machine has them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from lethe_formats.fixtures import fixtures_root

FIXTURES = fixtures_root()
CATALOG = FIXTURES / "requirements"
SCHEMA_PATH = FIXTURES / "schema" / "requirements.schema.json"
REPO_README = Path(__file__).resolve().parents[2] / "README.md"
PROFILES = ("kip107", "kip534", "kip68", "kip694", "kip87")
ADOPTED = {"kip107": "0.11.0", "kip534": "3.1.0"}
NEWEST_CHECKED_KAFKA = (4, 0, 0)
ID_FORM = re.compile(r"^KIP(?P<kip>107|534|68|694|87)-(?P<area>[A-Z]{2,5})-(?P<n>[1-9][0-9]{0,2})$")
KEYWORD = re.compile(r"\b(MUST|SHOULD|MAY)\b")
# The project's shared folder sits beside the checkout (CI clones it that way).
SHARED = Path(os.environ.get("LETHE_SHARED_DIR", Path(__file__).resolve().parents[3] / "shared"))

Requirement = dict[str, Any]


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = _load(SCHEMA_PATH)
    return schema


def _profile(name: str) -> dict[str, Any]:
    document: dict[str, Any] = _load(CATALOG / f"{name}.json")
    return document


def _sources() -> dict[str, Any]:
    document: dict[str, Any] = _load(CATALOG / "sources.json")
    return document


def _requirements() -> list[Requirement]:
    return [r for name in PROFILES for r in _profile(name)["requirements"]]


def _retired_ids() -> list[str]:
    return [entry["id"] for name in PROFILES for entry in _profile(name)["retired"]]


def _issued() -> list[str]:
    return (CATALOG / "issued.txt").read_text(encoding="utf-8").split()


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _heading_lines(text: str) -> set[str]:
    """Each line of a KIP text with its markdown decoration removed (#, **, escapes)."""
    lines = set()
    for raw in text.splitlines():
        line = raw.strip().lstrip("#").replace("**", "").replace("\\_", "_").strip()
        if line:
            lines.add(line)
    return lines


def _markdown_headings(text: str) -> set[str]:
    return {m.group(1).strip() for m in re.finditer(r"^#{1,6} +(.+)$", text, re.MULTILINE)}


# ---- schema validity -------------------------------------------------------------------


def test_the_catalog_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(_schema())


@pytest.mark.parametrize("name", PROFILES)
def test_each_profile_file_validates_against_the_catalog_schema(name: str) -> None:
    errors = sorted(
        Draft202012Validator(_schema()).iter_errors(_profile(name)), key=lambda e: list(e.path)
    )
    assert [f"{list(e.absolute_path)}: {e.message}" for e in errors] == []


def test_the_source_index_validates_against_its_schema_def() -> None:
    schema = _schema()
    validator = Draft202012Validator({**schema["$defs"]["sources_file"], "$defs": schema["$defs"]})
    assert [e.message for e in validator.iter_errors(_sources())] == []


def test_the_catalog_folder_holds_exactly_the_documented_files() -> None:
    names = {p.name for p in CATALOG.iterdir()}
    expected = {f"{p}.json" for p in PROFILES} | {"README.md", "sources.json", "issued.txt"}
    assert names == expected


def test_a_requirement_missing_a_field_is_rejected_by_the_schema() -> None:
    document = _profile("kip107")
    broken = dict(document["requirements"][0])
    del broken["observable"]
    bad = {**document, "requirements": [broken]}
    assert not Draft202012Validator(_schema()).is_valid(bad)


def test_the_schema_rejects_a_two_line_statement_and_a_version_without_implementation() -> None:
    document = _profile("kip107")
    first = dict(document["requirements"][0])
    two_lines = {**first, "statement": "The broker MUST do one thing.\nAnd another."}
    unimplemented = {**first, "implemented_by_kafka": False}
    validator = Draft202012Validator(_schema())
    assert not validator.is_valid({**document, "requirements": [two_lines]})
    assert not validator.is_valid({**document, "requirements": [unimplemented]})


# ---- IDs -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PROFILES)
def test_ids_have_the_stable_form_and_match_their_files_profile(name: str) -> None:
    document = _profile(name)
    assert document["profile"] == name
    number = name.removeprefix("kip")
    assert document["kip"]["number"] == int(number)
    wrong = []
    for requirement in document["requirements"]:
        match = ID_FORM.match(requirement["id"])
        if match is None or match["kip"] != number or requirement["profile"] != name:
            wrong.append(requirement["id"])
    assert wrong == []


def test_ids_are_unique_across_the_catalog_and_never_both_active_and_retired() -> None:
    ids = [r["id"] for r in _requirements()] + _retired_ids()
    assert [i for i, count in Counter(ids).items() if count > 1] == []


def test_issued_ids_are_exactly_the_active_and_retired_ones() -> None:
    issued = _issued()
    assert [i for i, count in Counter(issued).items() if count > 1] == []
    known = {r["id"] for r in _requirements()} | set(_retired_ids())
    assert sorted(set(issued) - known) == [], "issued IDs that vanished: retire them instead"
    assert sorted(known - set(issued)) == [], "IDs not yet appended to issued.txt"


def test_related_and_replacement_ids_resolve_to_issued_ids() -> None:
    issued = set(_issued())
    references = [i for r in _requirements() for i in r.get("related", [])]
    for name in PROFILES:
        references += [i for e in _profile(name)["retired"] for i in e.get("replaced_by", [])]
    assert sorted(set(references) - issued) == []


# ---- statements and levels -------------------------------------------------------------


def test_statements_are_single_lines_and_unique_across_the_catalog() -> None:
    statements = [r["statement"] for r in _requirements()]
    assert [s for s in statements if "\n" in s or "\r" in s or s != s.strip()] == []
    assert [s for s, count in Counter(statements).items() if count > 1] == []


def test_each_statements_first_keyword_is_its_level() -> None:
    wrong = []
    for requirement in _requirements():
        match = KEYWORD.search(requirement["statement"])
        if match is None or match.group(1) != requirement["level"]:
            wrong.append(requirement["id"])
    assert wrong == []


def test_every_profile_has_must_requirements() -> None:
    levels = Counter(r["profile"] for r in _requirements() if r["level"] == "MUST")
    assert sorted(levels) == sorted(PROFILES)


# ---- Kafka versions and decisions ------------------------------------------------------


def test_kafka_version_is_present_exactly_when_kafka_implements_it() -> None:
    wrong = [
        r["id"] for r in _requirements() if ("kafka_version" in r) != r["implemented_by_kafka"]
    ]
    assert wrong == []


def test_kafka_versions_lie_between_the_kips_release_and_the_newest_checked_release() -> None:
    wrong = []
    for requirement in _requirements():
        if "kafka_version" not in requirement:
            continue
        version = _version(requirement["kafka_version"])
        floor = _version(ADOPTED.get(requirement["profile"], "0.0.0"))
        if not floor <= version <= NEWEST_CHECKED_KAFKA:
            wrong.append(requirement["id"])
    assert wrong == []


@pytest.mark.parametrize("name", sorted(ADOPTED))
def test_adopted_profiles_require_only_what_kafka_implements(name: str) -> None:
    document = _profile(name)
    assert document["kip"]["adopted_by_kafka"] is True
    assert document["kip"]["kafka_version"] == ADOPTED[name]
    assert [r["id"] for r in document["requirements"] if not r["implemented_by_kafka"]] == []


@pytest.mark.parametrize("name", sorted(set(PROFILES) - set(ADOPTED)))
def test_unadopted_profiles_are_marked_never_adopted(name: str) -> None:
    kip = _profile(name)["kip"]
    assert kip["adopted_by_kafka"] is False
    assert kip["status"] == "Under Discussion"


def test_a_decision_is_recorded_exactly_where_the_kip_is_silent_or_departed_from() -> None:
    wrong = []
    for requirement in _requirements():
        needs = requirement["kip_text"] in ("silent", "differs")
        if needs != ("decision" in requirement):
            wrong.append(requirement["id"])
    assert wrong == []


def test_kafka_behaviour_requirements_are_marked_silent() -> None:
    wrong = [
        r["id"]
        for r in _requirements()
        if r["kip_section"] == "kafka-behaviour" and r["kip_text"] != "silent"
    ]
    assert wrong == []


def test_not_observable_requirements_give_a_reason() -> None:
    wrong = [
        r["id"]
        for r in _requirements()
        if r["observable"]["by"] == "not-observable" and len(r["observable"]["how"]) < 20
    ]
    assert wrong == []


# ---- references resolve ----------------------------------------------------------------


def test_kip_sections_name_a_heading_of_the_profiles_kip_text() -> None:
    headings = {name: set(entry["headings"]) for name, entry in _sources()["kips"].items()}
    wrong = [
        r["id"]
        for r in _requirements()
        if r["kip_section"] != "kafka-behaviour" and r["kip_section"] not in headings[r["profile"]]
    ]
    assert wrong == []


def test_every_source_reference_resolves() -> None:
    sources = _sources()
    headings = {entry["number"]: set(entry["headings"]) for entry in sources["kips"].values()}
    numbers = {name: entry["number"] for name, entry in sources["kips"].items()}
    facts = set(sources["kafka_facts"]["sections"])
    readme = _markdown_headings(REPO_README.read_text(encoding="utf-8"))
    code = sources.get("kafka_source", {}).get("files", {})
    unresolved = []
    for requirement in _requirements():
        for source in requirement["source"]:
            kind, ref = source["kind"], source["ref"]
            if kind == "kip":
                ok = ref in headings[source.get("kip", numbers[requirement["profile"]])]
            elif kind == "kafka-facts":
                ok = ref in facts
            elif kind == "golden":
                ok = (FIXTURES / "golden" / ref).is_dir()
            elif kind == "kafka-source":
                path, member = ref.split("#")
                ok = member in code.get(path, ())
            else:
                ok = ref in readme
            if not ok:
                unresolved.append(f"{requirement['id']}: {kind} {ref!r}")
    assert unresolved == []


# ---- the source index matches the texts it indexes -------------------------------------


def _shared_text(*parts: str) -> str:
    path = SHARED.joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"{path} is not on this machine (set LETHE_SHARED_DIR to check the index)")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", PROFILES)
def test_indexed_kip_headings_are_headings_of_the_kip_text(name: str) -> None:
    entry = _sources()["kips"][name]
    text = _shared_text("kips", entry["file"])
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == entry["sha256"]
    lines = _heading_lines(text)
    assert [h for h in entry["headings"] if h not in lines] == []


def test_indexed_kafka_facts_sections_are_sections_of_kafka_facts() -> None:
    entry = _sources()["kafka_facts"]
    text = _shared_text("kafka-facts.md")
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == entry["sha256"]
    found = {
        m.group(1): m.group(2).replace("`", "")
        for m in re.finditer(r"^#{2,3} ([0-9](?:\.[0-9]+)?)\.? (.+)$", text, re.MULTILINE)
    }
    assert entry["sections"] == found


def test_indexed_kafka_source_members_are_in_kafka_source() -> None:
    """Each member the index lists is named in its file at the indexed commit (read from the
    Kafka mirror, ``LETHE_KAFKA_MIRROR``, a bare git repository, where it exists)."""
    entry = _sources()["kafka_source"]
    mirror = Path(os.environ.get("LETHE_KAFKA_MIRROR", "/work/.mirror/confluentinc+kafka/repo"))
    if not mirror.is_dir():
        pytest.skip(f"{mirror} is not on this machine (set LETHE_KAFKA_MIRROR to check the index)")
    missing = []
    for path, members in entry["files"].items():
        shown = subprocess.run(
            ["git", f"--git-dir={mirror}", "show", f"{entry['commit']}:{path}"],
            capture_output=True,
            text=True,
            check=False,
        )
        missing += [f"{path}#{m}" for m in members if re.search(rf"\b{m}\b", shown.stdout) is None]
    assert missing == []


def test_every_area_code_in_use_is_documented_for_its_profile_in_the_readme() -> None:
    readme = (CATALOG / "README.md").read_text(encoding="utf-8")
    documented = {
        m.group(1): set(re.findall(r"`([A-Z]{2,5})`", m.group(2)))
        for m in re.finditer(r"^\| (kip[0-9]+) \| (`[A-Z].*)\|$", readme, re.MULTILINE)
    }
    undocumented = sorted(
        {
            f"{r['profile']}: {r['id'].split('-')[1]}"
            for r in _requirements()
            if r["id"].split("-")[1] not in documented.get(r["profile"], set())
        }
    )
    assert undocumented == []
