"""Hand decoding of the group-API frames in fixtures/golden/wire/frames.jsonl.

Only what the coordinator tests need: the requests librdkafka and kafka-python
sent (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch)
and Kafka 4.0's responses, at the versions they used. Layouts follow Kafka's
message specs; flexible versions (JoinGroup 6+, SyncGroup 4+, Heartbeat 4+,
LeaveGroup 4+, OffsetCommit 8+, OffsetFetch 6+) use compact strings, bytes and
arrays, tagged fields, request header v2 and response header v1. Every decoder
must consume its frame exactly, which checks the layouts against the bytes.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FLEXIBLE_FROM = {8: 8, 9: 6, 11: 6, 12: 4, 13: 4, 14: 4}
GROUP_APIS = tuple(FLEXIBLE_FROM)


@dataclass
class Frame:
    seq: int
    direction: str
    conn: int
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str
    ts_ms: int
    data: bytes

    @property
    def flexible(self) -> bool:
        return self.api_version >= FLEXIBLE_FROM.get(self.api_key, 1 << 15)


def load_frames(path: Path, client_id: str) -> list[Frame]:
    """The group-API frames of one client, in recording order."""
    frames = []
    for line in path.read_text().splitlines():
        raw = json.loads(line)
        if raw["client_id"] == client_id and raw["api_key"] in GROUP_APIS:
            frames.append(
                Frame(
                    raw["seq"],
                    raw["dir"],
                    raw["conn"],
                    raw["api_key"],
                    raw["api_version"],
                    raw["correlation_id"],
                    raw["client_id"],
                    raw["ts_ms"],
                    bytes.fromhex(raw["hex"]),
                )
            )
    return frames


def exchanges(frames: list[Frame]) -> list[tuple[Frame, Frame]]:
    """(request, response) pairs in request order; requests never answered are left out."""
    answers = {(f.conn, f.correlation_id): f for f in frames if f.direction == "response"}
    return [
        (f, answers[f.conn, f.correlation_id])
        for f in frames
        if f.direction == "request" and (f.conn, f.correlation_id) in answers
    ]


class Reader:
    """A cursor over one frame's bytes, classic or flexible."""

    def __init__(self, data: bytes, flexible: bool) -> None:
        self.data = data
        self.pos = 0
        self.flexible = flexible

    def _take(self, fmt: str) -> Any:
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return value

    def i8(self) -> int:
        return int(self._take(">b"))

    def i16(self) -> int:
        return int(self._take(">h"))

    def i32(self) -> int:
        return int(self._take(">i"))

    def i64(self) -> int:
        return int(self._take(">q"))

    def uvarint(self) -> int:
        value = shift = 0
        while True:
            byte = self.data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    def _length(self, width: str) -> int:
        return self.uvarint() - 1 if self.flexible else int(self._take(width))

    def bytes_(self) -> bytes | None:
        length = self._length(">i")
        if length < 0:
            return None
        out = self.data[self.pos : self.pos + length]
        self.pos += length
        return out

    def string(self) -> str | None:
        length = self._length(">h")
        if length < 0:
            return None
        out = self.data[self.pos : self.pos + length].decode()
        self.pos += length
        return out

    def text(self) -> str:
        value = self.string()
        assert value is not None
        return value

    def array(self, element: Callable[[], Any]) -> list[Any] | None:
        count = self._length(">i")
        return None if count < 0 else [element() for _ in range(count)]

    def items(self, element: Callable[[], Any]) -> list[Any]:
        values = self.array(element)
        assert values is not None
        return values

    def tags(self) -> None:
        if self.flexible:
            for _ in range(self.uvarint()):
                self.uvarint()
                self.pos += self.uvarint()

    def struct(self, read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        value = read()
        self.tags()
        return value

    def done(self) -> None:
        assert self.pos == len(self.data), f"{len(self.data) - self.pos} bytes left"


def request_body(frame: Frame) -> Reader:
    """A reader positioned after the size prefix and the request header."""
    reader = Reader(frame.data, False)
    reader.i32()
    reader.i16(), reader.i16(), reader.i32(), reader.string()  # key, version, corr, client
    reader.flexible = frame.flexible
    reader.tags()
    return reader


def response_body(frame: Frame) -> Reader:
    reader = Reader(frame.data, frame.flexible)
    reader.i32()
    reader.i32()  # correlation id
    reader.tags()
    return reader


def _join_request(r: Reader, v: int) -> dict[str, Any]:
    out = {"group_id": r.text(), "session_timeout_ms": r.i32(), "rebalance_timeout_ms": r.i32()}
    out["member_id"] = r.text()
    out["group_instance_id"] = r.string()
    out["protocol_type"] = r.text()
    out["protocols"] = r.items(lambda: r.struct(lambda: {"name": r.text(), "metadata": r.bytes_()}))
    return out


def _join_response(r: Reader, v: int) -> dict[str, Any]:
    out = {"throttle": r.i32(), "error_code": r.i16(), "generation_id": r.i32()}
    out["protocol_type"] = r.string() if v >= 7 else None
    out["protocol_name"] = r.string()
    out["leader"] = r.text()
    out["member_id"] = r.text()
    member = lambda: r.struct(  # noqa: E731
        lambda: {"member_id": r.text(), "group_instance_id": r.string(), "metadata": r.bytes_()}
    )
    out["members"] = r.items(member)
    return out


def _sync_request(r: Reader, v: int) -> dict[str, Any]:
    out: dict[str, Any] = {"group_id": r.text(), "generation_id": r.i32(), "member_id": r.text()}
    out["group_instance_id"] = r.string()
    out["protocol_type"] = r.string() if v >= 5 else None
    out["protocol_name"] = r.string() if v >= 5 else None
    out["assignments"] = r.items(
        lambda: r.struct(lambda: {"member_id": r.text(), "assignment": r.bytes_()})
    )
    return out


def _sync_response(r: Reader, v: int) -> dict[str, Any]:
    out: dict[str, Any] = {"throttle": r.i32(), "error_code": r.i16()}
    out["protocol_type"] = r.string() if v >= 5 else None
    out["protocol_name"] = r.string() if v >= 5 else None
    out["assignment"] = r.bytes_()
    return out


def _heartbeat_request(r: Reader, v: int) -> dict[str, Any]:
    out: dict[str, Any] = {"group_id": r.text(), "generation_id": r.i32(), "member_id": r.text()}
    out["group_instance_id"] = r.string()
    return out


def _leave_request(r: Reader, v: int) -> dict[str, Any]:
    group_id = r.text()
    if v < 3:
        return {"group_id": group_id, "members": [{"member_id": r.text()}]}
    member = lambda: r.struct(  # noqa: E731
        lambda: {
            "member_id": r.text(),
            "group_instance_id": r.string(),
            **({"reason": r.string()} if v >= 5 else {}),
        }
    )
    return {"group_id": group_id, "members": r.items(member)}


def _leave_response(r: Reader, v: int) -> dict[str, Any]:
    out: dict[str, Any] = {"throttle": r.i32(), "error_code": r.i16()}
    if v >= 3:
        out["members"] = r.items(
            lambda: r.struct(
                lambda: {"member_id": r.text(), "group_instance_id": r.string(), "error": r.i16()}
            )
        )
    return out


def _commit_request(r: Reader, v: int) -> dict[str, Any]:
    out: dict[str, Any] = {"group_id": r.text(), "generation_id": r.i32(), "member_id": r.text()}
    out["group_instance_id"] = r.string()
    partition = lambda: r.struct(  # noqa: E731
        lambda: {"partition": r.i32(), "offset": r.i64(), "epoch": r.i32(), "metadata": r.string()}
    )
    out["topics"] = r.items(
        lambda: r.struct(lambda: {"name": r.text(), "partitions": r.items(partition)})
    )
    return out


def _commit_response(r: Reader, v: int) -> dict[str, Any]:
    partition = lambda: r.struct(lambda: {"partition": r.i32(), "error": r.i16()})  # noqa: E731
    topic = lambda: r.struct(lambda: {"name": r.text(), "partitions": r.items(partition)})  # noqa: E731
    return {"throttle": r.i32(), "topics": r.items(topic)}


def _fetch_request(r: Reader, v: int) -> dict[str, Any]:
    topic = lambda: r.struct(lambda: {"name": r.text(), "partitions": r.items(r.i32)})  # noqa: E731

    def group() -> dict[str, Any]:
        out: dict[str, Any] = {"group_id": r.text()}
        if v >= 9:
            out["member_id"], out["member_epoch"] = r.string(), r.i32()
        out["topics"] = r.array(topic)
        return out

    return {"groups": r.items(lambda: r.struct(group)), "require_stable": r.i8()}


def _fetch_response(r: Reader, v: int) -> dict[str, Any]:
    partition = lambda: r.struct(  # noqa: E731
        lambda: {
            "partition": r.i32(),
            "offset": r.i64(),
            "epoch": r.i32(),
            "metadata": r.string(),
            "error": r.i16(),
        }
    )
    topic = lambda: r.struct(lambda: {"name": r.text(), "partitions": r.items(partition)})  # noqa: E731
    group = lambda: r.struct(  # noqa: E731
        lambda: {"group_id": r.text(), "topics": r.items(topic), "error_code": r.i16()}
    )
    return {"throttle": r.i32(), "groups": r.items(group)}


def _error_only(r: Reader, v: int) -> dict[str, Any]:
    return {"throttle": r.i32(), "error_code": r.i16()}


_REQUESTS = {
    11: _join_request,
    14: _sync_request,
    12: _heartbeat_request,
    13: _leave_request,
    8: _commit_request,
    9: _fetch_request,
}
_RESPONSES = {
    11: _join_response,
    14: _sync_response,
    12: _error_only,
    13: _leave_response,
    8: _commit_response,
    9: _fetch_response,
}


def decode(frame: Frame) -> dict[str, Any]:
    """The frame's body as a dict; the whole frame must be consumed."""
    if frame.direction == "request":
        reader = request_body(frame)
        out = _REQUESTS[frame.api_key](reader, frame.api_version)
    else:
        reader = response_body(frame)
        out = _RESPONSES[frame.api_key](reader, frame.api_version)
    reader.tags()
    reader.done()
    return out
