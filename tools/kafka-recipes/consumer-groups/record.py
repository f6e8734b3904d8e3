"""Recipe: a classic consumer group's life seen through ``kafka-consumer-groups.sh``.

    python record.py KAFKA_HOME BOOTSTRAP OUT_FILE [SERVER_LOG]

Runs :data:`STEPS` in order against the broker at ``BOOTSTRAP`` with the tools of
``KAFKA_HOME`` (console producer and consumers, ``kafka-consumer-groups.sh``) and writes
``OUT_FILE`` (JSON): per step its command line, exit status, stdout and the seconds since
the recipe started. The scenario: a topic ``orders`` (3 partitions, 30 keyed records), a
console consumer with a random group (``console-consumer-NNNNN``, no commits) that stops
after 5 records, a console consumer in group ``shop`` (auto commit), the tool's views while
it is active, after it left (SIGTERM: LeaveGroup), a reset while active and after, a
second consumer killed with SIGKILL (its member expires after ``session.timeout.ms`` 6000)
and the views after that, a deletion, then ``--list`` polled until the random group is gone
(Kafka removes an Empty group without offsets in its periodic cleanup,
``offsets.retention.check.interval.ms``). With ``SERVER_LOG`` (Kafka's server.log), the
lines of that cleanup are kept too. Run it against a real Kafka 4.0.0 (the fixture) and
against ``lethe broker`` (tests/interop/test_consumer_groups_tool.py, which masks member ids).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RECORDS = "".join(f"k{i:02d}:v{i:02d}\n" for i in range(30))
MORE = "".join(f"k{i:02d}:v{i:02d}\n" for i in range(30, 36))
GROUP = "shop"
#: a tool run whose output says this is repeated (a loaded 2-core machine made the
#: admin client time out now and then); each try starts a fresh JVM
TRANSIENT = ("TimeoutException", "Failed to find brokers")
TRIES = 5
#: server.log lines kept: the cleanup job's tombstones, deletions, the load of the
#: offsets partitions holding the groups (0: console-consumer-NNNNN may hash there)
LOGGED = r"tombstone|groups were deleted|is now empty|has failed, removing|loading of metadata"
_CG = ["kafka-consumer-groups.sh", "--bootstrap-server", "{b}"]
_DESCRIBE = [*_CG, "--describe", "--group", GROUP]
_PRODUCE = [
    "kafka-console-producer.sh",
    "--bootstrap-server",
    "{b}",
    "--topic",
    "orders",
    "--property",
    "parse.key=true",
    "--property",
    "key.separator=:",
]
_CONSUME = ["kafka-console-consumer.sh", "--bootstrap-server", "{b}", "--topic", "orders"]
_SHORT_SESSION = [
    "--consumer-property",
    "session.timeout.ms=6000",
    "--consumer-property",
    "heartbeat.interval.ms=1000",
]
_RESET = [*_CG, "--reset-offsets", "--group", GROUP, "--topic", "orders", "--to-earliest"]


def _views(tag: str) -> list[tuple[Any, ...]]:
    return [
        ("run", f"list-{tag}", [*_CG, "--list"]),
        ("run", f"list-state-{tag}", [*_CG, "--list", "--state"]),
        ("run", f"describe-{tag}", _DESCRIBE),
        ("run", f"members-{tag}", [*_DESCRIBE, "--members"]),
        ("run", f"members-verbose-{tag}", [*_DESCRIBE, "--members", "--verbose"]),
        ("run", f"state-{tag}", [*_DESCRIBE, "--state"]),
        ("run", f"offsets-{tag}", [*_DESCRIBE, "--offsets"]),
    ]


#: (action, name, ...): run a tool; start/stop/kill a background consumer; wait for
#: output lines of one; wait until ``--describe --state`` shows a state
STEPS: list[tuple[Any, ...]] = [
    (
        "run",
        "create",
        [
            "kafka-topics.sh",
            "--bootstrap-server",
            "{b}",
            "--create",
            "--topic",
            "orders",
            "--partitions",
            "3",
            "--replication-factor",
            "1",
        ],
    ),
    ("run", "produce", _PRODUCE, RECORDS),
    ("start", "anonymous", [*_CONSUME, "--from-beginning", "--max-messages", "5"]),
    ("lines", "anonymous", 5),
    ("exit", "anonymous"),
    ("start", "c1", [*_CONSUME, "--group", GROUP, "--from-beginning"]),
    ("lines", "c1", 30),
    ("sleep", 7),  # auto.commit.interval.ms is 5000
    *_views("active"),
    ("run", "reset-active", [*_RESET, "--execute"]),
    ("run", "delete-active", [*_CG, "--delete", "--group", GROUP]),
    ("stop", "c1"),
    ("run", "produce-more", _PRODUCE, MORE),
    *_views("left"),
    ("run", "reset-dry-run", [*_RESET, "--dry-run"]),
    ("run", "reset-left", [*_RESET, "--execute"]),
    ("run", "offsets-reset", [*_DESCRIBE, "--offsets"]),
    ("start", "c2", [*_CONSUME, "--group", GROUP, *_SHORT_SESSION]),
    ("lines", "c2", 36),
    ("sleep", 7),
    ("run", "members-c2", [*_DESCRIBE, "--members"]),
    ("kill", "c2"),
    ("run", "members-killed", [*_DESCRIBE, "--members"]),
    ("state", "Empty"),
    *_views("expired"),
    ("run", "delete", [*_CG, "--delete", "--group", GROUP]),
    ("run", "list-deleted", [*_CG, "--list"]),
    ("run", "describe-deleted", [*_DESCRIBE]),
    ("gone", "console-consumer-"),
]


def main(home: str, bootstrap: str, out: str, server_log: str | None = None) -> None:
    start = time.monotonic()
    results: list[dict[str, Any]] = []
    procs: dict[str, tuple[subprocess.Popen[str], list[str]]] = {}

    def cmd(args: list[str]) -> list[str]:
        return [f"{home}/bin/{args[0]}", *(a.replace("{b}", bootstrap) for a in args[1:])]

    def run(name: str, args: list[str], stdin: str = "") -> dict[str, Any]:
        for _ in range(TRIES):
            done = subprocess.run(
                cmd(args), input=stdin, capture_output=True, text=True, check=False
            )
            if not any(sign in done.stdout for sign in TRANSIENT):
                break
            print(f"{name}: retried after {done.stdout.strip()}", file=sys.stderr)
        entry = {
            "step": name,
            "argv": ["bin/" + args[0], *args[1:]],
            "exit": done.returncode,
            "stdout": done.stdout,
            "at_s": round(time.monotonic() - start, 1),
        }
        print(f"[{entry['at_s']:7.1f}] {name}: exit {done.returncode}", file=sys.stderr)
        return entry

    def read_lines(name: str, count: int) -> None:
        proc, lines = procs[name]
        assert proc.stdout is not None
        while len(lines) < count:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{name} ended after {len(lines)} lines")
            lines.append(line)

    for step in STEPS:
        action = step[0]
        if action == "run":
            results.append(run(step[1], step[2], step[3] if len(step) > 3 else ""))
        elif action == "start":
            proc = subprocess.Popen(cmd(step[2]), stdout=subprocess.PIPE, text=True)
            procs[step[1]] = (proc, [])
        elif action == "lines":
            read_lines(step[1], step[2])
        elif action == "exit":
            procs[step[1]][0].wait(60)
        elif action == "sleep":
            time.sleep(step[1])
        elif action in ("stop", "kill"):
            proc = procs[step[1]][0]
            proc.send_signal(signal.SIGTERM if action == "stop" else signal.SIGKILL)
            proc.wait(60)
        elif action == "state":
            first = time.monotonic()
            while f" {step[1]} " not in run("poll", [*_DESCRIBE, "--state"])["stdout"]:
                time.sleep(1)
            results.append(
                {
                    "step": f"until-{step[1]}",
                    "waited_s": round(time.monotonic() - first, 1),
                    "at_s": round(time.monotonic() - start, 1),
                }
            )
        elif action == "gone":
            polls = []
            while True:
                entry = run("poll-list", [*_CG, "--list"])
                names = entry["stdout"].split()
                polls.append({"at_s": entry["at_s"], "groups": names})
                if not any(n.startswith(step[1]) for n in names) and "Error:" not in names:
                    break
                time.sleep(10)
            results.append({"step": "until-gone", "polls": polls})
            results.append(run("list-gone", [*_CG, "--list"]))
    if server_log:
        text = Path(server_log).read_text(errors="replace")
        kept = [line for line in text.splitlines() if re.search(LOGGED, line)]
        results.append({"step": "server-log", "lines": kept})
    Path(out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
