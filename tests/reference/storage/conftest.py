"""Fixtures of the storage tests: a manual clock at the golden delete-records time."""

from __future__ import annotations

import pytest
from lethe_reference.clock import ManualClock
from storage_support import DELREC_AT_MS


@pytest.fixture
def clock() -> ManualClock:
    """Virtual time, starting when the golden DeleteRecords request ran."""
    return ManualClock(DELREC_AT_MS)
