"""Bad input never crashes the fast path: typed errors at the faulty byte, the same
in C and pure Python, and a shallow scan that stops cleanly instead of raising."""

from __future__ import annotations

import struct
import tracemalloc

import pytest
import test_scan_support as support
from lethe_formats.compression import compress
from lethe_formats.errors import (
    ChecksumError,
    CorruptRecordError,
    FormatError,
    InvalidRecordError,
    TruncatedError,
    UnsupportedMagicError,
    VarintError,
)
from lethe_formats.model import BatchHeader, Compression, RecordBatch
from lethe_formats.records import scan
from lethe_formats.records.batch import decode_batch
from lethe_formats.varint import encode_varint
from test_scan_support import batch_bytes, record_bytes, small_segment

impl = support.impl
RECORDS_AT = 61  # first byte of the records section of a batch at position 0


def entry_starts(data: bytes) -> list[int]:
    return [e.position for e in scan.LogScanner(data)]


def first_error(data: bytes) -> FormatError:
    with pytest.raises(FormatError) as caught:
        list(scan.read_log(data))
    return caught.value


# --- shallow scan: torn tails, impossible lengths, magic ---------------------------


def test_truncation_at_every_byte_stops_at_the_torn_entry(impl: str) -> None:
    data = small_segment()
    starts = entry_starts(data)
    for cut in range(len(data)):
        scanner = scan.LogScanner(data[:cut])
        entries = list(scanner)  # never raises
        complete = [p for p in starts if p < cut and _end_of(data, p) <= cut]
        assert [e.position for e in entries] == complete
        torn = next((p for p in starts if p < cut and _end_of(data, p) > cut), None)
        if torn is None:
            assert scanner.stop_error is None
            assert scanner.end_position == cut
        else:
            assert isinstance(scanner.stop_error, TruncatedError)
            assert scanner.stop_error.position == torn
            assert scanner.end_position == torn
            error = first_error(data[:cut])
            assert (type(error), error.position) == (TruncatedError, torn)


def _end_of(data: bytes, position: int) -> int:
    (length,) = struct.unpack_from(">i", data, position + 8)
    return position + 12 + int(length)


def test_torn_last_batch_keeps_the_batches_before_it(impl: str) -> None:
    data = small_segment()
    last = entry_starts(data)[-1]
    torn = data[: last + 30]
    scanner = scan.LogScanner(torn)
    assert len(list(scanner)) == 2
    assert isinstance(scanner.stop_error, TruncatedError)
    assert scanner.stop_error.position == last
    got: list[object] = []
    with pytest.raises(TruncatedError):
        got.extend(scan.read_log(torn))
    assert len(got) == 2


@pytest.mark.parametrize(
    ("length", "error", "where"),
    [
        (-1, CorruptRecordError, 8),  # below any minimum: at the length field
        (0, CorruptRecordError, 8),
        (48, CorruptRecordError, 8),  # one below RECORD_BATCH_OVERHEAD - LOG_OVERHEAD
        (0x7FFFFFF0, TruncatedError, 0),  # beyond the data: a torn entry
    ],
)
def test_impossible_batch_length_stops_the_scan_without_allocating(
    impl: str, length: int, error: type[FormatError], where: int
) -> None:
    data = bytearray(small_segment())
    second = entry_starts(bytes(data))[1]
    struct.pack_into(">i", data, second + 8, length)
    tracemalloc.start()
    try:
        scanner = scan.LogScanner(bytes(data))
        entries = list(scanner)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert len(entries) == 1
    assert type(scanner.stop_error) is error
    assert scanner.stop_error.position == second + where
    assert scanner.end_position == second


def test_unknown_magic_stops_the_scan_at_the_magic_byte(impl: str) -> None:
    data = bytearray(small_segment())
    second = entry_starts(bytes(data))[1]
    data[second + 16] = 3
    scanner = scan.LogScanner(bytes(data))
    assert len(list(scanner)) == 1
    assert isinstance(scanner.stop_error, UnsupportedMagicError)
    assert scanner.stop_error.position == second + 16


def test_max_entry_size_stops_the_scan(impl: str) -> None:
    data = small_segment()
    sizes = [e.header.size_in_bytes for e in scan.LogScanner(data)]
    scanner = scan.LogScanner(data, max_entry_size=min(sizes[1:]) - 1)
    list(scanner)
    assert isinstance(scanner.stop_error, CorruptRecordError)


# --- CRC ---------------------------------------------------------------------------


def test_flipped_byte_in_crc_coverage_marks_only_that_batch_invalid(impl: str) -> None:
    data = small_segment()
    starts = entry_starts(data)
    second, end = starts[1], starts[2]
    for at in range(second + 17, end):  # the stored CRC and everything it covers
        flipped = bytearray(data)
        flipped[at] ^= 0x01
        entries = list(scan.LogScanner(bytes(flipped)))
        assert [e.crc_valid for e in entries] == [True, False, True]
        error = first_error(bytes(flipped))
        assert isinstance(error, ChecksumError)
        assert error.position == second + 17


def test_partition_leader_epoch_is_not_covered_by_the_crc(impl: str) -> None:
    data = bytearray(small_segment())
    data[12] ^= 0xFF
    assert all(e.crc_valid for e in scan.LogScanner(bytes(data)))


def test_unverified_read_decodes_a_batch_with_a_bad_crc(impl: str) -> None:
    data = bytearray(small_segment())
    data[17] ^= 0xFF
    batches = list(scan.read_log(bytes(data), verify_crc=False))
    assert len(batches) == 3


# --- records inside a batch ----------------------------------------------------------

SIX_BYTE_VARINT = b"\x80\x80\x80\x80\x80\x00"
ELEVEN_BYTE_VARLONG = b"\x80" * 10 + b"\x00"


def malformed_batches() -> list[tuple[str, bytes, type[FormatError], int]]:
    """(name, batch, error, absolute position of the faulty field).

    Record layout from the section start r: length r, attributes r+1,
    timestampDelta r+2, offsetDelta r+3, keyLength r+4, key r+5,
    valueLength r+6, value r+7, headersCount r+8, first header r+9.
    """
    good = record_bytes()
    r = RECORDS_AT
    cases: list[tuple[str, bytes, int, type[FormatError], int]] = [
        ("record-length-varint-6-bytes", SIX_BYTE_VARINT + b"\x00" * 8, 1, VarintError, r),
        ("offset-delta-6-bytes", record_bytes(offset_delta=SIX_BYTE_VARINT), 1, VarintError, r + 3),
        (
            "timestamp-delta-11-bytes",
            record_bytes(timestamp_delta=ELEVEN_BYTE_VARLONG),
            1,
            VarintError,
            r + 2,
        ),
        ("record-length-beyond-batch", encode_varint(200) + good[1:], 1, InvalidRecordError, r),
        ("record-length-negative", encode_varint(-3) + good[1:], 1, CorruptRecordError, r),
        ("record-length-zero", encode_varint(0) + good[1:], 1, InvalidRecordError, r + 1),
        ("key-beyond-record", record_bytes(key=b"abc", length=6), 1, InvalidRecordError, r + 4),
        (
            "headers-count-negative",
            record_bytes(raw_tail=encode_varint(-1)),
            1,
            InvalidRecordError,
            r + 8,
        ),
        (
            "header-key-length-negative",
            record_bytes(raw_tail=b"\x02\x03"),
            1,
            InvalidRecordError,
            r + 9,
        ),
        (
            "fields-shorter-than-length",
            encode_varint(len(good)) + good[1:] + b"\x00",
            1,
            InvalidRecordError,
            r + len(good),  # where the unread byte starts
        ),
        ("count-above-records", good + good, 3, InvalidRecordError, r + 2 * len(good)),
        ("count-below-records", good + good, 1, InvalidRecordError, r + len(good)),
    ]
    return [(name, batch_bytes(recs, n), err, pos) for name, recs, n, err, pos in cases]


MALFORMED = malformed_batches()


@pytest.mark.parametrize(
    ("name", "batch", "error", "position"), MALFORMED, ids=[m[0] for m in MALFORMED]
)
def test_malformed_record_raises_typed_error_at_the_field(
    impl: str, name: str, batch: bytes, error: type[FormatError], position: int
) -> None:
    entries = list(scan.LogScanner(batch))
    assert [e.crc_valid for e in entries] == [True]
    with pytest.raises(FormatError) as caught:
        scan.decode_records(batch, entries[0], file="seg.log")
    assert type(caught.value) is error
    assert caught.value.position == position
    assert caught.value.file == "seg.log"
    assert caught.value.field
    shifted = small_segment() + batch
    later = list(scan.LogScanner(shifted))[-1]
    with pytest.raises(error) as again:
        scan.decode_records(shifted, later)
    assert again.value.position == position + len(small_segment())


@pytest.mark.parametrize(
    ("name", "batch", "error", "position"), MALFORMED, ids=[m[0] for m in MALFORMED]
)
def test_malformed_record_error_class_matches_the_schema(
    name: str, batch: bytes, error: type[FormatError], position: int
) -> None:
    with pytest.raises(error):
        decode_batch(batch)


def test_negative_key_length_other_than_minus_one_reads_as_null(impl: str) -> None:
    body = b"\x00\x00\x00" + encode_varint(-2) + encode_varint(1) + b"v" + b"\x00"
    batch = batch_bytes(encode_varint(len(body)) + body, 1)
    (decoded,) = scan.read_log(batch)
    assert isinstance(decoded, RecordBatch)
    assert decoded.records[0].key is None
    assert decoded == decode_batch(batch)


def test_same_error_message_and_field_from_c_and_python() -> None:
    seen = {}
    for name in support.IMPLEMENTATIONS:
        previous = scan.set_implementation(name)
        try:
            seen[name] = [_describe(batch) for _, batch, _, _ in MALFORMED]
        finally:
            scan.set_implementation(previous)
    assert seen["c"] == seen["python"]


def _describe(batch: bytes) -> tuple[str, str, int | None, str | None]:
    entry = next(iter(scan.LogScanner(batch)))
    try:
        scan.decode_records(batch, entry)
    except FormatError as error:
        return type(error).__name__, error.message, error.position, error.field
    raise AssertionError("no error")


def test_error_inside_compressed_records_points_at_the_records_section(impl: str) -> None:
    bad = record_bytes(offset_delta=SIX_BYTE_VARINT)
    batch = batch_bytes(compress(Compression.GZIP, bad), 1, attributes=Compression.GZIP)
    entry = next(iter(scan.LogScanner(batch)))
    assert isinstance(entry.header, BatchHeader)
    with pytest.raises(VarintError) as caught:
        scan.decode_records(batch, entry)
    assert caught.value.position == RECORDS_AT
    assert "byte 3 of the decompressed data" in caught.value.message


def test_corrupt_compressed_block_is_a_typed_error(impl: str) -> None:
    batch = batch_bytes(b"\x1f\x8b" + b"\x00" * 20, 1, attributes=Compression.GZIP)
    entry = next(iter(scan.LogScanner(batch)))
    with pytest.raises(CorruptRecordError) as caught:
        scan.decode_records(batch, entry)
    assert caught.value.position is not None
    assert caught.value.position >= RECORDS_AT
