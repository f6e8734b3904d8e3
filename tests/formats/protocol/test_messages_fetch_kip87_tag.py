"""KIP-87 on the wire: the Fetch request's tagged field 10087 (catalog KIP87-PRD-6).

The signal travels as a tagged field of the flexible Fetch versions (12+): written
only when true, so a stock client's bytes never change, and skipped by a Kafka
broker, which ignores tags it does not know. Below v12 there is no place for it.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.messages.fetch import (
    TOMBSTONE_FLAG_AWARE_TAG,
    FetchPartition,
    FetchRequest,
    FetchTopic,
)

REQUEST = FetchRequest(
    max_wait_ms=500,
    min_bytes=1,
    topics=(
        FetchTopic(
            topic="t", partitions=(FetchPartition(0, fetch_offset=0, partition_max_bytes=1024),)
        ),
    ),
)
AWARE = replace(REQUEST, tombstone_flag_aware=True)


@pytest.mark.parametrize("version", range(12, 18))
def test_the_tag_is_written_last_in_the_top_level_tags_only_when_true(version: int) -> None:
    plain, flagged = encode(REQUEST, version), encode(AWARE, version)
    # tag 10087 as an unsigned varint (0xE7 0x4E), size 1, value 1; the tag count goes 0 -> 1
    assert TOMBSTONE_FLAG_AWARE_TAG == 10087
    assert flagged.endswith(b"\xe7\x4e\x01\x01")
    assert plain.endswith(b"\x00")
    assert len(flagged) == len(plain) + 4
    assert decode(FetchRequest, version, flagged).tombstone_flag_aware is True
    assert decode(FetchRequest, version, plain).tombstone_flag_aware is False


@pytest.mark.parametrize("version", range(4, 12))
def test_below_version_12_the_signal_is_dropped(version: int) -> None:
    assert encode(AWARE, version) == encode(REQUEST, version)
    assert decode(FetchRequest, version, encode(AWARE, version)).tombstone_flag_aware is False
