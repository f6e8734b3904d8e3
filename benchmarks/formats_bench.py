"""Speed of lethe's segment readers and tools against Kafka's and the Python clients'.

Usage::

    python benchmarks/formats_bench.py [--size-mib 256] [--repeat 3] [--out benchmarks/results]

Theory of operation
-------------------
One run measures, on one generated segment (``bench_data``; at least
``--size-mib`` MiB of uncompressed 100-byte-value records), in this order:

1. whole-process figures (subprocesses, not pinned): ``lethe verify FILE``,
   ``lethe dump --deep-iteration FILE`` and ``lethe dump FILE`` with stdout
   to /dev/null, plus ``lethe verify`` of a one-batch file as the fixed cost
   of starting the interpreter and importing the tool;
2. one-core figures (this process pinned to one CPU): the library function
   ``lethe verify`` runs (``verify_paths``), a shallow ``LogScanner`` pass,
   and records/s of every reader in ``bench_readers`` over the same bytes
   (lethe C and pure Python, kafka-python, aiokafka; the Construct decoder
   on a slice, extrapolated).

All readers must report the generated record count (Construct: the slice's
count, cross-checked with aiokafka on the same slice), else the run fails.
Figures, targets with PASS/MISS, machine info and notes go to
``<out>/formats.json`` and ``<out>/formats.md``. The segment is in the page
cache when timing starts (it was just hashed), as it would be for a tool run
right after a broker wrote it.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import bench_readers as readers
from bench_data import MIB, Segment, ensure_segment
from bench_report import Figure, Target, evaluate, write_results
from bench_timing import BenchError, OtherWork, best_of, pinned, time_command
from lethe_formats.model import BatchHeader
from lethe_formats.records import scan
from lethe_formats.records.scan import LogScanner
from lethe_tools.inspect.problems import Problems
from lethe_tools.inspect.verify_tree import VerifyOptions, verify_paths

HERE = Path(__file__).resolve().parent
MB = 1_000_000
M = 1_000_000

#: Measured on this kind of machine (2 cores): Kafka 4.0 kafka-dump-log, whole process.
KAFKA_DUMP_DEEP_RECORDS_S = 0.34 * M
KAFKA_DUMP_SHALLOW_MB_S = 150.0
#: Same machine class, same access pattern: reference figures for the Python clients.
REF_KAFKA_PYTHON_RECORDS_S = 0.28 * M
REF_AIOKAFKA_RECORDS_S = 2.6 * M

TARGETS = [
    Target("verify_library", "lethe verify, library in-process >= 1 GB/s", 1000.0),
    Target("verify_cli", "lethe verify, whole process >= 1 GB/s", 1000.0),
    Target(
        "dump_deep_cli",
        "lethe dump --deep-iteration >= kafka-dump-log (0.34 M records/s)",
        KAFKA_DUMP_DEEP_RECORDS_S / M,
        source="Kafka 4.0 kafka-dump-log --deep-iteration, whole process, this machine class",
    ),
    Target(
        "dump_shallow_cli",
        "lethe dump (shallow) >= kafka-dump-log (150 MB/s)",
        KAFKA_DUMP_SHALLOW_MB_S,
        source="Kafka 4.0 kafka-dump-log, whole process, this machine class",
    ),
    Target(
        "decode_lethe_c",
        "decode (C) >= 5 x kafka-python, same run",
        relative_to="decode_kafka_python",
        factor=5.0,
    ),
    Target(
        "decode_lethe_c",
        "decode (C) >= aiokafka C reader, same run (aim)",
        relative_to="decode_aiokafka",
    ),
    Target(
        "decode_lethe_c",
        "decode (C) >= 5 x kafka-python reference (1.4 M records/s)",
        5 * REF_KAFKA_PYTHON_RECORDS_S / M,
        source="kafka-python about 0.28 M records/s on this machine class",
    ),
]


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mib", type=float, default=256.0, help="segment size (MiB)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best counts")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="results directory")
    parser.add_argument("--data-dir", type=Path, default=HERE / "data", help="segment cache")
    parser.add_argument(
        "--construct-mib", type=float, default=2.0, help="slice for the Construct decoder (MiB)"
    )
    parser.add_argument("--cpu", type=int, default=None, help="CPU for one-core figures")
    parser.add_argument("--note", action="append", default=[], help="a note for the results")
    return parser.parse_args(argv)


def _lethe_command() -> list[str]:
    script = Path(sys.executable).with_name("lethe")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "lethe_tools.cli"]


def _shown(path: str) -> str:
    """``path`` relative to the repository when inside it (results are committed)."""
    repo = HERE.parent
    full = Path(path).resolve()
    return str(full.relative_to(repo)) if full.is_relative_to(repo) else str(full)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _machine() -> dict[str, Any]:
    versions = {}
    for module in ("kafka", "aiokafka"):
        versions[module] = getattr(__import__(module), "__version__", "?")
    return {
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "lethe_implementation": scan.implementation(),
        "lethe_c_available": scan._cscan is not None,
        "aiokafka_c": readers.aiokafka_is_c(),
        "kafka_python_version": versions["kafka"],
        "aiokafka_version": versions["aiokafka"],
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
    }


class Bench:
    """One benchmark run over one segment; fills ``figures`` and ``counts``."""

    def __init__(self, args: argparse.Namespace, segment: Segment, tiny: Segment) -> None:
        self.args = args
        self.segment = segment
        self.tiny = tiny
        self.figures: dict[str, Figure] = {}
        self.counts: dict[str, int] = {}
        self.env = {k: v for k, v in os.environ.items() if k != "LETHE_PURE_PYTHON"}
        self.lethe = _lethe_command()

    def add(
        self, name: str, label: str, rate: tuple[float, str], runs: list[float], note: str = ""
    ) -> None:
        """Record ``rate`` = (amount of work, unit) done in the best of ``runs``."""
        amount, unit = rate
        best = min(runs)
        figure = Figure(name, label, amount / best, unit, best, [round(r, 4) for r in runs], note)
        self.figures[name] = figure
        print(f"  {label}: {figure.value:,.3f} {unit} (best {best:.3f} s)", flush=True)

    # -- whole processes -------------------------------------------------------
    def processes(self) -> None:
        seg, repeat, lethe, env = self.segment, self.args.repeat, self.lethe, self.env
        runs = time_command(repeat, [*lethe, "verify", self.tiny.path], env)
        self.figures["cli_startup"] = Figure(
            "cli_startup",
            "lethe verify of a 1-batch file (fixed cost)",
            min(runs) * 1000,
            "ms",
            min(runs),
            [round(r, 4) for r in runs],
            "interpreter start + imports; lower is better",
        )
        print(f"  startup: {min(runs) * 1000:.0f} ms", flush=True)
        runs = time_command(repeat, [*lethe, "verify", seg.path], env)
        self.add("verify_cli", "lethe verify FILE (whole process)", (seg.size / MB, "MB/s"), runs)
        runs = time_command(repeat, [*lethe, "dump", "--deep-iteration", seg.path], env)
        self.add(
            "dump_deep_cli",
            "lethe dump --deep-iteration FILE >/dev/null (whole process)",
            (seg.records / M, "M records/s"),
            runs,
            f"{seg.size / MB / min(runs):.0f} MB/s",
        )
        runs = time_command(repeat, [*lethe, "dump", seg.path], env)
        self.add(
            "dump_shallow_cli",
            "lethe dump FILE >/dev/null (shallow, whole process)",
            (seg.size / MB, "MB/s"),
            runs,
            f"{seg.batches / min(runs):,.0f} batches/s",
        )

    # -- one core ----------------------------------------------------------------
    def verify_library(self) -> None:
        def verify() -> int:
            problems = Problems()
            verify_paths([self.segment.path], VerifyOptions(), problems)
            found = [str(p) for p in problems]
            if found:
                raise BenchError(f"verify found problems: {found[:3]}")
            return 0

        runs, _ = best_of(self.args.repeat, verify)
        self.add(
            "verify_library",
            "verify_paths, lethe verify's library (in-process, 1 core)",
            (self.segment.size / MB, "MB/s"),
            runs,
            "mmap + LogScanner + CRC-32C + checks",
        )

    def shallow_scan(self, data: bytes) -> None:
        def shallow() -> int:
            entries = LogScanner(data)
            return sum(e.header.records_count for e in entries if isinstance(e.header, BatchHeader))

        runs, self.counts["scan_headers"] = best_of(self.args.repeat, shallow)
        self.add(
            "scan_shallow",
            "LogScanner shallow pass with CRC (in-process, 1 core)",
            (self.segment.size / MB, "MB/s"),
            runs,
        )

    def decode(self, data: bytes) -> None:
        repeat, rate = self.args.repeat, (self.segment.records / M, "M records/s")
        for impl in ("c", "python"):
            if impl == "c" and scan._cscan is None:
                continue
            previous = scan.set_implementation(impl)
            try:
                runs, self.counts[f"lethe_{impl}"] = best_of(
                    repeat, lambda: readers.read_lethe(data)
                )
            finally:
                scan.set_implementation(previous)
            self.add(
                f"decode_lethe_{impl}",
                f"lethe scan.read_log, {impl} (1 core)",
                rate,
                runs,
                "CRC-32C checked per batch",
            )
        runs, self.counts["kafka_python"] = best_of(repeat, lambda: readers.read_kafka_python(data))
        self.add(
            "decode_kafka_python", "kafka-python MemoryRecords (1 core)", rate, runs, "no CRC check"
        )
        runs, self.counts["aiokafka"] = best_of(repeat, lambda: readers.read_aiokafka(data))
        built = "C (_crecords)" if readers.aiokafka_is_c() else "PURE PYTHON build"
        self.add(
            "decode_aiokafka",
            "aiokafka MemoryRecords (1 core)",
            rate,
            runs,
            f"{built}; no CRC check",
        )

    def construct(self, data: bytes) -> None:
        limit = int(self.args.construct_mib * MIB)
        end = expected = 0
        for entry in LogScanner(data):
            if end and entry.position + entry.header.size_in_bytes > limit:
                break
            end = entry.position + entry.header.size_in_bytes
            expected += entry.header.records_count if isinstance(entry.header, BatchHeader) else 1
        piece = data[:end]
        cross = readers.read_aiokafka(piece)
        runs, count = best_of(self.args.repeat, lambda: readers.read_construct(piece))
        if not count == cross == expected:
            raise BenchError(
                f"slice: construct {count}, aiokafka {cross}, headers {expected} records"
            )
        self.counts["construct_slice"] = count
        whole = self.segment.records / (count / min(runs))
        scope = (
            f"EXTRAPOLATED from {end:,} bytes" if end < len(data) else f"whole file, {end:,} bytes"
        )
        self.add(
            "decode_construct",
            "Construct normative decode_log (1 core)",
            (count / M, "M records/s"),
            runs,
            f"{scope} / {count:,} records; whole file would take ~{whole:.0f} s; CRC checked",
        )

    def check_counts(self) -> None:
        wanted = self.segment.records
        for name in ("scan_headers", "lethe_c", "lethe_python", "kafka_python", "aiokafka"):
            if name in self.counts and self.counts[name] != wanted:
                raise BenchError(f"{name} read {self.counts[name]} records, generated {wanted}")


def _command_line(argv: Sequence[str]) -> str:
    """The command as run, without ``--note`` texts (they are listed under the table)."""
    shown: list[str] = []
    skip = False
    for arg in argv:
        if skip or arg == "--note" or arg.startswith("--note="):
            skip = arg == "--note"
            continue
        shown.append(arg)
    return " ".join(["python benchmarks/formats_bench.py", *shown])


def _notes(args: argparse.Namespace, machine: dict[str, Any]) -> list[str]:
    notes = [
        "Best of N wall-clock runs; MB = 10^6 bytes. Segment in the page cache.",
        "Whole-process figures include interpreter start and imports (see the startup row).",
        "One-core figures: this process pinned with os.sched_setaffinity; subprocesses unpinned.",
        "Readers touch offset, timestamp, key, value and headers of every record; lethe's "
        "read_log also checks every batch CRC, kafka-python and aiokafka do not.",
        f"Reference figures on this machine class: kafka-python about "
        f"{REF_KAFKA_PYTHON_RECORDS_S / M} M records/s, aiokafka about "
        f"{REF_AIOKAFKA_RECORDS_S / M} M records/s; kafka-dump-log (Kafka 4.0) "
        f"{KAFKA_DUMP_DEEP_RECORDS_S / M} M records/s deep, "
        f"{KAFKA_DUMP_SHALLOW_MB_S:.0f} MB/s shallow.",
    ]
    other, wall = machine["other_cpu_seconds"], machine["wall_seconds"]
    if other is not None and other > 0.05 * wall:
        notes.append(
            f"Other work ran on this {machine['cpu_count']}-CPU machine during the run: other "
            f"processes used {other:.0f} CPU-seconds in {wall:.0f} s (on average "
            f"{other / wall:.2f} CPUs busy); figures are lower bounds."
        )
    elif other is not None:
        notes.append(f"Other processes used {other:.1f} CPU-seconds during the {wall:.0f} s run.")
    return notes + list(args.note)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    machine = _machine()
    meter = OtherWork()
    print(f"segment of >= {args.size_mib} MiB under {args.data_dir} ...", flush=True)
    segment = ensure_segment(args.data_dir, int(args.size_mib * MIB))
    tiny = ensure_segment(args.data_dir, 1, name="tiny")
    print(f"  {segment.size:,} bytes, {segment.records:,} records, {segment.batches:,} batches")
    bench = Bench(args, segment, tiny)
    cpu = args.cpu if args.cpu is not None else max(os.sched_getaffinity(0))
    try:
        bench.processes()
        data = Path(segment.path).read_bytes()
        with pinned(cpu):
            bench.verify_library()
            bench.shallow_scan(data)
            bench.decode(data)
            bench.construct(data)
        bench.check_counts()
    except BenchError as error:
        print(f"benchmark failed: {error}", file=sys.stderr)
        return 1
    machine["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    machine |= meter.stop()
    machine["pinned_cpu"] = cpu
    result = {
        "started": started,
        "command": _command_line(sys.argv[1:] if argv is None else argv),
        "repeat": args.repeat,
        "machine": machine,
        "segment": {k: v for k, v in asdict(segment).items() if k != "path"}
        | {"file": _shown(segment.path)},
        "counts": bench.counts,
        "figures": bench.figures,
        "targets": evaluate(TARGETS, bench.figures),
        "notes": _notes(args, machine),
    }
    for path in write_results(args.out, result):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
