"""Kafka's own decoding of the golden ``__consumer_offsets`` records, from dump.txt.

``kafka-dump-log.sh --offsets-decoder`` prints each record as
``| offset: N ... key: {"type":"T","data":{...}} payload: {"version":"V","data":{...}}``
(``payload: <DELETE>`` for a tombstone). :func:`decoded_records` returns, per
dumped ``.log`` file, ``offset -> (key JSON, value JSON or None)``.

:func:`assert_matches` compares a lethe dataclass with Kafka's JSON: every
JSON field (camelCase) must exist on the dataclass (snake_case) with an equal
value; uuids print as Kafka's base64 text, bytes as base64, and the
``subscription``/``assignment`` bytes of a consumer group as their decoded
consumer-protocol structs.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

from lethe_formats.coordinator.consumer_protocol import decode_assignment, decode_subscription
from lethe_formats.storage.kafka_uuid import KafkaUuid

_COMMAND = "### bin/kafka-dump-log.sh "
_RECORD = re.compile(r"^\| offset: (\d+) .* key: (\{.*?\}\}) payload: (.*)$")

Decoded = dict[int, tuple[dict[str, Any], dict[str, Any] | None]]


def decoded_records(dump: Path) -> dict[str, Decoded]:
    """Dumped log file (relative path) -> offset -> (key JSON, value JSON | None)."""
    out: dict[str, Decoded] = {}
    current: Decoded | None = None
    for line in dump.read_text(encoding="utf-8", errors="surrogateescape").split("\n"):
        if line.startswith(_COMMAND):
            args = line[len(_COMMAND) :].split(" ")
            name = args[args.index("--files") + 1]
            current = out.setdefault(name, {}) if "--offsets-decoder" in args else None
            continue
        match = _RECORD.match(line) if current is not None else None
        if match and current is not None:
            payload = match.group(3)
            value = None if payload == "<DELETE>" else json.loads(payload)
            current[int(match.group(1))] = (json.loads(match.group(2)), value)
    return out


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def assert_matches(ours: Any, theirs: Any, path: str = "") -> None:
    """Every field Kafka printed equals lethe's value (see module docstring)."""
    if isinstance(ours, KafkaUuid):
        assert str(ours) == theirs, path
    elif dataclasses.is_dataclass(ours):
        assert isinstance(theirs, dict), path
        for name, expected in theirs.items():
            where = f"{path}.{name}"
            assert hasattr(ours, snake(name)), f"{where}: no such field in {type(ours).__name__}"
            _match_field(ours, name, expected, where)
    elif isinstance(ours, tuple):
        assert isinstance(theirs, list) and len(ours) == len(theirs), path
        for index, (mine, kafka) in enumerate(zip(ours, theirs, strict=True)):
            assert_matches(mine, kafka, f"{path}[{index}]")
    elif isinstance(ours, bytes):
        assert base64.b64encode(ours).decode() == theirs, path
    else:
        assert ours == theirs, f"{path}: {ours!r} != {theirs!r}"


def _match_field(ours: Any, name: str, expected: Any, where: str) -> None:
    value = getattr(ours, snake(name))
    if name == "subscription" and isinstance(expected, dict):
        assert_matches(decode_subscription(value), expected, where)
    elif name == "assignment" and isinstance(expected, dict):
        assert_matches(decode_assignment(value), expected, where)
    else:
        assert_matches(value, expected, where)
