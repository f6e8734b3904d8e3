"""Shared facts of the cleaner tests, all read from the golden compaction case.

The golden case (fixtures/golden/compaction, README "compaction") was cleaned by
a real Kafka 4.0 broker: ``pass0`` before any cleaning, ``pass1`` after the
first cleaning, ``pass2`` after a later one past the delete horizon. Values
here come from its ``dump.txt`` files and ``case.json``, never from lethe.
"""

from __future__ import annotations

import json
from pathlib import Path

from lethe_formats.fixtures import fixtures_root
from lethe_reference.cleaner.algorithm import SourceSegment
from lethe_reference.cleaner.filter import LastRecord

GOLDEN = fixtures_root() / "golden" / "compaction"
TOPIC = "golden-compact"


def topic_configs() -> dict[str, str]:
    case = json.loads((GOLDEN / "case.json").read_text())
    return dict(case["topics"][0]["configs_at_creation"])


#: pass1/dump.txt: every batch given a horizon shows deleteHorizonMs: OptionalLong[1795289305712].
HORIZON_MS = 1795289305712
#: case.json: delete.retention.ms=6000; Kafka's horizon = cleaning start time + delete.retention.ms.
DELETE_RETENTION_MS = int(topic_configs()["delete.retention.ms"])
PASS1_NOW_MS = HORIZON_MS - DELETE_RETENTION_MS
#: log-cleaner.log: the second cleaning began at 19:28:43,577 UTC (past the horizon).
PASS2_NOW_MS = 1795289323577
#: pass0/.../00000000000000000016.snapshot: producer 0, epoch 0, lastOffset 14.
PASS1_PRODUCERS = {0: LastRecord(14, 0)}
#: pass2/.../00000000000000000019.snapshot: producers 0 (lastOffset 14) and 1000 (lastOffset 17).
PASS2_PRODUCERS = {0: LastRecord(14, 0), 1000: LastRecord(17, 0)}
INDEX_INTERVAL_BYTES = int(topic_configs()["index.interval.bytes"])
SEGMENT_BYTES = 1073741824  # broker log.segment.bytes in case.json
SEGMENT_INDEX_BYTES = 10485760  # Kafka's default segment.index.bytes


def partition_dir(capture: str) -> Path:
    return GOLDEN / capture / f"{TOPIC}-0"


def source_segments(capture: str) -> list[SourceSegment]:
    """The segments of a capture as the pure cleaner takes them."""
    found = []
    for path in sorted(partition_dir(capture).glob("*.log")):
        found.append(
            SourceSegment(
                int(path.stem),
                path.read_bytes(),
                path.stat().st_mtime_ns // 1_000_000,
                path.with_suffix(".index").stat().st_size,
                path.with_suffix(".timeindex").stat().st_size,
                file=str(path),
            )
        )
    return found


def pass2_input_segments() -> list[SourceSegment]:
    """pass1's segments plus the two rounds produced after it.

    The batch at offsets 16-17 is copied unchanged into pass2's first segment
    (dump: position 305, size 123, no horizon), and offset 18 is pass2's active
    segment: together with pass1 that is the log Kafka's second cleaning saw
    (log-cleaner.log: segments 0, 15, 16 cleaned, range [15, 18)).
    """
    segments = source_segments("pass1")
    pass2 = partition_dir("pass2")
    head = (pass2 / "00000000000000000000.log").read_bytes()
    segments.append(SourceSegment(16, head[305 : 305 + 123], 0, 0, 12))
    active = (pass2 / "00000000000000000018.log").read_bytes()
    segments.append(SourceSegment(18, active, 0, 0, 12))
    return segments


def golden_topic_overrides() -> dict[str, str]:
    """The topic's configs when Kafka cleaned it (min.compaction.lag.ms set to 0)."""
    return topic_configs() | {"min.compaction.lag.ms": "0"}


def copy_capture(capture: str, log_dir: Path) -> Path:
    """A log dir holding the capture's partition and root checkpoints."""
    import shutil

    log_dir.mkdir(parents=True, exist_ok=True)
    for path in (GOLDEN / capture).iterdir():
        if path.is_dir():
            shutil.copytree(path, log_dir / path.name)
        elif path.name != "dump.txt":
            shutil.copy2(path, log_dir / path.name)
    return log_dir / f"{TOPIC}-0"
