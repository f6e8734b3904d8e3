"""Per-request cost of the protocol codecs: Construct codecs against the generated fast path.

Usage::

    python benchmarks/codec_bench.py [--iterations 2000] [--repeat 3] [--out benchmarks/results]

Theory of operation
-------------------
A broker decodes and encodes one message per request, and for small requests
(a producer's one 16 KiB batch) that was a fifth of its CPU. This measures the
four codec steps a broker takes for Kafka's perf tools, each exactly as
``lethe_reference.protocol.connection`` calls them:

* Produce v11 request decode: ``decode_request_header`` then ``decode_prefix``
  of the body (one topic, one partition, one 16 KiB record set);
* Produce v11 response encode: the response header with ``encode`` and the
  body with ``encode_buffers``;
* Fetch v17 request decode (one topic, one partition, a consumer's request);
* Fetch v16 response encode with a 1 MiB record set (``encode_buffers``: the
  record set must be passed through, not copied).

Each step runs ``--iterations`` times per run, best of ``--repeat`` runs, with
the Construct codecs (``compiler.use_fast_codecs(False)``) and with the fast
path; the two must give equal values and bytes, else the run fails. Results
(microseconds per operation, speed-up, the Produce decode+encode share) go to
``<out>/codec.json`` and ``<out>/codec.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lethe_formats.protocol import compiler
from lethe_formats.protocol.compiler import decode_prefix, encode, encode_buffers
from lethe_formats.protocol.envelope import decode_request_header, encode_request
from lethe_formats.protocol.headers import RequestHeader, ResponseHeader
from lethe_formats.protocol.messages.fetch import (
    FetchableTopicResponse,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    PartitionData,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
    TopicProduceResponse,
)

HERE = Path(__file__).resolve().parent
PRODUCE_RECORDS = 16 * 1024
FETCH_RECORDS = 1024 * 1024
#: The task's target: Produce decode+encode at least this many times cheaper.
PRODUCE_SPEEDUP_TARGET = 3.0


def _request_payload(api_key: int, version: int, body: Any) -> bytes:
    header = RequestHeader(api_key, version, 7, "perf-producer-client")
    return encode_request(header, body)


def produce_decode() -> Callable[[], Any]:
    partition = PartitionProduceData(index=0, records=bytes(PRODUCE_RECORDS))
    body = ProduceRequest(
        acks=-1, timeout_ms=30000, topic_data=(TopicProduceData("t1", (partition,)),)
    )
    payload = _request_payload(0, 11, body)

    def step() -> Any:
        header, offset = decode_request_header(payload)
        return header, decode_prefix(ProduceRequest, header.api_version, payload, offset)

    return step


def produce_encode() -> Callable[[], Any]:
    partition = PartitionProduceResponse(index=0, base_offset=123456, log_append_time_ms=-1)
    body = ProduceResponse(responses=(TopicProduceResponse("t1", (partition,)),))

    def step() -> Any:
        return encode(ResponseHeader(7), 1), b"".join(encode_buffers(body, 11))

    return step


def fetch_decode() -> Callable[[], Any]:
    topic = FetchTopic(
        topic_id=uuid.UUID(int=42),
        partitions=(FetchPartition(partition=0, fetch_offset=1000, partition_max_bytes=1 << 20),),
    )
    body = FetchRequest(max_wait_ms=500, min_bytes=1, max_bytes=52428800, topics=(topic,))
    payload = _request_payload(1, 17, body)

    def step() -> Any:
        header, offset = decode_request_header(payload)
        return header, decode_prefix(FetchRequest, header.api_version, payload, offset)

    return step


def fetch_encode() -> Callable[[], Any]:
    records = bytes(range(256)) * (FETCH_RECORDS // 256)
    partition = PartitionData(partition_index=0, high_watermark=5000, records=records)
    topic = FetchableTopicResponse(topic_id=uuid.UUID(int=42), partitions=(partition,))
    body = FetchResponse(responses=(topic,))

    def step() -> Any:
        parts = encode_buffers(body, 16)
        if not any(part is records for part in parts):
            raise SystemExit("the 1 MiB record set was copied")
        return encode(ResponseHeader(7), 1), [len(part) for part in parts]

    return step


CASES: dict[str, tuple[str, Callable[[], Callable[[], Any]]]] = {
    "produce_request_decode": ("Produce v11 request decode (16 KiB records)", produce_decode),
    "produce_response_encode": ("Produce v11 response encode", produce_encode),
    "fetch_request_decode": ("Fetch v17 request decode", fetch_decode),
    "fetch_response_encode": ("Fetch v16 response encode (1 MiB records)", fetch_encode),
}


def _best_us(step: Callable[[], Any], iterations: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        for _ in range(iterations):
            step()
        best = min(best, time.perf_counter() - start)
    return best / iterations * 1e6


def measure(iterations: int, repeat: int) -> dict[str, dict[str, Any]]:
    """Microseconds per operation of every case, Construct and fast; checks they agree."""
    rows: dict[str, dict[str, Any]] = {}
    for name, (label, make) in CASES.items():
        step = make()
        compiler.use_fast_codecs(False)
        try:
            expected = step()
            construct_us = _best_us(step, max(1, iterations // 10), repeat)
        finally:
            compiler.use_fast_codecs(True)
        if step() != expected:
            raise SystemExit(f"{name}: the fast path and the Construct path disagree")
        fast_us = _best_us(step, iterations, repeat)
        rows[name] = {
            "label": label,
            "construct_us": construct_us,
            "fast_us": fast_us,
            "speedup": construct_us / fast_us,
        }
    return rows


def _markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Protocol codec benchmark",
        "",
        f"Run {result['started']} with `{result['command']}`; best of {result['repeat']} runs.",
        f"Machine: {result['machine']['cpu_count']} CPUs, Python {result['machine']['python']}; "
        f"load average {result['machine']['loadavg']} before.",
        "",
        "| step | Construct us/op | fast us/op | speed-up |",
        "|---|---:|---:|---:|",
    ]
    for row in result["cases"].values():
        lines.append(
            f"| {row['label']} | {row['construct_us']:.1f} | {row['fast_us']:.2f} | "
            f"{row['speedup']:.1f}x |"
        )
    share = result["produce_share"]
    lines += [
        "",
        f"Produce decode+encode per request: {share['construct_us']:.1f} us with the Construct "
        f"codecs, {share['fast_us']:.2f} us with the fast path: {share['speedup']:.1f}x "
        f"(target >= {PRODUCE_SPEEDUP_TARGET:.0f}x): **{'PASS' if share['pass'] else 'MISS'}**.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    given = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(given)
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    loadavg = [round(x, 2) for x in os.getloadavg()]
    cases = measure(args.iterations, args.repeat)
    produce = ("produce_request_decode", "produce_response_encode")
    construct_us = sum(cases[name]["construct_us"] for name in produce)
    fast_us = sum(cases[name]["fast_us"] for name in produce)
    speedup = construct_us / fast_us
    result = {
        "started": started,
        "command": "python benchmarks/codec_bench.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "repeat": args.repeat,
        "iterations": args.iterations,
        "machine": {
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "loadavg": loadavg,
        },
        "cases": cases,
        "produce_share": {
            "construct_us": construct_us,
            "fast_us": fast_us,
            "speedup": speedup,
            "pass": speedup >= PRODUCE_SPEEDUP_TARGET,
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "codec.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "codec.md").write_text(_markdown(result))
    print(_markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
