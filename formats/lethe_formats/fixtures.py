"""Where lethe's data fixtures live, installed or in a checkout.

``fixtures/`` holds data only (no Python), so it ships as the namespace package
``lethe_fixtures``; this resolves it to a real directory both for regular
installs (site-packages/lethe_fixtures) and editable ones (the checkout's
fixtures/, reached through setuptools' editable finder).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["fixtures_root"]


def fixtures_root() -> Path:
    """The directory holding golden/, logs/, format cases and scenarios."""
    spec = importlib.util.find_spec("lethe_fixtures")
    if spec is not None and spec.submodule_search_locations is not None:
        for location in spec.submodule_search_locations:
            path = Path(location)
            if path.is_dir():
                return path
    checkout = Path(__file__).resolve().parents[2] / "fixtures"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError("lethe_fixtures is not installed and no checkout fixtures/ was found")
