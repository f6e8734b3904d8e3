"""Compare two runs of record.py (Kafka's and lethe's) after masking what legitimately differs.

    python compare.py KAFKA_OUT LETHE_OUT

Masked: member ids (random per run), the coordinator's ``host:port`` in ``--state``
(each run's own proxy), and, in the steps with two members (``two-*``), which
member holds which partitions: the uniform assignor's split follows the hash
order of the random member ids, so only the shape is compared there (rows sorted,
client ids and partition lists masked). Prints each difference; exit 1 if any.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

_MEMBER_ID = re.compile(r"(?<![\w/+])[A-Za-z0-9_\-/+]{22}(?![\w/+])")
_COORDINATOR = re.compile(r"127\.0\.0\.1:\d+ ")
_CLIENT = re.compile(r"member-[ab]")
_PARTITIONS = re.compile(r"orders:[\d,]+")


def normalized(step: str, text: str) -> list[str]:
    text = _COORDINATOR.sub("127.0.0.1:PORT ", _MEMBER_ID.sub("<member-id>", text))
    lines = text.splitlines()
    if step.startswith("two-"):
        lines = sorted(
            _PARTITIONS.sub("orders:<p>", _CLIENT.sub("<client>", line)) for line in lines
        )
    return lines


def main(kafka: Path, lethe: Path) -> int:
    theirs = json.loads((kafka / "outputs.json").read_text())
    ours = json.loads((lethe / "outputs.json").read_text())
    problems = 0
    for a, b in zip(theirs, ours, strict=True):
        step = a["step"]
        if a["exit"] != b["exit"]:
            print(f"{step}: exit {a['exit']} on Kafka, {b['exit']} on lethe")
            problems += 1
        if normalized(step, a["stdout"]) != normalized(step, b["stdout"]):
            print(f"{step}: output differs\n--- Kafka\n{a['stdout']}--- lethe\n{b['stdout']}")
            problems += 1
    print(f"{len(theirs)} steps compared, {problems} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
