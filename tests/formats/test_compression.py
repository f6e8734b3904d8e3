"""Codecs: round trips, determinism, both snappy framings, the magic-0 lz4 quirk, bad data."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import cramjam
import pytest
from lethe_formats.compression import XERIAL_MAGIC, compress, decompress, xxh32
from lethe_formats.errors import CorruptRecordError, UnsupportedCompressionError
from lethe_formats.model import Compression

DATA = b"kafka record bytes " * 50 + bytes(range(256))
CODECS = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4]


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("codec", CODECS)
def test_compress_then_decompress_gives_the_input(codec: Compression, magic: int) -> None:
    assert decompress(codec, compress(codec, DATA, magic=magic), magic=magic) == DATA


def test_zstd_round_trips_in_magic_2() -> None:
    assert decompress(Compression.ZSTD, compress(Compression.ZSTD, DATA)) == DATA


@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_is_unsupported_below_magic_2(magic: int) -> None:
    with pytest.raises(UnsupportedCompressionError):
        compress(Compression.ZSTD, DATA, magic=magic)
    with pytest.raises(UnsupportedCompressionError):
        decompress(Compression.ZSTD, b"", magic=magic)


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_undefined_codec_ids_are_unsupported(codec_id: int) -> None:
    with pytest.raises(UnsupportedCompressionError):
        decompress(codec_id, b"")


@pytest.mark.parametrize("codec", [*CODECS[1:], Compression.ZSTD])
def test_compression_is_deterministic(codec: Compression) -> None:
    assert compress(codec, DATA) == compress(codec, DATA)


def test_gzip_header_has_no_timestamp() -> None:
    frame = compress(Compression.GZIP, DATA)
    assert frame[:4] == b"\x1f\x8b\x08\x00"
    assert frame[4:8] == b"\x00\x00\x00\x00"  # MTIME 0
    assert gzip.decompress(frame) == DATA


def test_gzip_from_another_writer_decompresses() -> None:
    assert decompress(Compression.GZIP, gzip.compress(DATA, mtime=12345)) == DATA


def _xerial(*blocks: bytes) -> bytes:
    """snappy-java's stream: magic, version 1, min compatible 1, length-prefixed blocks."""
    out = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
    for block in blocks:
        raw = bytes(cramjam.snappy.compress_raw(block))
        out += struct.pack(">i", len(raw)) + raw
    return out


def test_snappy_decompress_accepts_raw_and_xerial_framing() -> None:
    raw = bytes(cramjam.snappy.compress_raw(DATA))
    assert decompress(Compression.SNAPPY, raw) == DATA
    assert decompress(Compression.SNAPPY, _xerial(DATA[:100], DATA[100:])) == DATA


def test_snappy_xerial_compress_writes_the_java_header() -> None:
    frame = compress(Compression.SNAPPY, DATA, snappy_framing="xerial")
    assert frame[:16] == XERIAL_MAGIC + b"\x00\x00\x00\x01\x00\x00\x00\x01"
    assert decompress(Compression.SNAPPY, frame) == DATA


def test_snappy_xerial_splits_into_32_kib_blocks() -> None:
    big = bytes(range(256)) * 300  # 76800 bytes: 3 blocks
    frame = compress(Compression.SNAPPY, big, snappy_framing="xerial")
    pos, blocks = 16, 0
    while pos < len(frame):
        (length,) = struct.unpack_from(">i", frame, pos)
        pos += 4 + length
        blocks += 1
    assert blocks == 3
    assert decompress(Compression.SNAPPY, frame) == big


def test_java_client_batch_is_xerial_and_decompresses(codecs_log_22: Path) -> None:
    data = codecs_log_22.read_bytes()
    position = 325  # "position: 325 ... compresscodec: snappy" (console producer)
    (length,) = struct.unpack_from(">i", data, position + 8)
    block = data[position + 61 : position + 12 + length]
    assert block.startswith(XERIAL_MAGIC)
    assert b"k-console-snappy-0" in decompress(Compression.SNAPPY, block)


def test_xerial_block_length_beyond_the_data_is_corrupt() -> None:
    frame = XERIAL_MAGIC + struct.pack(">iii", 1, 1, 1000) + b"abc"
    with pytest.raises(CorruptRecordError) as info:
        decompress(Compression.SNAPPY, frame)
    assert info.value.position == 16


@pytest.mark.parametrize("codec", [*CODECS[1:], Compression.ZSTD])
def test_corrupt_data_is_a_corrupt_record_error(codec: Compression) -> None:
    with pytest.raises(CorruptRecordError):
        decompress(codec, b"\x00\x01garbage that is not compressed")
    with pytest.raises(CorruptRecordError):
        decompress(codec, compress(codec, DATA)[:-7])


def test_max_size_bounds_the_output() -> None:
    for codec in CODECS[1:]:
        with pytest.raises(CorruptRecordError):
            decompress(codec, compress(codec, DATA), max_size=100)


def test_xxh32_matches_published_values() -> None:
    assert xxh32(b"") == 0x02CC5D05
    assert xxh32(b"a") == 0x550D7456
    assert xxh32(b"abc") == 0x32D153FF
    assert xxh32(b"Nobody inspects the spammish repetition") == 0xE2293B2F


def test_librdkafka_lz4_frame_header_checksum_is_the_descriptor_hash(codecs_log: Path) -> None:
    data = codecs_log.read_bytes()
    block = data[993 + 61 : 993 + 267]  # lz4 batch at position 993, size 267
    assert block[:4] == b"\x04\x22\x4d\x18"
    assert block[6] == (xxh32(block[4:6]) >> 8) & 0xFF


def test_magic_0_lz4_writes_kafkas_broken_header_checksum() -> None:
    frame = compress(Compression.LZ4, DATA, magic=0)
    assert frame[6] == (xxh32(frame[0:6]) >> 8) & 0xFF
    assert frame[6] != (xxh32(frame[4:6]) >> 8) & 0xFF
    with pytest.raises(CorruptRecordError):
        decompress(Compression.LZ4, frame, magic=1)


def test_magic_0_lz4_reads_broken_and_correct_header_checksums() -> None:
    correct = compress(Compression.LZ4, DATA, magic=1)
    broken = compress(Compression.LZ4, DATA, magic=0)
    assert decompress(Compression.LZ4, correct, magic=0) == DATA
    assert decompress(Compression.LZ4, broken, magic=0) == DATA
