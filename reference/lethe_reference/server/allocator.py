"""Keep freed large buffers in the broker process instead of handing them back at once.

Why: every produce request and fetch response passes through buffers of a megabyte
or more (the request frame, the batch being validated, the records read for a
fetch). glibc serves blocks above its mmap threshold (128 KiB at first) with
fresh ``mmap`` calls and unmaps them on free, and trims free memory at the top of
its heap past a threshold; either way the next buffer's pages are faulted in and
zeroed again by the kernel, a few page faults per 4 KiB moved. Measured with
``lethe broker`` and confluent-kafka (200,000 records of 1 KiB): the broker's
system time per GB produced fell from about 1.5 s to 0.5 s with the settings below,
user time unchanged. A JVM broker has the same effect from its preallocated heap.

Settings (``mallopt``): blocks up to 32 MiB come from the heap (M_MMAP_THRESHOLD;
32 MiB is glibc's own upper bound for its adaptive threshold), and up to 64 MiB of
free memory stays at the top of the heap (M_TRIM_THRESHOLD). Only ``lethe broker``
sets them (a process of its own); elsewhere, or without glibc, nothing changes.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["keep_large_buffers"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 * 1024 * 1024
_TRIM_THRESHOLD = 64 * 1024 * 1024


def keep_large_buffers() -> bool:
    """Apply the module's ``mallopt`` settings; False where there is no glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (e.g. musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(
        mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) and mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    )
