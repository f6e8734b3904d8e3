"""``max.connections``, ``max.connections.per.ip[.overrides]`` and
``queued.max.request.bytes`` as Kafka's SocketServer applies them: the sans-IO
decisions, then the asyncio server acting on them (one event loop, real sockets).

Kafka's behaviour (SocketServer / ConnectionQuotas in 4.0): a connection over
the per-address limit is accepted and closed at once; over the broker-wide
limit the acceptor waits until a connection closes; with the request memory
used up no socket is read until requests are handled, but a request already
begun is read to its end.
"""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

from lethe_formats.protocol.envelope import encode_request
from lethe_formats.protocol.framing import frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest
from lethe_formats.protocol.schema import Struct, message_info
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig
from lethe_reference.protocol.quotas import (
    Admission,
    ConnectionQuotas,
    parse_ip_overrides,
    reading_allowed,
)
from lethe_reference.protocol.session import BrokerSession
from lethe_reference.server import BrokerServer

HANG_S = 120


def request(body: Struct, version: int, correlation_id: int) -> bytes:
    key = message_info(type(body)).api_key
    assert key is not None
    return frame(encode_request(RequestHeader(key, version, correlation_id, "q"), body))


API_VERSIONS = request(ApiVersionsRequest("q", "1"), 3, 7)


# --- sans-IO ---------------------------------------------------------------------------


def test_per_address_limit_rejects_and_overrides_raise_it() -> None:
    config = BrokerConfig(
        {"max.connections.per.ip": "2", "max.connections.per.ip.overrides": "10.0.0.9:3, ::1:0"}
    )
    quotas = ConnectionQuotas(lambda: config)
    assert [quotas.admit("10.0.0.1") for _ in range(3)] == [
        Admission.ACCEPT,
        Admission.ACCEPT,
        Admission.REJECT,
    ]
    assert [quotas.admit("10.0.0.9") for _ in range(4)][-2:] == [Admission.ACCEPT, Admission.REJECT]
    assert quotas.admit("::1") is Admission.REJECT
    assert quotas.total == 5  # a rejected connection is not counted
    quotas.release("10.0.0.1")
    assert quotas.admit("10.0.0.1") is Admission.ACCEPT


def test_broker_wide_limit_waits_and_reads_the_config_each_time() -> None:
    configs = [BrokerConfig({"max.connections": "2"})]
    quotas = ConnectionQuotas(lambda: configs[0])
    assert [quotas.admit(a) for a in ("a", "b", "c")] == [
        Admission.ACCEPT,
        Admission.ACCEPT,
        Admission.WAIT,
    ]
    quotas.release("a")
    assert quotas.admit("c") is Admission.ACCEPT
    configs[0] = BrokerConfig({"max.connections": "3"})  # a dynamic change
    assert quotas.admit("d") is Admission.ACCEPT
    assert quotas.admit("e") is Admission.WAIT


def test_parse_ip_overrides_splits_at_the_last_colon() -> None:
    assert parse_ip_overrides("") == {}
    assert parse_ip_overrides("127.0.0.1:5, [::1]:7,fe80::1:2") == {
        "127.0.0.1": 5,
        "::1": 7,
        "fe80::1": 2,
    }


def test_reading_stops_at_queued_max_request_bytes() -> None:
    assert reading_allowed(BrokerConfig({}), 10**12)  # -1: unbounded, Kafka's default
    limited = BrokerConfig({"queued.max.request.bytes": "100"})
    assert reading_allowed(limited, 99)
    assert not reading_allowed(limited, 100)


def test_a_session_counts_its_unhandled_bytes(tmp_path: Path) -> None:
    broker = Broker(tmp_path, durable=False)
    broker.startup()
    sent: list[bytes] = []
    session = BrokerSession(broker, 1, send=sent.append, close=lambda: None)
    session.receive_data(API_VERSIONS[:10])
    assert (session.queued_bytes, session.wants_data, sent) == (10, True, [])
    session.receive_data(API_VERSIONS[10:])
    assert session.queued_bytes == 0
    assert len(sent) == 1


# --- the asyncio server ----------------------------------------------------------------


async def answered(reader: asyncio.StreamReader) -> int:
    """The correlation id of the next response."""
    (size,) = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), HANG_S))
    payload = await asyncio.wait_for(reader.readexactly(size), HANG_S)
    return int(struct.unpack_from(">i", payload)[0])


async def started(tmp_path: Path, **settings: str) -> BrokerServer:
    broker = Broker(
        tmp_path, config=BrokerConfig(settings), clock=ManualClock(1_700_000_000_000), durable=False
    )
    server = BrokerServer(broker, "127.0.0.1", 0)
    await server.start()
    return server


async def connect(server: BrokerServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", server.port)


async def settle(condition: object) -> None:
    """Let the loop run until ``condition()`` holds (bounded: a hang fails)."""
    for _ in range(100_000):
        if condition():  # type: ignore[operator]
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the server never reached the expected state")


def test_a_connection_over_the_per_address_limit_is_closed_at_once(tmp_path: Path) -> None:
    async def scenario() -> None:
        server = await started(tmp_path, **{"max.connections.per.ip": "1"})
        first = await connect(server)
        first[1].write(API_VERSIONS)
        assert await answered(first[0]) == 7
        second = await connect(server)
        assert await asyncio.wait_for(second[0].read(), HANG_S) == b""  # closed by the broker
        first[1].close()
        await settle(lambda: server.quotas.total == 0)
        third = await connect(server)
        third[1].write(API_VERSIONS)
        assert await answered(third[0]) == 7
        third[1].close()
        await server.stop()

    asyncio.run(scenario())


def test_over_max_connections_a_client_waits_for_a_slot(tmp_path: Path) -> None:
    async def scenario() -> None:
        server = await started(tmp_path, **{"max.connections": "1"})
        first = await connect(server)
        first[1].write(API_VERSIONS)
        assert await answered(first[0]) == 7
        second = await connect(server)
        second[1].write(API_VERSIONS)
        await second[1].drain()
        for _ in range(50):
            await asyncio.sleep(0)
        assert server.quotas.total == 1  # the second one is not admitted
        assert len(second[0]._buffer) == 0  # type: ignore[attr-defined]  # nor answered
        first[1].close()
        assert await answered(second[0]) == 7  # served once the first closed
        second[1].close()
        await server.stop()

    asyncio.run(scenario())


def test_with_the_request_memory_used_up_new_requests_wait(tmp_path: Path) -> None:
    async def scenario() -> None:
        server = await started(tmp_path, **{"queued.max.request.bytes": "1000"})
        big_reader, big = await connect(server)
        large = request(ApiVersionsRequest("q" * 3000, "1"), 3, 8)
        big.write(large[:1500])  # half of a 3 kB request
        await settle(lambda: server.queued_bytes() >= 1000)
        reader, writer = await connect(server)
        writer.write(API_VERSIONS)
        await writer.drain()
        for _ in range(50):
            await asyncio.sleep(0)
        assert len(reader._buffer) == 0  # type: ignore[attr-defined]  # not read, not answered
        big.write(large[1500:])  # the begun request is read to its end and answered
        assert await answered(big_reader) == 8
        assert await answered(reader) == 7  # its memory came back: the other is served
        big.close()
        writer.close()
        await server.stop()

    asyncio.run(scenario())
