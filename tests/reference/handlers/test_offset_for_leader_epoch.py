"""OffsetForLeaderEpoch (23) as Kafka 4.0 answers it: ``LeaderEpochFileCache.endOffsetFor``
over the leader-epoch-checkpoint a restart history leaves (fixtures/golden/leader-epoch-restarts
gives the epochs: each restart of a single node adds two), the epoch checks of
``Partition.getLocalLog``, and the wire layout at the version boundaries (2, 3, 4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from admin_tools_support import exchanges, gamma_world, replay, roundtrip_bytes
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import encode
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.offset_for_leader_epoch import (
    EpochEndOffset,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.protocol.loopback import LoopbackClient
from partition_ops_support import delete_records

START = 1_795_780_000_000
TOPIC = "ep"


def _start(log_dir: Path) -> Broker:
    broker = Broker(log_dir, clock=ManualClock(START), durable=False)
    broker.startup()
    return broker


def _append(broker: Broker, count: int) -> None:
    log = broker.log(TOPIC, 0)
    assert log is not None
    specs = [RecordSpec(b"k", b"v%d" % i, timestamp=START + i) for i in range(count)]
    log.append_as_leader(build_batch(specs, base_offset=0), broker.metadata.leader_epoch(TOPIC, 0))


@pytest.fixture
def history(tmp_path: Path) -> Broker:
    """Epoch 0 holds offsets 0-2, epoch 2 offsets 3-4, epoch 4 (now) starts at 5 = LEO."""
    broker = _start(tmp_path)
    broker.create_topic(TOPIC, 2)
    _append(broker, 3)
    broker.shutdown()
    broker = _start(tmp_path)
    _append(broker, 2)
    broker.shutdown()
    broker = _start(tmp_path)
    checkpoint = (tmp_path / f"{TOPIC}-0" / "leader-epoch-checkpoint").read_text()
    assert checkpoint == "0\n3\n0 0\n2 3\n4 5\n"
    return broker


def ask(
    broker: Broker, *partitions: OffsetForLeaderPartition, topic: str = TOPIC
) -> list[tuple[int, int, int]]:
    request = OffsetForLeaderEpochRequest(
        replica_id=-1, topics=(OffsetForLeaderTopic(topic, partitions),)
    )
    answer = LoopbackClient(broker).request(request, 4)
    assert isinstance(answer, OffsetForLeaderEpochResponse)
    return [
        (p.error_code, p.leader_epoch, p.end_offset) for t in answer.topics for p in t.partitions
    ]


@pytest.mark.parametrize(
    ("epoch", "expected"),
    [
        (0, (0, 3)),  # an old epoch ends where the next one starts
        (1, (0, 3)),  # an unknown epoch between two: the one below, the next start
        (2, (2, 5)),
        (3, (2, 5)),
        (4, (4, 5)),  # the latest epoch ends at the log end offset
        (5, (-1, -1)),  # above every epoch
        (-1, (-1, -1)),  # UNDEFINED_EPOCH
    ],
)
def test_end_offsets_from_the_epoch_cache(
    history: Broker, epoch: int, expected: tuple[int, int]
) -> None:
    assert ask(history, OffsetForLeaderPartition(0, -1, epoch)) == [(0, *expected)]


def test_an_empty_partition_knows_only_its_first_epoch(history: Broker) -> None:
    assert ask(history, OffsetForLeaderPartition(1, -1, 4)) == [(0, 4, 0)]
    assert ask(history, OffsetForLeaderPartition(1, -1, 0)) == [(0, 0, 0)]  # 0 0, then 4 0


def test_the_current_leader_epoch_is_checked(history: Broker) -> None:
    assert ask(
        history,
        OffsetForLeaderPartition(0, 2, 0),
        OffsetForLeaderPartition(0, 5, 0),
        OffsetForLeaderPartition(0, 4, 0),
    ) == [
        (ErrorCode.FENCED_LEADER_EPOCH, -1, -1),
        (ErrorCode.UNKNOWN_LEADER_EPOCH, -1, -1),
        (0, 0, 3),
    ]


def test_unknown_topics_and_partitions(history: Broker) -> None:
    unknown = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, -1)
    assert ask(history, OffsetForLeaderPartition(2, -1, 0)) == [unknown]
    assert ask(history, OffsetForLeaderPartition(0, -1, 0), topic="nope") == [unknown]


def test_the_layout_at_each_version() -> None:
    """v2: no replica id; v3 adds it (int32 before the topics); v4 is flexible (compact
    lengths, tagged-field bytes); the response gains nothing but flexibility."""
    request = OffsetForLeaderEpochRequest(
        replica_id=-1, topics=(OffsetForLeaderTopic("t", (OffsetForLeaderPartition(0, 4, 2),)),)
    )
    body = b"\x00\x00\x00\x00" + b"\x00\x00\x00\x04" + b"\x00\x00\x00\x02"
    assert encode(request, 2) == b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\x00\x00\x00\x01" + body
    assert encode(request, 3) == b"\xff\xff\xff\xff" + encode(request, 2)
    assert (
        encode(request, 4)
        == b"\xff\xff\xff\xff" + b"\x02" + b"\x02t" + b"\x02" + body + b"\x00\x00\x00"
    )
    response = OffsetForLeaderEpochResponse(
        topics=(OffsetForLeaderTopicResult("t", (EpochEndOffset(0, 0, 4, 5),)),)
    )
    entry = b"\x00\x00" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x04" + b"\x00" * 7 + b"\x05"
    assert encode(response, 2) == b"\x00" * 4 + b"\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x01" + entry
    assert encode(response, 4) == b"\x00" * 4 + b"\x02\x02t\x02" + entry + b"\x00\x00\x00"


GOLDEN = exchanges(ApiKey.OFFSET_FOR_LEADER_EPOCH)


def test_the_recording_covers_every_version() -> None:
    assert [req["api_version"] for req, _ in GOLDEN] == [2, 2, 3, 3, 4, 4]


@pytest.mark.parametrize("index", range(6))
def test_kafkas_frames_reencode_byte_for_byte(index: int) -> None:
    for frame in GOLDEN[index]:
        recorded, ours = roundtrip_bytes(frame)
        assert ours == recorded


@pytest.mark.parametrize("index", range(6))
def test_replayed_requests_get_kafkas_answers(tmp_path: Path, index: int) -> None:
    """gamma as Kafka had it (log start 10 after the DeleteRecords, epoch 0 the latest):
    end offsets, a newer epoch -1/-1, fenced/unknown current epochs, absent partitions."""
    broker = gamma_world(tmp_path)
    delete_records(broker, "gamma", {0: 10, 1: 10})
    ours, theirs = replay(broker, *GOLDEN[index])
    assert ours == theirs
