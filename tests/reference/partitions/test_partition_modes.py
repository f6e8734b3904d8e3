"""Partition modes as clients see them: Metadata's tag 10694 and the pre-v9 rule,
Produce refused, Fetch and ListOffsets unchanged (KIP694-MODE-*, KIP694-META-1/2,
KIP694-DISC-3), and the modes kept in the topic registry file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lethe_formats.protocol.compiler import encode
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
)
from lethe_formats.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
)
from lethe_formats.protocol.messages.metadata import MetadataResponse, MetadataResponseTopic
from lethe_reference.broker import Broker
from lethe_reference.metadata import METADATA_FILE, TopicRegistry
from lethe_reference.partitions.state import PartitionMode, Reduction
from lethe_reference.protocol.loopback import LoopbackClient
from reduction_support import delete_partitions, metadata, new_broker, produce

NODE = 1


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    broker = new_broker(tmp_path)
    broker.create_topic("t", 5)
    for partition in range(5):
        assert produce(broker, "t", partition) == (0, 0)
    delete_partitions(broker, ("t", 3), delay_ms=60000)
    return broker


def test_the_mode_codes_are_the_kips() -> None:
    assert (PartitionMode.READ_WRITE, PartitionMode.READ_ONLY, PartitionMode.NONE) == (0, 1, -1)


@pytest.mark.parametrize("version", [9, 12, 13])
def test_flexible_metadata_tags_read_only_partitions_and_only_them(
    broker: Broker, version: int
) -> None:
    partitions = metadata(broker, "t", version)
    assert [p.mode for p in partitions] == [0, 0, 0, 1, 1]
    assert all(p.error_code == 0 and p.leader_id == NODE for p in partitions)


@pytest.mark.parametrize("version", [4, 8])
def test_metadata_below_v9_hides_read_only_partitions_behind_leader_not_available(
    broker: Broker, version: int
) -> None:
    partitions = metadata(broker, "t", version)
    assert [(p.error_code, p.leader_id) for p in partitions] == [
        (0, NODE),
        (0, NODE),
        (0, NODE),
        (ErrorCode.LEADER_NOT_AVAILABLE, -1),
        (ErrorCode.LEADER_NOT_AVAILABLE, -1),
    ]
    assert all(p.mode == 0 for p in partitions)


def test_a_readwrite_topic_encodes_exactly_as_without_the_feature(tmp_path: Path) -> None:
    """The response bytes of an untouched topic equal those of a disabled broker's."""
    on = new_broker(tmp_path / "on")
    off = new_broker(tmp_path / "off", enable=False)
    wires = []
    for broker in (on, off):
        info = broker.create_topic("plain", 3)
        partitions = metadata(broker, "plain", 12)
        topic = MetadataResponseTopic(name="plain", partitions=tuple(partitions))
        wires.append(encode(MetadataResponse(topics=(topic,)), 12))
        assert info.modes == {}
    assert wires[0] == wires[1]


@pytest.mark.parametrize("partition", [3, 4])
def test_produce_to_a_read_only_partition_is_policy_violation_and_appends_nothing(
    broker: Broker, partition: int
) -> None:
    assert produce(broker, "t", partition)[0] == ErrorCode.POLICY_VIOLATION
    assert broker.log("t", partition).log_end_offset == 1  # type: ignore[union-attr]
    assert produce(broker, "t", 2) == (0, 1)


def test_produce_to_a_none_partition_is_refused_and_it_stays_readable(broker: Broker) -> None:
    info = broker.metadata.get("t")
    assert info is not None and info.reduction is not None
    broker.metadata.set_reduction("t", info.reduction, {3: PartitionMode.NONE})
    assert produce(broker, "t", 3)[0] == ErrorCode.POLICY_VIOLATION
    assert [p.mode for p in metadata(broker, "t")] == [0, 0, 0, -1, 0]
    assert fetch(broker, 3) == (0, 1, 1)


def fetch(broker: Broker, partition: int) -> tuple[int, int, int]:
    """(error, high watermark, bytes returned > 0) of a consumer Fetch at offset 0."""
    part = FetchPartition(partition=partition, fetch_offset=0, partition_max_bytes=1 << 20)
    request = FetchRequest(
        max_wait_ms=0,
        min_bytes=1,
        max_bytes=1 << 20,
        topics=(FetchTopic(topic="t", partitions=(part,)),),
    )
    response = LoopbackClient(broker).call(request, FetchResponse, 12)
    (got,) = response.responses[0].partitions
    return got.error_code, got.high_watermark, int(bool(got.records))


def test_fetch_and_list_offsets_on_read_only_partitions_answer_as_before(broker: Broker) -> None:
    assert fetch(broker, 4) == (0, 1, 1)
    request = ListOffsetsRequest(
        replica_id=-1,
        topics=(ListOffsetsTopic("t", (ListOffsetsPartition(4, timestamp=-1),)),),
    )
    response = LoopbackClient(broker).call(request, ListOffsetsResponse)
    (answer,) = response.topics[0].partitions
    assert (answer.error_code, answer.offset) == (0, 1)


def test_modes_and_the_reduction_are_saved_in_the_registry_file(broker: Broker) -> None:
    saved = json.loads((broker.log_dir / METADATA_FILE).read_text())["topics"]["t"]
    assert saved["modes"] == {"3": 1, "4": 1}
    assert saved["reduction"] == {
        "count": 3,
        "delay_ms": 60000,
        "created_ms": broker.clock.now_ms(),
    }
    registry = TopicRegistry(broker.log_dir / METADATA_FILE)
    registry.load()
    info = registry.get("t")
    assert info is not None
    assert dict(info.modes) == {3: PartitionMode.READ_ONLY, 4: PartitionMode.READ_ONLY}
    assert info.reduction == Reduction(3, 60000, broker.clock.now_ms())


@pytest.mark.parametrize(
    ("modes", "reduction"),
    [
        ({"3": 7, "x": 1, "4": "1"}, {"count": 0, "delay_ms": 1, "created_ms": 1}),
        ([1, 2], {"count": 3, "delay_ms": -5, "created_ms": 1}),
        ({"4": 0}, {"count": True, "delay_ms": 1, "created_ms": 1}),
        (None, "soon"),
    ],
)
def test_damaged_saved_modes_and_reductions_are_dropped(
    tmp_path: Path, modes: object, reduction: object
) -> None:
    path = tmp_path / METADATA_FILE
    entry = {"id": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": 5, "configs": {}}
    entry |= {"modes": modes, "reduction": reduction}
    path.write_text(json.dumps({"version": 1, "topics": {"t": entry}}))
    registry = TopicRegistry(path)
    assert registry.load() == ["t"]
    info = registry.get("t")
    assert info is not None
    assert (dict(info.modes), info.reduction) == ({}, None)
