"""Golden wire frames recorded between real clients and Kafka 4.0 (fixtures/golden/wire).

``frames.jsonl`` holds one JSON object per frame, the whole frame (size prefix
included) as hex. ``README`` labels each exchange with a few decoded fields;
:func:`exchange_labels` turns a label line into a dict so tests can check
decoded values against what the recording says.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from lethe_formats.fixtures import fixtures_root

__all__ = ["Frame", "exchange_labels", "frame_by_seq", "load_frames", "wire_dir"]


def wire_dir() -> Path:
    return fixtures_root() / "golden" / "wire"


@dataclass(frozen=True)
class Frame:
    """One recorded frame."""

    seq: int
    direction: str  # "request" or "response"
    conn: int
    api_key: int
    api_version: int
    correlation_id: int
    client: str
    client_id: str
    raw: bytes  # the whole frame, size prefix included

    @property
    def payload(self) -> bytes:
        return self.raw[4:]

    @property
    def test_id(self) -> str:
        return f"{self.seq:04d}-{self.direction[:4]}-k{self.api_key}v{self.api_version}"


@cache
def load_frames() -> tuple[Frame, ...]:
    frames = []
    for line in (wire_dir() / "frames.jsonl").read_text().splitlines():
        item = json.loads(line)
        frames.append(
            Frame(
                seq=item["seq"],
                direction=item["dir"],
                conn=item["conn"],
                api_key=item["api_key"],
                api_version=item["api_version"],
                correlation_id=item["correlation_id"],
                client=item["client"],
                client_id=item["client_id"],
                raw=bytes.fromhex(item["hex"]),
            )
        )
    return tuple(frames)


def frame_by_seq(seq: int) -> Frame:
    return next(frame for frame in load_frames() if frame.seq == seq)


_LINE = re.compile(r"^#(?P<req>\d{4})/(?:#(?P<resp>\d{4})|none) ")
_PAIR = re.compile(r"(\w+)=(\S*)")


@cache
def exchange_labels() -> dict[int, dict[str, str]]:
    """Labels of each exchange, keyed by request seq and by response seq.

    ``{"api": "Produce", "version": "10", "req.acks": "-1", "resp.base_offset": "3",
    "errors": "0 NONE", ...}``
    """
    out: dict[int, dict[str, str]] = {}
    for line in (wire_dir() / "README").read_text().splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        head, *rest = line.split(" | ")
        api = re.search(r" (\w+) v(\d+) corr=", head)
        labels = {"api": api.group(1), "version": api.group(2)} if api else {}
        for part in rest:
            if part.startswith("req: "):
                labels.update({f"req.{k}": v for k, v in _PAIR.findall(part[5:])})
            elif part.startswith("resp errors: "):
                labels["errors"] = part[len("resp errors: ") :]
            else:
                labels.update({f"resp.{k}": v for k, v in _PAIR.findall(part)})
        out[int(match.group("req"))] = labels
        if match.group("resp"):
            out[int(match.group("resp"))] = labels
    return out
