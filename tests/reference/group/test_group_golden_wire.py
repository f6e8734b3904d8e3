"""The group exchanges librdkafka and kafka-python had with Kafka 4.0 (golden wire
frames), replayed against the coordinator at the recorded times: every answer
carries what Kafka answered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from group_wire import Frame, decode, exchanges, load_frames
from lethe_formats.coordinator import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    decode_record,
)
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import RecordBatch
from lethe_formats.records.scan import read_log
from lethe_reference.clock import ManualClock
from lethe_reference.cluster.group import (
    CommitOffset,
    GroupConfig,
    GroupCoordinator,
    JoinRequest,
    JoinResult,
    LeaveMember,
    OffsetCommitRequest,
    Pending,
    SyncRequest,
    SyncResult,
)

FRAMES = fixtures_root() / "golden" / "wire" / "frames.jsonl"
NOT_COORDINATOR = 16
MEMBER_ID_REQUIRED = 79


class Replay:
    """A coordinator fed one client's recorded requests."""

    def __init__(self, client_id: str) -> None:
        self.exchanges = exchanges(load_frames(FRAMES, client_id))
        self.client_id = client_id
        self.clock = ManualClock(self.exchanges[0][0].ts_ms)
        self.batches: list[tuple[int, bytes]] = []
        self.coordinator = GroupCoordinator(
            self.clock,
            lambda partition, batch: self.batches.append((partition, batch)),
            GroupConfig(group_initial_rebalance_delay_ms=0),  # the golden broker's setting
            new_uuid=self._kafkas_uuid,
        )

    def _kafkas_uuid(self) -> str:
        """The random part of the member id Kafka generated (its MEMBER_ID_REQUIRED)."""
        for request, response in self.exchanges:
            answer = decode(response)
            if request.api_key == 11 and answer["error_code"] == MEMBER_ID_REQUIRED:
                return str(answer["member_id"]).removeprefix(f"{self.client_id}-")
        raise AssertionError("no MEMBER_ID_REQUIRED in the recording")

    def run(self) -> list[tuple[Frame, dict[str, Any], dict[str, Any]]]:
        """(request, Kafka's answer, ours) for every exchange."""
        out = []
        loaded = False
        for request, response in self.exchanges:
            kafka = decode(response)
            self.clock.set(request.ts_ms)
            if not loaded and kafka.get("error_code") != NOT_COORDINATOR:
                group_id = _group_id(decode(request))
                self.coordinator.load(self.coordinator.partition_for(group_id), [])
                loaded = True
            ours = self._call(request, decode(request), response.ts_ms)
            out.append((request, kafka, ours))
        return out

    def _settle(self, result: Any, response_ts: int) -> Any:
        if isinstance(result, Pending):
            self.clock.set(response_ts)
            self.coordinator.tick()
            return result.result()
        return result

    def _call(self, frame: Frame, body: dict[str, Any], response_ts: int) -> dict[str, Any]:
        v = frame.api_version
        c = self.coordinator
        if frame.api_key == 11:
            join = c.join_group(
                JoinRequest(
                    body["group_id"],
                    body["member_id"],
                    body["protocol_type"],
                    tuple((p["name"], p["metadata"]) for p in body["protocols"]),
                    body["session_timeout_ms"],
                    body["rebalance_timeout_ms"],
                    frame.client_id,
                    "/127.0.0.1",
                    body["group_instance_id"],
                    require_known_member_id=v >= 4,
                )
            )
            return _join_answer(self._settle(join, response_ts), v)
        if frame.api_key == 14:
            sync = c.sync_group(
                SyncRequest(
                    body["group_id"],
                    body["member_id"],
                    body["generation_id"],
                    tuple((a["member_id"], a["assignment"]) for a in body["assignments"]),
                    body["group_instance_id"],
                    body["protocol_type"],
                    body["protocol_name"],
                )
            )
            return _sync_answer(self._settle(sync, response_ts), v)
        if frame.api_key == 12:
            code = c.heartbeat(
                body["group_id"],
                body["member_id"],
                body["generation_id"],
                body["group_instance_id"],
            )
            return {"throttle": 0, "error_code": code}
        if frame.api_key == 13:
            return self._leave(body, v)
        if frame.api_key == 8:
            return self._commit(body, v)
        return self._fetch(body)

    def _leave(self, body: dict[str, Any], v: int) -> dict[str, Any]:
        members = [LeaveMember(m["member_id"], m.get("group_instance_id")) for m in body["members"]]
        result = self.coordinator.leave_group(body["group_id"], members)
        if v < 3:  # one member; its error is the response's
            error = result.error_code or result.members[0].error_code
            return {"throttle": 0, "error_code": error}
        answers = [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "error": m.error_code,
            }
            for m in result.members
        ]
        return {"throttle": 0, "error_code": result.error_code, "members": answers}

    def _commit(self, body: dict[str, Any], v: int) -> dict[str, Any]:
        offsets = {
            (t["name"], p["partition"]): CommitOffset(p["offset"], p["metadata"], p["epoch"])
            for t in body["topics"]
            for p in t["partitions"]
        }
        errors = self.coordinator.commit_offsets(
            OffsetCommitRequest(
                body["group_id"],
                offsets,
                body["member_id"],
                body["generation_id"],
                body["group_instance_id"],
                api_version=v,
            )
        )
        topics = [
            {
                "name": t["name"],
                "partitions": [
                    {"partition": p["partition"], "error": errors[t["name"], p["partition"]]}
                    for p in t["partitions"]
                ],
            }
            for t in body["topics"]
        ]
        return {"throttle": 0, "topics": topics}

    def _fetch(self, body: dict[str, Any]) -> dict[str, Any]:
        groups = []
        for group in body["groups"]:
            wanted = [(t["name"], p) for t in group["topics"] for p in t["partitions"]]
            result = self.coordinator.fetch_offsets(group["group_id"], wanted)
            topics = []
            for topic in group["topics"]:
                parts = []
                for p in topic["partitions"]:
                    got = result.offsets[topic["name"], p]
                    parts.append(
                        {
                            "partition": p,
                            "offset": got.offset,
                            "epoch": got.leader_epoch,
                            "metadata": got.metadata,
                            "error": got.error_code,
                        }
                    )
                topics.append({"name": topic["name"], "partitions": parts})
            groups.append(
                {"group_id": group["group_id"], "topics": topics, "error_code": result.error_code}
            )
        return {"throttle": 0, "groups": groups}


def _group_id(body: dict[str, Any]) -> str:
    return str(body["group_id"] if "group_id" in body else body["groups"][0]["group_id"])


def _join_answer(result: JoinResult, v: int) -> dict[str, Any]:
    members = [
        {"member_id": m.member_id, "group_instance_id": m.group_instance_id, "metadata": m.metadata}
        for m in result.members
    ]
    return {
        "throttle": 0,
        "error_code": result.error_code,
        "generation_id": result.generation_id,
        "protocol_type": result.protocol_type if v >= 7 else None,
        "protocol_name": result.protocol_name if v >= 7 else result.protocol_name or "",
        "leader": result.leader,
        "member_id": result.member_id,
        "members": members,
    }


def _sync_answer(result: SyncResult, v: int) -> dict[str, Any]:
    return {
        "throttle": 0,
        "error_code": result.error_code,
        "protocol_type": result.protocol_type if v >= 5 else None,
        "protocol_name": result.protocol_name if v >= 5 else None,
        "assignment": result.assignment,
    }


@pytest.mark.parametrize("client_id", ["golden-rdk-consumer", "golden-kpy-consumer"])
def test_recorded_group_exchanges_get_kafkas_answers(client_id: str) -> None:
    results = Replay(client_id).run()
    apis = [request.api_key for request, _, _ in results]
    assert {11, 14, 12, 8, 9, 13} <= set(apis)  # join, sync, heartbeat, commit, fetch, leave
    for request, kafka, ours in results:
        assert ours == kafka, f"#{request.seq:04d} api {request.api_key} v{request.api_version}"


def test_librdkafka_sequence_has_kafkas_error_codes() -> None:
    # README: NOT_COORDINATOR twice, MEMBER_ID_REQUIRED, then success, generation 1.
    joins = [
        (kafka["error_code"], kafka["generation_id"])
        for request, kafka, _ in Replay("golden-rdk-consumer").run()
        if request.api_key == 11
    ]
    assert joins == [(16, -1), (16, -1), (79, -1), (0, 1)]


def _written(replay: Replay) -> list[tuple[object, object]]:
    records = []
    for _, batch_bytes in replay.batches:
        for batch in read_log(batch_bytes):
            assert isinstance(batch, RecordBatch)
            records.extend(decode_record(r) for r in batch.records)
    return [(r.key, r.value) for r in records]


def test_writes_follow_kafkas_pattern_for_a_subscribed_group() -> None:
    """As golden __consumer_offsets-17 shows for golden-billing: an empty group
    record (protocol type "", generation 0), the generation-1 record with the
    member and its assignment, the commits, then generation 2, empty, protocol
    and leader null, after the member left."""
    replay = Replay("golden-rdk-consumer")
    replay.run()
    written = _written(replay)
    kinds = [type(key).__name__ for key, _ in written]
    assert kinds == ["GroupMetadataKey", "GroupMetadataKey", "OffsetCommitKey", "GroupMetadataKey"]
    (k0, v0), (k1, v1), (k2, v2), (k3, v3) = written
    assert all(isinstance(k, GroupMetadataKey) for k in (k0, k1, k3))
    assert isinstance(v0, GroupMetadataValue) and isinstance(v1, GroupMetadataValue)
    assert isinstance(v3, GroupMetadataValue)
    assert (v0.protocol_type, v0.generation, v0.protocol, v0.leader, v0.members) == (
        "",
        0,
        None,
        None,
        (),
    )
    assert (v1.protocol_type, v1.generation, v1.protocol) == ("consumer", 1, "range")
    (member,) = v1.members
    assert (
        v1.leader == member.member_id == "golden-rdk-consumer-0ad5fa2c-0833-44ff-bb94-40b5bd68f19a"
    )
    assert (member.session_timeout, member.rebalance_timeout) == (6000, 300000)
    assert isinstance(k2, OffsetCommitKey) and isinstance(v2, OffsetCommitValue)
    assert (k2.topic, k2.partition, v2.offset, v2.leader_epoch, v2.metadata, v2.version) == (
        "wire-rd-events",
        0,
        6,
        0,
        "",
        3,
    )
    assert (v3.protocol_type, v3.generation, v3.protocol, v3.leader, v3.members) == (
        "consumer",
        2,
        None,
        None,
        (),
    )
    assert {partition for partition, _ in replay.batches} == {
        replay.coordinator.partition_for("wire-rd-group")
    }


def test_kafka_python_leader_rejoin_makes_generation_2() -> None:
    generations = [
        ours["generation_id"]
        for request, _, ours in Replay("golden-kpy-consumer").run()
        if request.api_key == 11
    ]
    assert generations == [-1, 1, 2]


def test_group_state_survives_a_restart_from_the_written_records(tmp_path: Path) -> None:
    replay = Replay("golden-rdk-consumer")
    replay.run()
    partition = replay.coordinator.partition_for("wire-rd-group")
    records = [
        record
        for _, data in replay.batches
        for batch in read_log(data)
        if isinstance(batch, RecordBatch)
        for record in batch.records
    ]
    restarted = GroupCoordinator(replay.clock, lambda p, b: None)
    restarted.load(partition, records)
    fetched = restarted.fetch_offsets("wire-rd-group", [("wire-rd-events", 0)])
    assert fetched.offsets["wire-rd-events", 0].offset == 6
    assert restarted.committed("wire-rd-group") == replay.coordinator.committed("wire-rd-group")
    described = restarted.describe_group("wire-rd-group")
    assert (described.state, described.protocol_type, described.members) == (
        "Empty",
        "consumer",
        (),
    )
