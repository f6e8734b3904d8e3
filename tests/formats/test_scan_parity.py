"""The fast path (C and pure Python) decodes exactly what the Construct schemas decode:
Kafka's golden segments, and generated batches and legacy message sets."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_scan_support as support
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lethe_formats.errors import FormatError
from lethe_formats.model import Compression, Header, LegacyMessage, RecordBatch, TimestampType
from lethe_formats.records import scan
from lethe_formats.records.builder import RecordSpec, build_batch, build_legacy_message_set
from lethe_formats.records.log import decode_log
from lethe_formats.varint import encode_varint
from test_scan_support import golden_id, golden_logs

impl = support.impl
INT32_MAX = 2**31 - 1

# --- golden segments -------------------------------------------------------------------


@pytest.mark.parametrize("log", golden_logs(), ids=golden_id)
def test_read_log_equals_schema_decoder_on_golden_segments(log: Path, impl: str) -> None:
    data = log.read_bytes()
    assert list(scan.read_log(data, file=str(log))) == decode_log(data, file=str(log))


# --- generated segments -----------------------------------------------------------------

small_bytes = st.binary(max_size=40)
nullable = st.none() | small_bytes
headers = st.lists(st.builds(Header, small_bytes, nullable), max_size=4).map(tuple)
timestamps = st.integers(min_value=0, max_value=2**45)


@st.composite
def v2_batch(draw: st.DrawFn, base_offset: int) -> tuple[bytes, int]:
    """(batch bytes, next base offset) with random records, codec, horizon and gaps."""
    specs = draw(
        st.lists(
            st.builds(RecordSpec, nullable, nullable, headers, timestamps), min_size=1, max_size=8
        )
    )
    gaps = draw(st.lists(st.integers(1, 5), min_size=len(specs), max_size=len(specs)))
    deltas = [sum(gaps[: i + 1]) - gaps[0] for i in range(len(specs))]
    log_append = draw(st.booleans())
    horizon = draw(st.none() | st.integers(min_value=0, max_value=2**45))
    producer = draw(st.sampled_from([(-1, -1, -1), (7, 0, 0), (9, 3, INT32_MAX - 2)]))
    batch = build_batch(
        specs,
        base_offset=base_offset,
        compression=draw(st.sampled_from(list(Compression))),
        timestamp_type=TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME,
        log_append_time=draw(timestamps) if log_append else None,
        producer_id=producer[0],
        producer_epoch=producer[1],
        base_sequence=producer[2],
        partition_leader_epoch=draw(st.integers(-1, 50)),
        is_transactional=producer[0] >= 0 and draw(st.booleans()),
        delete_horizon_ms=horizon,
        offset_deltas=deltas,
        snappy_framing=draw(st.sampled_from(["raw", "xerial"])),
    )
    return batch, base_offset + deltas[-1] + 1


@st.composite
def legacy_set(draw: st.DrawFn, base_offset: int) -> tuple[bytes, int]:
    """(v0/v1 message set bytes, next offset): plain messages or one compressed wrapper."""
    specs = draw(
        st.lists(
            st.builds(RecordSpec, nullable, nullable, timestamp=timestamps), min_size=1, max_size=6
        )
    )
    magic = draw(st.sampled_from([0, 1]))
    log_append = magic == 1 and draw(st.booleans())
    codec = draw(
        st.sampled_from([Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4])
    )
    data = build_legacy_message_set(
        specs,
        magic=magic,
        base_offset=base_offset,
        compression=codec,
        timestamp_type=TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME,
        log_append_time=draw(timestamps) if log_append else None,
    )
    return data, base_offset + len(specs)


@st.composite
def segment(draw: st.DrawFn, legacy: bool) -> bytes:
    parts = []
    offset = draw(st.integers(0, 2**40))
    for _ in range(draw(st.integers(1, 4))):
        maker = draw(st.sampled_from([v2_batch, legacy_set] if legacy else [v2_batch]))
        part, offset = draw(maker(offset))
        parts.append(part)
    return b"".join(parts)


def read_with(name: str, data: bytes) -> list[RecordBatch | LegacyMessage]:
    previous = scan.set_implementation(name)
    try:
        return list(scan.read_log(data))
    finally:
        scan.set_implementation(previous)


PARITY = settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)


@PARITY
@given(segment(legacy=False))
def test_generated_v2_segments_decode_identically_in_c_python_and_construct(data: bytes) -> None:
    expected = decode_log(data)
    assert read_with("c", data) == expected
    assert read_with("python", data) == expected


@PARITY
@given(segment(legacy=True))
def test_generated_mixed_segments_with_legacy_messages_decode_identically(data: bytes) -> None:
    expected = decode_log(data)
    assert read_with("c", data) == expected
    assert read_with("python", data) == expected
    shallow = [e.header for e in scan.LogScanner(data)]
    assert len(shallow) == len(expected)


def shallow(name: str, data: bytes) -> tuple[object, ...]:
    """Entries, stop error (class, position, message) and end of a shallow scan."""
    previous = scan.set_implementation(name)
    try:
        scanner = scan.LogScanner(data)
        entries = list(scanner)
    finally:
        scan.set_implementation(previous)
    error = scanner.stop_error
    stop = None if error is None else (type(error).__name__, error.position, error.message)
    return (*entries, stop, scanner.end_position)


def outcome(name: str, data: bytes) -> tuple[object, ...]:
    """Everything read_log yields, then the error (class, position, message, field)."""
    previous = scan.set_implementation(name)
    got: list[object] = []
    try:
        got.extend(scan.read_log(data))
    except FormatError as error:
        return (*got, type(error).__name__, error.position, error.message, error.field)
    finally:
        scan.set_implementation(previous)
    return tuple(got)


@PARITY
@given(st.booleans().flatmap(lambda legacy: segment(legacy=legacy)), st.data())
def test_mutated_segments_fail_identically_in_c_and_python(
    data: bytes, draw: st.DataObject
) -> None:
    mutated = bytearray(data)
    for _ in range(draw.draw(st.integers(1, 4))):
        at = draw.draw(st.integers(0, len(mutated) - 1))
        mutated[at] = draw.draw(st.integers(0, 255))
    unverified = bytes(mutated)
    assert shallow("c", unverified) == shallow("python", unverified)
    c_result = outcome("c", unverified)
    assert c_result == outcome("python", unverified)
    # without CRC checks the record decoders themselves meet the corrupt bytes
    previous = scan.set_implementation("c")
    try:
        via_c = _unverified_outcome(unverified)
    finally:
        scan.set_implementation("python")
    try:
        assert via_c == _unverified_outcome(unverified)
    finally:
        scan.set_implementation(previous)


def _unverified_outcome(data: bytes) -> tuple[object, ...]:
    got: list[object] = []
    try:
        got.extend(scan.read_log(data, verify_crc=False))
    except FormatError as error:
        return (*got, type(error).__name__, error.position, error.message, error.field)
    return tuple(got)


def _section_outcome(name: str, data: bytes, count: int) -> object:
    previous = scan.set_implementation(name)
    try:
        return scan._section(data, 0, len(data), count)
    except FormatError as error:
        return (type(error).__name__, error.position, error.message, error.field)
    finally:
        scan.set_implementation(previous)


record_like = st.lists(
    st.one_of(
        st.binary(max_size=12),
        st.integers(-(2**31), 2**31 - 1).map(encode_varint),
        st.sampled_from([b"\x80" * 5 + b"\x00", b"\xff" * 10 + b"\x01", b"\x00", b"\x01"]),
    ),
    max_size=12,
).map(b"".join)


@PARITY
@given(record_like, st.integers(0, 6))
def test_random_records_sections_decode_identically_in_c_and_python(
    data: bytes, count: int
) -> None:
    assert _section_outcome("c", data, count) == _section_outcome("python", data, count)


# --- record_stats: decode_section's checks without the records ----------------------


def _stats_outcome(data: bytes, count: int) -> object:
    """The C walker's stats, or its error as decode_section's error would read."""
    if scan._cscan is None:
        pytest.skip("the C extension is not built")
    try:
        return scan.SectionStats(*scan._cscan.section_stats(data, 0, len(data), count))
    except scan._cscan.DecodeError as failure:
        kind, message, position, field = failure.args
        error = scan._C_ERRORS[kind](message, position=position, field=field)
        return (type(error).__name__, error.position, error.message, error.field)


@PARITY
@given(record_like, st.integers(0, 6))
def test_record_stats_walk_fails_and_counts_as_the_python_decoder(data: bytes, count: int) -> None:
    expected = _section_outcome("python", data, count)
    if isinstance(expected, tuple) and expected and isinstance(expected[0], str):
        assert _stats_outcome(data, count) == expected
    else:
        assert isinstance(expected, tuple)
        assert _stats_outcome(data, count) == scan.stats_of(expected)


@PARITY
@given(segment(legacy=False))
def test_record_stats_of_generated_batches_match_their_decoded_records(data: bytes) -> None:
    for entry in scan.LogScanner(data):
        records = scan.decode_records(data, entry)
        for name in ("c", "python"):
            previous = scan.set_implementation(name)
            try:
                assert scan.record_stats(data, entry) == scan.stats_of(records)
            finally:
                scan.set_implementation(previous)


def test_record_stats_counts_null_keys_and_timestamp_spread() -> None:
    batch = build_batch(
        [
            RecordSpec(None, b"a", timestamp=1_000),
            RecordSpec(b"k", b"b", timestamp=900),
            RecordSpec(None, None, timestamp=1_250),
        ],
        base_offset=0,
    )
    (entry,) = scan.LogScanner(batch)
    assert scan.record_stats(batch, entry) == scan.SectionStats(3, -100, 250, 2, True)
