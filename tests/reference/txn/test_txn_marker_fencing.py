"""WriteTxnMarkers from a deposed coordinator, as Kafka 4.0's partition leader answers it.

``ProducerAppendInfo.appendEndTxnMarker`` checks the producer epoch and then the
coordinator epoch: a COMMIT/ABORT marker whose coordinator epoch is lower than
the last one the partition recorded for that producer is refused with
TRANSACTION_COORDINATOR_FENCED (52) in WriteTxnMarkers' per-partition answer,
and nothing is appended (``checkCoordinatorEpoch``); an equal or higher epoch
is accepted.
"""

from __future__ import annotations

from pathlib import Path

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages.write_txn_markers import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from lethe_reference.broker import Broker
from txn_handlers_support import Txn, call, new_broker

TOPIC = "fenced-markers"
TP = (TOPIC, 0)


def _marker(broker: Broker, producer_id: int, epoch: int, commit: bool, coordinator: int) -> int:
    request = WriteTxnMarkersRequest(
        (
            WritableTxnMarker(
                producer_id, epoch, commit, (WritableTxnMarkerTopic(TOPIC, (0,)),), coordinator
            ),
        )
    )
    response = call(broker, ApiKey.WRITE_TXN_MARKERS, 1, request)
    assert isinstance(response, WriteTxnMarkersResponse)
    [marker] = response.markers
    [topic] = marker.topics
    [partition] = topic.partitions
    assert (marker.producer_id, topic.name, partition.partition_index) == (producer_id, TOPIC, 0)
    return int(partition.error_code)


def _log_bytes(broker: Broker) -> dict[str, bytes]:
    folder = broker.log_dir / f"{TOPIC}-0"
    return {
        p.name: p.read_bytes()
        for p in sorted(folder.iterdir())
        if p.suffix in (".log", ".txnindex")
    }


def test_a_marker_from_an_older_coordinator_epoch_is_fenced_and_not_appended(
    tmp_path: Path,
) -> None:
    broker = new_broker(tmp_path)
    broker.create_topic(TOPIC, 1)
    txn = Txn(broker, "fencing-coordinator")
    assert txn.init().error_code == 0
    assert txn.add(TP) == {TP: 0}
    assert txn.produce(TP, b"a", b"b").error_code == 0
    log = broker.log(TOPIC, 0)
    assert log is not None
    # the coordinator of epoch 3 commits: recorded for the producer
    assert _marker(broker, txn.producer_id, txn.epoch, True, 3) == 0
    assert (log.log_end_offset, log.last_stable_offset) == (3, 3)
    before = _log_bytes(broker)
    # a zombie coordinator of epoch 2 tries to end it again (or another one)
    assert _marker(broker, txn.producer_id, txn.epoch, False, 2) == 52
    assert _marker(broker, txn.producer_id, txn.epoch, True, 0) == 52
    assert (log.log_end_offset, log.last_stable_offset) == (3, 3)
    assert _log_bytes(broker) == before
    # the current coordinator's epoch (and a newer one) still write markers
    assert _marker(broker, txn.producer_id, txn.epoch, False, 3) == 0
    assert _marker(broker, txn.producer_id, txn.epoch, True, 4) == 0
    assert log.log_end_offset == 5
    assert _marker(broker, txn.producer_id, txn.epoch, True, 3) == 52  # 4 is now recorded


def test_a_producer_the_partition_never_saw_takes_any_coordinator_epoch(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    broker.create_topic(TOPIC, 1)
    assert _marker(broker, 4242, 0, False, 0) == 0  # no entry: nothing to compare with
    log = broker.log(TOPIC, 0)
    assert log is not None and log.log_end_offset == 1
