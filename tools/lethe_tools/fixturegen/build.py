"""Find specs, build their log directories, write them or check them.

Layout under the output root (``fixtures/logs/`` by default)::

    specs/<name>.json      the data: one spec per log directory
    <name>/                generated: exactly what build_log_dir(spec) returns
    README.md              hand-written; never touched

``write_all`` replaces each ``<name>/`` wholesale. ``check_all`` builds in
memory and compares with what is on disk: a file whose bytes differ, a file
the build would write but is absent, a file present but not built; and, when
every spec was built, any directory with no spec behind it (a stale fixture).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lethe_formats.fixtures import fixtures_root

from lethe_tools.fixturegen.load import load_spec
from lethe_tools.fixturegen.logdir import build_log_dir
from lethe_tools.fixturegen.spec import SpecError
from lethe_tools.fixturegen.tree import FileTree, TreeDiff, compare_trees, read_tree, replace_tree

__all__ = [
    "BuiltLogDir",
    "CheckReport",
    "build_specs",
    "check_all",
    "default_logs_root",
    "find_spec_files",
    "write_all",
]

_NOT_GENERATED = frozenset({"specs", "README.md"})


@dataclass(frozen=True, slots=True)
class BuiltLogDir:
    name: str
    spec_file: Path
    tree: FileTree


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Per-directory differences plus directories that no spec produces."""

    diffs: dict[str, TreeDiff]
    stale: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.stale and not any(self.diffs.values())


def default_logs_root() -> Path:
    return fixtures_root() / "logs"


def find_spec_files(selectors: Sequence[str], specs_dir: Path | None = None) -> list[Path]:
    """Spec files named by ``selectors`` (a path, or a name in specs/); all of them if empty."""
    directory = specs_dir if specs_dir is not None else default_logs_root() / "specs"
    if not selectors:
        return sorted(directory.glob("*.json"))
    found = []
    for selector in selectors:
        as_path = Path(selector)
        candidate = as_path if as_path.suffix == ".json" else directory / f"{selector}.json"
        if not candidate.is_file():
            raise SpecError("no such spec file", file=str(candidate))
        found.append(candidate)
    return found


def build_specs(spec_files: Iterable[Path]) -> list[BuiltLogDir]:
    """Load and build every spec; the first invalid one raises SpecError."""
    built = []
    names: dict[str, Path] = {}
    for spec_file in spec_files:
        spec = load_spec(spec_file)
        if spec.name in names:
            raise SpecError(
                f"name also used by {names[spec.name]}", file=str(spec_file), path="$.name"
            )
        names[spec.name] = spec_file
        built.append(BuiltLogDir(spec.name, spec_file, build_log_dir(spec)))
    return built


def write_all(built: Iterable[BuiltLogDir], out: Path) -> None:
    for log_dir in built:
        replace_tree(out / log_dir.name, log_dir.tree)


def check_all(built: Sequence[BuiltLogDir], out: Path, *, complete: bool) -> CheckReport:
    """Compare each built tree with ``out/<name>``; ``complete`` also looks for stale dirs."""
    diffs = {b.name: compare_trees(b.tree, read_tree(out / b.name)) for b in built}
    stale: tuple[str, ...] = ()
    if complete and out.is_dir():
        names = {b.name for b in built}
        stale = tuple(sorted(p.name for p in out.iterdir() if p.name not in names | _NOT_GENERATED))
    return CheckReport(diffs, stale)
