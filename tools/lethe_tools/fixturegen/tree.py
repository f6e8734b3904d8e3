"""File trees as data: write one to disk, read one back, compare two.

The generator never touches the disk while it computes: a log directory is a
``FileTree``, a mapping from POSIX relative paths (``golden-t-0/000…0.log``)
to bytes. That makes determinism checkable (build twice, compare mappings)
and makes ``--check`` a plain comparison of two trees, with no temporary
state that could leak into the committed fixtures.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FileTree", "TreeDiff", "compare_trees", "read_tree", "replace_tree"]

FileTree = Mapping[str, bytes]


@dataclass(frozen=True, slots=True)
class TreeDiff:
    """Relative paths that differ between an expected and an actual tree."""

    differing: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.differing or self.missing or self.extra)

    def lines(self, prefix: str = "") -> list[str]:
        """One ``differs|missing|extra: path`` line per file, sorted by path."""
        tagged = (
            [(p, "differs") for p in self.differing]
            + [(p, "missing") for p in self.missing]
            + [(p, "extra") for p in self.extra]
        )
        return [f"{tag}: {prefix}{path}" for path, tag in sorted(tagged)]


def read_tree(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` (hidden ones included), keyed by relative path."""
    if not root.is_dir():
        return {}
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def compare_trees(expected: FileTree, actual: FileTree) -> TreeDiff:
    """Missing: only in ``expected``; extra: only in ``actual``; differing: other bytes."""
    return TreeDiff(
        differing=tuple(
            sorted(p for p in expected.keys() & actual.keys() if expected[p] != actual[p])
        ),
        missing=tuple(sorted(expected.keys() - actual.keys())),
        extra=tuple(sorted(actual.keys() - expected.keys())),
    )


def replace_tree(root: Path, tree: FileTree) -> None:
    """Make ``root`` hold exactly ``tree``: stale files from an older build disappear."""
    if root.exists():
        shutil.rmtree(root)
    for relative, data in sorted(tree.items()):
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
