"""The sans-IO producer table and the snapshot manager (Kafka's ProducerStateManager rules)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.model import BatchHeader, ControlType
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_formats.records.control import encode_control_key, encode_end_txn_marker_value
from lethe_formats.records.scan import LogScanner
from lethe_formats.storage.producer_snapshot import read_producer_snapshot
from lethe_reference.storage import errors
from lethe_reference.storage.producer_snapshots import (
    ProducerStateManager,
    rebuild_producer_state,
)
from lethe_reference.storage.producer_state import ProducerBatch, ProducerTable, producer_batches

NOW = 1_800_000_000_000
DAY = 86_400_000


def header(
    pid: int, seq: int, offset: int, *, count: int = 2, epoch: int = 0, ts: int = NOW
) -> BatchHeader:
    data = build_batch(
        [RecordSpec(b"k", b"v", timestamp=ts)] * count,
        base_offset=offset,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
    )
    (entry,) = list(LogScanner(data))
    assert isinstance(entry.header, BatchHeader)
    return entry.header


def table_with(*headers: BatchHeader) -> ProducerTable:
    table = ProducerTable("t-0")
    for h in headers:
        table.apply(ProducerBatch(h))
    return table


def test_a_duplicate_returns_the_original_batch() -> None:
    table = table_with(header(7, 0, 0), header(7, 2, 2))
    original = table.check_client_batch(header(7, 0, 10), 10)
    assert original is not None and (original.first_offset, original.last_offset) == (0, 1)


def test_only_five_batches_are_remembered() -> None:
    table = table_with(*(header(7, 2 * i, 2 * i) for i in range(6)))
    assert table.check_client_batch(header(7, 2, 20), 20) is not None
    with pytest.raises(errors.OutOfOrderSequenceError):
        table.check_client_batch(header(7, 0, 20), 20)


def test_epoch_and_sequence_errors_carry_kafkas_codes() -> None:
    table = table_with(header(7, 0, 0, epoch=3))
    with pytest.raises(errors.InvalidProducerEpochError) as stale:
        table.check_client_batch(header(7, 2, 2, epoch=2), 2)
    assert stale.value.error_code == 47
    with pytest.raises(errors.OutOfOrderSequenceError) as gap:
        table.check_client_batch(header(7, 3, 2, epoch=3), 2)
    assert gap.value.error_code == 45
    with pytest.raises(errors.OutOfOrderSequenceError):
        table.check_client_batch(header(7, 1, 2, epoch=4), 2)  # new epoch must start at 0
    assert table.check_client_batch(header(7, 0, 2, epoch=4), 2) is None
    assert table.check_client_batch(header(8, 99, 2), 2) is None  # unknown: any sequence


def test_expiry_needs_the_idle_time_and_no_open_transaction() -> None:
    table = table_with(header(7, 0, 0, ts=NOW - DAY), header(8, 0, 2, ts=NOW - DAY + 1))
    assert table.remove_expired(NOW, DAY) == [7]
    assert table.get(8) is not None


def test_snapshot_rows_follow_javas_hashmap_order() -> None:
    """Ids 16 and 0 share bucket 0 of a 16-slot table: insertion order there."""
    table = table_with(header(16, 0, 0), header(3, 0, 2), header(0, 0, 4), header(1, 0, 6))
    assert [row.producer_id for row in table.snapshot_entries()] == [16, 0, 1, 3]
    big = table_with(*(header(pid, 0, 2 * pid) for pid in range(20, 7, -1)))
    # 13 entries > 12 = 3/4 of 16: the table doubled to 32 slots, so ids sort plainly.
    assert [row.producer_id for row in big.snapshot_entries()] == list(range(8, 21))


def test_a_marker_closes_the_transaction_and_keeps_its_coordinator_epoch() -> None:
    table = ProducerTable("t-0")
    data = build_batch(
        [RecordSpec(b"k", b"v", timestamp=NOW)],
        base_offset=0,
        producer_id=5,
        producer_epoch=1,
        base_sequence=0,
        is_transactional=True,
    )
    (data_batch,) = producer_batches(data, LogScanner(data))
    table.apply(data_batch)
    entry = table.get(5)
    assert entry is not None and entry.current_txn_first_offset == 0
    control = build_batch(
        [
            RecordSpec(
                encode_control_key(ControlType.COMMIT),
                encode_end_txn_marker_value(9),
                timestamp=NOW + 5,
            )
        ],
        base_offset=1,
        producer_id=5,
        producer_epoch=1,
        base_sequence=-1,
        is_transactional=True,
        is_control=True,
    )
    (marker,) = producer_batches(control, LogScanner(control))
    assert (marker.marker, marker.coordinator_epoch) == (ControlType.COMMIT, 9)
    assert table.apply(marker) == (0, 1)
    row = entry.to_snapshot()
    assert (row.coordinator_epoch, row.timestamp, row.current_txn_first_offset) == (9, NOW + 5, -1)


def _manager(directory: Path) -> ProducerStateManager:
    return ProducerStateManager(directory, directory.name, expiration_ms=DAY)


def test_take_snapshot_only_when_the_map_moved(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    manager.table.apply(ProducerBatch(header(7, 0, 0)))
    manager.update_map_end_offset(2)
    written = manager.take_snapshot()
    assert written == tmp_path / f"{2:020d}.snapshot"
    assert manager.take_snapshot() is None
    rows = read_producer_snapshot(written.read_bytes()).entries
    assert [(r.producer_id, r.last_sequence, r.last_offset, r.offset_delta) for r in rows] == [
        (7, 1, 1, 1)
    ]


def test_stray_snapshots_go_except_the_newest_above_the_last_segment(tmp_path: Path) -> None:
    for offset in (3, 5, 8, 9, 12):
        (tmp_path / f"{offset:020d}.snapshot").write_bytes(b"")
    manager = _manager(tmp_path)
    manager.remove_stray_snapshots([0, 5, 8])
    assert sorted(p.name[:20] for p in tmp_path.iterdir()) == [f"{o:020d}" for o in (5, 8, 12)]


def test_load_replays_beyond_the_newest_snapshot_and_skips_expired_producers(
    tmp_path: Path,
) -> None:
    first = _manager(tmp_path)
    first.table.apply(ProducerBatch(header(7, 0, 0)))
    first.table.apply(ProducerBatch(header(9, 0, 2, ts=NOW - 2 * DAY)))
    first.update_map_end_offset(4)
    first.take_snapshot()
    later = [ProducerBatch(header(7, 2, 4))]
    loaded = _manager(tmp_path)
    rebuild_producer_state(
        loaded,
        [0],
        lambda base, start, end: [b for b in later if start <= b.header.last_offset < end],
        log_start_offset=0,
        last_offset=6,
        now_ms=NOW,
        reload_from_clean_shutdown=True,
    )
    entry = loaded.table.get(7)
    assert entry is not None and entry.last_seq == 3
    assert loaded.table.get(9) is None  # expired while the broker was down
    assert sorted(loaded.snapshots) == [4, 6]


def test_snapshots_at_or_below_the_log_start_offset_are_deleted_on_load(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    manager.table.apply(ProducerBatch(header(7, 0, 0)))
    manager.update_map_end_offset(2)
    manager.take_snapshot()
    reloaded = _manager(tmp_path)
    reloaded.truncate_and_reload(2, 2, NOW)
    assert reloaded.snapshots == {} and reloaded.is_empty()
