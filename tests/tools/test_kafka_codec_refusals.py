"""``lethe dump`` and ``lethe verify`` on batches whose compressed stream Kafka cannot read.

Expected values are Kafka's: fixtures/kafka-codecs/dump/CASE holds a segment
(an uncompressed batch at byte 0, then the case's batch at byte 76, its CRC
right) and what Kafka 4.0.0's ``kafka-dump-log.sh --deep-iteration --files``
printed for it (stdout.txt, exit-status). The faulty byte is where Kafka's
reader stopped (the broker log in fixtures/kafka-codecs/cases.json names the
fault), inside the stream that starts at byte 76 + 61 = 137.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from lethe_formats.fixtures import fixtures_root
from tools_support import Run

DUMPS = fixtures_root() / "kafka-codecs" / "dump"
SEGMENT = "00000000000000000000.log"
STREAM = 76 + 61
#: case -> (byte of the fault, Kafka's message), for faults in the stream's first bytes
#: (which plain ``verify`` checks); the others need ``verify --deep``.
HEADER_FAULTS = {
    "lz4-dependent-blocks-codec-default": (STREAM + 4, "Dependent block stream is unsupported"),
    "lz4-header-checksum-wrong": (STREAM + 6, "Stream frame descriptor corrupted"),
}
DEEP_FAULTS = {
    "gzip-bad-crc": "Corrupt GZIP trailer",
    "lz4-no-end-mark": "Stream ended prematurely",
    "lz4-corrupt-block": "corrupt lz4 block",
    "snappy-raw-corrupt": "corrupt snappy data",
    "zstd-corrupt": "corrupt zstd data",
}
CASES = sorted(path.name for path in DUMPS.iterdir())


def test_every_dump_case_is_classified() -> None:
    readable = {"lz4-content-checksum-wrong"}
    assert set(CASES) == set(HEADER_FAULTS) | set(DEEP_FAULTS) | readable


@pytest.mark.parametrize("case", CASES)
def test_dump_prints_what_kafka_dump_log_printed(
    case: str, lethe: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(DUMPS)
    run = lethe("dump", "--deep-iteration", f"{case}/{SEGMENT}")
    assert run.out == (DUMPS / case / "stdout.txt").read_text()
    assert run.status == int((DUMPS / case / "exit-status").read_text())
    if run.status:
        assert "Exception" in (DUMPS / case / "stderr-first-line.txt").read_text()
        assert run.err.startswith(f"{case}/{SEGMENT}: byte ")


@pytest.mark.parametrize("case", sorted(HEADER_FAULTS))
def test_verify_reports_a_frame_kafka_refuses_although_its_crc_is_right(
    case: str, lethe: Callable[..., Run]
) -> None:
    path = os.fspath(DUMPS / case / SEGMENT)
    position, message = HEADER_FAULTS[case]
    run = lethe("verify", path)
    assert run.status == 1
    assert run.lines == [f"{path}: byte {position}: records: {message}"]


@pytest.mark.parametrize("case", sorted(DEEP_FAULTS))
def test_verify_deep_reports_every_stream_kafka_cannot_read(
    case: str, lethe: Callable[..., Run]
) -> None:
    path = os.fspath(DUMPS / case / SEGMENT)
    assert lethe("verify", path).status == 0  # the stream opens as Kafka opens it
    run = lethe("verify", "--deep", path)
    assert run.status == 1 and len(run.lines) == 1
    assert run.lines[0].startswith(f"{path}: byte ")
    assert ": records: " + DEEP_FAULTS[case] in run.lines[0]
    assert int(run.lines[0].split(": byte ")[1].split(":")[0]) >= STREAM


def test_verify_accepts_a_wrong_lz4_content_checksum_as_kafka_does(
    lethe: Callable[..., Run],
) -> None:
    path = Path(DUMPS / "lz4-content-checksum-wrong" / SEGMENT)
    assert lethe("verify", "--deep", os.fspath(path)).status == 0
