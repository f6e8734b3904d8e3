"""Writes conformance/FAULTS.md from the fault registry and a fault run.

Theory of operation
-------------------
``python -m lethe_conformance.faults_doc [PATH]`` renders every registered
fault (name, description, requirements, hook module) and the figures of a
``--whole-profile`` fault run (:func:`lethe_conformance.faults.run_faults`)
into one Markdown file, so the document never lists a fault the broker does
not have or misses one it has. tests/conformance/test_faults.py checks the
fault sections against the registry and the count in the detection figures.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lethe_conformance.faults import FaultSpec, fault_report_data, run_faults

__all__ = ["render_faults_doc"]

_INTRO = """\
# Deliberate faults of the reference broker

A conformance suite that passes a wrong broker has a blind spot. To show the
suite's power instead of assuming it, the reference broker can be told to make
named mistakes, each one an error an implementer of these semantics plausibly
makes, and the suite is run against each faulty variant: it must fail.

- Registry: `reference/lethe_reference/faults.py` (`FAULTS`, `active(scope, name)`).
- Switch: the broker config `lethe.faults`, comma-separated names, default empty.
  An unknown name stops the broker at startup (`Invalid value X for configuration
  lethe.faults: ...`). Like Kafka's internal configs, DescribeConfigs of a broker
  lists it only when it was set.
- Hooks: each fault acts at one place, an `if faults.active(...)` in the module
  named below; nothing else in the normal path knows about faults.
- Runner: `lethe conformance faults [--fault NAME ...] [--whole-profile] [--report DIR] [--json]`
  starts a control broker without faults, then one embedded broker per fault, and
  runs the scenarios covering the requirements the fault names (`--whole-profile`:
  every scenario of their profiles). A fault is **detected** when some scenario
  FAILs under it and PASSes in the control. It prints the table fault x detected
  (by which scenarios and requirements) and "N of M faults detected"; `--report DIR`
  writes `faults.json` and `faults.md`; exit 0 when every fault was detected, 1 when
  one was not, 2 when the run cannot start. `tox -e faults` writes `reports/faults/`.
- Test: `tests/conformance/test_faults.py` runs every fault (one broker each) and
  requires a FAIL; faults no scenario catches yet are strict expected failures
  there, listed under *Detection*.
- This file: `python -m lethe_conformance.faults_doc` (runs the faults, rewrites it).
"""


def render_faults_doc(specs: Sequence[FaultSpec], data: Mapping[str, Any]) -> str:
    """The whole document: intro, detection figures, one section per fault."""
    lines = [_INTRO, "## Detection", ""]
    lines.append(f"**{data['summary']}** ({data['scope']}, lethe {data['lethe_version']}).")
    lines += ["", "| fault | detected | by scenarios |", "|---|---|---|"]
    for row in data["faults"]:
        by = ", ".join(f"`{s}`" for s in row["detected_by"]) or "none"
        mark = "yes" if row["detected"] else "**no**"
        lines.append(f"| `{row['fault']}` | {mark} | {by} |")
    lines += ["", "## Faults", ""]
    for spec in specs:
        lines += [
            f"### `{spec.name}`",
            "",
            spec.description,
            "",
            f"- breaks: {', '.join(spec.requirements)}",
            f"- acts in: `reference/lethe_reference/{spec.where}`",
            "",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    path = Path(args[0]) if args else Path(__file__).resolve().parents[1] / "FAULTS.md"
    run = run_faults(whole_profile=True)
    specs = [f.fault for f in run.faults]
    path.write_text(render_faults_doc(specs, fault_report_data(run)), encoding="utf-8")
    print(f"{path}: {run.detected} of {len(run.faults)} faults detected")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
