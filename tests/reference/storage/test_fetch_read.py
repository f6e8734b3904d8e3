"""Fetch reads (kafka-facts 2.3; UnifiedLog.read, LocalLog.read, LogSegment.read).

The log is the golden delete-records p0 (segments 16 [16-19, 20-23], 24
[24-27, 28-31], 32 [32-35, 36-39]; LEO 40). Batch boundaries and sizes are
read from Kafka's own files.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.model import AbortedTxn
from lethe_reference.clock import ManualClock
from lethe_reference.storage.errors import OffsetOutOfRangeError
from lethe_reference.storage.log import LogStartOffsetIncrementReason, PartitionLog
from lethe_reference.storage.log_reads import FetchIsolation, read
from storage_support import GOLDEN, delrec_log

P0 = GOLDEN / "delete-records" / "golden-delrec-0"
SEGMENT_24 = (P0 / "00000000000000000024.log").read_bytes()
FIRST_24 = int.from_bytes(SEGMENT_24[8:12], "big") + 12  # batch 24..27


@pytest.fixture
def log(tmp_path: Path, clock: ManualClock) -> PartitionLog:
    return delrec_log(tmp_path, 0, clock)


def _base(records: bytes) -> int:
    return int.from_bytes(records[:8], "big")


def test_a_fetch_inside_a_batch_returns_the_whole_batch(log: PartitionLog) -> None:
    data = read(log, 26, 1 << 20)
    assert data.records == SEGMENT_24  # from batch 24..27 to the end of the segment


def test_a_fetch_stays_in_one_segment(log: PartitionLog) -> None:
    assert _base(read(log, 31, 1 << 20).records) == 28
    assert len(read(log, 31, 1 << 20).records) == len(SEGMENT_24) - FIRST_24


def test_max_bytes_cuts_by_bytes_but_keeps_one_whole_batch(log: PartitionLog) -> None:
    assert read(log, 24, 10).records == SEGMENT_24[:FIRST_24]  # min_one_message
    partial = read(log, 24, FIRST_24 + 5)
    assert partial.records == SEGMENT_24[: FIRST_24 + 5]  # Kafka slices; clients drop the tail
    cut = read(log, 24, 10, min_one_message=False)
    assert cut.records == SEGMENT_24[:10]
    assert cut.first_entry_incomplete


def test_fetching_below_the_log_start_offset_is_out_of_range(log: PartitionLog) -> None:
    log.maybe_increment_log_start_offset(19, LogStartOffsetIncrementReason.CLIENT_RECORD_DELETION)
    with pytest.raises(OffsetOutOfRangeError) as caught:
        read(log, 18, 1 << 20)
    assert caught.value.error_code == 1
    assert _base(read(log, 19, 1 << 20).records) == 16  # the straddling batch, whole


def test_fetching_past_the_log_end_is_out_of_range(log: PartitionLog) -> None:
    with pytest.raises(OffsetOutOfRangeError):
        read(log, 41, 1 << 20)
    assert read(log, 40, 1 << 20).records == b""


def test_reads_stop_before_the_batch_holding_the_high_watermark(log: PartitionLog) -> None:
    log.update_high_watermark(28)
    assert read(log, 24, 1 << 20).records == SEGMENT_24[:FIRST_24]
    assert read(log, 28, 1 << 20).records == b""  # between HW and LEO: nothing
    log.update_high_watermark(26)  # inside batch 24..27: that batch is not visible yet
    assert read(log, 24, 1 << 20).records == b""
    assert len(read(log, 26, 1 << 20, isolation=FetchIsolation.LOG_END).records) == len(SEGMENT_24)


def test_read_committed_reports_aborted_transactions_in_range(log: PartitionLog) -> None:
    segment = log.segments.get(24)
    assert segment is not None
    txn = AbortedTxn(0, 9, 25, 29, 25)
    segment.append_aborted_txn(txn)
    assert read(log, 24, 1 << 20, isolation=FetchIsolation.TXN_COMMITTED).aborted_transactions == (
        txn,
    )
    assert read(log, 32, 1 << 20, isolation=FetchIsolation.TXN_COMMITTED).aborted_transactions == ()
    assert (segment.directory / "00000000000000000024.txnindex").stat().st_size == 34
