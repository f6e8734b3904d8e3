"""Record values not in memory (``lethe_formats.protocol.regions``): the encoders ask them
only for len() and bytes(); encode_buffers passes a large one through as the same object,
and the concatenation of its buffers is always encode()'s bytes."""

from __future__ import annotations

from lethe_formats.protocol.compiler import decode, encode, encode_buffers
from lethe_formats.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchResponse,
    PartitionData,
)


class Region:
    """A ByteRegion that counts how often it is read."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.reads = 0

    def __len__(self) -> int:
        return len(self.data)

    def __bytes__(self) -> bytes:
        self.reads += 1
        return self.data


def _response(*records: bytes | Region) -> FetchResponse:
    partitions = tuple(
        PartitionData(partition_index=i, error_code=0, high_watermark=9, records=r)
        for i, r in enumerate(records)
    )
    return FetchResponse(responses=(FetchableTopicResponse(topic="t", partitions=partitions),))


LARGE = bytes(range(256)) * 200  # 50 KiB
SMALL = b"small record set"


def test_a_large_region_is_passed_through_unread_and_a_small_one_is_read() -> None:
    large, small = Region(LARGE), Region(SMALL)
    for version in (11, 12):  # classic and compact lengths
        large.reads = small.reads = 0
        parts = encode_buffers(_response(large, small), version)
        assert sum(1 for part in parts if part is large) == 1
        assert large.reads == 0
        assert small.reads == 1
        as_bytes = b"".join(bytes(part) for part in parts)
        assert as_bytes == encode(_response(LARGE, SMALL), version)


def test_encode_reads_a_region_and_decoding_gives_bytes() -> None:
    region = Region(LARGE)
    wire = encode(_response(region), 12)
    assert region.reads == 1
    assert wire == encode(_response(LARGE), 12)
    decoded = decode(FetchResponse, 12, wire)
    assert decoded.responses[0].partitions[0].records == LARGE
