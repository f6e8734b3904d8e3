"""Suite-wide settings: Hypothesis profiles (``HYPOTHESIS_PROFILE=ci`` in tox), and the
TLS certificates the TLS tests share (``tls_certs``, made once per session)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def tls_certs(tmp_path_factory: pytest.TempPathFactory) -> object:
    """A CA, server and client certificates and their stores (tests/tls_support.py)."""
    from tls_support import make_certs

    directory: Path = tmp_path_factory.mktemp("tls-certs")
    return make_certs(directory)
