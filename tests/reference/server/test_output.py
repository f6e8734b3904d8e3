"""ConnectionOutput: responses of one loop turn leave in one write, in order, never later
than the end of that turn; closing writes what is queued first."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from lethe_reference.server.output import ConnectionOutput


class Transport:
    """Records every write (one write = one send() on a real socket)."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        assert not self.closing, "write after close"
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return self.closing


class Writer:
    def __init__(self) -> None:
        self.transport = Transport()
        self.drains = 0

    def close(self) -> None:
        self.transport.closing = True

    async def drain(self) -> None:
        self.drains += 1


def output() -> tuple[ConnectionOutput, Transport]:
    writer = Writer()
    return ConnectionOutput(cast(Any, writer)), writer.transport


def test_responses_sent_in_one_turn_leave_in_one_write_in_order() -> None:
    async def scenario() -> list[bytes]:
        out, transport = output()
        for part in (b"first", b"second", b"third"):
            out.send(part)
        assert transport.writes == []  # queued, not written per response
        out.flush()
        return transport.writes

    assert asyncio.run(scenario()) == [b"firstsecondthird"]


def test_a_lone_response_leaves_at_the_end_of_the_loop_turn_without_a_flush() -> None:
    async def scenario() -> tuple[list[bytes], list[bytes]]:
        out, transport = output()
        out.send(b"deferred-answer")  # e.g. completed by another connection's request
        out.send(b"-and-the-next")
        before = list(transport.writes)
        await asyncio.sleep(0)  # one loop turn: the scheduled flush runs
        return before, transport.writes

    before, after = asyncio.run(scenario())
    assert before == []
    assert after == [b"deferred-answer-and-the-next"]


def test_large_buffers_are_written_alone_not_joined() -> None:
    big = bytes(range(256)) * 256  # 64 KiB: a record set

    async def scenario() -> list[bytes]:
        out, transport = output()
        for part in (b"head", b"er", big, b"tail"):
            out.send(part)
        out.flush()
        return transport.writes

    writes = asyncio.run(scenario())
    assert writes == [b"header", big, b"tail"]


def test_close_writes_what_is_queued_then_closes_and_drops_later_sends() -> None:
    async def scenario() -> tuple[list[bytes], bool]:
        out, transport = output()
        out.send(b"last answer")
        out.close()
        out.send(b"after close")
        await asyncio.sleep(0)
        return transport.writes, transport.closing

    writes, closing = asyncio.run(scenario())
    assert writes == [b"last answer"]
    assert closing


def test_drain_flushes_before_waiting() -> None:
    async def scenario() -> tuple[list[bytes], int]:
        writer = Writer()
        out = ConnectionOutput(cast(Any, writer))
        out.send(b"a")
        out.send(b"b")
        await out.drain()
        return writer.transport.writes, writer.drains

    assert asyncio.run(scenario()) == ([b"ab"], 1)


def test_held_output_schedules_nothing_and_leaves_at_release() -> None:
    async def scenario() -> tuple[list[bytes], list[bytes]]:
        out, transport = output()
        out.hold()  # the pump handles one read
        out.send(b"one")
        out.send(b"two")
        await asyncio.sleep(0)  # no flush was scheduled
        before = list(transport.writes)
        out.release()
        return before, transport.writes

    assert asyncio.run(scenario()) == ([], [b"onetwo"])
