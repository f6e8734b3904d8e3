"""lethe's codecs against Kafka 4.0's own writers and readers (fixtures/kafka-codecs).

Evidence, all written by a real Kafka 4.0.0 (how: fixtures/kafka-codecs/README.md):

- ``writers.json``: Kafka's ``Compression.wrapForOutput`` on ten inputs (gzip,
  snappy, lz4 for magic 0-2, zstd for magic 2);
- ``broker/``: batches Kafka's broker recompressed on produce (topic
  compression.type) and rewrote in its cleaner, for each codec;
- ``cases.json``: 39 compressed batches produced to Kafka, with its answer;
- ``fixtures/golden/codecs``: batches of librdkafka and the Java console producer
  (the Java gzip and xerial snappy headers; librdkafka's LZ4 FLG 0x60 BD 0x40 and
  zstd FHD 0x00 window 0x58 are Kafka's too).

Then every compressed batch lethe wrote into fixtures/ must carry the frame
header Kafka's writer writes (:func:`test_every_compressed_batch_in_fixtures_...`).
"""

from __future__ import annotations

import hashlib
import json
import random
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_formats.compression import XERIAL_MAGIC, compress, decompress, kafka_frame_header
from lethe_formats.errors import DecompressionError
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import Compression

ROOT = fixtures_root()
EVIDENCE = ROOT / "kafka-codecs"
WRITERS = json.loads((EVIDENCE / "writers.json").read_text())
CASES = json.loads((EVIDENCE / "cases.json").read_text())
CODEC_IDS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
#: Bytes of the frame header each codec's writer puts first (gzip: the 10-byte
#: member header; snappy: xerial magic and versions; lz4: magic, FLG, BD, HC;
#: zstd: magic, frame header descriptor, window descriptor).
HEADER_SIZE = {1: 10, 2: 16, 3: 7, 4: 6}
#: snappy-java's native compressor finds other matches than cramjam's on these
#: inputs (same framing, block lengths differ); every other output is identical.
SNAPPY_BLOCKS_DIFFER = {"text-1k", "text-70k", "text-200k"}


def writer_inputs() -> dict[str, bytes]:
    """The inputs given to KafkaCodecWriter (their sha256 is in writers.json)."""
    rng = random.Random(11)
    words = b"amber birch cedar delta ember fjord grove harbor indigo juniper".split()

    def text(size: int) -> bytes:
        out = bytearray()
        while len(out) < size:
            out += rng.choice(words) + b" "
        return bytes(out[:size])

    return {
        "empty": b"",
        "one": b"x",
        "short": b"delta ember harbor delta indigo juniper indigo fjord",
        "text-1k": text(1000),
        "random-1k": rng.randbytes(1000),
        "text-70k": text(70000),
        "text-200k": text(200000),
        "random-200k": rng.randbytes(200000),
        "mixed-150k": text(50000) + rng.randbytes(50000) + text(50000),
        "zeros-300k": bytes(300000),
    }


INPUTS = writer_inputs()


def kafka_header(codec: int, magic: int) -> bytes:
    """The frame header Kafka's writer wrote for a non-empty input."""
    name = {v: k for k, v in CODEC_IDS.items()}[codec]
    out = next(
        o
        for o in WRITERS["outputs"]
        if o["input"] == "short" and o["codec"] == name and o["magic"] == magic
    )
    return bytes.fromhex(out["head"])[: HEADER_SIZE[codec]]


def test_writer_inputs_are_the_ones_kafka_was_given() -> None:
    for name, data in INPUTS.items():
        facts = WRITERS["inputs"][name]
        assert (len(data), hashlib.sha256(data).hexdigest()) == (facts["size"], facts["sha256"])


@pytest.mark.parametrize(
    "output", WRITERS["outputs"], ids=lambda o: f"{o['input']}-{o['codec']}-m{o['magic']}"
)
def test_compress_writes_what_kafkas_writer_writes(output: dict[str, object]) -> None:
    codec = CODEC_IDS[str(output["codec"])]
    magic = int(str(output["magic"]))
    mine = compress(codec, INPUTS[str(output["input"])], magic=magic)
    head = bytes.fromhex(str(output["head"]))
    assert mine[: HEADER_SIZE[codec]] == head[: HEADER_SIZE[codec]]
    if codec == Compression.SNAPPY and output["input"] in SNAPPY_BLOCKS_DIFFER:
        assert hashlib.sha256(mine).hexdigest() != output["sha256"]  # keep the list honest
        return
    assert len(mine) == output["size"]
    assert mine.startswith(head) and mine.endswith(bytes.fromhex(str(output["tail"])))
    assert hashlib.sha256(mine).hexdigest() == output["sha256"]


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_kafka_frame_header_is_the_evidences(codec: int, magic: int) -> None:
    if codec == Compression.ZSTD and magic < 2:
        return
    assert kafka_frame_header(codec, magic=magic) == kafka_header(codec, magic)


def test_kafka_lz4_header_is_flg_0x60_bd_0x40_with_magic_0s_checksum_quirk() -> None:
    assert kafka_header(3, 2) == bytes.fromhex("04224d18604082")
    assert kafka_header(3, 1) == bytes.fromhex("04224d18604082")
    assert kafka_header(3, 0) == bytes.fromhex("04224d1860401a")


# --- walking log entries -----------------------------------------------------------------


def compressed_entries(data: bytes) -> Iterator[tuple[int, int, int, bytes]]:
    """(position, magic, codec, compressed stream) of each compressed entry."""
    pos = 0
    while pos + 17 <= len(data):
        (size,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + size
        magic = data[pos + 16]
        if magic == 2:
            codec = struct.unpack_from(">h", data, pos + 21)[0] & 0x07
            stream = data[pos + 61 : end]
        else:
            codec = data[pos + 17] & 0x07
            at = pos + (26 if magic == 1 else 18)
            (key,) = struct.unpack_from(">i", data, at)
            at += 4 + max(key, 0)
            (length,) = struct.unpack_from(">i", data, at)
            stream = data[at + 4 : at + 4 + max(length, 0)]
        if codec:
            yield pos, magic, codec, stream
        pos = end


def assert_kafka_framing(stream: bytes, magic: int, codec: int, where: str) -> None:
    """The stream starts with Kafka's writer's header and is byte for byte what
    Kafka's writer makes of its content (raw snappy: what librdkafka makes)."""
    plain = decompress(codec, stream, magic=magic)
    if codec == Compression.SNAPPY and not stream.startswith(XERIAL_MAGIC):
        assert stream == compress(codec, plain, snappy_framing="raw"), where
        return
    if plain:
        assert stream[: HEADER_SIZE[codec]] == kafka_header(codec, magic), where
    assert stream == compress(codec, plain, magic=magic), where


@pytest.mark.parametrize(
    "segment", sorted((EVIDENCE / "broker").rglob("*.log")), ids=lambda p: p.parent.name
)
def test_batches_kafkas_broker_compressed_are_lethes_output(segment: Path) -> None:
    entries = list(compressed_entries(segment.read_bytes()))
    assert entries
    for position, magic, codec, stream in entries:
        assert_kafka_framing(stream, magic, codec, f"{segment}: byte {position}")


def _lethe_written_segments() -> list[Path]:
    return sorted((ROOT / "logs").rglob("*.log"))


def test_every_compressed_batch_in_fixtures_has_kafkas_frame_header() -> None:
    raw_snappy = 0
    seen: dict[int, int] = {}
    for segment in _lethe_written_segments():
        for position, magic, codec, stream in compressed_entries(segment.read_bytes()):
            seen[codec] = seen.get(codec, 0) + 1
            if codec == Compression.SNAPPY and not stream.startswith(XERIAL_MAGIC):
                raw_snappy += 1
                spec = ROOT / "logs" / "specs" / f"{segment.parent.parent.name}.json"
                assert '"snappy-raw"' in spec.read_text(), f"{segment}: byte {position}"
            assert_kafka_framing(stream, magic, codec, f"{segment}: byte {position}")
    assert set(seen) == {1, 2, 3, 4} and raw_snappy == 3


def test_format_cases_built_by_lethe_have_kafkas_frame_header() -> None:
    """Cases given as hex were encoded by the authoring scripts (those copied from
    golden files are file references: Kafka's and its clients' own bytes)."""
    count = 0
    for kind in ("record-batch", "log-segment"):
        for path in sorted((ROOT / "formats" / kind / "valid").glob("*.json")):
            case = json.loads(path.read_text())
            if "hex" not in case["input"]:
                continue
            for _, magic, codec, stream in compressed_entries(bytes.fromhex(case["input"]["hex"])):
                count += 1
                assert_kafka_framing(stream, magic, codec, str(path))
    assert count >= 3


# --- reading as Kafka reads -----------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_decompress_refuses_exactly_what_kafka_refused(case: dict[str, object]) -> None:
    batch = bytes.fromhex(str(case["batch"]))
    codec = struct.unpack_from(">h", batch, 21)[0] & 0x07
    answer = case["kafka_produce"]
    assert isinstance(answer, dict)
    if answer["error_code"] == 0:
        assert decompress(codec, batch[61:])
        return
    assert answer["error_code"] == -1  # UNKNOWN_SERVER_ERROR for every refused stream
    with pytest.raises(DecompressionError) as caught:
        decompress(codec, batch[61:])
    # "Caused by: CLASS: MESSAGE", the root cause Kafka's broker logged
    cause = answer["broker_log"][-1].split(": ", 2)
    if codec in (Compression.LZ4, Compression.GZIP) and len(cause) == 3 and "lz4." not in cause[1]:
        assert caught.value.message == cause[2]  # Kafka's own words for frame faults


def test_the_issues_dependent_block_frame_is_refused_at_its_flg_byte() -> None:
    case = next(c for c in CASES if c["name"] == "lz4-dependent-blocks-codec-default")
    stream = bytes.fromhex(case["batch"])[61:]
    assert stream[4] == 0x54  # what lethe wrote before: the LZ4 library's default frame
    with pytest.raises(DecompressionError) as caught:
        decompress(Compression.LZ4, stream)
    assert (caught.value.position, caught.value.message) == (
        4,
        "Dependent block stream is unsupported",
    )
