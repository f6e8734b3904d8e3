"""Shared pieces of the interop tests: the golden case, the record shape, the time bound.

Expected values come from Kafka: the golden ``delete-records`` case was written
by Kafka 4.0 with confluent-kafka and kafka-python (fixtures/golden/README.md),
and its ``case.json`` holds what was produced and what Kafka answered.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from dataclasses import dataclass
from functools import cache
from typing import Any

from lethe_formats.fixtures import fixtures_root

__all__ = [
    "CLIENT_TIMEOUT_S",
    "Golden",
    "Rec",
    "delete_records_case",
    "free_port",
    "golden_produce_rounds",
    "wait_listening",
]

#: Upper bound for any single client operation in these tests.
CLIENT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Rec:
    """A record as the tests compare it: offsets, keys, values, headers, timestamps."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: tuple[tuple[str, bytes | None], ...] = ()


@dataclass(frozen=True)
class Golden:
    """One golden produce record with what Kafka's delivery report said about it."""

    key: bytes | None
    value: bytes | None
    partition: int
    timestamp: int
    offset: int


def _bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, dict):
        return bytes.fromhex(value["hex"])
    return str(value).encode("utf-8")


@cache
def delete_records_case() -> dict[str, Any]:
    """fixtures/golden/delete-records/case.json."""
    path = fixtures_root() / "golden" / "delete-records" / "case.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


def golden_produce_rounds() -> list[list[Golden]]:
    """The case's produce rounds (one flush each), records paired with delivery reports."""
    rounds = []
    for step in delete_records_case()["steps"]:
        if step["op"] != "produce":
            continue
        pairs = zip(step["records"], step["delivery_reports"], strict=True)
        rounds.append(
            [
                Golden(
                    _bytes(r["key"]),
                    _bytes(r["value"]),
                    r["partition"],
                    r["timestamp"],
                    d["offset"],
                )
                for r, d in pairs
            ]
        )
    return rounds


def free_port() -> int:
    """A port nothing listens on now (for a ``lethe broker`` started by a test)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    """Return once ``process`` (a ``lethe broker``) accepts connections on ``port``."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "lethe broker ended"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("lethe broker did not listen")
