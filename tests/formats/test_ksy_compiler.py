"""The specs are compiled by the real Kaitai compiler on demand and load without side effects."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest_ksy import kaitai_specs
from lethe_formats.ksy import compiler
from lethe_formats.ksy.compiler import (
    KSY_DIR,
    SPEC_MODULES,
    KaitaiCompileError,
    KaitaiSpecs,
    KaitaiUnavailableError,
    compile_specs,
    kaitai_dir,
    load_compiled,
    spec_files,
)

__all__ = ["kaitai_specs"]
pytestmark = pytest.mark.kaitai

SETUP_HINT = "npm ci --prefix formats/kaitai"


def test_every_spec_compiles_to_a_generated_module(kaitai_specs: KaitaiSpecs) -> None:
    for name in SPEC_MODULES:
        source = (kaitai_specs.out_dir / f"{name}.py").read_text(encoding="utf-8")
        assert source.startswith("# This is a generated file!"), name
    assert sorted(p.stem for p in spec_files()) == sorted(SPEC_MODULES)


def test_spec_ids_match_their_file_names() -> None:
    """Kaitai resolves ``imports:`` by file name, so meta/id must equal it."""
    for path in spec_files():
        text = path.read_text(encoding="utf-8")
        assert re.search(rf"^  id: {path.stem}$", text, re.MULTILINE), path.name


def test_compiled_python_is_never_committed_next_to_the_specs() -> None:
    generated = {p.stem for p in KSY_DIR.glob("*.py")} & set(SPEC_MODULES)
    assert generated == set()


def test_loading_leaves_sys_path_and_sys_modules_as_they_were(
    kaitai_specs: KaitaiSpecs,
) -> None:
    path_before = list(sys.path)
    load_compiled(kaitai_specs.out_dir)
    assert sys.path == path_before
    assert not set(SPEC_MODULES) & set(sys.modules)


def test_two_compiled_copies_load_independently(kaitai_specs: KaitaiSpecs, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(kaitai_specs.out_dir, copy)
    other = load_compiled(copy)
    assert other.log_segment is not kaitai_specs.log_segment
    record = b"\x10\x00\x00\x00\x02k\x02v\x00"  # length 8, key "k", value "v"
    assert other.record_v2.from_bytes(record).body.key == b"k"
    assert kaitai_specs.record_v2.from_bytes(record).body.value == b"v"


def test_loading_a_folder_without_the_modules_fails_clearly(tmp_path: Path) -> None:
    with pytest.raises(KaitaiCompileError, match="no compiled module"):
        load_compiled(tmp_path)


def test_a_spec_the_compiler_rejects_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ksy"
    bad.write_text("meta:\n  id: bad\nseq:\n  - id: x\n    type: no_such_type\n", encoding="utf-8")
    with pytest.raises(KaitaiCompileError, match="no_such_type"):
        compile_specs(tmp_path / "out", [bad])


def test_missing_node_tells_how_to_install_the_compiler(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    with pytest.raises(KaitaiUnavailableError, match=re.escape(SETUP_HINT)):
        compile_specs(tmp_path)


def test_missing_npm_packages_tell_how_to_install_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "compile.mjs").write_text("", encoding="utf-8")
    monkeypatch.setattr(compiler, "kaitai_dir", lambda: tmp_path)
    with pytest.raises(KaitaiUnavailableError, match=re.escape(SETUP_HINT)):
        compile_specs(tmp_path / "out")


def test_importing_lethe_formats_needs_no_node(tmp_path: Path) -> None:
    env = dict(os.environ, PATH=str(tmp_path))  # no node reachable
    code = (
        "import lethe_formats, lethe_formats.ksy, lethe_formats.ksy.adapter, "
        "lethe_formats.ksy.adapter_files; print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_lock_file_pins_the_kaitai_compiler_and_js_yaml() -> None:
    package = json.loads((kaitai_dir() / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((kaitai_dir() / "package-lock.json").read_text(encoding="utf-8"))
    assert package["dependencies"]["kaitai-struct-compiler"] == "0.11.0"
    packages = lock["packages"]
    assert packages["node_modules/kaitai-struct-compiler"]["version"] == "0.11.0"
    assert packages["node_modules/js-yaml"]["version"].startswith("4.")
    assert packages[""]["dependencies"] == package["dependencies"]
