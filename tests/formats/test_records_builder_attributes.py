"""RecordSpec carries a record's own attributes byte (kafka-facts 3.2: int8, 0 from Kafka).

The byte sits right after the record's length varint; bit 0 is lethe's KIP-87
tombstone flag (catalog KIP87-BIT-1). A spec may set any byte value, so tests
and conformance scenarios can send what a non-Kafka producer might.
"""

from __future__ import annotations

import pytest
from lethe_formats.model import Compression, RecordBatch
from lethe_formats.records.builder import RecordSpec, build_batch, build_legacy_message_set
from lethe_formats.records.scan import read_log

# batch header 61 bytes, then the first record: length varint (1 byte here), attributes
_FIRST_RECORD_ATTRIBUTES_AT = 62


def _decoded(data: bytes) -> RecordBatch:
    (batch,) = list(read_log(data))
    assert isinstance(batch, RecordBatch)
    return batch


@pytest.mark.parametrize(("attributes", "stored"), [(0, 0), (1, 1), (0x7E, 0x7E), (0xFF, -1)])
def test_the_attributes_byte_is_written_as_given(attributes: int, stored: int) -> None:
    data = build_batch([RecordSpec(b"k", b"v", (), 10, attributes=attributes)], base_offset=0)
    assert data[_FIRST_RECORD_ATTRIBUTES_AT] == attributes
    assert _decoded(data).records[0].attributes == stored


def test_the_kip87_flag_sets_bit_0_on_top_of_the_byte() -> None:
    spec = RecordSpec(b"k", b"v", (), 10, kip87_tombstone=True, attributes=0x40)
    data = build_batch([spec], base_offset=0)
    assert data[_FIRST_RECORD_ATTRIBUTES_AT] == 0x41
    assert _decoded(data).records[0].has_kip87_tombstone_flag


def test_attributes_survive_compression_per_record() -> None:
    specs = [RecordSpec(b"a", b"1", (), 10, attributes=1), RecordSpec(b"b", b"2", (), 11)]
    batch = _decoded(build_batch(specs, base_offset=0, compression=Compression.GZIP))
    assert [r.attributes for r in batch.records] == [1, 0]


@pytest.mark.parametrize("attributes", [-1, 256])
def test_a_value_that_is_not_a_byte_is_refused(attributes: int) -> None:
    with pytest.raises(ValueError, match="not a byte"):
        build_batch([RecordSpec(b"k", b"v", (), 10, attributes=attributes)], base_offset=0)


def test_legacy_messages_have_no_record_attributes() -> None:
    with pytest.raises(ValueError, match="no record attributes"):
        build_legacy_message_set(
            [RecordSpec(b"k", b"v", (), 10, attributes=1)], magic=1, base_offset=0
        )
