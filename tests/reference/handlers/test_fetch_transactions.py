"""Fetch and ListOffsets of a partition holding transactions, through the handlers.

The partition's files are Kafka 4.0's golden transactions log (fixtures/golden/
transactions/pass0/golden-txn-0, dump.txt: producer 0 commits 1-2+4 at 5,
aborts 6-7 at 9 with .txnindex entry (0, 6, 9, LSO 10), commits 10-13 at 14;
LEO 17), copied in while the broker is down, with a replication-offset-checkpoint
that says less than the LEO. Expected values: kafka-facts 2.1-2.2 (LATEST under
read_committed is the last stable offset; LastStableOffset and
AbortedTransactions from Fetch v4), Partition.makeLeader -> maybeIncrementLeaderHW
(a leader that is its partition's only in-sync replica raises its HW to its
LEO), LocalLog.addAbortedTransactions (the aborted transactions overlapping the
range read), ProducerStateManager (an open transaction holds the LSO at its
first offset).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from lethe_formats.protocol.messages.fetch import AbortedTransaction, FetchResponse, PartitionData
from lethe_reference.broker import Broker
from partition_ops_support import GOLDEN, fetch, fetch_request, list_offsets, new_broker

TOPIC = "golden-txn"
SOURCE = GOLDEN / "transactions" / "pass0" / "golden-txn-0"
LATEST = -1


def broker_with_golden_log(log_dir: Path, *, up_to: int, checkpoint_hw: int) -> Broker:
    """A broker restarted on pass0's segments below ``up_to``, HW checkpoint as given."""
    broker = new_broker(log_dir)
    broker.create_topic(TOPIC, 1, {"cleanup.policy": "compact"})
    broker.shutdown()
    partition_dir = log_dir / f"{TOPIC}-0"
    for path in partition_dir.glob("0*"):
        path.unlink()
    for path in sorted(SOURCE.glob("0*")):
        if int(path.name[:20]) < up_to and path.suffix != ".snapshot":
            shutil.copy(path, partition_dir / path.name)
    (log_dir / "replication-offset-checkpoint").write_text(f"0\n1\n{TOPIC} 0 {checkpoint_hw}\n")
    (log_dir / "recovery-point-offset-checkpoint").write_text(f"0\n1\n{TOPIC} 0 {up_to}\n")
    return new_broker(log_dir)


def only(response: FetchResponse) -> PartitionData:
    (topic,) = response.responses
    (partition,) = topic.partitions
    return partition


def read(broker: Broker, offset: int, isolation_level: int) -> PartitionData:
    request = fetch_request(TOPIC, {0: offset}, isolation_level=isolation_level)
    return only(fetch(broker, request))


def test_a_restarted_leader_raises_its_high_watermark_to_its_log_end(tmp_path: Path) -> None:
    broker = broker_with_golden_log(tmp_path, up_to=17, checkpoint_hw=3)
    log = broker.log(TOPIC, 0)
    assert log is not None
    assert (log.log_end_offset, log.high_watermark, log.last_stable_offset) == (17, 17, 17)
    assert read(broker, 0, 0).high_watermark == 17


def test_read_committed_names_the_aborted_transaction_of_the_range(tmp_path: Path) -> None:
    broker = broker_with_golden_log(tmp_path, up_to=17, checkpoint_hw=17)
    committed = read(broker, 6, 1)
    assert (committed.high_watermark, committed.last_stable_offset) == (17, 17)
    assert committed.aborted_transactions == (AbortedTransaction(0, 6),)
    assert committed.records == (SOURCE / "00000000000000000006.log").read_bytes()
    assert read(broker, 10, 1).aborted_transactions == ()
    uncommitted = read(broker, 6, 0)
    assert uncommitted.aborted_transactions is None
    assert uncommitted.last_stable_offset == 17


def test_an_open_transaction_holds_the_last_stable_offset_on_the_wire(tmp_path: Path) -> None:
    broker = broker_with_golden_log(tmp_path, up_to=9, checkpoint_hw=9)
    committed = read(broker, 6, 1)
    assert (committed.high_watermark, committed.last_stable_offset) == (9, 6)
    assert committed.records == b""
    assert committed.aborted_transactions == ()
    assert read(broker, 6, 0).records == (SOURCE / "00000000000000000006.log").read_bytes()
    assert list_offsets(broker, TOPIC, {0: LATEST}, isolation_level=1)[0].offset == 6
    assert list_offsets(broker, TOPIC, {0: LATEST}, isolation_level=0)[0].offset == 9
