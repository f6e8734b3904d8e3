"""``restart_with_files``: a restart with files of the log directory changed while the broker
is down (capability ``edit-log-dir``).

Theory of operation
-------------------
Kafka reads its root checkpoints only at startup and rewrites them on every
clean shutdown, so a checkpoint corrupted *before* a restart is overwritten
before it is ever read. To show what a broker does with a damaged file (KIP107-CKP-8:
``LogManager.loadLogs`` warns and falls back), the change has to happen between
the shutdown and the startup. Only a target whose broker the runner owns can offer
that moment (:class:`~lethe_conformance.targets.base.LocalTarget`)::

    stop the broker cleanly  ->  write / delete the files  ->  start it on the same dir

Each entry of ``files`` names a path relative to the log dir root and either
``text`` (written as given, UTF-8, no newline translation) or ``delete``, or
(``copy_segments_from``, a fixture partition folder such as
``golden/transactions/pass0/golden-txn-0``) names a partition folder whose
segment files (``.log``, ``.index``, ``.timeindex``, ``.txnindex``,
``.snapshot``) are replaced by the fixture's, byte for byte: a log Kafka wrote,
control batches and aborted-transaction indexes included, which no producer
could replay. ``partition.metadata`` and ``leader-epoch-checkpoint`` stay the
broker's own. With ``up_to_offset`` N only the head of that log is copied: the
segments whose base offset is below N and the producer snapshots at or below N
(a snapshot is named after the offset it describes), so a transaction open at N
stays open, as Kafka's producer state rebuilt from them says.
``{symbol}`` in a path or text stands for the real name of a scenario topic,
so a checkpoint line can name the scenario's partition (``{t} 0 19``). The
connection is dropped first; the next step reconnects.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from lethe_formats.fixtures import fixtures_root

from lethe_conformance.outcomes import Mismatch
from lethe_conformance.scenarios.context import RunContext
from lethe_conformance.scenarios.ops.registry import op
from lethe_conformance.targets.base import EDIT_LOG_DIR, CapabilityMissingError, LocalTarget

__all__ = ["fill_symbols", "restart_with_files"]

_SYMBOL = re.compile(r"\{([A-Za-z0-9_.-]+)\}")
_SEGMENT_SUFFIXES = frozenset({".log", ".index", ".timeindex", ".txnindex", ".snapshot"})


def fill_symbols(ctx: RunContext, text: str) -> str:
    """``text`` with every ``{symbol}`` replaced by that topic's real name."""
    return _SYMBOL.sub(lambda m: ctx.topic(m.group(1)), text)


@op("restart_with_files")
def restart_with_files(ctx: RunContext, data: Mapping[str, Any], path: str) -> list[Mismatch]:
    target = ctx.target
    if not target.capabilities.edit_log_dir:
        raise CapabilityMissingError(target.name, EDIT_LOG_DIR)
    changes: list[tuple[str, str | None]] = [
        (fill_symbols(ctx, f["path"]), None if f.get("delete") else fill_symbols(ctx, f["text"]))
        for f in data["files"]
        if "copy_segments_from" not in f
    ]
    copies = [
        (
            fill_symbols(ctx, f["path"]),
            fixtures_root() / f["copy_segments_from"],
            int(f["up_to_offset"]) if "up_to_offset" in f else None,
        )
        for f in data["files"]
        if "copy_segments_from" in f
    ]

    def edit(log_dir: Path) -> None:
        for relative, source, up_to in copies:
            _replace_segments(log_dir / relative, source, up_to)
        for relative, text in changes:
            file = log_dir / relative
            if text is None:
                file.unlink(missing_ok=True)
            else:
                with file.open("w", encoding="utf-8", newline="") as out:
                    out.write(text)

    ctx.drop_connection()
    cast(LocalTarget, target).restart_editing(edit)
    return []


def _replace_segments(folder: Path, source: Path, up_to: int | None) -> None:
    """Swap the segment files of ``folder`` for those of the fixture folder ``source``
    (only the head below ``up_to``, when given: see the module docstring)."""
    for file in folder.iterdir():
        if file.suffix in _SEGMENT_SUFFIXES:
            file.unlink()
    for file in sorted(source.iterdir()):
        if file.suffix in _SEGMENT_SUFFIXES and _wanted(file, up_to):
            shutil.copyfile(file, folder / file.name)


def _wanted(file: Path, up_to: int | None) -> bool:
    if up_to is None or not file.stem.isdigit():
        return True
    offset = int(file.stem)
    return offset <= up_to if file.suffix == ".snapshot" else offset < up_to
