"""A proxy in front of a real (reference) broker that misbehaves on chosen APIs.

Third-party brokers answer most requests well and a few badly: Tansu 0.6.0
closes the connection on DeleteRecords, refuses idempotent batches with
UNKNOWN_PRODUCER_ID. To see the runner grade such a target, the tests put
:class:`MisbehavingProxy` in front of lethe's broker: every request is
forwarded and its answer relayed, except those of an API named in
``behaviours``, which get

``close``             the connection closed instead of an answer
``garbage``           a frame with the right correlation id and bytes that decode as nothing
``other-id``          a correct-looking frame with another request's correlation id
``hang``              no answer at all (the connection stays open)
``unknown-producer``  (Produce only) UNKNOWN_PRODUCER_ID for a batch with a producer id,
                      as Tansu answers a producer id it did not hand out; others forwarded
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Mapping

from fake_broker import LoopbackServer, response_frame
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import decode
from lethe_formats.protocol.envelope import decode_request_header
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.framing import FrameBuffer, frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceResponse,
)

#: byte position of producerId in a magic 2 record batch (v2 batch header)
_PRODUCER_ID_AT = 43


class MisbehavingProxy(LoopbackServer):
    """See the module docstring; ``upstream`` is ``(host, port)``; a context manager."""

    def __init__(self, upstream: tuple[str, int], behaviours: Mapping[int, str]) -> None:
        super().__init__()
        self.upstream = upstream
        self.behaviours = dict(behaviours)
        self.misbehaved: list[tuple[str, str]] = []
        self.address = f"127.0.0.1:{self.port}"

    def _talk(self, client: socket.socket) -> None:
        """Relay each request upstream and its answer back, or misbehave."""
        client.settimeout(0.2)
        with client, socket.create_connection(self.upstream, timeout=30) as upstream:
            requests, answers = FrameBuffer(), FrameBuffer()
            while not self._stop.is_set():
                try:
                    data = client.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                requests.feed(data)
                for payload in requests.frames():
                    reply = self._answer(payload, upstream, answers)
                    if reply is None:
                        return
                    client.sendall(reply)

    def _answer(
        self, payload: bytes, upstream: socket.socket, answers: FrameBuffer
    ) -> bytes | None:
        header, offset = decode_request_header(payload)
        behaviour = self.behaviours.get(header.api_key)
        if behaviour == "unknown-producer" and not _idempotent(header, payload[offset:]):
            behaviour = None
        if behaviour is None:
            upstream.sendall(frame(payload))
            return frame(_one_frame(upstream, answers))
        self.misbehaved.append((ApiKey(header.api_key).name, behaviour))
        if behaviour == "close":
            return None
        if behaviour == "garbage":
            return frame(struct.pack(">i", header.correlation_id) + b"\xff\xfe\xfd")
        if behaviour == "other-id":
            upstream.sendall(frame(payload))
            answer = _one_frame(upstream, answers)
            return frame(struct.pack(">i", header.correlation_id + 1000) + answer[4:])
        if behaviour == "hang":
            return b""
        assert behaviour == "unknown-producer", behaviour
        return _unknown_producer(header, payload[offset:])


def _one_frame(upstream: socket.socket, answers: FrameBuffer) -> bytes:
    while (found := answers.next_frame()) is None:
        data = upstream.recv(65536)
        if not data:
            raise ConnectionError("the upstream broker closed the connection")
        answers.feed(data)
    return found


def _idempotent(header: RequestHeader, body: bytes) -> bool:
    request = decode(ProduceRequest, header.api_version, body)
    for topic in request.topic_data:
        for partition in topic.partition_data:
            records = partition.records or b""
            if len(records) >= _PRODUCER_ID_AT + 8:
                (producer_id,) = struct.unpack_from(">q", records, _PRODUCER_ID_AT)
                if producer_id >= 0:
                    return True
    return False


def _unknown_producer(header: RequestHeader, body: bytes) -> bytes:
    request = decode(ProduceRequest, header.api_version, body)
    topics = tuple(
        TopicProduceResponse(
            name=topic.name,
            partition_responses=tuple(
                PartitionProduceResponse(
                    index=p.index, error_code=ErrorCode.UNKNOWN_PRODUCER_ID, base_offset=-1
                )
                for p in topic.partition_data
            ),
        )
        for topic in request.topic_data
    )
    answer: bytes = response_frame(header, ProduceResponse(responses=topics))
    return answer
