"""Compile lethe's Kaitai Struct specs with the real compiler, and import the result.

Theory of operation
-------------------
The ``.ksy`` files next to this module are a second, independent definition of
Kafka's on-disk formats. They are compiled on demand, never committed in
compiled form, so the Python that parses with them always comes straight from
the official Kaitai compiler and the specs::

    formats/lethe_formats/ksy/*.ksy --node formats/kaitai/compile.mjs--> out_dir/*.py
                                     (kaitai-struct-compiler 0.11.0, npm)

The npm compiler is a library without a command line, so ``compile.mjs`` (a
small Node driver in ``formats/kaitai/``) loads each spec with js-yaml, calls
``compile("python", ...)`` and writes the files. Its packages come from
``npm ci --prefix formats/kaitai``; nothing here needs Node until
:func:`compile_specs` is called, so importing ``lethe_formats`` never does.

Generated modules import each other as *top-level* modules
(``import kafka_record_v2``). :func:`load_compiled` therefore puts ``out_dir``
on ``sys.path`` only while it imports them, in dependency order, and then
restores both ``sys.path`` and ``sys.modules``: the loaded modules keep their
references to one another, and two compiled copies never collide.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "KSY_DIR",
    "SPEC_MODULES",
    "KaitaiCompileError",
    "KaitaiSpecs",
    "KaitaiUnavailableError",
    "compile_specs",
    "kaitai_dir",
    "load_compiled",
    "spec_files",
]

#: Where the ``.ksy`` specs live (installed as package data too).
KSY_DIR = Path(__file__).resolve().parent

#: Generated module names, dependencies first (the order they are imported in).
SPEC_MODULES = (
    "kafka_varint",
    "kafka_record_v2",
    "kafka_log_segment",
    "kafka_offset_index",
    "kafka_time_index",
    "kafka_txn_index",
    "kafka_checkpoint",
    "kafka_partition_metadata",
)

_SETUP_HINT = "run `npm ci --prefix formats/kaitai` in the lethe checkout"
_COMPILE_TIMEOUT_S = 300
_import_lock = threading.Lock()


class KaitaiUnavailableError(RuntimeError):
    """Node, the driver or the npm packages needed to compile are missing."""


class KaitaiCompileError(RuntimeError):
    """The Kaitai compiler rejected a spec, or produced no module for it."""


@dataclass(frozen=True, slots=True)
class KaitaiSpecs:
    """The compiled parser classes, one per spec (``Entry`` etc. are nested)."""

    varint: Any
    record_v2: Any
    log_segment: Any
    offset_index: Any
    time_index: Any
    txn_index: Any
    checkpoint: Any
    partition_metadata: Any
    out_dir: Path


def kaitai_dir() -> Path:
    """The Node driver's folder: ``$LETHE_KAITAI_DIR`` if set, else
    ``formats/kaitai`` of the checkout this module lives in.

    The variable serves a regular (wheel) install, where the module sits in
    site-packages and the checkout's driver must be named explicitly.
    """
    configured = os.environ.get("LETHE_KAITAI_DIR")
    if configured:
        return Path(configured)
    return KSY_DIR.parents[1] / "kaitai"


def spec_files() -> list[Path]:
    """Every ``.ksy`` spec, sorted by name."""
    return sorted(KSY_DIR.glob("*.ksy"))


def _node_command() -> list[str]:
    node = shutil.which("node")
    if node is None:
        raise KaitaiUnavailableError(
            f"`node` was not found on PATH: install Node.js (18 or later), then {_SETUP_HINT}"
        )
    driver = kaitai_dir() / "compile.mjs"
    if not driver.is_file():
        raise KaitaiUnavailableError(
            f"the Kaitai driver {driver} is missing: the specs compile only from a lethe "
            "checkout (set LETHE_KAITAI_DIR to its formats/kaitai when lethe is installed)"
        )
    package = kaitai_dir() / "node_modules" / "kaitai-struct-compiler"
    if not (package / "package.json").is_file():
        raise KaitaiUnavailableError(
            f"the npm package kaitai-struct-compiler is not installed in {kaitai_dir()}: "
            f"{_SETUP_HINT}"
        )
    return [node, str(driver)]


def compile_specs(out_dir: Path, specs: Sequence[Path] | None = None) -> Path:
    """Compile every spec (or just ``specs``) to Python modules in ``out_dir``.

    ``out_dir`` is created if needed and returned. Raises
    :class:`KaitaiUnavailableError` when Node or the npm packages are missing
    and :class:`KaitaiCompileError` when the compiler fails or, compiling all
    specs, leaves out a module.
    """
    command = _node_command()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [str(path) for path in (spec_files() if specs is None else specs)]
    try:
        result = subprocess.run(
            [*command, str(out_dir), *paths],
            capture_output=True,
            text=True,
            timeout=_COMPILE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise KaitaiCompileError(f"running the Kaitai compiler failed: {error}") from error
    if result.returncode != 0:
        detail = result.stderr.strip() or result.stdout.strip()
        raise KaitaiCompileError(f"the Kaitai compiler failed (exit {result.returncode}): {detail}")
    missing = [name for name in SPEC_MODULES if not (out_dir / f"{name}.py").is_file()]
    if specs is None and missing:
        raise KaitaiCompileError(f"the Kaitai compiler wrote no module for: {', '.join(missing)}")
    return out_dir


def _import_all(out_dir: Path) -> dict[str, ModuleType]:
    """Import the generated modules from ``out_dir`` without leaving a trace."""
    saved = {name: sys.modules.pop(name) for name in SPEC_MODULES if name in sys.modules}
    sys.path.insert(0, str(out_dir))
    importlib.invalidate_caches()
    try:
        modules = {name: importlib.import_module(name) for name in SPEC_MODULES}
    finally:
        sys.path.remove(str(out_dir))
        for name in SPEC_MODULES:
            sys.modules.pop(name, None)
        sys.modules.update(saved)
    return modules


def load_compiled(out_dir: Path) -> KaitaiSpecs:
    """Import the modules :func:`compile_specs` wrote to ``out_dir``.

    Raises :class:`KaitaiCompileError` when a module is missing or does not
    import (for instance a kaitaistruct runtime older than 0.11).
    """
    out_dir = Path(out_dir).resolve()
    missing = [name for name in SPEC_MODULES if not (out_dir / f"{name}.py").is_file()]
    if missing:
        raise KaitaiCompileError(f"no compiled module in {out_dir} for: {', '.join(missing)}")
    with _import_lock:
        try:
            modules = _import_all(out_dir)
        except Exception as error:
            raise KaitaiCompileError(f"importing the compiled specs failed: {error}") from error
    return KaitaiSpecs(
        varint=modules["kafka_varint"].KafkaVarint,
        record_v2=modules["kafka_record_v2"].KafkaRecordV2,
        log_segment=modules["kafka_log_segment"].KafkaLogSegment,
        offset_index=modules["kafka_offset_index"].KafkaOffsetIndex,
        time_index=modules["kafka_time_index"].KafkaTimeIndex,
        txn_index=modules["kafka_txn_index"].KafkaTxnIndex,
        checkpoint=modules["kafka_checkpoint"].KafkaCheckpoint,
        partition_metadata=modules["kafka_partition_metadata"].KafkaPartitionMetadata,
        out_dir=out_dir,
    )
