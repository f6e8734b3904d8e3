"""Version negotiation: which version of an API to send, from two advertised ranges.

After connecting, the client sends ApiVersions and keeps the target's
``api_key -> (min, max)`` table. For each request it uses the highest version
both sides speak::

    client  [lo_c .......... hi_c]
    target          [lo_t ............ hi_t]
    chosen                   = min(hi_c, hi_t)   if  max(lo_c, lo_t) <= min(hi_c, hi_t)

An explicit version bypasses this on purpose: conformance scenarios must be
able to send any version, including ones the target does not advertise, to
see what it answers.

ApiVersions itself is special (KIP-511): a target that does not know the
requested version answers UNSUPPORTED_VERSION with a v0 body listing its own
range, so the client retries at the highest version of that range.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["ApiVersionTable", "common_version"]

#: api key -> (min version, max version), as a target advertised them.
ApiVersionTable = Mapping[int, tuple[int, int]]


def common_version(ours: tuple[int, int], theirs: tuple[int, int] | None) -> int | None:
    """The highest version in both ranges, or None when they do not overlap."""
    if theirs is None:
        return None
    low = max(ours[0], theirs[0])
    high = min(ours[1], theirs[1])
    return high if low <= high else None
