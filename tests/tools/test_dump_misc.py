"""``lethe dump`` beyond the golden replays: JSON lines, damaged files, lethe's own layouts.

Expected values come from Kafka's side: the golden dump.txt lines, the
records kafka-python read back from the broker (codecs/case.json), the
golden README's checkpoint values, and kafka-dump-log's behaviour on a torn
segment ("Found N invalid bytes at the end of <name>").
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lethe_tools.progress import BarProgress, NoProgress, scan_progress
from tools_support import Run

LOG0 = "golden-codecs-0/00000000000000000000.log"
LOG22 = "golden-codecs-0/00000000000000000022.log"


def _case_bytes(value: Any) -> Any:
    """case.json's encoding (str = UTF-8, {"hex": ..}, null) into lethe's JSON one."""
    if value is None or isinstance(value, dict):
        return value
    return {"utf8": value}


def _json_lines(run: Run) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run.lines]


def test_json_records_are_what_the_broker_served(
    golden: Path, lethe: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(golden / "codecs")
    run = lethe("dump", "--json", "--print-data-log", LOG0, LOG22)
    objects = _json_lines(run)
    records = [r for o in objects if o["type"] == "batch" for r in o["records"]]
    served = json.loads((golden / "codecs/case.json").read_text())["records_read_back"]["records"]
    assert len(records) == len(served) == 37
    for mine, theirs in zip(records, served, strict=True):
        assert mine["offset"] == theirs["offset"]
        assert mine["timestamp"] == theirs["timestamp"]
        assert mine["key"] == _case_bytes(theirs["key"])
        assert mine["value"] == _case_bytes(theirs["value"])
        assert mine["headers"] == [
            {"key": _case_bytes(k), "value": _case_bytes(v)} for k, v in theirs["headers"]
        ]
    assert run.status == 0


def test_json_batches_match_the_dump_txt_batch_lines(
    golden: Path, lethe: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(golden / "compaction/pass1")
    run = lethe("dump", "--json", "golden-compact-0/00000000000000000000.log")
    batches = [o for o in _json_lines(run) if o["type"] == "batch"]
    text = (golden / "compaction/pass1/dump.txt").read_text("utf-8", "replace")
    lines = [line for line in text.split("\n") if line.startswith("baseOffset: ")][:4]
    assert len(batches) == len(lines) == 4
    for batch, line in zip(batches, lines, strict=True):
        fields = dict(re.findall(r"(\w+): (\S+)", line))
        assert str(batch["base_offset"]) == fields["baseOffset"]
        assert str(batch["last_offset"]) == fields["lastOffset"]
        assert str(batch["count"]) == fields["count"]
        assert str(batch["position"]) == fields["position"]
        assert str(batch["crc"]) == fields["crc"]
        assert f"OptionalLong[{batch['delete_horizon_ms']}]" == fields["deleteHorizonMs"]
        assert "records" not in batch  # shallow without --deep-iteration


def test_json_control_records_and_gaps(
    golden: Path, lethe: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(golden / "transactions/pass1")
    run = lethe("dump", "--json", "--deep-iteration", "golden-txn-0/00000000000000000000.log")
    objects = _json_lines(run)
    controls = [
        r["control"]
        for o in objects
        if o["type"] == "batch"
        for r in o["records"]
        if "control" in r
    ]
    # transactions/pass1/dump.txt: markers at offsets 5 (COMMIT), 9 (ABORT), 14 (COMMIT)
    assert controls == [
        "endTxnMarker: COMMIT coordinatorEpoch: 0",
        "endTxnMarker: ABORT coordinatorEpoch: 0",
        "endTxnMarker: COMMIT coordinatorEpoch: 0",
    ]
    gaps = [o for o in objects if o["type"] == "non_consecutive_offsets"]
    # the recorded stderr lists "5 is followed by 8", "3 is followed by 5", "0 is followed by 3"
    assert [g["pairs"] for g in gaps] == [[[0, 3], [3, 5], [5, 8]]]


def test_torn_segment_reports_the_invalid_bytes_like_kafka(
    golden: Path, tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes((golden / "codecs" / LOG0).read_bytes()[:-10])
    run = lethe("dump", str(log))
    # the last batch (position 993, size 267) no longer fits: 257 bytes are left over
    assert run.lines[-1] == "Found 257 invalid bytes at the end of 00000000000000000000.log"
    assert len(run.lines) == 2 + 3 + 1  # Dumping, Log starting offset, 3 whole batches
    assert run.status == 0


def test_max_bytes_stops_early_without_the_invalid_bytes_line(
    golden: Path, lethe: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(golden / "codecs")
    run = lethe("dump", "--max-bytes", "700", LOG0)
    expected = (golden / "codecs/dump.txt").read_text("utf-8", "replace").split("\n")
    batches = [line for line in expected if line.startswith("baseOffset: ")]
    # batches at 0 (437 bytes) and 437 (238 bytes) end before byte 700; the one at 675 does not
    assert run.lines == [f"Dumping {LOG0}", "Log starting offset: 0", *batches[:2]]


def test_unknown_file_is_ignored_like_kafka(tmp_path: Path, lethe: Callable[..., Run]) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    run = lethe("dump", str(path))
    assert run.lines == [f"Dumping {path}"]
    assert run.err == f"Ignoring unknown file {path}\n"


def test_checkpoints_and_metadata_dump_as_key_value_lines(
    golden: Path, lethe: Callable[..., Run], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(golden / "delete-records")
    run = lethe(
        "dump",
        "log-start-offset-checkpoint",
        "golden-delrec-0/leader-epoch-checkpoint",
        "golden-delrec-0/partition.metadata",
        "cleaner-offset-checkpoint",
    )
    topic_id = (golden / "delete-records/golden-delrec-0/partition.metadata").read_text()
    assert run.lines == [
        "Dumping log-start-offset-checkpoint",
        "version: 0",
        "entries: 2",
        "topic: golden-delrec partition: 0 offset: 19",
        "topic: golden-delrec partition: 2 offset: 30",
        "Dumping golden-delrec-0/leader-epoch-checkpoint",
        "version: 0",
        "entries: 1",
        "epoch: 0 startOffset: 19",
        "Dumping golden-delrec-0/partition.metadata",
        "version: 0",
        f"topic_id: {topic_id.split('topic_id: ')[1]}",
        "Dumping cleaner-offset-checkpoint",
        "cleaner-offset-checkpoint is empty.",
    ]


def test_meta_properties_in_file_order(golden: Path, lethe: Callable[..., Run]) -> None:
    path = golden / "codecs/meta.properties"
    run = lethe("dump", str(path))
    entries = [line.replace("=", ": ", 1) for line in path.read_text().splitlines()[2:]]
    assert run.lines == [f"Dumping {path}", *entries]


def test_undecodable_file_is_one_stderr_line_and_exit_1(
    tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    path = tmp_path / "00000000000000000000.snapshot"
    path.write_bytes(b"\x00\x01\x00")
    run = lethe("dump", str(path), str(path))
    assert run.lines == [f"Dumping {path}", f"Dumping {path}"]
    assert len(run.err.splitlines()) == 2
    assert run.err.splitlines()[0].startswith(f"{path}: byte ")
    assert run.status == 1


def test_corrupt_batch_size_stops_with_a_located_error(
    golden: Path, tmp_path: Path, lethe: Callable[..., Run]
) -> None:
    raw = bytearray((golden / "codecs" / LOG0).read_bytes())
    raw[437 + 8 : 437 + 12] = (3).to_bytes(4, "big")  # batchLength 3 < 49
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(bytes(raw))
    run = lethe("dump", str(log))
    assert run.lines[-1] == "Found 823 invalid bytes at the end of 00000000000000000000.log"
    assert run.err.startswith(f"{log}: byte 445: batchLength: ")
    assert run.status == 1


def test_no_progress_bar_unless_stderr_is_a_terminal() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert isinstance(scan_progress(2**40, "x", io.StringIO()), NoProgress)
    assert isinstance(scan_progress(10, "x", Terminal()), NoProgress)  # too short to matter
    assert isinstance(scan_progress(2**40, "x", Terminal()), BarProgress)


def test_progress_bar_draws_only_on_its_stream() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    with scan_progress(2**30, "segment", stream) as progress:
        for position in range(0, 2**30, 2**24):
            progress.update(position)
    assert isinstance(progress, BarProgress)
    assert "segment" in stream.getvalue()
