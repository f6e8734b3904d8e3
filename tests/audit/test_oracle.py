"""The relational compaction oracle on hand-written tables (no Spark).

Tables hold only the columns the oracle reads, written with pyarrow as the
job writes its Parquet. One log dir ``L`` with a cleaned part
``[2, 10)`` (log-start-offset-checkpoint 2, cleaner-offset-checkpoint 10)
exercises every clause of the rule; a second log dir ``M`` has duplicate keys
but no cleaner checkpoint entry, so no cleaned part.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from lethe_tools.audit import oracle

LIVE = "/L/t-0"
SEG0, SEG10, GONE = f"{LIVE}/{0:020d}.log", f"{LIVE}/{10:020d}.log", f"{LIVE}/{5:020d}.log.deleted"
DELETE_DIR = "/L/t-0.0123456789abcdef0123456789abcdef-delete"
OTHER = "/M/u-0"


def _record(file: str, offset: int, key: str | None, **extra: Any) -> dict[str, Any]:
    topic = "u" if file.startswith(OTHER) else "t"
    row = {
        "topic": topic,
        "partition": 0,
        "file": file,
        "batch_position": offset * 100,
        "offset": offset,
        "key_hash": key,
        "key_size": -1 if key is None else 1,
        "value_size": 10,
        "is_control": False,
        "is_transactional": False,
        "producer_id": -1,
    }
    row.update(extra)
    return row


TXN = {"is_transactional": True, "producer_id": 9}
TABLES: dict[str, list[dict[str, Any]]] = {
    "partitions": [
        {"logdir": "/L", "path": LIVE, "topic": "t", "partition": 0, "dir_kind": "live"},
        {"logdir": "/L", "path": DELETE_DIR, "topic": "t", "partition": 0, "dir_kind": "delete"},
        {"logdir": "/M", "path": OTHER, "topic": "u", "partition": 0, "dir_kind": "live"},
    ],
    "segments": [
        {"file": SEG0, "base_offset": 0, "extra_suffix": ""},
        {"file": GONE, "base_offset": 5, "extra_suffix": ".deleted"},
        {"file": SEG10, "base_offset": 10, "extra_suffix": ""},
        {"file": f"{DELETE_DIR}/{0:020d}.log", "base_offset": 0, "extra_suffix": ""},
        {"file": f"{OTHER}/{0:020d}.log", "base_offset": 0, "extra_suffix": ""},
    ],
    "checkpoints": [
        {
            "logdir": "/L",
            "kind": "log-start-offset-checkpoint",
            "topic": "t",
            "partition": 0,
            "offset": 2,
        },
        {
            "logdir": "/L",
            "kind": "cleaner-offset-checkpoint",
            "topic": "t",
            "partition": 0,
            "offset": 10,
        },
        {
            "logdir": "/L",
            "kind": "cleaner-offset-checkpoint",
            "topic": "u",
            "partition": 0,
            "offset": 99,
        },
        {
            "logdir": "/M",
            "kind": "recovery-point-offset-checkpoint",
            "topic": "u",
            "partition": 0,
            "offset": 3,
        },
    ],
    "records": [
        _record(SEG0, 0, "A"),  # below the log start offset
        _record(SEG0, 2, "A"),  # shadowed by 4
        _record(SEG0, 3, "B"),  # kept: B at 7 is aborted, B at 10 is dirty
        _record(SEG0, 4, "A"),  # kept
        _record(SEG0, 5, None),  # no key: takes no part
        _record(SEG0, 6, "A", is_control=True),  # control: takes no part
        _record(SEG0, 7, "B", **TXN),  # aborted transaction [7, 9)
        _record(SEG0, 8, "C", **TXN),  # aborted transaction
        _record(SEG0, 9, None, is_control=True, **TXN),  # the ABORT marker
        _record(GONE, 9, "B"),  # a .deleted file: not part of the log
        _record(SEG10, 10, "B"),  # dirty part
        _record(f"{DELETE_DIR}/{0:020d}.log", 3, "B"),  # a -delete dir: not the live log
        _record(f"{OTHER}/{0:020d}.log", 0, "X"),  # M: no cleaner entry in M's checkpoint
        _record(f"{OTHER}/{0:020d}.log", 1, "X"),
    ],
    "indexes": [
        {
            "file": f"{LIVE}/{0:020d}.txnindex",
            "kind": "txnindex",
            "producer_id": 9,
            "first_offset": 7,
            "last_offset": 9,
        },
        {
            "file": f"{LIVE}/{0:020d}.txnindex",
            "kind": "txnindex",
            "producer_id": 8,
            "first_offset": 2,
            "last_offset": 5,
        },
        {
            "file": f"{LIVE}/{0:020d}.index",
            "kind": "index",
            "producer_id": None,
            "first_offset": None,
            "last_offset": None,
        },
    ],
}


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("oracle")
    for name, rows in TABLES.items():
        (root / name).mkdir()
        pq.write_table(pa.Table.from_pylist(rows), root / name / "part-00000.parquet")
    return root


def test_kept_is_the_last_data_record_of_each_key_in_the_cleaned_part(out: Path) -> None:
    result = oracle.run([out])
    assert [(row.offset, row.key_hash) for row in result.kept] == [(3, "B"), (4, "A")]
    assert result.cleaned_logs == 1


def test_violations_are_shadowed_keys_and_aborted_records(out: Path) -> None:
    result = oracle.run([out])
    assert [(v.offset, v.kind, v.kept_at) for v in result.violations] == [
        (2, "shadowed", 4),
        (7, "aborted", None),
        (8, "aborted", None),
    ]
    assert result.violation_keys() == {(SEG0, 2), (SEG0, 7), (SEG0, 8)}


def test_the_same_rows_from_two_output_dirs_count_once(out: Path) -> None:
    twice = oracle.run([out, out])
    assert [v.offset for v in twice.violations] == [2, 7, 8]
    assert len(twice.kept) == 2


def test_disagreements_name_each_side(out: Path) -> None:
    result = oracle.run([out])
    same = [{"file": SEG0, "offset": 2}, {"file": SEG0, "offset": 7}, {"file": SEG0, "offset": 8}]
    assert oracle.disagreements(same, result) == []
    assert oracle.disagreements([*same[1:], {"file": SEG10, "offset": 10}], result) == [
        f"only the check: {SEG10} offset 10",
        f"only the oracle: {SEG0} offset 2",
    ]
