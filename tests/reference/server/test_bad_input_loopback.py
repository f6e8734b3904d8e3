"""Bad input over real sockets: the reference broker answers as Kafka's network layer does.

Each case runs the same scenario against an :class:`EmbeddedBroker` on port 0
with a manual clock (so nothing periodic rewrites a file behind the test's back):

1. a well-behaved client ``good`` creates a topic, produces one batch and parks
   a Fetch long-poll (``max_wait_ms`` 2000, ``min_bytes`` 1) past the end of the
   log, so it has a request in flight while the bad client misbehaves;
2. every file under the log dir is hashed;
3. a raw socket opened *after* ``good`` sends the bad bytes; the test asserts
   the exact outcome Kafka gives: the connection closed without a reply
   (``recv`` returns ``b""``), or, for ApiVersions at an unknown version, the
   KIP-511 answer (v0 body, UNSUPPORTED_VERSION 35, ApiVersions' own range);
4. the log dir hashes are unchanged and the broker logged the event;
5. a third client produces a batch; ``good``'s parked fetch completes with
   exactly that batch, and ``good`` then produces and reads back everything.

What Kafka does with each input (``SocketServer.Processor``, ``NetworkReceive``,
``RequestContext.parseRequest``): a size prefix < 0 or > socket.request.max.bytes
(104857600) is an ``InvalidReceiveException`` as soon as the 4 bytes are read;
a header that does not parse, an unknown API key, a version of any API but
ApiVersions outside its range, and a body that does not parse for its version
are ``InvalidRequestException``; all of these close the connection without a
response. A stream that ends inside a frame is just a disconnect.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import random
import socket
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from lethe_formats.model import RecordBatch
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.envelope import decode_response, encode_request
from lethe_formats.protocol.framing import FrameBuffer, frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
)
from lethe_formats.protocol.messages.create_topics import (
    CreatableTopic,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from lethe_formats.protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from lethe_formats.protocol.schema import Struct, message_info
from lethe_formats.records import RecordSpec, build_batch, decode_log
from lethe_reference.clock import ManualClock
from lethe_reference.embedded import EmbeddedBroker

START_MS = 1_700_000_000_000
TIMEOUT_S = 5.0
TOPIC = "bad-input"
MAX_REQUEST_BYTES = 104_857_600  # socket.request.max.bytes default
CONNECTION_LOGGER = "lethe_reference.protocol.connection"


class Client:
    """A well-behaved blocking client: framed requests out, decoded responses in."""

    def __init__(self, bootstrap: str) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
        self.frames = FrameBuffer()
        self.pending: dict[int, tuple[int, int]] = {}
        self.correlation = itertools.count(1)

    def send(self, body: Struct, version: int) -> int:
        key = message_info(type(body)).api_key
        assert key is not None
        correlation_id = next(self.correlation)
        self.pending[correlation_id] = (key, version)
        header = RequestHeader(key, version, correlation_id, "good-client")
        self.sock.sendall(frame(encode_request(header, body)))
        return correlation_id

    def receive(self) -> tuple[int, Struct]:
        """The next response (correlation id, body); bounded by the socket timeout."""
        while (payload := self.frames.next_frame()) is None:
            chunk = self.sock.recv(65536)
            assert chunk, "the broker closed a well-behaved connection"
            self.frames.feed(chunk)
        (correlation_id,) = struct.unpack_from(">i", payload)
        key, version = self.pending.pop(correlation_id)
        return correlation_id, decode_response(key, version, payload)[1]

    def call(self, body: Struct, version: int) -> Struct:
        sent = self.send(body, version)
        correlation_id, response = self.receive()
        assert correlation_id == sent
        return response

    def close(self) -> None:
        self.sock.close()


def batch_of(*values: bytes) -> bytes:
    specs = [RecordSpec(key=b"k-" + v, value=v, timestamp=START_MS) for v in values]
    return build_batch(specs, base_offset=0)


def produce(client: Client, *values: bytes) -> int:
    """Produce one batch (acks=-1, v9); returns its base offset."""
    data = (TopicProduceData(TOPIC, (PartitionProduceData(0, batch_of(*values)),)),)
    response = client.call(ProduceRequest(acks=-1, timeout_ms=5000, topic_data=data), 9)
    assert isinstance(response, ProduceResponse)
    (answer,) = response.responses[0].partition_responses
    assert answer.error_code == 0, answer
    return answer.base_offset


def fetch_request(offset: int, max_wait_ms: int) -> FetchRequest:
    partition = FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)
    return FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        topics=(FetchTopic(topic=TOPIC, partitions=(partition,)),),
    )


def fetched(response: Struct) -> tuple[int, int, list[tuple[int, bytes | None]]]:
    """(error code, high watermark, [(offset, value)]) of the one partition fetched."""
    assert isinstance(response, FetchResponse)
    (topic,) = response.responses
    (part,) = topic.partitions
    records = []
    for entry in decode_log(part.records or b""):
        assert isinstance(entry, RecordBatch)
        records += [(entry.offset_of(r), r.value) for r in entry.records]
    return part.error_code, part.high_watermark, records


def snapshot(log_dir: Path) -> dict[str, str]:
    return {
        str(path.relative_to(log_dir)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(log_dir.rglob("*"))
        if path.is_file()
    }


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the broker sends until it closes; fails if it does not close in time."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass  # closed with our bytes unread: a reset is still a close without a reply
    except TimeoutError:
        pytest.fail(f"the broker did not close the connection within {TIMEOUT_S}s")
    return received


def raw_connection(bootstrap: str) -> socket.socket:
    host, port = bootstrap.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=TIMEOUT_S)


# --- the bad inputs -----------------------------------------------------------------------


def header(api_key: int, version: int, correlation_id: int = 77) -> bytes:
    """Request header v1 (client id "bad"); v2 adds an empty tagged-field section."""
    return struct.pack(">hhih", api_key, version, correlation_id, 3) + b"bad"


@dataclass(frozen=True)
class Bad:
    """Bytes a misbehaving client sends; ``then`` checks the outcome on its socket."""

    data: bytes
    then: Callable[[socket.socket], None]
    #: (logger, level, text) of the line the broker must log.
    logged: tuple[str, int, str]


def closes(sock: socket.socket) -> None:
    assert read_until_closed(sock) == b""


def half_closes_then_closes(sock: socket.socket) -> None:
    sock.shutdown(socket.SHUT_WR)
    assert read_until_closed(sock) == b""


def waits_for_the_rest_then_closes_on_half_close(sock: socket.socket) -> None:
    # An incomplete frame is not an error yet: Kafka waits for the rest of it.
    sock.settimeout(0.2)
    with pytest.raises(TimeoutError):  # neither an answer nor a close (recv would return)
        sock.recv(1, socket.MSG_PEEK)
    sock.settimeout(TIMEOUT_S)
    half_closes_then_closes(sock)


def answers_api_versions_v0(sock: socket.socket) -> None:
    buffer = FrameBuffer()
    while (payload := buffer.next_frame()) is None:
        chunk = sock.recv(65536)
        assert chunk, "closed instead of answering"
        buffer.feed(chunk)
    # Response header v0 and an ApiVersions v0 body (KIP-511), whatever version was asked.
    response_header, body = decode_response(ApiKey.API_VERSIONS, 0, payload)
    assert response_header.correlation_id == 77
    assert body == ApiVersionsResponse(
        error_code=35, api_keys=(ApiVersion(ApiKey.API_VERSIONS, 0, 4),)
    )
    # The connection stays open: the client retries at a version it found there.
    retry = RequestHeader(ApiKey.API_VERSIONS, 3, 78, "bad")
    sock.sendall(frame(encode_request(retry, ApiVersionsRequest("bad", "1"))))
    buffer = FrameBuffer()
    while (payload := buffer.next_frame()) is None:
        buffer.feed(sock.recv(65536))
    _, retried = decode_response(ApiKey.API_VERSIONS, 3, payload)
    assert isinstance(retried, ApiVersionsResponse)
    assert retried.error_code == 0
    assert ApiKey.FETCH in {v.api_key for v in retried.api_keys}


def protocol_error(kind: str) -> tuple[str, int, str]:
    return (CONNECTION_LOGGER, logging.INFO, f"({kind})")


RANDOM_PAYLOAD = random.Random(20240611).randbytes(60)

BAD_INPUTS = {
    "random-garbage-frame": Bad(frame(RANDOM_PAYLOAD), closes, protocol_error("unknown-api")),
    "negative-size": Bad(struct.pack(">i", -2) + b"nonsense", closes, protocol_error("frame-size")),
    "size-over-socket.request.max.bytes": Bad(
        struct.pack(">i", MAX_REQUEST_BYTES + 1), closes, protocol_error("frame-size")
    ),
    "truncated-frame-then-half-close": Bad(
        struct.pack(">i", 100) + header(ApiKey.METADATA, 1),
        waits_for_the_rest_then_closes_on_half_close,
        (CONNECTION_LOGGER, logging.INFO, "incomplete frame"),
    ),
    "truncated-header": Bad(frame(b"\x00\x03\x00"), closes, protocol_error("header")),
    "unknown-api-key-999": Bad(frame(header(999, 0)), closes, protocol_error("unknown-api")),
    "metadata-v99": Bad(
        frame(header(ApiKey.METADATA, 99) + b"\x00" * 8),
        closes,
        protocol_error("unsupported-version"),
    ),
    "api-versions-v99": Bad(
        frame(header(ApiKey.API_VERSIONS, 99) + b"\x00 not parsed"),
        answers_api_versions_v0,
        (CONNECTION_LOGGER, logging.INFO, "ApiVersions v99"),
    ),
    "metadata-v1-body-short": Bad(
        frame(header(ApiKey.METADATA, 1) + struct.pack(">i", 5)), closes, protocol_error("body")
    ),
    "produce-v9-endless-varint": Bad(
        frame(header(ApiKey.PRODUCE, 9) + b"\x00" + b"\xff" * 12), closes, protocol_error("body")
    ),
}


# --- the scenario -------------------------------------------------------------------------


@pytest.fixture
def kafka(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker(tmp_path / "logs", clock=ManualClock(START_MS)) as broker:
        yield broker


@pytest.fixture
def good(kafka: EmbeddedBroker) -> Iterator[Client]:
    """A client with a topic, one batch at offset 0 and a Fetch parked at offset 1."""
    client = Client(kafka.bootstrap)
    created = client.call(CreateTopicsRequest((CreatableTopic(TOPIC, 1, 1, (), ()),)), 7)
    assert isinstance(created, CreateTopicsResponse)
    assert created.topics[0].error_code == 0
    assert produce(client, b"before") == 0
    client.send(fetch_request(1, max_wait_ms=2000), 12)
    yield client
    client.close()


def test_random_garbage_frame_names_an_unknown_api_key() -> None:
    # The garbage case is only the unknown-key close because of what the seed produced.
    (api_key,) = struct.unpack_from(">h", RANDOM_PAYLOAD)
    assert api_key not in {int(k) for k in ApiKey}


@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_bad_input_gets_kafkas_outcome_and_harms_nobody(
    case: str, kafka: EmbeddedBroker, good: Client, caplog: pytest.LogCaptureFixture
) -> None:
    bad = BAD_INPUTS[case]
    caplog.set_level(logging.DEBUG, logger="lethe_reference")
    before = snapshot(kafka.log_dir)

    with raw_connection(kafka.bootstrap) as sock:
        sock.sendall(bad.data)
        bad.then(sock)

    assert snapshot(kafka.log_dir) == before
    logger, level, text = bad.logged
    assert any(
        r.name == logger and r.levelno == level and text in r.getMessage() for r in caplog.records
    ), [(r.name, r.levelname, r.getMessage()) for r in caplog.records]

    other = Client(kafka.bootstrap)
    assert produce(other, b"during") == 1
    _, parked = good.receive()  # the long poll in flight since before the bad input
    assert fetched(parked) == (0, 2, [(1, b"during")])
    assert produce(good, b"after") == 2
    assert fetched(good.call(fetch_request(0, max_wait_ms=0), 12)) == (
        0,
        3,
        [(0, b"before"), (1, b"during"), (2, b"after")],
    )
    other.close()


def test_random_byte_streams_each_close_without_a_reply(
    kafka: EmbeddedBroker, good: Client
) -> None:
    rng = random.Random(7)
    before = snapshot(kafka.log_dir)
    for _ in range(40):
        with raw_connection(kafka.bootstrap) as sock:
            sock.sendall(rng.randbytes(rng.randint(1, 300)))
            half_closes_then_closes(sock)
    assert snapshot(kafka.log_dir) == before
    other = Client(kafka.bootstrap)
    assert produce(other, b"still-here") == 1
    _, parked = good.receive()
    assert fetched(parked) == (0, 2, [(1, b"still-here")])
    other.close()
