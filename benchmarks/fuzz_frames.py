"""Fuzzed request frames: a corpus of real frames and the mutations applied to them.

Theory of operation
-------------------
The corpus (:func:`corpus`) is every request frame real clients sent a real
Kafka 4.0.0 (``fixtures/golden/wire/frames.jsonl``, librdkafka and
kafka-python) plus two frames per API key and version the broker advertises,
built with lethe's own request encoders: the defaults (empty arrays, empty
strings) and a "filled" body in which every array holds one element, every
string is ``lethe-fuzz`` and every records field a real one-record batch, so
the handlers get past their loops over topics and partitions.

:class:`Mutator` turns one seeded ``random.Random`` into a stream of
:class:`Fuzzed` frames, each made by one strategy (:data:`STRATEGIES`):
random bytes, a real frame with flipped bytes, with a field overwritten by an
interesting value (0, -1, the int extremes: counts and lengths), truncated or
extended with the length prefix fixed up, a valid header on a random or
another API's body, unknown API keys and versions, oversize and negative
length prefixes, and frames cut at a random point. Everything is a pure
function of the seed, so a finding can be replayed with ``--seed``.

Partition-heavy frames: with ``max_partitions`` set, a frame that decodes as a
CreateTopics or CreatePartitions asking for more partitions in total is
replaced by the next one and counted (:attr:`Mutator.excluded`). The default
(0) keeps them all: since the controller bounds of issue 12 item 2, such a
frame is refused above 10,000 partitions or served in slices off the event
loop. The option remains for measuring the protocol layer alone, since
creating thousands of partitions is legitimate work with files per partition.

``Fuzzed.complete`` says whether the bytes form whole frames: a cut frame is
sent and the write side shut, since the broker waits for the rest.
``Fuzzed.oversize``: the prefix is beyond the broker's frame limit or
negative, so the broker must close the connection on its own.
"""

from __future__ import annotations

import dataclasses
import json
import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lethe_formats.protocol.compiler import decode_prefix
from lethe_formats.protocol.envelope import decode_request_header, encode_request
from lethe_formats.protocol.framing import DEFAULT_MAX_FRAME_SIZE, frame
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.registry import api, lookup, supported_versions
from lethe_formats.protocol.schema import (
    ArrayType,
    Primitive,
    Struct,
    StructType,
    struct_fields,
)
from lethe_formats.records.builder import RecordSpec, build_batch

__all__ = [
    "STRATEGIES",
    "Fuzzed",
    "Mutator",
    "corpus",
    "golden_frames",
    "partitions_requested",
    "probe_frame",
]

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "wire" / "frames.jsonl"
CLIENT_ID = "lethe-fuzz"
#: Values that break counts, lengths and sizes when written over a field.
_INTERESTING = (0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)
_MAX_RANDOM_BODY = 300


@dataclass(frozen=True, slots=True)
class Fuzzed:
    """One fuzzed unit to send: its bytes, the strategy and the frame it came from."""

    data: bytes
    strategy: str
    source: str
    complete: bool = True
    oversize: bool = False


def golden_frames(path: Path = GOLDEN) -> list[tuple[str, bytes]]:
    """``(label, frame)`` of every request real clients sent Kafka 4.0.0."""
    frames = []
    for line in path.read_text().splitlines():
        item = json.loads(line)
        if item["dir"] == "request":
            label = f"golden#{item['seq']}:{item['api_key']}v{item['api_version']}"
            frames.append((label, bytes.fromhex(item["hex"])))
    return frames


def _sample_batch() -> bytes:
    return build_batch([RecordSpec(key=b"k", value=b"lethe-fuzz")], base_offset=0)


def _filled(cls: type[Struct], version: int, batch: bytes, depth: int = 0) -> Struct:
    """``cls`` with one element in every array, ``lethe-fuzz`` in every string."""
    changes: dict[str, Any] = {}
    for spec, _ in struct_fields(cls):
        if version not in spec.versions or depth > 4:
            continue
        value = _sample(spec.type, version, batch, depth)
        if value is not None:
            changes[spec.name] = value
    return dataclasses.replace(cls(), **changes)


def _sample(kind: Any, version: int, batch: bytes, depth: int) -> Any:
    if isinstance(kind, ArrayType):
        element = _sample(kind.element, version, batch, depth + 1)
        return None if element is None else (element,)
    if isinstance(kind, StructType):
        return _filled(kind.cls, version, batch, depth + 1)
    if isinstance(kind, Primitive):
        return {"string": CLIENT_ID, "records": batch, "bytes": b"lethe", "int32": 1}.get(
            kind.kind, kind.default()
        )
    return None


def encoder_frames() -> list[tuple[str, bytes]]:
    """Default and filled request of every advertised API key and version."""
    batch = _sample_batch()
    frames = []
    for api_key, low, high in supported_versions(extensions=True):
        request = api(api_key).request
        for version in range(low, high + 1):
            header = RequestHeader(api_key, version, 1, CLIENT_ID)
            for label in ("default", "filled"):
                try:
                    body = request() if label == "default" else _filled(request, version, batch)
                    payload = encode_request(header, body)
                except (ValueError, TypeError, OverflowError):
                    continue
                frames.append((f"encoder:{api_key}v{version}:{label}", frame(payload)))
    return frames


def corpus() -> list[tuple[str, bytes]]:
    """Every real frame the mutations start from."""
    return golden_frames() + encoder_frames()


def probe_frame(correlation_id: int) -> bytes:
    """ApiVersions v0: the request every broker must answer, whatever came before."""
    return frame(struct.pack(">hhih", 18, 0, correlation_id, -1))


_CREATE_TOPICS, _CREATE_PARTITIONS = 19, 37


def partitions_requested(data: bytes) -> int:
    """Partitions a CreateTopics / CreatePartitions frame asks for in total; else 0."""
    if len(data) < 6 or struct.unpack_from(">h", data, 4)[0] not in (
        _CREATE_TOPICS,
        _CREATE_PARTITIONS,
    ):
        return 0
    try:  # as the broker decodes: header, then the body's prefix (trailing bytes ignored)
        header, offset = decode_request_header(data[4:])
        spec = lookup(header.api_key, header.api_version)
        body, _ = decode_prefix(spec.request, header.api_version, data[4:], offset)
    except Exception:  # whatever the broker cannot decode, it cannot create
        return 0
    topics: Any = getattr(body, "topics", ())
    if header.api_key == _CREATE_TOPICS:
        return sum(max(t.num_partitions, 1) + len(t.assignments) for t in topics)
    return sum(max(t.count, 0) for t in topics)


def _with_prefix(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


class Mutator:
    """A seeded stream of fuzzed frames over ``frames`` (see the module docstring)."""

    def __init__(
        self, seed: int, frames: list[tuple[str, bytes]], max_partitions: int | None = None
    ) -> None:
        self.random = random.Random(seed)
        self.frames = frames
        self.max_partitions = max_partitions
        self.excluded = 0
        supported = supported_versions(extensions=True)
        self.versions = {key: (low, high) for key, low, high in supported}

    def __iter__(self) -> Iterator[Fuzzed]:
        while True:
            yield self.next()

    def next(self) -> Fuzzed:
        while True:
            made = self._one()
            limit = self.max_partitions
            if limit is None or partitions_requested(made.data) <= limit:
                return made
            self.excluded += 1

    def _one(self) -> Fuzzed:
        name = self.random.choices(list(STRATEGIES), weights=list(STRATEGIES.values()))[0]
        label, data = self.random.choice(self.frames)
        made: Fuzzed = getattr(self, f"_{name}")(label, data[4:])
        return made

    # -- strategies (payload = the frame without its 4-byte prefix) ----------------
    def _random_bytes(self, label: str, payload: bytes) -> Fuzzed:
        body = self.random.randbytes(self.random.randrange(_MAX_RANDOM_BODY))
        return Fuzzed(_with_prefix(body), "random_bytes", "random")

    def _random_body(self, label: str, payload: bytes) -> Fuzzed:
        key = self.random.choice(list(self.versions))
        low, high = self.versions[key]
        header = struct.pack(">hhi", key, self.random.randint(low, high), 7)
        body = self.random.randbytes(self.random.randrange(_MAX_RANDOM_BODY))
        return Fuzzed(_with_prefix(header + body), "random_body", f"api {key}")

    def _flip(self, label: str, payload: bytes) -> Fuzzed:
        data = bytearray(payload)
        for _ in range(self.random.randint(1, 8)):
            spot = self.random.randrange(4, len(data)) if len(data) > 4 else 0
            if data:
                data[spot] ^= 1 << self.random.randrange(8)
        return Fuzzed(_with_prefix(bytes(data)), "flip", label)

    def _overwrite(self, label: str, payload: bytes) -> Fuzzed:
        data = bytearray(payload)
        width = self.random.choice((1, 2, 4))
        if len(data) > 8 + width:
            spot = self.random.randrange(8, len(data) - width)
            value = self.random.choice(_INTERESTING) & ((1 << (8 * width)) - 1)
            data[spot : spot + width] = value.to_bytes(width, "big")
        return Fuzzed(_with_prefix(bytes(data)), "overwrite", label)

    def _truncate(self, label: str, payload: bytes) -> Fuzzed:
        cut = self.random.randrange(len(payload)) if payload else 0
        return Fuzzed(_with_prefix(payload[:cut]), "truncate", label)

    def _extend(self, label: str, payload: bytes) -> Fuzzed:
        extra = self.random.randbytes(self.random.randint(1, 64))
        return Fuzzed(_with_prefix(payload + extra), "extend", label)

    def _splice(self, label: str, payload: bytes) -> Fuzzed:
        other_label, other = self.random.choice(self.frames)
        head = payload[: self.random.randint(4, 12)]
        tail = other[4 + self.random.randrange(4, max(5, len(other) - 4)) :]
        return Fuzzed(_with_prefix(head + tail), "splice", f"{label}+{other_label}")

    def _unknown_api(self, label: str, payload: bytes) -> Fuzzed:
        data = bytearray(payload)
        if self.random.random() < 0.5:
            key = self.random.choice([k for k in range(-3, 120) if k not in self.versions])
            data[0:2] = struct.pack(">h", key)
        else:
            version = self.random.choice((-1, -32768, 32767, 99, *range(0, 40)))
            data[2:4] = struct.pack(">h", version)
        return Fuzzed(_with_prefix(bytes(data)), "unknown_api", label)

    def _oversize(self, label: str, payload: bytes) -> Fuzzed:
        size = self.random.choice((DEFAULT_MAX_FRAME_SIZE + 1, 0x7FFFFFFF, -1, -(1 << 31), 1 << 30))
        return Fuzzed(struct.pack(">i", size) + payload[:64], "oversize", label, oversize=True)

    def _cut(self, label: str, payload: bytes) -> Fuzzed:
        whole = _with_prefix(payload)
        cut = self.random.randrange(1, len(whole))
        return Fuzzed(whole[:cut], "cut", label, complete=False)


#: Strategy name -> relative weight.
STRATEGIES: dict[str, int] = {
    "random_bytes": 1,
    "random_body": 2,
    "flip": 4,
    "overwrite": 4,
    "truncate": 2,
    "extend": 1,
    "splice": 1,
    "unknown_api": 1,
    "oversize": 1,
    "cut": 1,
}
