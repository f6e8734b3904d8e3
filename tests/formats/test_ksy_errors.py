"""Bad input through the Kaitai path: typed errors at the right byte, like the other decoders.

Each case breaks one rule of the formats in kafka-facts sections 3.1-3.5 and
1.4. The expected error class and absolute position follow from the layout
(e.g. a torn tail is reported where the torn entry starts; a CRC mismatch at
the CRC field, byte 17 of a batch). The Construct schemas and the fast path
must raise the same error class.
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Callable

import pytest
from conftest_ksy import kaitai_specs, legacy_entry, record_bytes, v2_batch, varint
from lethe_formats.errors import (
    CheckpointError,
    ChecksumError,
    CorruptIndexError,
    CorruptRecordError,
    DecompressionError,
    FormatError,
    InvalidRecordError,
    TruncatedError,
    UnsupportedCompressionError,
    UnsupportedMagicError,
    VarintError,
)
from lethe_formats.ksy import KaitaiSpecs
from lethe_formats.ksy.adapter import decode_end_txn_marker, decode_log
from lethe_formats.ksy.adapter_files import (
    decode_leader_epoch_checkpoint,
    decode_offset_checkpoint,
    decode_offset_index,
    decode_partition_metadata,
    decode_time_index,
    decode_txn_index,
)
from lethe_formats.model import Record
from lethe_formats.records.log import decode_log as construct_decode_log
from lethe_formats.records.scan import read_log

__all__ = ["kaitai_specs"]
pytestmark = pytest.mark.kaitai

RECORDS = record_bytes(0, b"k", b"v") + record_bytes(1, b"key", b"value", headers=((b"h", None),))
GOOD = v2_batch(100, RECORDS, 2)  # 88 bytes: 61-byte header + 27 bytes of records
LEGACY = legacy_entry(0, b"k", b"v")
VALUE_END = GOOD.index(b"value") + 4  # the "e" of the second record's value


def _flip(data: bytes, index: int) -> bytes:
    out = bytearray(data)
    out[index] ^= 0x01
    return bytes(out)


def _length(data: bytes, length: int) -> bytes:
    return data[:8] + struct.pack(">i", length) + data[12:]


def _wrapper(inner: list[bytes], magic: int = 1) -> bytes:
    value = gzip.compress(b"".join(inner), mtime=0)
    return legacy_entry(5, None, value, magic=magic, attributes=0x01)


WRAPPED = 34  # where a one-byte-key-less v1 wrapper's value starts: 12 + 14 + 8


# (data, error class, absolute position) - the position Kaitai must report.
LOG_CASES: dict[str, tuple[bytes, type[FormatError], int]] = {
    "torn tail after a batch": (GOOD + bytes(10), TruncatedError, 88),
    "fewer than 17 bytes left": (GOOD + bytes(5), TruncatedError, 88),
    "batch cut short": (GOOD[:-5], TruncatedError, 0),
    "length beyond the file": (_length(GOOD, 0x7FFFFFFF), TruncatedError, 0),
    "length below the batch header": (_length(GOOD, 20)[:32], CorruptRecordError, 8),
    "length too small for a magic": (_length(GOOD, 3)[:32], CorruptRecordError, 8),
    "magic 3": (GOOD[:16] + b"\x03" + GOOD[17:], UnsupportedMagicError, 16),
    "flipped bit in a value": (_flip(GOOD, VALUE_END), ChecksumError, 17),
    "negative recordsCount": (
        v2_batch(0, RECORDS, -1, last_offset_delta=1),
        InvalidRecordError,
        57,
    ),
    "codec 6": (v2_batch(0, RECORDS, 2, attributes=6), UnsupportedCompressionError, 21),
    "more records declared than present": (
        v2_batch(0, RECORDS, 3, last_offset_delta=2),
        InvalidRecordError,
        88,
    ),
    "fewer records declared than present": (v2_batch(0, RECORDS, 1), InvalidRecordError, 70),
    "section ends inside a length varint": (
        v2_batch(0, RECORDS + b"\xff", 3, last_offset_delta=2),
        InvalidRecordError,
        88,
    ),
    "negative record length": (
        v2_batch(0, RECORDS + varint(-3) + bytes(5), 3, last_offset_delta=2),
        CorruptRecordError,
        88,
    ),
    "record length varint of 7 bytes": (
        v2_batch(0, b"\xff" * 6 + b"\x01" + bytes(20), 1),
        VarintError,
        61,
    ),
    "negative headers count": (
        v2_batch(0, record_bytes(0, None, b"v")[:-1] + varint(-1), 1),
        InvalidRecordError,
        68,
    ),
    "record body longer than its fields": (
        v2_batch(0, varint(30) + record_bytes(0, b"k", b"v")[1:] + bytes(40), 1),
        InvalidRecordError,
        70,
    ),
    "record fields longer than its body": (
        v2_batch(0, varint(6) + record_bytes(0, b"k", b"v")[1:] + bytes(3), 1),
        InvalidRecordError,
        61,
    ),
    # Kafka's GZIPInputStream: "Not in GZIP format", a KafkaException
    # (fixtures/kafka-codecs/cases.json, gzip-bad-magic)
    "gzip block that is not gzip": (
        v2_batch(0, b"junkjunkjunk", 2, attributes=1),
        DecompressionError,
        61,
    ),
    "compressed records cut short": (
        v2_batch(0, gzip.compress(RECORDS[:-2], mtime=0), 2, attributes=1),
        InvalidRecordError,
        61,
    ),
    "legacy message with a short size": (_length(LEGACY, 15)[:27], ChecksumError, 12),
    "legacy zstd wrapper": (
        legacy_entry(0, None, b"x", attributes=4),
        UnsupportedCompressionError,
        17,
    ),
    "legacy wrapper with a null value": (
        legacy_entry(0, None, None, attributes=1),
        InvalidRecordError,
        30,
    ),
    "wrapper holding another magic": (
        _wrapper([legacy_entry(0, b"k", b"v", magic=0)]),
        InvalidRecordError,
        WRAPPED,
    ),
    "wrapper holding a v2 batch": (_wrapper([GOOD]), UnsupportedMagicError, WRAPPED),
    "empty wrapper": (_wrapper([]), InvalidRecordError, WRAPPED),
    "wrapper with a torn inner message": (_wrapper([LEGACY[:-3]]), TruncatedError, WRAPPED),
    "wrapper with a bad inner crc": (_wrapper([_flip(LEGACY, 30)]), ChecksumError, WRAPPED),
}


@pytest.mark.parametrize("case", list(LOG_CASES))
def test_bad_segment_raises_the_kafka_error_at_its_position(
    kaitai_specs: KaitaiSpecs, case: str
) -> None:
    data, klass, position = LOG_CASES[case]
    with pytest.raises(FormatError) as caught:
        decode_log(kaitai_specs, data, file="bad.log")
    assert type(caught.value) is klass
    assert caught.value.position == position
    assert caught.value.field
    assert caught.value.file == "bad.log"


@pytest.mark.parametrize("case", list(LOG_CASES))
def test_bad_segment_error_class_matches_construct_and_fast_path(
    kaitai_specs: KaitaiSpecs, case: str
) -> None:
    data, klass, _ = LOG_CASES[case]
    decoders: list[Callable[[bytes], object]] = [
        construct_decode_log,
        lambda d: list(read_log(d)),
    ]
    for decode in decoders:
        with pytest.raises(FormatError) as caught:
            decode(data)
        assert type(caught.value) is klass


def test_crc_check_can_be_skipped(kaitai_specs: KaitaiSpecs) -> None:
    (batch,) = decode_log(kaitai_specs, _flip(GOOD, VALUE_END), verify_crc=False)
    assert batch.records[1].value == b"valud"  # type: ignore[union-attr]


def test_record_with_a_negative_key_length_has_a_null_key(kaitai_specs: KaitaiSpecs) -> None:
    """Kafka slices a key only for a length >= 0: -2 reads as null like -1."""
    body = b"\x00" + varint(0) + varint(0) + varint(-2) + varint(1) + b"v" + varint(0)
    (batch,) = decode_log(kaitai_specs, v2_batch(0, varint(len(body)) + body, 1))
    assert batch.records[0].key is None  # type: ignore[union-attr]
    assert batch.records[0].value == b"v"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (b"\x00\x00", b"\x00\x00\x00\x00\x00\x00"),
        (b"\x00\x00\x00\x02", b""),
        (b"\xff\xff\x00\x01", b""),
    ],
)
def test_bad_control_record_is_invalid(kaitai_specs: KaitaiSpecs, key: bytes, value: bytes) -> None:
    with pytest.raises(InvalidRecordError):
        decode_end_txn_marker(kaitai_specs, Record(0, 0, 0, key, value))


# --- index files -----------------------------------------------------------------------


def test_offset_index_with_a_partial_entry_is_corrupt(kaitai_specs: KaitaiSpecs) -> None:
    data = struct.pack(">ii", 3, 0) + b"\x00\x00\x00\x07\x00"
    with pytest.raises(CorruptIndexError) as caught:
        decode_offset_index(kaitai_specs, data)
    assert caught.value.position == 8


def test_time_index_with_a_partial_entry_is_corrupt(kaitai_specs: KaitaiSpecs) -> None:
    with pytest.raises(CorruptIndexError) as caught:
        decode_time_index(kaitai_specs, struct.pack(">qi", 5, 1) + b"\x00" * 7)
    assert caught.value.position == 12


def test_txn_index_rejects_a_version_above_zero(kaitai_specs: KaitaiSpecs) -> None:
    data = struct.pack(">hqqqq", 0, 1, 2, 3, 4) + struct.pack(">hqqqq", 1, 1, 2, 3, 4)
    with pytest.raises(CorruptIndexError) as caught:
        decode_txn_index(kaitai_specs, data)
    assert (caught.value.position, caught.value.field) == (34, "entries[1].version")


def test_txn_index_ignores_a_partial_tail_like_kafka(kaitai_specs: KaitaiSpecs) -> None:
    data = struct.pack(">hqqqq", 0, 7, 10, 12, 13) + b"\x00" * 20
    (entry,) = decode_txn_index(kaitai_specs, data)
    assert (entry.producer_id, entry.first_offset, entry.last_offset) == (7, 10, 12)


# --- checkpoint text files -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (b"1\n1\nt 0 5\n", 1),  # version other than 0
        (b"x\n", 1),  # version not an int
        (b"0\nfoo\n", 2),  # count not an int
        (b"0\n-1\n", 2),  # negative count
        (b"0\n2\nt 0 5\n", 2),  # fewer entries than declared
        (b"0\n0\nt 0 5\n", 2),  # more entries than declared
        (b"0\n1\nt 0\n", 3),  # two fields in an offset entry
        (b"0\n1\n t 0 5\n", 3),  # leading blank: an empty first field
        (b"0\n1\nt zero 5\n", 3),  # partition not an int
        (b"0\n1\nt 0 1_0\n", 3),  # Long.parseLong takes no '_' (Python's int() would)
        (b"0\n1\nt 0 9223372036854775808\n", 3),  # beyond Long.MAX_VALUE
        (b"0\n1\n\n", 3),  # an empty entry line
    ],
)
def test_offset_checkpoint_rejects_what_kafka_rejects(
    kaitai_specs: KaitaiSpecs, text: bytes, line: int
) -> None:
    with pytest.raises(CheckpointError) as caught:
        decode_offset_checkpoint(kaitai_specs, text)
    assert caught.value.line == line


@pytest.mark.parametrize(
    ("text", "entries"),
    [
        (b"", []),  # an empty file holds nothing
        (b"0\n", []),  # EOF after the version line
        (b"0\n0\n", []),
        (b"0\r\n1\r\nt 0 5\r\n", [("t", 0, 5)]),  # readLine ends lines at CR LF
        (b"0\r1\rt 0 5", [("t", 0, 5)]),  # ... at a lone CR, and at EOF
        (b"0\n1\nt\t+2  -5 \n", [("t", 2, -5)]),  # \s+ splits; Java accepts a '+' sign
        ("0\n1\ntöpic 1 7\n".encode(), [("töpic", 1, 7)]),
    ],
)
def test_offset_checkpoint_reads_what_kafka_reads(
    kaitai_specs: KaitaiSpecs, text: bytes, entries: list[tuple[str, int, int]]
) -> None:
    assert decode_offset_checkpoint(kaitai_specs, text) == entries


def test_checkpoint_with_invalid_utf8_is_rejected(kaitai_specs: KaitaiSpecs) -> None:
    with pytest.raises(CheckpointError) as caught:
        decode_offset_checkpoint(kaitai_specs, b"0\n1\nt\xff 0 5\n")
    assert (caught.value.position, caught.value.field) == (5, "encoding")


def test_leader_epoch_checkpoint_needs_two_fields(kaitai_specs: KaitaiSpecs) -> None:
    assert decode_leader_epoch_checkpoint(kaitai_specs, b"0\n2\n0 0\n3 17\n") == [(0, 0), (3, 17)]
    with pytest.raises(CheckpointError) as caught:
        decode_leader_epoch_checkpoint(kaitai_specs, b"0\n1\nt 0 5\n")
    assert (caught.value.line, caught.value.position) == (3, 4)


TOPIC_ID = "IdvB5LqtQrSQL2tqHWQmVg"


@pytest.mark.parametrize(
    "text",
    [
        b"",
        b"version: 0",  # no topic_id line
        b"version:0\ntopic_id: " + TOPIC_ID.encode(),  # ':' without whitespace
        b"version: -1\ntopic_id: " + TOPIC_ID.encode(),  # negative version
        b"version: 0\ntopic: " + TOPIC_ID.encode(),  # wrong key
        b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",  # the zero Uuid
        b"version: 0\ntopic_id: not-base64!",
    ],
)
def test_partition_metadata_rejects_what_kafka_rejects(
    kaitai_specs: KaitaiSpecs, text: bytes
) -> None:
    with pytest.raises(CheckpointError):
        decode_partition_metadata(kaitai_specs, text)


def test_partition_metadata_accepts_a_newer_version_and_extra_lines(
    kaitai_specs: KaitaiSpecs,
) -> None:
    text = b"version: 3\ntopic_id: " + TOPIC_ID.encode() + b"\nextra\n"
    assert decode_partition_metadata(kaitai_specs, text) == (3, TOPIC_ID)
