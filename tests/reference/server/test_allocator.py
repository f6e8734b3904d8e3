"""``lethe broker`` asks glibc to keep freed large buffers (server/allocator.py)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="mallopt is glibc's",
)
def test_the_settings_are_accepted_by_glibc() -> None:
    # a process of its own, as the broker is: the settings stay out of the test runner
    code = "from lethe_reference.server.allocator import keep_large_buffers as k; print(k())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
