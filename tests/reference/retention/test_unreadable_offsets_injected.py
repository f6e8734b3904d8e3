"""An injected ``offsets-unreadable`` failure: consumed retention skips the pass (KIP68-MCO-3).

The catalog (fixtures/requirements/kip68.json, KIP68-MCO-3) says a pass that
cannot read every committed offset deletes nothing by consumed retention. The
injected failure stands for ``__consumer_offsets`` partitions whose records
cannot be read: the coordinator gives them up and cannot load them again while
it lasts, so the pass is skipped; with the failure gone (a new broker) the pass
deletes up to the committed offset (two 2-record batches per 100-byte segment:
a commit at 4 frees the segments based at 0 and 2).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.cluster.group.api import CommitOffset, OffsetCommitRequest
from lethe_reference.cluster.group_runtime import runtime_of
from lethe_reference.injected_failures import OFFSETS_UNREADABLE, inject
from lethe_reference.metadata import CONSUMER_OFFSETS
from lethe_reference.retention.committed import committed_offsets_of
from lethe_reference.server.defaults import broker_config

DAY = 86_400_000
NOW = 1_800_000_000_000
TOPIC = "events"
ENABLED = {
    "retention.commitoffset.enable": "true",
    "retention.commitoffset.ms": str(DAY),
    "retention.ms": "-1",
    "segment.bytes": "100",
}
ALL_OFFSETS_PARTITIONS = list(range(50))  # offsets.topic.num.partitions default


def start(log_dir: Path) -> Broker:
    config = broker_config(overrides={"lethe.kip68.enable": "true"})
    broker = Broker(log_dir, config=config, clock=ManualClock(NOW), durable=False)
    broker.startup()
    return broker


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    started = start(tmp_path)
    yield started
    started.shutdown()


def fill(broker: Broker) -> None:
    broker.create_topic(TOPIC, 1, ENABLED)
    log = broker.log(TOPIC, 0)
    assert log is not None
    specs = [RecordSpec(key=b"k%d" % i, value=b"v", timestamp=NOW - 2 * DAY) for i in range(2)]
    for _ in range(3):
        log.append_as_leader(build_batch(specs, base_offset=0), leader_epoch=0)
    log.update_high_watermark(log.log_end_offset)


def commit(broker: Broker, offset: int) -> None:
    runtime = runtime_of(broker)
    runtime.find_coordinator(0, "g")  # creates __consumer_offsets, as Kafka does
    request = OffsetCommitRequest("g", {(TOPIC, 0): CommitOffset(offset)})
    assert runtime_of(broker).coordinator.commit_offsets(request) == {(TOPIC, 0): 0}


def segments(broker: Broker) -> list[int]:
    log = broker.log(TOPIC, 0)
    assert log is not None
    return log.segments.base_offsets


def test_unreadable_offsets_skip_consumed_retention(broker: Broker) -> None:
    fill(broker)
    commit(broker, 4)
    inject(broker, OFFSETS_UNREADABLE, CONSUMER_OFFSETS, ALL_OFFSETS_PARTITIONS)
    runtime_of(broker)  # a refresh cannot load them again
    assert committed_offsets_of(broker).complete is False
    assert broker.log_manager.cleanup_logs() == 0
    assert segments(broker) == [0, 2, 4]


def test_one_unreadable_partition_is_enough(broker: Broker) -> None:
    fill(broker)
    commit(broker, 4)
    other = runtime_of(broker).coordinator.partition_for("someone-else")
    inject(broker, OFFSETS_UNREADABLE, CONSUMER_OFFSETS, [other])
    assert other not in runtime_of(broker).coordinator.loaded
    assert broker.log_manager.cleanup_logs() == 0


def test_readable_again_after_a_restart_the_pass_deletes(tmp_path: Path) -> None:
    broker = start(tmp_path)
    fill(broker)
    commit(broker, 4)
    inject(broker, OFFSETS_UNREADABLE, CONSUMER_OFFSETS, ALL_OFFSETS_PARTITIONS)
    broker.shutdown()
    broker = start(tmp_path)
    try:
        runtime_of(broker)
        assert committed_offsets_of(broker).get(TOPIC, 0) == 4
        broker.log_manager.cleanup_logs()
        assert segments(broker) == [4]
    finally:
        broker.shutdown()
