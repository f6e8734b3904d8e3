"""The consumer view keeps each record's own attributes byte (kafka-facts 3.2).

Scenarios of the kip87 profile compare it (bit 0 is KIP-87's tombstone flag,
catalog KIP87-BIT-1); magic 0/1 messages have no such byte and show 0.
"""

from __future__ import annotations

from lethe_conformance.client.batches import build_records, visible_records
from lethe_formats.model import Compression
from lethe_formats.records.builder import RecordSpec, build_legacy_message_set


def test_each_record_shows_its_attributes_byte_unsigned() -> None:
    specs = [
        RecordSpec(b"a", b"1", (), 10, attributes=0x01),
        RecordSpec(b"b", b"2", (), 11),
        RecordSpec(b"c", None, (), 12, attributes=0xFF),
    ]
    for codec in (Compression.NONE, Compression.ZSTD):
        seen = visible_records(build_records(specs, compression=codec), 0)
        assert [(r.offset, r.attributes) for r in seen] == [(0, 0x01), (1, 0x00), (2, 0xFF)]


def test_legacy_messages_show_attributes_0_even_when_compressed() -> None:
    data = build_legacy_message_set(
        [RecordSpec(b"a", b"1", (), 10)], magic=1, base_offset=0, compression=Compression.GZIP
    )
    assert [r.attributes for r in visible_records(data, 0)] == [0]
