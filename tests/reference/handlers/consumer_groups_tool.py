"""What ``kafka-consumer-groups.sh`` printed against a real Kafka 4.0.0
(fixtures/golden/consumer-groups): its tables parsed into rows, one per step.

The tool builds every table from a handful of answers (ListGroups, DescribeGroups,
OffsetFetch, ListOffsets, DeleteGroups, OffsetCommit), so the protocol-level tests
compare lethe's answers with the values the tables show.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from lethe_formats.fixtures import fixtures_root

__all__ = ["OUTPUTS", "random_group", "rows", "stdout"]

FIXTURE = fixtures_root() / "golden" / "consumer-groups" / "kafka" / "outputs.json"
OUTPUTS: list[dict[str, Any]] = json.loads(FIXTURE.read_text())


def stdout(step: str) -> str:
    """What the step printed on Kafka."""
    return str(next(o["stdout"] for o in OUTPUTS if o["step"] == step))


@cache
def rows(step: str) -> tuple[dict[str, str], ...]:
    """The rows of the step's table, keyed by column header (``--list``: GROUP only).

    Headers and cells are separated by blanks; "COORDINATOR (ID)" is two headers and
    its cell two words, so the zip stays aligned."""
    lines = [line for line in stdout(step).splitlines() if line.strip()]
    if not lines or not lines[0].startswith("GROUP"):
        return tuple({"GROUP": line.strip()} for line in lines if not line.startswith("Error"))
    header = lines[0].split()
    out = []
    for line in lines[1:]:
        cells = line.split()
        assert len(cells) == len(header), (step, line)
        out.append(dict(zip(header, cells, strict=True)))
    return tuple(out)


def random_group() -> str:
    """The console consumer's random group of the recorded run."""
    (name,) = [r["GROUP"] for r in rows("list-active") if r["GROUP"].startswith("console-")]
    return name
