"""KIP-68 in the broker: committed offsets from the group coordinator drive the retention pass.

A broker without sockets: topics and records go straight to the logs, commits
straight to the coordinator (as OffsetCommit outside membership would), and the
retention pass is ``LogManager.cleanup_logs``, the ``kafka-log-retention`` task.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.cluster.group import GroupCoordinator
from lethe_reference.cluster.group.api import (
    CommitOffset,
    JoinRequest,
    JoinResult,
    OffsetCommitRequest,
    SyncRequest,
    SyncResult,
)
from lethe_reference.cluster.group_runtime import runtime_of
from lethe_reference.config import LogConfig
from lethe_reference.retention.committed import committed_offsets_of
from lethe_reference.server.defaults import broker_config

DAY = 86_400_000
NOW = 1_800_000_000_000
OLD = NOW - 2 * DAY
TOPIC = "events"
ENABLED = {
    "retention.commitoffset.enable": "true",
    "retention.commitoffset.ms": str(DAY),
    "retention.ms": "-1",
    "segment.bytes": "100",
}


def batch(timestamp: int) -> bytes:
    specs = [RecordSpec(key=b"k%d" % i, value=b"v", timestamp=timestamp) for i in range(2)]
    return build_batch(specs, base_offset=0)


def start(tmp_path: Path, **static: str) -> Broker:
    broker = Broker(
        tmp_path,
        config=broker_config(overrides={"lethe.kip68.enable": "true", **static}),
        clock=ManualClock(NOW),
        durable=False,
    )
    broker.startup()
    return broker


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    started = start(tmp_path)
    yield started
    started.shutdown()


def topic(broker: Broker, configs: dict[str, str], batches: int = 3, partitions: int = 1) -> None:
    broker.create_topic(TOPIC, partitions, configs)
    for partition in range(partitions):
        log = broker.log(TOPIC, partition)
        assert log is not None
        for _ in range(batches):
            log.append_as_leader(batch(OLD), leader_epoch=0)
        log.update_high_watermark(log.log_end_offset)
        assert log.segments.base_offsets == [2 * i for i in range(batches)]


def coordinator(broker: Broker) -> GroupCoordinator:
    runtime = runtime_of(broker)
    runtime.find_coordinator(0, "any")  # creates __consumer_offsets, as Kafka does
    return runtime.coordinator


def commit(broker: Broker, group: str, offset: int, partition: int = 0) -> None:
    request = OffsetCommitRequest(group, {(TOPIC, partition): CommitOffset(offset)})
    assert coordinator(broker).commit_offsets(request) == {(TOPIC, partition): 0}


def segments(broker: Broker, partition: int = 0) -> list[int]:
    log = broker.log(TOPIC, partition)
    assert log is not None
    return log.segments.base_offsets


def test_the_log_config_carries_the_kip68_configs(broker: Broker) -> None:
    topic(broker, ENABLED, batches=1)
    config = broker.log_config(TOPIC)
    assert isinstance(config, LogConfig)
    assert (config.retention_commitoffset_enable, config.retention_commitoffset_ms) == (True, DAY)


def test_the_lowest_group_holds_back_the_retention_pass(broker: Broker) -> None:
    topic(broker, ENABLED)
    commit(broker, "fast", 6)
    commit(broker, "slow", 3)
    assert committed_offsets_of(broker).get(TOPIC, 0) == 3
    assert broker.log_manager.cleanup_logs() == 1
    assert segments(broker) == [2, 4]
    commit(broker, "slow", 4)
    broker.log_manager.cleanup_logs()
    assert segments(broker) == [4]


def test_a_partition_without_commits_keeps_its_segments(broker: Broker) -> None:
    topic(broker, ENABLED, partitions=2)
    commit(broker, "g", 6, partition=0)
    broker.log_manager.cleanup_logs()
    assert segments(broker, 0) == [6]  # all consumed: rolled, the active segment went too
    assert segments(broker, 1) == [0, 2, 4]


def test_with_the_extension_disabled_commits_delete_nothing(broker: Broker) -> None:
    topic(broker, {**ENABLED, "retention.commitoffset.enable": "false"})
    commit(broker, "g", 6)
    assert broker.log_manager.cleanup_logs() == 0
    assert segments(broker) == [0, 2, 4]


def test_the_broker_default_enables_it_for_topics_without_an_override(tmp_path: Path) -> None:
    broker = start(tmp_path, **{"log.retention.commitoffset.enable": "true"})
    try:
        topic(broker, {k: v for k, v in ENABLED.items() if k != "retention.commitoffset.enable"})
        commit(broker, "g", 2)
        broker.log_manager.cleanup_logs()
        assert segments(broker) == [2, 4]
    finally:
        broker.shutdown()


def test_offsets_of_an_unloaded_coordinator_partition_make_the_pass_skip(broker: Broker) -> None:
    topic(broker, ENABLED)
    commit(broker, "g", 6)
    groups = coordinator(broker)
    unloaded = groups.partition_for("someone-else")
    groups.unload(unloaded)  # as if its records had failed to replay
    assert committed_offsets_of(broker).complete is False
    assert broker.log_manager.cleanup_logs() == 0
    assert segments(broker) == [0, 2, 4]


def test_a_broker_without_groups_has_no_committed_offsets(broker: Broker) -> None:
    topic(broker, ENABLED)
    assert committed_offsets_of(broker).get(TOPIC, 0) is None
    assert broker.log_manager.cleanup_logs() == 0


def test_a_member_group_of_the_consumer_protocol_counts_too(tmp_path: Path) -> None:
    broker = start(tmp_path, **{"group.initial.rebalance.delay.ms": "0"})
    try:
        topic(broker, ENABLED)
        commit(broker, "simple", 6)  # assign() + commit(): no membership
        groups = coordinator(broker)
        join = JoinRequest(
            "members",
            "",
            "consumer",
            (("range", b""),),
            10000,
            10000,
            "c",
            "/127.0.0.1",
            require_known_member_id=False,
        )
        joined = groups.join_group(join)
        assert isinstance(joined, JoinResult) and joined.error_code == 0
        member, generation = joined.member_id, joined.generation_id
        synced = groups.sync_group(
            SyncRequest("members", member, generation, assignments=((member, b""),))
        )
        assert isinstance(synced, SyncResult) and synced.error_code == 0
        request = OffsetCommitRequest(
            "members", {(TOPIC, 0): CommitOffset(2)}, member_id=member, generation_id=generation
        )
        assert groups.commit_offsets(request) == {(TOPIC, 0): 0}
        assert committed_offsets_of(broker).get(TOPIC, 0) == 2
        broker.log_manager.cleanup_logs()
        assert segments(broker) == [2, 4]
    finally:
        broker.shutdown()
