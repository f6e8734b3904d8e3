"""``lethe verify`` reports each planted fault as exactly one located line, exit 1.

Faults are planted in copies of golden files. Expected values come from
Kafka's side: batch positions, sizes and stored CRCs from the golden
dump.txt (kafka-dump-log's ``position:``/``size:``/``crc:``), the checkpoint
messages as Kafka's CheckpointFile words them, and recomputed CRCs from the
CRC-32C definition (the ``crc32c`` package).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import crc32c
import pytest
from tools_support import Run

LOG0 = "golden-codecs-0/00000000000000000000.log"
# From codecs/dump.txt: the gzip batch, and the last (lz4) batch of segment 0.
GZIP_POSITION, GZIP_SIZE, GZIP_CRC = 437, 238, 872240893
LZ4_POSITION, LZ4_SIZE = 993, 267


def _patch(path: Path, at: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[at : at + len(data)] = data
    path.write_bytes(bytes(raw))


def test_flipped_byte_in_a_batch_is_a_crc_problem_at_byte_17(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("codecs")
    log = case / LOG0
    raw = bytearray(log.read_bytes())
    raw[GZIP_POSITION + 100] ^= 0x01
    log.write_bytes(bytes(raw))
    computed = crc32c.crc32c(bytes(raw[GZIP_POSITION + 21 : GZIP_POSITION + GZIP_SIZE]))
    run = lethe("verify", str(case))
    assert run.lines == [
        f"{log}: byte {GZIP_POSITION + 17}: crc: Record is corrupt "
        f"(stored crc = {GZIP_CRC}, computed crc = {computed})"
    ]
    assert run.status == 1
    assert run.err == ""


def test_truncated_last_batch_is_a_torn_tail(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("codecs")
    log = case / LOG0
    log.write_bytes(log.read_bytes()[:-10])
    run = lethe("verify", str(log))
    assert run.lines == [
        f"{log}: byte {LZ4_POSITION}: entry: torn tail: the last {LZ4_SIZE - 10} bytes do not "
        "hold a complete batch (Kafka truncates them during recovery)"
    ]
    assert run.status == 1


def test_torn_tail_also_breaks_the_index_entries_pointing_at_it(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("codecs")
    log = case / LOG0
    log.write_bytes(log.read_bytes()[:-10])
    run = lethe("verify", str(case))
    index, timeindex = log.with_suffix(".index"), log.with_suffix(".timeindex")
    # codecs/dump.txt: "offset: 21 position: 993" (entry 2), "timestamp: 1795289184400 offset: 21"
    assert run.lines == [
        f"{log}: byte {LZ4_POSITION}: entry: torn tail: the last {LZ4_SIZE - 10} bytes do not "
        "hold a complete batch (Kafka truncates them during recovery)",
        f"{index}: byte 20: position: entry 2: position 993 is not the start of a batch in {log}",
        f"{timeindex}: byte 32: relative_offset: entry 2: offset 21 is not the last offset of "
        f"any batch in {log}",
    ]
    assert run.status == 1


def test_index_entry_pointing_mid_batch(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("codecs")
    index = case / "golden-codecs-0/00000000000000000000.index"
    _patch(index, 4, struct.pack(">i", GZIP_POSITION + 3))
    run = lethe("verify", str(case))
    assert run.lines == [
        f"{index}: byte 4: position: entry 0: position 440 is not the start of a batch in "
        f"{case / LOG0}"
    ]
    assert run.status == 1


def test_index_entry_with_the_wrong_offset(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("codecs")
    index = case / "golden-codecs-0/00000000000000000000.index"
    _patch(index, 0, struct.pack(">i", 9))  # the batch at 437 is offsets 6..10
    run = lethe("verify", str(index))
    assert run.lines == [
        f"{index}: byte 0: relative_offset: entry 0: offset 9 is not the last offset 10 of the "
        "batch at position 437"
    ]


def test_time_index_timestamp_not_the_batch_max(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("codecs")
    timeindex = case / "golden-codecs-0/00000000000000000000.timeindex"
    _patch(timeindex, 0, struct.pack(">q", 1795289183937))
    run = lethe("verify", str(case))
    assert run.lines == [
        f"{timeindex}: byte 0: timestamp: entry 0: timestamp 1795289183937 is not the "
        "maxTimestamp 1795289183938 of the batch ending at offset 10"
    ]


def test_non_numeric_checkpoint_entry(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("delete-records")
    checkpoint = case / "log-start-offset-checkpoint"
    checkpoint.write_text("0\n2\ngolden-delrec 0 19\ngolden-delrec 2 3O\n")
    run = lethe("verify", str(case))
    # Long.parseLong's NumberFormatException, on line 4, which starts at byte 23
    assert run.lines == [f'{checkpoint}: line 4: byte 23: entry: For input string: "3O"']
    assert run.status == 1


def test_checkpoint_count_mismatch(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("delete-records")
    checkpoint = case / "log-start-offset-checkpoint"
    checkpoint.write_text("0\n3\ngolden-delrec 0 19\ngolden-delrec 2 30\n")
    run = lethe("verify", str(case))
    assert run.lines == [
        f"{checkpoint}: line 2: byte 2: count: Expected [3] entries in checkpoint file "
        f"[{checkpoint}], but found only [2]"
    ]
    assert run.status == 1


def test_checkpoint_offsets_outside_the_partition(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("delete-records")
    # README: p0 keeps segments [16, 24, 32] and ends at 40, log start 19; p2 starts at 30.
    (case / "replication-offset-checkpoint").write_text(
        "0\n3\ngolden-delrec 2 30\ngolden-delrec 0 41\ngolden-delrec 1 36\n"
    )
    (case / "cleaner-offset-checkpoint").write_text("0\n1\ngolden-delrec 0 18\n")
    run = lethe("verify", str(case))
    assert sorted(run.lines) == [
        f"{case / 'cleaner-offset-checkpoint'}: line 3: byte 20: offset: golden-delrec-0: "
        "offset 18 is below the partition's log start 19",
        f"{case / 'replication-offset-checkpoint'}: line 4: byte 39: offset: golden-delrec-0: "
        "offset 41 is beyond the partition's log end offset 40",
    ]


def test_leader_epoch_start_beyond_the_log_end(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("delete-records")
    checkpoint = case / "golden-delrec-0/leader-epoch-checkpoint"
    checkpoint.write_text("0\n2\n0 19\n1 41\n")
    run = lethe("verify", str(case))
    assert run.lines == [
        f"{checkpoint}: line 4: byte 11: startOffset: start offset 41 of epoch 1 is beyond "
        "the log end offset 40"
    ]


def test_horizon_batch_with_inconsistent_max_timestamp(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("compaction/pass1")
    log = case / "golden-compact-0/00000000000000000000.log"
    # compaction/pass1/dump.txt: first batch at 0, size 77, deleteHorizonMs set,
    # its only record (offset 6) has CreateTime 1795289282807 = the batch max.
    _patch(log, 35, struct.pack(">q", 1795289282808))
    raw = log.read_bytes()
    _patch(log, 17, struct.pack(">I", crc32c.crc32c(raw[21:77])))
    run = lethe("verify", str(log))
    assert run.lines == [
        f"{log}: byte 35: maxTimestamp: largest record timestamp 1795289282807 differs from "
        "maxTimestamp 1795289282808 (delete horizon set)"
    ]


def _legacy_v1(offset: int, attributes: int, key: bytes, value: bytes) -> bytes:
    body = struct.pack(">bbq", 1, attributes, 1795289000000)
    body += struct.pack(">i", len(key)) + key + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


def test_delete_horizon_bit_on_a_legacy_message(tmp_path: Path, lethe: Callable[..., Run]) -> None:
    log = tmp_path / "00000000000000000000.log"
    first = _legacy_v1(0, 0x00, b"k", b"v")
    log.write_bytes(first + _legacy_v1(1, 0x40, b"k", b"v"))
    run = lethe("verify", str(log))
    assert run.lines == [
        f"{log}: byte {len(first) + 17}: attributes: attribute bit 6 (delete horizon, KIP-534) "
        "is set on a magic 1 message; only magic 2 batches carry a delete horizon"
    ]


def test_offsets_must_increase_across_batches(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("codecs")
    log = case / LOG0
    _patch(log, GZIP_POSITION, struct.pack(">q", 5))  # baseOffset 6 -> 5; not CRC-covered
    run = lethe("verify", str(log))
    assert run.lines == [
        f"{log}: byte {GZIP_POSITION}: baseOffset: offset 5 is not above the previous batch's "
        "last offset 5"
    ]


def test_records_count_beyond_the_offset_range(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("codecs")
    log = case / LOG0
    _patch(log, GZIP_POSITION + 57, struct.pack(">i", 7))  # the batch holds offsets 6..10
    raw = log.read_bytes()
    crc = crc32c.crc32c(raw[GZIP_POSITION + 21 : GZIP_POSITION + GZIP_SIZE])
    _patch(log, GZIP_POSITION + 17, struct.pack(">I", crc))
    run = lethe("verify", str(log))
    assert run.lines == [
        f"{log}: byte {GZIP_POSITION + 23}: lastOffsetDelta: lastOffsetDelta 4 cannot hold 7 "
        "records with distinct offsets"
    ]


def test_orphaned_index_is_reported(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("codecs")
    orphan = case / "golden-codecs-0/00000000000000000050.index"
    orphan.write_bytes(b"")
    run = lethe("verify", str(case))
    assert run.lines == [
        f"{orphan}: byte 0: file name: orphaned index: no 00000000000000000050.log in this "
        "directory (Kafka deletes it at startup)"
    ]


@pytest.mark.parametrize(
    "name",
    [
        "00000000000000000000.log",
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
        "00000000000000000000.txnindex",
        "00000000000000000000.snapshot",
        "leader-epoch-checkpoint",
        "replication-offset-checkpoint",
        "partition.metadata",
    ],
)
@pytest.mark.parametrize("size", [1, 7, 61, 200])
def test_garbage_files_give_problem_lines_never_a_traceback(
    name: str, size: int, tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    path = tmp_path / name
    path.write_bytes(bytes((i * 167 + 13) % 256 for i in range(size)))
    run = lethe("verify", str(path))
    assert run.status == 1
    assert run.lines and all(line.startswith(f"{path}: ") for line in run.lines)
    assert "Traceback" not in run.err
    assert not any("unexpected" in line for line in run.lines)


def test_meta_properties_without_node_id(tmp_path: Path, lethe: Callable[..., Run]) -> None:
    # Any bytes are a valid v0 Java properties file; v1 requires node.id (MetaProperties)
    path = tmp_path / "meta.properties"
    path.write_text("version=1\ncluster.id=abc\n")
    run = lethe("verify", str(path))
    assert (run.status, run.lines) == (1, [f"{path}: byte 0: node.id: Failed to find node.id"])


def test_missing_path(tmp_path: Path, lethe: Callable[..., Run]) -> None:
    run = lethe("verify", str(tmp_path / "nope"))
    assert (run.status, run.lines) == (2, [])
    missing = f"{tmp_path / 'nope'}: byte 0: file: No such file or directory"
    assert run.err == f"lethe verify: {missing}\n"


def test_summary_line_counts_the_files_and_the_problems(
    copy_case: Callable[[str], Path], lethe: Callable[..., Run]
) -> None:
    case = copy_case("codecs")
    log = case / LOG0
    log.write_bytes(log.read_bytes()[:-10])
    # Two files named on the command line, one of them torn.
    run = lethe(
        "verify", "--summary", str(log), str(case / "golden-codecs-0" / "leader-epoch-checkpoint")
    )
    assert run.lines[-1] == "verified 2 files: 1 problem"
    assert len(run.lines) == 2
    assert run.status == 1
