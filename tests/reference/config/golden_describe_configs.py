"""A tiny reader of Kafka's DescribeConfigs responses in the golden wire frames.

Only for tests of the config package: it decodes response frames of API key 32,
versions 1-4, from ``fixtures/golden/wire/frames.jsonl`` into plain tuples, so
the expected values come from the bytes Kafka 4.0 sent, not from lethe.

Request (header v1, or v2 with tags when flexible)::

    size int32 | api_key int16 | api_version int16 | correlation_id int32
    client_id nullable int16 string | [header tags v4]
    resources [ resource_type int8 | resource_name string
                configuration_keys nullable [string] | tags ]
    include_synonyms bool (v1+) | include_documentation bool (v3+) | tags

Response layout (big-endian; v4 is flexible: compact strings/arrays, varint
lengths + 1, tagged fields after each struct and after the header)::

    size int32 | correlation_id int32 | [header tags v4]
    throttle_time_ms int32
    results [ error_code int16 | error_message nullable string
              resource_type int8 | resource_name string
              configs [ name string | value nullable string | read_only bool
                        config_source int8 | is_sensitive bool
                        synonyms [ name string | value nullable string | source int8 | tags ]
                        (v3+) config_type int8 | documentation nullable string
                        | tags ]
              | tags ]
    | tags
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

from lethe_formats.fixtures import fixtures_root


@dataclass(frozen=True)
class GoldenEntry:
    name: str
    value: str | None
    read_only: bool
    source: int
    sensitive: bool
    synonyms: tuple[tuple[str, str | None, int], ...]
    config_type: int | None


@dataclass(frozen=True)
class GoldenResource:
    error_code: int
    error_message: str | None
    resource_type: int
    resource_name: str
    entries: tuple[GoldenEntry, ...]


@dataclass(frozen=True)
class GoldenResponse:
    api_version: int
    client: str
    resources: tuple[GoldenResource, ...]
    include_synonyms: bool  # from the matching request
    requested_keys: tuple[str, ...] | None  # of the first resource of the request


class _Reader:
    def __init__(self, data: bytes, flexible: bool) -> None:
        self.data, self.pos, self.flexible = data, 0, flexible

    def fixed(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return int(value)

    def uvarint(self) -> int:
        result = shift = 0
        while True:
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return result

    def string(self) -> str | None:
        length = self.uvarint() - 1 if self.flexible else self.fixed(">h")
        if length < 0:
            return None
        text = self.data[self.pos : self.pos + length].decode("utf-8")
        self.pos += length
        return text

    def count(self) -> int:
        return self.uvarint() - 1 if self.flexible else self.fixed(">i")

    def tags(self) -> None:
        if self.flexible:
            for _ in range(self.uvarint()):
                self.uvarint()
                self.pos += self.uvarint()


def _entry(r: _Reader, version: int) -> GoldenEntry:
    name, value = r.string(), r.string()
    read_only, source, sensitive = r.fixed(">b"), r.fixed(">b"), r.fixed(">b")
    synonyms = []
    for _ in range(r.count()):
        synonym_name, synonym_value, synonym_source = r.string(), r.string(), r.fixed(">b")
        r.tags()
        assert synonym_name is not None
        synonyms.append((synonym_name, synonym_value, synonym_source))
    config_type = None
    if version >= 3:
        config_type = r.fixed(">b")
        r.string()  # documentation
    r.tags()
    assert name is not None
    return GoldenEntry(
        name, value, bool(read_only), source, bool(sensitive), tuple(synonyms), config_type
    )


def _request(hex_frame: str, version: int) -> tuple[bool, tuple[str, ...] | None]:
    r = _Reader(bytes.fromhex(hex_frame)[4:], flexible=version >= 4)
    r.fixed(">h"), r.fixed(">h"), r.fixed(">i")
    length = r.fixed(">h")  # client_id is a classic string even in header v2
    r.pos += max(length, 0)
    r.tags()
    first_keys: tuple[str, ...] | None = None
    for index in range(r.count()):
        r.fixed(">b"), r.string()
        count = r.count()
        keys = None if count < 0 else tuple(str(r.string()) for _ in range(count))
        r.tags()
        if index == 0:
            first_keys = keys
    include_synonyms = bool(r.fixed(">b")) if version >= 1 else False
    return include_synonyms, first_keys


def _response(
    hex_frame: str, version: int, client: str, request: tuple[bool, tuple[str, ...] | None]
) -> GoldenResponse:
    r = _Reader(bytes.fromhex(hex_frame)[4:], flexible=version >= 4)
    r.fixed(">i")  # correlation id
    r.tags()
    r.fixed(">i")  # throttle time
    resources = []
    for _ in range(r.count()):
        error_code, error_message = r.fixed(">h"), r.string()
        resource_type, resource_name = r.fixed(">b"), r.string()
        entries = tuple(_entry(r, version) for _ in range(r.count()))
        r.tags()
        assert resource_name is not None
        resources.append(
            GoldenResource(error_code, error_message, resource_type, resource_name, entries)
        )
    r.tags()
    assert r.pos == len(r.data), "trailing bytes in a DescribeConfigs response"
    return GoldenResponse(version, client, tuple(resources), request[0], request[1])


def golden_describe_configs_responses() -> list[GoldenResponse]:
    """Every DescribeConfigs response Kafka 4.0 sent in the golden wire capture."""
    frames = fixtures_root() / "golden" / "wire" / "frames.jsonl"
    requests: dict[tuple[int, int], tuple[bool, tuple[str, ...] | None]] = {}
    responses = []
    for line in frames.read_text().splitlines():
        frame = json.loads(line)
        if frame["api_key"] != 32:
            continue
        key = (frame["conn"], frame["correlation_id"])
        if frame["dir"] == "request":
            requests[key] = _request(frame["hex"], frame["api_version"])
        else:
            version, client = frame["api_version"], frame["client"]
            responses.append(_response(frame["hex"], version, client, requests[key]))
    return responses


def golden_broker_settings() -> dict[str, str]:
    """The wire case's static broker settings (case.json), log.dirs left out."""
    case = json.loads((fixtures_root() / "golden" / "wire" / "case.json").read_text())
    settings: dict[str, str] = dict(case["broker"]["settings"])
    settings.pop("log.dirs", None)
    return settings
