"""The results files every benchmark writes: ``NAME.json`` (the figures, for tools and
later comparison) and ``NAME.md`` (the same figures for readers), side by side in
``benchmarks/results`` or the run's ``--out`` folder."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def write_result_files(
    out_dir: Path,
    name: str,
    result: dict[str, Any],
    markdown: Callable[[dict[str, Any]], str],
    *,
    indent: int = 2,
) -> tuple[Path, Path]:
    """Write ``NAME.json`` and ``NAME.md`` (rendered by ``markdown``) into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out_dir / f"{name}.json", out_dir / f"{name}.md"
    json_path.write_text(json.dumps(result, indent=indent) + "\n")
    md_path.write_text(markdown(result))
    return json_path, md_path
