"""Small JSON state files in the log dir (client quotas, SCRAM credentials).

Kafka keeps this state as records in its metadata log; the reference broker has none
and keeps each kind in one JSON list in its log dir, replaced atomically
(``<name>.tmp``, fsync, rename) so a crash leaves the old or the new file, never half
of one. A file that exists but is not a JSON list is logged (file and position) and
read as empty: the broker still starts, and the operator sees which file to repair.
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
    """The list saved at ``path``; empty when there is none or it is unreadable."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as error:
        _log.warning("ignoring unreadable state file %s: %s", path, error)
        return []
    try:
        saved = json.loads(text)
    except ValueError as error:
        _log.warning("ignoring state file %s: not JSON (%s)", path, error)
        return []
    if not isinstance(saved, list):
        _log.warning("ignoring state file %s: not a JSON list", path)
        return []
    return saved


def write_json(path: Path, value: Any) -> None:
    """Replace ``path`` with ``value`` as JSON, atomically."""
    write_atomically(path, json.dumps(value).encode())
