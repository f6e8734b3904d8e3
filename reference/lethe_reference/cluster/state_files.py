"""Small JSON state files in the log dir (client quotas, SCRAM credentials).

Kafka keeps this state as records in its metadata log; the reference broker has none
and keeps each kind in one JSON list in its log dir, replaced atomically
(``<name>.tmp``, fsync, rename) so a crash leaves the old or the new file, never half
of one. A file that exists but is not a JSON list is renamed aside
(``<name>.unreadable``, ``<name>.unreadable.1``, ...), logged with both names and
read as empty: the broker still starts, nothing it held is overwritten by the next
save, and the operator sees which file to repair.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from lethe_formats.storage.atomic import write_atomically

__all__ = ["read_json_list", "write_json"]

_log = logging.getLogger(__name__)


def read_json_list(path: Path) -> list[Any]:
    """The list saved at ``path``; empty when there is none or it is unreadable
    (then set aside, see the module docstring)."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as error:
        return _set_aside(path, str(error))
    try:
        saved = json.loads(text)
    except ValueError as error:
        return _set_aside(path, f"not JSON ({error})")
    if not isinstance(saved, list):
        return _set_aside(path, "not a JSON list")
    return saved


def _set_aside(path: Path, reason: str) -> list[Any]:
    """Rename an unreadable state file out of the way, keeping its bytes."""
    aside = path.with_name(path.name + ".unreadable")
    number = 0
    while aside.exists():
        number += 1
        aside = path.with_name(f"{path.name}.unreadable.{number}")
    try:
        path.rename(aside)
    except OSError as error:
        _log.error("state file %s is unreadable (%s) and cannot be moved: %s", path, reason, error)
        raise
    _log.warning("state file %s is unreadable (%s); kept as %s, read as empty", path, reason, aside)
    return []


def write_json(path: Path, value: Any) -> None:
    """Replace ``path`` with ``value`` as JSON, atomically."""
    write_atomically(path, json.dumps(value).encode())
