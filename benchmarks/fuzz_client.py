"""Sending fuzzed frames over several connections, and the liveness probe.

Theory of operation
-------------------
A frame counts as processed once the broker has shown it read it, so every
fuzzed frame is one exchange on a connection (:func:`_exchange`):

* a complete frame is written together with an ApiVersions v0 probe (a
  correlation id no fuzzed frame uses); the broker answers in order per
  connection, so the probe's response means the fuzzed frame was handled and
  the connection lives on (``answered``); end of stream means the broker closed
  the connection because of it (``closed``), as Kafka does on a request it
  cannot parse;
* a frame cut short is written and the write side shut: the broker must close
  (``cut``);
* an oversize or negative length prefix must make the broker close by itself
  (``closed``), without the write side shut.

An exchange not over within ``stall_s`` (a mutated Fetch may legitimately wait
``max_wait_ms``, a JoinGroup its rebalance timeout) is counted ``stalled`` and
its connection dropped; stalls are not hangs. A hang is :func:`probe` failing:
after each batch, and at once after any stall, a fresh connection must get
ApiVersions and Metadata answers within the bound; a hang ends the batch
(a blocked broker would otherwise cost ``stall_s`` per remaining frame).
``workers`` connections run at once, each reconnecting after every close, in
each of ``processes`` client processes (:func:`run_batch_processes`): the
client is plain Python too, and on a shared machine one client process would
hold the rate below what the broker can take.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import struct
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from fuzz_frames import Fuzzed, probe_frame
from lethe_formats.protocol.envelope import decode_response, encode_request
from lethe_formats.protocol.framing import frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.delete_topics import DeleteTopicsRequest
from lethe_formats.protocol.messages.metadata import MetadataRequest
from lethe_formats.protocol.registry import api
from lethe_formats.protocol.schema import Struct

__all__ = [
    "BatchStats",
    "delete_created_topics",
    "probe",
    "run_batch",
    "run_batch_processes",
]

#: Probe correlation ids are negative: the mutators never write these into a header.
_PROBE_IDS = itertools.count(-2_000_000_000)
_MAX_RESPONSE = 64 << 20


@dataclass(slots=True)
class BatchStats:
    """Outcomes of one batch of exchanges."""

    frames: int = 0
    outcomes: collections.Counter[str] = field(default_factory=collections.Counter)
    strategies: collections.Counter[str] = field(default_factory=collections.Counter)
    connections: int = 0
    stalled_sources: list[str] = field(default_factory=list)
    hung: bool = False


class _Connection:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self, stats: BatchStats) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.reader is None or self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            stats.connections += 1
        return self.reader, self.writer

    def drop(self) -> None:
        if self.writer is not None:
            self.writer.transport.abort()
        self.reader = self.writer = None


async def _read_until(reader: asyncio.StreamReader, correlation_id: int) -> bool:
    """Read responses until the one for ``correlation_id``; False at end of stream."""
    while True:
        try:
            head = await reader.readexactly(4)
        except (asyncio.IncompleteReadError, ConnectionError):
            return False
        (size,) = struct.unpack(">i", head)
        if size < 4 or size > _MAX_RESPONSE:
            raise ValueError(f"broker sent a frame of size {size}")
        try:
            payload = await reader.readexactly(size)
        except (asyncio.IncompleteReadError, ConnectionError):
            return False
        if struct.unpack_from(">i", payload)[0] == correlation_id:
            return True


async def _exchange(connection: _Connection, fuzzed: Fuzzed, stats: BatchStats) -> str:
    reader, writer = await connection.open(stats)
    if not fuzzed.complete:
        writer.write(fuzzed.data)
        with contextlib.suppress(OSError):
            writer.write_eof()
        await _read_until(reader, 0x7FFFFFFF)  # nothing may answer: wait for the close
        connection.drop()
        return "cut"
    correlation_id = next(_PROBE_IDS)
    writer.write(fuzzed.data if fuzzed.oversize else fuzzed.data + probe_frame(correlation_id))
    if await _read_until(reader, correlation_id):
        return "answered"
    connection.drop()
    return "closed"


async def _worker(
    host: str,
    port: int,
    frames: Iterator[Fuzzed],
    stats: BatchStats,
    *,
    stall_s: float,
    probe_timeout_s: float,
) -> None:
    connection = _Connection(host, port)
    try:
        for fuzzed in frames:
            if stats.hung:
                return
            stats.frames += 1
            stats.strategies[fuzzed.strategy] += 1
            try:
                outcome = await asyncio.wait_for(_exchange(connection, fuzzed, stats), stall_s)
            except TimeoutError:
                outcome = "stalled"
                stats.stalled_sources.append(f"{fuzzed.strategy} {fuzzed.source}")
                connection.drop()
                if await probe(host, port, probe_timeout_s) is None:
                    stats.hung = True
            except (ConnectionError, OSError):
                outcome = "reset"
                connection.drop()
            stats.outcomes[outcome] += 1
    finally:
        connection.drop()


async def run_batch(
    host: str, port: int, frames: list[Fuzzed], *, workers: int, stall_s: float, probe_s: float
) -> BatchStats:
    """Send ``frames`` over ``workers`` connections at once (shared queue)."""
    stats = BatchStats()
    shared = iter(frames)
    await asyncio.gather(
        *(
            _worker(host, port, shared, stats, stall_s=stall_s, probe_timeout_s=probe_s)
            for _ in range(workers)
        )
    )
    return stats


def _batch_in_process(
    host: str, port: int, frames: list[Fuzzed], *, workers: int, stall_s: float, probe_s: float
) -> BatchStats:
    return asyncio.run(
        run_batch(host, port, frames, workers=workers, stall_s=stall_s, probe_s=probe_s)
    )


def run_batch_processes(
    pool: ProcessPoolExecutor,
    processes: int,
    host: str,
    port: int,
    frames: list[Fuzzed],
    *,
    workers: int,
    stall_s: float,
    probe_s: float,
) -> BatchStats:
    """:func:`run_batch` over ``processes`` client processes, one share of ``frames`` each."""
    shares = [frames[i::processes] for i in range(processes)]
    futures = [
        pool.submit(
            _batch_in_process,
            host,
            port,
            share,
            workers=workers,
            stall_s=stall_s,
            probe_s=probe_s,
        )
        for share in shares
    ]
    total = BatchStats()
    for future in futures:
        stats = future.result()
        total.frames += stats.frames
        total.outcomes.update(stats.outcomes)
        total.strategies.update(stats.strategies)
        total.connections += stats.connections
        total.stalled_sources += stats.stalled_sources
        total.hung = total.hung or stats.hung
    return total


def _metadata(correlation_id: int) -> bytes:
    """Metadata v12 asking for no topics, built with lethe's encoder."""
    header = RequestHeader(3, 12, correlation_id, "lethe-fuzz-probe")
    return frame(encode_request(header, api(3).request()))


async def probe(host: str, port: int, timeout_s: float) -> float | None:
    """Seconds a fresh connection took to get ApiVersions and Metadata answered; None: hang."""
    started = time.perf_counter()

    async def ask() -> bool:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            first, second = next(_PROBE_IDS), next(_PROBE_IDS)
            writer.write(probe_frame(first) + _metadata(second))
            return await _read_until(reader, first) and await _read_until(reader, second)
        finally:
            writer.transport.abort()

    try:
        answered = await asyncio.wait_for(ask(), timeout_s)
    except (TimeoutError, ConnectionError, OSError):
        return None
    return time.perf_counter() - started if answered else None


async def _call(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, key: int, version: int, body: Struct
) -> Any:
    """One request and its decoded response on an open connection."""
    correlation_id = next(_PROBE_IDS)
    header = RequestHeader(key, version, correlation_id, "lethe-fuzz-admin")
    writer.write(frame(encode_request(header, body)))
    (size,) = struct.unpack(">i", await reader.readexactly(4))
    _, response = decode_response(key, version, await reader.readexactly(size))
    return response


async def delete_created_topics(host: str, port: int, timeout_s: float) -> int:
    """Delete every non-internal topic (all were created by fuzzed frames); how many.

    Without this the topic table grows with every fuzzed CreateTopics or
    auto-creating Metadata that happens to be valid, and the memory figure would
    measure that state instead of leaks.
    """

    async def clean() -> int:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            metadata = await _call(reader, writer, 3, 12, MetadataRequest(topics=None))
            names = tuple(
                t.name for t in metadata.topics if t.name and not t.is_internal and not t.error_code
            )
            if names:
                request = DeleteTopicsRequest(topic_names=names, timeout_ms=30_000)
                await _call(reader, writer, 20, 5, request)
            return len(names)
        finally:
            writer.transport.abort()

    return await asyncio.wait_for(clean(), timeout_s)
