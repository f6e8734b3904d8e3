"""The last stable offset of a log holding transactions, held to Kafka's golden log.

The log is fixtures/golden/transactions/pass0/golden-txn-0, as Kafka 4.0 wrote
it (dump.txt): offset 0 plain; producer 0's first transaction at 1-2 and 4,
COMMIT at 5; its second at 6-7, ABORT at 9 (plain record at 8); its third at
10-13, COMMIT at 14; plain 15 and 16; LEO 17. Kafka rolled a segment at almost
every batch and wrote a producer snapshot at each roll: the snapshot at N holds
the state before offset N, ``currentTxnFirstOffset`` being the open
transaction's first offset. Those snapshots, the ``.txnindex`` Kafka wrote for
the ABORT, and Kafka's rules (UnifiedLog.lastStableOffset = first unstable
offset if below the HW; ProducerStateManager.firstUnstableOffset also counts a
completed transaction until the HW passes its marker) give every expected value.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from lethe_formats.model import AbortedTxn, ControlType
from lethe_formats.records.builder import build_end_txn_marker_batch
from lethe_reference.clock import ManualClock
from lethe_reference.storage.loader import LoadParams, load_log
from lethe_reference.storage.log import LogStartOffsetIncrementReason, PartitionLog
from lethe_reference.storage.log_reads import (
    LATEST_TIMESTAMP,
    FetchIsolation,
    IsolationLevel,
    offset_for_timestamp,
    read,
)
from lethe_reference.storage.settings import StorageSettings
from storage_support import GOLDEN, client_batch

PASS0 = GOLDEN / "transactions" / "pass0"
TXN_DIR = PASS0 / "golden-txn-0"
SETTINGS = StorageSettings()
LEO = 17
#: The golden ABORT's .txnindex entry (dump.txt): producer 0, offsets 6-9, LSO 10.
GOLDEN_ABORT = AbortedTxn(0, 0, 6, 9, 10)


def snapshot_open_txns() -> dict[int, int | None]:
    """Snapshot offset -> producer 0's open transaction's first offset, from dump.txt."""
    text = (PASS0 / "dump.txt").read_text("utf-8", errors="replace")
    found: dict[int, int | None] = {}
    pattern = r"Dumping golden-txn-0/(\d{20})\.snapshot\n(producerId: [^\n]*)?"
    for match in re.finditer(pattern, text):
        line = match.group(2) or ""
        first = re.search(r"currentTxnFirstOffset: OptionalLong\[(\d+)\]", line)
        found[int(match.group(1))] = int(first.group(1)) if first else None
    return found


SNAPSHOTS = snapshot_open_txns()


def test_the_golden_snapshots_are_read() -> None:
    assert SNAPSHOTS == {
        1: None,
        3: 1,
        4: 1,
        5: 1,
        6: None,
        8: 6,
        9: 6,
        10: None,
        14: 10,
        15: None,
        16: None,
        17: None,
    }


def segment_files(up_to: int = LEO) -> list[Path]:
    return [p for p in sorted(TXN_DIR.glob("*.log")) if int(p.stem) < up_to]


def follow(directory: Path, clock: ManualClock, up_to: int = LEO) -> PartitionLog:
    """Append pass0's batches below ``up_to`` as a follower would, rolling where Kafka
    rolled and moving the HW to the LEO after each append."""
    log = PartitionLog.create(directory, SETTINGS, clock=clock, durable=False)
    for path in segment_files(up_to):
        if int(path.stem) > 0:
            log.roll(int(path.stem))
        for batch in golden_batches_of(path):
            log.append_as_follower(batch)
            log.maybe_increment_high_watermark(log.log_end_offset)
    return log


def golden_batches_of(path: Path) -> list[bytes]:
    """The raw batches of one golden ``.log`` file."""
    data, position, found = path.read_bytes(), 0, []
    while position < len(data):
        end = position + 12 + int.from_bytes(data[position + 8 : position + 12], "big")
        found.append(data[position:end])
        position = end
    return found


@pytest.mark.parametrize("offset", sorted(SNAPSHOTS), ids=lambda o: f"before-{o}")
def test_a_follower_log_has_kafkas_open_transaction_at_every_snapshot(
    tmp_path: Path, clock: ManualClock, offset: int
) -> None:
    log = follow(tmp_path / "golden-txn-0", clock, up_to=offset)
    assert (log.log_end_offset, log.high_watermark) == (offset, offset)
    first = SNAPSHOTS[offset]
    assert log.last_stable_offset == (offset if first is None else first)
    assert dict(log.transactions.ongoing) == ({} if first is None else {0: first})


def test_the_abort_writes_kafkas_txnindex_entry(tmp_path: Path, clock: ManualClock) -> None:
    log = follow(tmp_path / "golden-txn-0", clock)
    written = sorted((tmp_path / "golden-txn-0").glob("*.txnindex"))
    assert [p.name for p in written] == ["00000000000000000009.txnindex"]
    assert written[0].read_bytes() == (TXN_DIR / "00000000000000000009.txnindex").read_bytes()
    segment = log.segments.get(9)
    assert segment is not None and segment.aborted_txns == [GOLDEN_ABORT]


def load(tmp_path: Path, clock: ManualClock, up_to: int = LEO, *, start: int = 0) -> PartitionLog:
    """pass0's segment files below ``up_to`` (no snapshots) loaded as at startup."""
    directory = tmp_path / "golden-txn-0"
    directory.mkdir(parents=True)
    for path in segment_files(up_to):
        for twin in TXN_DIR.glob(f"{path.stem}.*"):
            if twin.suffix in (".log", ".index", ".timeindex", ".txnindex"):
                shutil.copy(twin, directory / twin.name)
    params = LoadParams(recovery_point=up_to, log_start_offset=start, had_clean_shutdown=True)
    return load_log(directory, SETTINGS, params, clock=clock, durable=False)


@pytest.mark.parametrize(("up_to", "stable"), [(5, 1), (9, 6), (10, 10), (14, 10), (17, 17)])
def test_loading_rebuilds_the_open_transaction_from_the_segments(
    tmp_path: Path, clock: ManualClock, up_to: int, stable: int
) -> None:
    log = load(tmp_path, clock, up_to)
    log.update_high_watermark(up_to)
    assert log.last_stable_offset == stable == (SNAPSHOTS[up_to] or up_to)


@pytest.mark.parametrize(("high_watermark", "stable"), [(1, 1), (8, 6), (9, 6), (10, 10), (14, 10)])
def test_a_completed_transaction_is_unstable_until_the_hw_passes_its_marker(
    tmp_path: Path, clock: ManualClock, high_watermark: int, stable: int
) -> None:
    """Full log loaded, HW from a checkpoint below the LEO: the aborted transaction
    (6-7, marker 9) and the committed one (10-13, marker 14) hold the LSO at their
    first offsets until the HW passes their markers."""
    log = load(tmp_path, clock)
    log.update_high_watermark(high_watermark)
    assert log.last_stable_offset == stable
    log.update_high_watermark(LEO)
    assert log.last_stable_offset == LEO


def test_the_open_transaction_bounds_read_committed_reads_and_list_offsets(
    tmp_path: Path, clock: ManualClock
) -> None:
    log = load(tmp_path, clock, 9)
    log.update_high_watermark(9)
    committed = IsolationLevel.READ_COMMITTED
    latest = offset_for_timestamp(log, LATEST_TIMESTAMP, isolation=committed)
    assert latest is not None and latest.offset == 6
    uncommitted = offset_for_timestamp(log, LATEST_TIMESTAMP)
    assert uncommitted is not None and uncommitted.offset == 9
    txn = FetchIsolation.TXN_COMMITTED
    assert read(log, 6, 1 << 20, isolation=txn).records == b""
    assert read(log, 6, 1 << 20).records == (TXN_DIR / "00000000000000000006.log").read_bytes()
    assert (
        read(log, 3, 1 << 20, isolation=txn).records
        == (TXN_DIR / "00000000000000000003.log").read_bytes()
    )


@pytest.mark.parametrize(
    ("offset", "aborted"),
    [(0, ()), (5, ()), (6, (GOLDEN_ABORT,)), (8, (GOLDEN_ABORT,)), (9, (GOLDEN_ABORT,)), (10, ())],
)
def test_read_committed_lists_the_aborted_transactions_of_the_range_read(
    tmp_path: Path, clock: ManualClock, offset: int, aborted: tuple[AbortedTxn, ...]
) -> None:
    """Each read covers one golden segment, so the range checked runs to the next
    segment's base offset (no offset-index entry lies past the bytes read)."""
    log = load(tmp_path, clock)
    log.update_high_watermark(LEO)
    assert (
        read(log, offset, 1 << 20, isolation=FetchIsolation.TXN_COMMITTED).aborted_transactions
        == aborted
    )
    assert read(log, offset, 1 << 20).aborted_transactions == ()


def test_the_log_start_offset_raises_the_first_unstable_offset(
    tmp_path: Path, clock: ManualClock
) -> None:
    """maybeIncrementFirstUnstableOffset: an open transaction below the log start
    offset counts from the log start offset."""
    log = load(tmp_path, clock, 5)
    log.update_high_watermark(5)
    log.maybe_increment_log_start_offset(3, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
    assert log.last_stable_offset == 3
    log.maybe_increment_log_start_offset(5, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
    assert log.last_stable_offset == 5  # == HW


@pytest.mark.parametrize("start", [3, 4])
def test_after_loading_an_open_transaction_below_the_log_start_counts_from_it(
    tmp_path: Path, clock: ManualClock, start: int
) -> None:
    """Kafka 4.0 keeps a producer whose data lies below the log start offset when it
    loads its snapshot (only expired producers go, and one with an open transaction
    never expires): producer 0's transaction opened at 1 stays open, bounded below."""
    log = load(tmp_path, clock, 5, start=start)
    log.update_high_watermark(5)
    assert dict(log.transactions.ongoing) == {0: 1}
    assert log.last_stable_offset == start


def test_a_producers_transaction_holds_the_lso_until_its_marker_is_replicated(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Leader appends open the transaction (the broker has no coordinator, so the
    ABORT marker arrives as a follower append would bring it)."""
    log = PartitionLog.create(tmp_path / "t-0", SETTINGS, clock=clock, durable=False)
    now = clock.now_ms()
    txn = client_batch(
        [now, now], producer_id=5, producer_epoch=0, base_sequence=0, is_transactional=True
    )
    for batch in (client_batch([now]), txn, client_batch([now])):
        log.append_as_leader(batch, leader_epoch=0)
        log.maybe_increment_high_watermark(log.log_end_offset)
    assert (log.high_watermark, log.last_stable_offset) == (4, 1)
    abort = build_end_txn_marker_batch(
        base_offset=4,
        producer_id=5,
        producer_epoch=0,
        control_type=ControlType.ABORT,
        coordinator_epoch=0,
        timestamp=now,
    )
    log.append_as_follower(abort)
    assert log.active_segment.aborted_txns == [AbortedTxn(0, 5, 1, 4, 5)]
    assert log.last_stable_offset == 1  # the marker at 4 is not below the HW (4) yet
    log.maybe_increment_high_watermark(5)
    assert log.last_stable_offset == 5


@pytest.mark.parametrize("clean", [True, False])
def test_recovery_rebuilds_a_lost_txnindex_from_the_log(
    tmp_path: Path, clock: ManualClock, clean: bool
) -> None:
    """LogSegment.recover resets the segment's .txnindex and rebuilds it from the
    producer state; a segment not recovered keeps what it has (here: nothing)."""
    directory = tmp_path / "golden-txn-0"
    directory.mkdir()
    for path in TXN_DIR.glob("*"):
        if path.suffix in (".log", ".index", ".timeindex"):
            shutil.copy(path, directory / path.name)
    params = LoadParams(recovery_point=0, log_start_offset=0, had_clean_shutdown=clean)
    log = load_log(directory, SETTINGS, params, clock=clock, durable=False)
    rebuilt = directory / "00000000000000000009.txnindex"
    if clean:
        assert not rebuilt.exists()
    else:
        assert rebuilt.read_bytes() == (TXN_DIR / "00000000000000000009.txnindex").read_bytes()
        segment = log.segments.get(9)
        assert segment is not None and segment.aborted_txns == [GOLDEN_ABORT]
    assert sorted(p.name for p in directory.glob("*.txnindex")) == ([] if clean else [rebuilt.name])
