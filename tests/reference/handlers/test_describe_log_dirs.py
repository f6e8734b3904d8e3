"""DescribeLogDirs (35) against what Kafka 4.0.0 answered ``kafka-log-dirs.sh --describe``
(fixtures/golden/admin-tools: 40 one-record batches of 79 bytes in a topic with
``segment.bytes=500``, then a DeleteRecords to offset 10 and a retention pass), and the
rules of ``KafkaApis.handleDescribeLogDirsRequest`` / ``ReplicaManager.describeLogDirs``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from admin_tools_support import (
    exchanges,
    gamma_world,
    replay,
    roundtrip_bytes,
    stdout,
    tool_broker,
)
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.describe_log_dirs import (
    DescribeLogDirsRequest,
    DescribeLogDirsRequestTopic,
    DescribeLogDirsResponse,
)
from lethe_reference.broker import Broker
from lethe_reference.protocol.loopback import LoopbackClient
from partition_ops_support import delete_records

KEY = ApiKey.DESCRIBE_LOG_DIRS


def test_the_recording_has_the_tools_requests() -> None:
    steps = [(req["step"], req["api_version"]) for req, _ in exchanges(KEY)]
    assert steps == [("log-dirs-all", 4), ("log-dirs-gamma", 4), ("log-dirs-after-delete", 4)]


@pytest.mark.parametrize("index", range(3))
def test_kafkas_frames_reencode_byte_for_byte(index: int) -> None:
    for frame in exchanges(KEY)[index]:
        recorded, ours = roundtrip_bytes(frame)
        assert ours == recorded


def _replicas(answer: DescribeLogDirsResponse) -> dict[str, tuple[int, int, bool]]:
    """partition -> (size, offset lag, is future): what the tool prints per replica."""
    assert answer.error_code == 0
    assert [r.error_code for r in answer.results] == [0]
    return {
        f"{t.name}-{p.partition_index}": (p.partition_size, p.offset_lag, p.is_future_key)
        for r in answer.results
        for t in r.topics
        for p in t.partitions
    }


def _printed(step: str) -> dict[str, tuple[int, int, bool]]:
    """The replicas of the JSON line kafka-log-dirs.sh printed against Kafka."""
    document = json.loads(stdout(step).splitlines()[-1])
    ((log_dir,),) = [b["logDirs"] for b in document["brokers"]]
    assert log_dir["error"] is None
    return {
        p["partition"]: (p["size"], p["offsetLag"], p["isFuture"]) for p in log_dir["partitions"]
    }


def test_replayed_requests_get_kafkas_sizes_before_and_after_delete_records(
    tmp_path: Path,
) -> None:
    broker = gamma_world(tmp_path)
    (all_req, all_resp), (gamma_req, gamma_resp), after = exchanges(KEY)
    for req, resp in ((all_req, all_resp), (gamma_req, gamma_resp)):
        ours, theirs = replay(broker, req, resp)
        assert _replicas(ours) == _replicas(theirs)
    assert {k: v for k, v in _replicas(ours).items() if k.startswith("gamma")} == _printed(
        "log-dirs-gamma"
    )
    assert delete_records(broker, "gamma", {0: 10, 1: 10}) == {0: (10, 0), 1: (10, 0)}
    assert _replicas(replay(broker, *after)[0])["gamma-0"] == (1501, 0, False)  # not yet freed
    broker.log_manager.cleanup_logs()  # the retention pass deletes segment 0-5 (474 bytes)
    ours, theirs = replay(broker, *after)
    assert {k: v for k, v in _replicas(ours).items() if k.startswith("gamma")} == _printed(
        "log-dirs-after-delete"
    )
    assert _printed("log-dirs-after-delete")["gamma-0"] == (1027, 0, False)


def test_the_size_is_the_bytes_of_the_segment_files(tmp_path: Path) -> None:
    broker = gamma_world(tmp_path)
    answer = describe(broker, 4, None)
    for partition, (size, _, _) in _replicas(answer).items():
        files = (tmp_path / partition).glob("*.log")
        assert size == sum(f.stat().st_size for f in files)


def describe(
    broker: Broker, version: int, topics: tuple[DescribeLogDirsRequestTopic, ...] | None
) -> DescribeLogDirsResponse:
    answer = LoopbackClient(broker).request(DescribeLogDirsRequest(topics), version)
    assert isinstance(answer, DescribeLogDirsResponse)
    return answer


def test_v4_gives_the_volume_figures_and_the_absolute_dir(tmp_path: Path) -> None:
    broker = tool_broker(tmp_path)
    (result,) = describe(broker, 4, None).results
    volume = os.statvfs(tmp_path)
    assert result.log_dir == str(tmp_path.absolute())
    assert result.total_bytes == volume.f_blocks * volume.f_frsize
    assert 0 < result.usable_bytes <= result.total_bytes
    (old,) = describe(broker, 3, None).results
    assert (old.total_bytes, old.usable_bytes, old.topics) == (-1, -1, ())


def test_named_partitions_only_those_held_topics_without_one_left_out(tmp_path: Path) -> None:
    broker = gamma_world(tmp_path)
    topics = (
        DescribeLogDirsRequestTopic("gamma", (1, 7)),
        DescribeLogDirsRequestTopic("alpha", (9,)),
        DescribeLogDirsRequestTopic("nosuch", (0,)),
    )
    assert _replicas(describe(broker, 2, topics)) == {"gamma-1": (21 * 79, 0, False)}
    assert describe(broker, 1, ()).results[0].topics == ()


def test_a_failed_log_dir_is_a_storage_error(tmp_path: Path) -> None:
    broker = tool_broker(tmp_path)
    broker.log_manager.dir_failure = "simulated"
    (result,) = describe(broker, 4, None).results
    assert (result.error_code, result.topics, result.total_bytes) == (
        ErrorCode.KAFKA_STORAGE_ERROR,
        (),
        -1,
    )
