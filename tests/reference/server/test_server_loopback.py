"""The asyncio edge over real loopback sockets: BrokerServer, EmbeddedBroker, ``lethe broker``."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.envelope import decode_response, encode_request
from lethe_formats.protocol.framing import frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponse,
)
from lethe_formats.protocol.schema import Struct, message_info
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.embedded import EmbeddedBroker
from lethe_reference.server import BrokerServer


def request(body: Struct, version: int, correlation_id: int) -> bytes:
    key = message_info(type(body)).api_key
    assert key is not None
    return frame(encode_request(RequestHeader(key, version, correlation_id, "loop"), body))


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    (size,) = struct.unpack(">i", await reader.readexactly(4))
    return await reader.readexactly(size)


def test_asyncio_server_on_port_0_answers_api_versions_and_metadata(tmp_path: Path) -> None:
    async def scenario() -> tuple[ApiVersionsResponse, MetadataResponse, int, list[int]]:
        broker = Broker(tmp_path, clock=ManualClock(1_700_000_000_000), durable=False)
        server = BrokerServer(broker, "127.0.0.1", 0)
        await server.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(
            request(ApiVersionsRequest("lethe-test", "1"), 3, 1)
            + request(MetadataRequest(topics=None), 12, 2)
        )
        await writer.drain()
        first, second = await read_frame(reader), await read_frame(reader)
        writer.close()
        await server.stop()
        correlation = [struct.unpack_from(">i", f)[0] for f in (first, second)]
        _, versions = decode_response(ApiKey.API_VERSIONS, 3, first)
        _, metadata = decode_response(ApiKey.METADATA, 12, second)
        assert isinstance(versions, ApiVersionsResponse)
        assert isinstance(metadata, MetadataResponse)
        return versions, metadata, server.port, correlation

    versions, metadata, port, correlation = asyncio.run(scenario())
    assert correlation == [1, 2]
    assert versions.error_code == 0
    assert ApiKey.METADATA in {v.api_key for v in versions.api_keys}
    assert [(b.node_id, b.host, b.port) for b in metadata.brokers] == [(1, "127.0.0.1", port)]
    assert (tmp_path / ".kafka_cleanshutdown").exists()


def test_garbage_closes_only_that_connection(tmp_path: Path) -> None:
    async def scenario() -> tuple[bytes, int]:
        broker = Broker(tmp_path, durable=False)
        server = BrokerServer(broker, "127.0.0.1", 0)
        await server.start()
        bad_reader, bad_writer = await asyncio.open_connection("127.0.0.1", server.port)
        bad_writer.write(b"\xff\xff\xff\xfe garbage")
        await bad_writer.drain()
        leftover = await asyncio.wait_for(bad_reader.read(), 5)
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(request(ApiVersionsRequest("ok", "1"), 3, 9))
        await writer.drain()
        answer = await read_frame(reader)
        writer.close()
        await server.stop()
        return leftover, struct.unpack_from(">i", answer)[0]

    leftover, correlation_id = asyncio.run(scenario())
    assert leftover == b""  # closed without a reply
    assert correlation_id == 9


def blocking_exchange(bootstrap: str, body: Struct, version: int) -> Struct:
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request(body, version, 1))
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack_from(">i", data)[0]:
            chunk = sock.recv(65536)
            assert chunk, "connection closed"
            data += chunk
    key = message_info(type(body)).api_key
    assert key is not None
    return decode_response(key, version, data[4:])[1]


def test_embedded_broker_from_sync_code_with_virtual_time_and_restart(tmp_path: Path) -> None:
    clock = ManualClock(1_700_000_000_000)
    with EmbeddedBroker(tmp_path, clock=clock) as kafka:
        bootstrap = kafka.bootstrap
        topics = (CreatableTopic("e", 2, 1, (), ()),)
        created = blocking_exchange(bootstrap, CreateTopicsRequest(topics), 7)
        assert created.topics[0].error_code == 0  # type: ignore[attr-defined]
        assert kafka.advance(5000) == ["highwatermark-checkpoint"]
        assert (tmp_path / "replication-offset-checkpoint").exists()
        kafka.restart()
        assert kafka.bootstrap == bootstrap
        assert kafka.call(lambda broker: broker.metadata.get("e").partitions) == 2
        named = MetadataRequest(topics=(MetadataRequestTopic(name="e"),))
        metadata = blocking_exchange(bootstrap, named, 12)
        assert isinstance(metadata, MetadataResponse)
        assert len(metadata.topics[0].partitions) == 2
    assert (tmp_path / ".kafka_cleanshutdown").exists()


def test_embedded_broker_with_async_with(tmp_path: Path) -> None:
    async def scenario() -> int:
        async with EmbeddedBroker(tmp_path) as kafka:
            host, port = kafka.bootstrap.rsplit(":", 1)
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(request(MetadataRequest(topics=None), 12, 4))
            await writer.drain()
            answer = await read_frame(reader)
            writer.close()
            return struct.unpack_from(">i", answer)[0]

    assert asyncio.run(scenario()) == 4
    assert (tmp_path / ".kafka_cleanshutdown").exists()


def test_lethe_broker_command_shuts_down_cleanly_on_sigterm(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "lethe_tools.cli", "broker", "--listen", "127.0.0.1:0"]
    process = subprocess.Popen(
        [*command, "--log-dir", str(log_dir), "--override", "num.partitions=2"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    port = None
    lines = []
    while port is None and time.monotonic() < deadline:
        line = process.stderr.readline()
        lines.append(line)
        if "event=listening" in line:
            port = int(line.split("port=")[1].split()[0])
    assert port is not None, lines
    answer = blocking_exchange(f"127.0.0.1:{port}", ApiVersionsRequest("t", "1"), 3)
    assert isinstance(answer, ApiVersionsResponse)
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0
    assert (log_dir / ".kafka_cleanshutdown").exists()
    assert (log_dir / "meta.properties").exists()


def test_lethe_broker_rejects_a_malformed_listen_address(tmp_path: Path) -> None:
    from lethe_tools.cli import main

    assert main(["broker", "--listen", "nope", "--log-dir", str(tmp_path)]) == 2
