"""Fetch record sets leave as file regions: ``sendfile`` on plain TCP, bytes on TLS and
in-process, the same frame either way.

Expected values come from Kafka: a Fetch's records are ``FileRecords.slice`` of the
segment, i.e. the ``.log`` file's bytes from the batch holding the fetch offset
(``LogSegment.read``); a region whose file was truncated before it was written makes
``FileRecords.writeTo`` throw and the network layer close the connection (no short
frame); a segment deleted meanwhile stays readable through the open file (Kafka
deletes the renamed file only after ``file.delete.delay.ms``, the channel open).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.envelope import decode_response, encode_request
from lethe_formats.protocol.framing import frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
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
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.handlers import dispatch
from lethe_reference.handlers.partition_ops import read as read_module
from lethe_reference.protocol.listeners import ListenerSecurity
from lethe_reference.protocol.loopback import LoopbackClient
from lethe_reference.protocol.session import BrokerSession
from lethe_reference.retention.policies import delete_old_segments
from lethe_reference.server import BrokerServer
from lethe_reference.server.output import ConnectionOutput
from lethe_reference.storage.truncation import truncate_to

TOPIC = "zero-copy"
#: three batches of ~40 KiB: every fetch below is a region (>= 32 KiB)
BATCHES = 3
VALUE = bytes(range(256)) * 160


def _request(body: Struct, version: int, correlation_id: int) -> bytes:
    key = message_info(type(body)).api_key
    assert key is not None
    return frame(encode_request(RequestHeader(key, version, correlation_id, "zc"), body))


def _fetch(offset: int = 0, *, max_wait_ms: int = 0, partition_max_bytes: int = 1 << 20) -> Any:
    partition = FetchPartition(
        partition=0, fetch_offset=offset, partition_max_bytes=partition_max_bytes
    )
    return FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        max_bytes=0x7FFFFFFF,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=(FetchTopic(topic=TOPIC, partitions=(partition,)),),
    )


def _produce(client: LoopbackClient, base: int, count: int) -> None:
    for index in range(count):
        batch = build_batch([RecordSpec(b"k%d" % (base + index), VALUE)], base_offset=0)
        data = (TopicProduceData(TOPIC, (PartitionProduceData(0, batch),)),)
        answer = client.request(ProduceRequest(acks=-1, timeout_ms=30000, topic_data=data), 9)
        assert isinstance(answer, ProduceResponse)
        assert answer.responses[0].partition_responses[0].error_code == 0


def _broker(tmp_path: Path, configs: dict[str, str] | None = None) -> Broker:
    broker = Broker(tmp_path / "logs", clock=ManualClock(1_700_000_000_000), durable=False)
    broker.startup()
    dispatch.load_handlers()
    broker.create_topic(TOPIC, 1, configs)
    _produce(LoopbackClient(broker), 0, BATCHES)
    return broker


def _segment_bytes(broker: Broker, base_offset: int = 0) -> bytes:
    return (broker.log_manager.log_dir / f"{TOPIC}-0" / f"{base_offset:020d}.log").read_bytes()


async def _read_frame(reader: asyncio.StreamReader) -> bytes:
    (size,) = struct.unpack(">i", await reader.readexactly(4))
    return await reader.readexactly(size)


def _records(payload: bytes, version: int) -> bytes:
    _, response = decode_response(ApiKey.FETCH, version, payload)
    assert isinstance(response, FetchResponse)
    records = response.responses[0].partitions[0].records
    assert isinstance(records, bytes)
    return records


def _loopback_frame(broker: Broker, request: Struct, version: int, correlation_id: int) -> bytes:
    """The same request through the in-process client: the bytes path."""
    client = LoopbackClient(broker, client_id="zc")
    client.send_raw(_request(request, version, correlation_id), expect=(correlation_id, 1, version))
    (payload,) = client.raw_frames()
    return payload


class SendfileSpy:
    """Counts loop.sendfile calls on the running loop (the zero-copy path was taken)."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.sizes: list[int] = []
        original = loop.sendfile

        async def spy(transport: Any, file: Any, offset: int = 0, count: Any = None, **kw: Any):  # type: ignore[no-untyped-def]
            self.sizes.append(count)
            return await original(transport, file, offset, count, **kw)

        loop.sendfile = spy  # type: ignore[method-assign]


@pytest.mark.parametrize("sendfile", [True, False], ids=["sendfile", "default-copies"])
def test_a_fetch_over_plain_tcp_is_the_same_frame_with_or_without_sendfile(
    tmp_path: Path, sendfile: bool
) -> None:
    """``sendfile=True`` (``lethe broker --sendfile``) sends the record sets with
    sendfile; the default reads them and writes bytes: the same frames either way."""
    broker = _broker(tmp_path)
    segment = _segment_bytes(broker)

    async def scenario() -> tuple[list[bytes], list[bytes], list[int]]:
        server = BrokerServer(broker, "127.0.0.1", 0, sendfile=sendfile)
        await server.start()
        spy = SendfileSpy()
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        for version, correlation_id in ((12, 7), (11, 8)):
            writer.write(_request(_fetch(), version, correlation_id))
        await writer.drain()
        sent = [await _read_frame(reader), await _read_frame(reader)]
        expected = [_loopback_frame(broker, _fetch(), v, c) for v, c in ((12, 7), (11, 8))]
        writer.close()
        await server.stop()
        return sent, expected, spy.sizes

    sent, expected, sizes = asyncio.run(scenario())
    # each record set left by sendfile, whole; or none did
    assert sizes == ([len(segment), len(segment)] if sendfile else [])
    assert sent == expected  # byte for byte what the bytes path (loopback) answers
    for version, correlation_id, payload in ((12, 7, sent[0]), (11, 8, sent[1])):
        assert struct.unpack_from(">i", payload)[0] == correlation_id
        assert _records(payload, version) == segment  # FileRecords.slice from position 0


def test_pipelined_and_deferred_responses_keep_request_order(tmp_path: Path) -> None:
    """A parked Fetch (muted connection) completed by another connection's Produce, then
    the ApiVersions pipelined behind it: both leave in request order."""
    broker = _broker(tmp_path)

    async def scenario() -> tuple[bytes, bytes]:
        server = BrokerServer(broker, "127.0.0.1", 0, sendfile=True)
        await server.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        waiting = _fetch(BATCHES, max_wait_ms=600_000)  # at the log end: parked
        writer.write(_request(waiting, 12, 1) + _request(ApiVersionsRequest("zc", "1"), 3, 2))
        await writer.drain()
        first_read = asyncio.ensure_future(_read_frame(reader))
        while not len(broker.purgatories.fetch):  # the fetch is parked
            await asyncio.sleep(0)
        producer, producer_writer = await asyncio.open_connection("127.0.0.1", server.port)
        batch = build_batch([RecordSpec(b"late", VALUE)], base_offset=0)
        data = (TopicProduceData(TOPIC, (PartitionProduceData(0, batch),)),)
        producer_writer.write(
            _request(ProduceRequest(acks=-1, timeout_ms=30000, topic_data=data), 9, 1)
        )
        await producer_writer.drain()
        await _read_frame(producer)
        first = await first_read
        second = await _read_frame(reader)
        for w in (writer, producer_writer):
            w.close()
        await server.stop()
        return first, second

    first, second = asyncio.run(scenario())
    assert struct.unpack_from(">i", first)[0] == 1
    assert struct.unpack_from(">i", second)[0] == 2
    records = _records(first, 12)
    assert records == _segment_bytes(broker)[-len(records) :]  # the late batch
    _, versions = decode_response(ApiKey.API_VERSIONS, 3, second)
    assert isinstance(versions, ApiVersionsResponse) and versions.error_code == 0


class Wire:
    """A session whose output is a real socket (zero copy), and the client's end of it.
    Nothing is written before the loop runs: the test acts on the storage in between."""

    def __init__(self, session: BrokerSession, output: ConnectionOutput, ends: Any) -> None:
        self.session, self.output = session, output
        self.ends = ends  # both streams of both ends: a dropped writer closes its end
        self.client = ends[1][0]

    @classmethod
    async def open(cls, broker: Broker) -> Wire:
        server_end, client_end = socket.socketpair()
        server = await asyncio.open_connection(sock=server_end)
        client = await asyncio.open_connection(sock=client_end)
        output = ConnectionOutput(server[1])
        session = BrokerSession(broker, 1, send=output.send, close=output.close, zero_copy=True)
        return cls(session, output, (server, client))

    async def received(self) -> bytes:
        """Everything the client gets until the broker closes (or a whole frame came)."""
        data = b""
        while True:
            try:
                chunk = await self.client.read(1 << 20)
            except ConnectionResetError:
                return data
            if not chunk:
                return data
            data += chunk
            if len(data) >= 4 and len(data) == 4 + struct.unpack_from(">i", data)[0]:
                return data


def test_a_segment_deleted_while_its_region_is_queued_is_still_sent_whole(
    tmp_path: Path,
) -> None:
    configs = {"segment.bytes": "50000", "file.delete.delay.ms": "0"}
    broker = _broker(tmp_path, configs)  # one ~41 KiB batch per segment
    log = broker.log(TOPIC, 0)
    assert log is not None and log.segments.base_offsets[:2] == [0, 1]
    first_segment = _segment_bytes(broker, 0)
    partition_dir = broker.log_manager.log_dir / f"{TOPIC}-0"

    async def scenario() -> tuple[bytes, list[str]]:
        wire = await Wire.open(broker)
        wire.session.receive_data(_request(_fetch(0), 12, 5))  # queued, not yet written
        deleter = LoopbackClient(broker)
        topics = (DeleteRecordsTopic(TOPIC, (DeleteRecordsPartition(0, 2),)),)
        deleter.request(DeleteRecordsRequest(topics=topics, timeout_ms=30000), 2)
        delete_old_segments(log)
        broker.run_due()  # file.delete.delay.ms=0: the files go now
        left = sorted(p.name for p in partition_dir.iterdir() if p.name.startswith("0" * 20))
        return await wire.received(), left

    payload, left = asyncio.run(scenario())
    assert left == []  # segment 0's files are gone from the directory
    assert log.log_start_offset == 2
    assert _records(payload[4:], 12) == first_segment  # yet its bytes went out whole


def test_a_region_truncated_before_it_is_sent_closes_the_connection_without_a_short_frame(
    tmp_path: Path,
) -> None:
    broker = _broker(tmp_path)  # three batches in one segment: the fetch reads all three
    log = broker.log(TOPIC, 0)
    assert log is not None
    whole = len(_segment_bytes(broker))

    async def scenario() -> tuple[bytes, bool]:
        wire = await Wire.open(broker)
        wire.session.receive_data(_request(_fetch(0), 12, 5))
        truncate_to(log, 1)  # a follower's truncation: the file keeps batch 0 only
        return await wire.received(), wire.output.closed

    received, closed = asyncio.run(scenario())
    assert len(_segment_bytes(broker)) < whole
    (size,) = struct.unpack_from(">i", received)
    assert size > whole  # the frame announced all three batches...
    assert len(received) < 4 + whole  # ...and the connection closed before any record
    assert closed


def test_tls_fetch_sends_the_records_as_bytes_and_the_same_frame(
    tmp_path: Path, tls_certs: Any
) -> None:
    broker = _broker(tmp_path)
    segment = _segment_bytes(broker)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(tls_certs.server_pem)
    client_context = ssl.create_default_context(cafile=str(tls_certs.ca))
    tls = ListenerSecurity(name="SSL", protocol="SSL")

    async def scenario() -> tuple[bytes, bytes, list[int]]:
        server = BrokerServer(
            broker,
            "127.0.0.1",
            0,
            listener=tls,
            tls_contexts={"SSL": server_context},
            sendfile=True,  # asked for, but TLS cannot: bytes
        )
        await server.start()
        spy = SendfileSpy()
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", server.port, ssl=client_context, server_hostname="localhost"
        )
        writer.write(_request(_fetch(), 12, 9))
        await writer.drain()
        sent = await _read_frame(reader)
        expected = _loopback_frame(broker, _fetch(), 12, 9)
        writer.close()
        await server.stop()
        return sent, expected, spy.sizes

    sent, expected, sizes = asyncio.run(scenario())
    assert sizes == []  # no sendfile through TLS
    assert sent == expected
    assert _records(sent, 12) == segment


def test_in_process_a_region_truncated_before_it_is_read_closes_with_nothing_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bytes path (loopback, TLS) reads every region of a response before sending
    any of it: a file truncated in between closes the connection, no frame at all."""
    broker = _broker(tmp_path)
    log = broker.log(TOPIC, 0)
    assert log is not None
    original = read_module.log_reads.read

    def read_then_truncate(*args: Any, **kwargs: Any) -> Any:
        data = original(*args, **kwargs)
        truncate_to(log, 1)  # between the read and the send, as a follower would
        return data

    monkeypatch.setattr(read_module.log_reads, "read", read_then_truncate)
    client = LoopbackClient(broker)
    client.send(_fetch(), 12)
    assert client.closed
    assert client.raw_frames() == []
    monkeypatch.undo()
    fresh = LoopbackClient(broker)  # the broker serves on
    response = fresh.request(_fetch(), 12)
    assert isinstance(response, FetchResponse)
    assert response.responses[0].partitions[0].records == _segment_bytes(broker)


def test_lethe_broker_sends_with_sendfile_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lethe broker --sendfile`` hands the switch to the server; without it, copies."""
    from lethe_tools.cli import main
    from lethe_tools.commands import broker as command

    seen: list[bool] = []

    def fake_run_broker(log_dir: str, **options: Any) -> int:
        seen.append(options["sendfile"])
        return 0

    monkeypatch.setattr(command, "run_broker", fake_run_broker)
    assert main(["broker", "--log-dir", str(tmp_path), "--sendfile"]) == 0
    assert main(["broker", "--log-dir", str(tmp_path)]) == 0
    assert seen == [True, False]
