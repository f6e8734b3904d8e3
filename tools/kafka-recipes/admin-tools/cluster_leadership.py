"""Recipe: leader elections and a reassignment on a three-broker Kafka, with Kafka's tools.

    python cluster_leadership.py KAFKA_HOME SCRATCH BOOTSTRAP OUT_DIR

The cluster: node 1 is broker and controller (its ``listeners`` at BOOTSTRAP), nodes 2
and 3 are brokers only, each configured by ``SCRATCH/k2.properties`` /
``SCRATCH/k3.properties`` and already formatted with node 1's cluster id. The recipe
starts and stops nodes 2 and 3 itself (SIGTERM to the process it started: a controlled
shutdown) and waits for the cluster to see the change through ``kafka-topics.sh
--describe`` of the topic that should move. ``OUT_DIR/outputs.json`` gets each tool
step as record.py writes them (``stdout``, ``stderr``, exit status), the broker steps
as ``{"step": ..., "broker": "stop"|"start"}``.

Steps: topics ``eta`` and ``epsilon`` on replicas [2, 3]; node 3 stops (ISR [2]), node
2 stops (no leader, ISR [2] kept), node 3 starts (not in the ISR: still no leader); a
preferred election of ``epsilon`` (replica 2 is down: not available) and an unclean one
of ``eta`` (node 3 leads); node 2 starts and follows. Then ``theta`` on [1] gets 50
records and is reassigned to [2, 3] with a 1 byte/s throttle so the move is seen in
progress (``--list``, ``--verify``), the throttle is raised, and ``--verify`` is
repeated until the reassignment is complete.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_PROCS: dict[int, subprocess.Popen[bytes]] = {}


def tool(home: str, args: list[str], stdin: str = "") -> dict[str, Any]:
    done = subprocess.run(
        [f"{home}/bin/{args[0]}", *args[1:]],
        check=False,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return {"argv": args, "exit": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def start(home: str, scratch: Path, node: int) -> None:
    env = dict(os.environ, KAFKA_HEAP_OPTS="-Xmx384m", LOG_DIR=str(scratch / f"logs{node}"))
    with (scratch / f"k{node}.out").open("ab") as out:
        _PROCS[node] = subprocess.Popen(
            [f"{home}/bin/kafka-server-start.sh", str(scratch / f"k{node}.properties")],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )


def stop(node: int) -> None:
    proc = _PROCS.pop(node)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)


def wait_for(home: str, bootstrap: str, topic: str, text: str) -> None:
    """Until ``kafka-topics.sh --describe --topic topic`` prints ``text``."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        shown = tool(
            home,
            ["kafka-topics.sh", "--bootstrap-server", bootstrap, "--describe", "--topic", topic],
        )
        if text in shown["stdout"]:
            return
        time.sleep(2)
    raise TimeoutError(f"{topic}: never saw {text!r}")


def wait_brokers(home: str, bootstrap: str, count: int) -> None:
    """Until ``count`` brokers answer ``kafka-broker-api-versions.sh`` (registered)."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        shown = tool(home, ["kafka-broker-api-versions.sh", "--bootstrap-server", bootstrap])
        if shown["stdout"].count(" (id: ") >= count:
            return
        time.sleep(2)
    raise TimeoutError(f"never saw {count} brokers")


def main(home: str, scratch: Path, bootstrap: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    reassign = out / "theta-reassign.json"
    reassign.write_text(
        '{"version":1,"partitions":[{"topic":"theta","partition":0,"replicas":[2,3]}]}'
    )
    b = ["--bootstrap-server", bootstrap]
    outputs: list[dict[str, Any]] = []

    def save() -> None:
        (out / "outputs.json").write_text(json.dumps(outputs, indent=1) + "\n")

    def run(step: str, args: list[str], stdin: str = "") -> None:
        outputs.append({"step": step, **tool(home, args, stdin)})
        save()

    def broker(step: str, action: str, node: int) -> None:
        (start(home, scratch, node) if action == "start" else stop(node))
        outputs.append({"step": step, "broker": action, "node": node})
        save()

    describe = ["kafka-topics.sh", *b, "--describe", "--topic"]
    elect = ["kafka-leader-election.sh", *b, "--election-type"]
    reassign_tool = ["kafka-reassign-partitions.sh", *b]
    for node in (2, 3):
        start(home, scratch, node)
    wait_brokers(home, bootstrap, 3)
    for topic in ("eta", "epsilon"):
        run(
            f"create-{topic}",
            ["kafka-topics.sh", *b, "--create", "--topic", topic, "--replica-assignment", "2:3"],
        )
    wait_for(home, bootstrap, "eta", "Isr: 2,3")
    run("describe-eta-start", [*describe, "eta"])
    run("elect-preferred-in-place", [*elect, "preferred", "--topic", "eta", "--partition", "0"])
    broker("stop-3", "stop", 3)
    wait_for(home, bootstrap, "eta", "Isr: 2\t")
    broker("stop-2", "stop", 2)
    wait_for(home, bootstrap, "eta", "Leader: none")
    broker("start-3", "start", 3)
    wait_brokers(home, bootstrap, 2)  # node 3 registered and unfenced; it is not in the ISR
    run("describe-eta-leaderless", [*describe, "eta"])
    run(
        "elect-preferred-unavailable",
        [*elect, "preferred", "--topic", "epsilon", "--partition", "0"],
    )
    run("elect-unclean-eta", [*elect, "unclean", "--topic", "eta", "--partition", "0"])
    run("describe-eta-unclean", [*describe, "eta"])
    run("elect-unclean-again", [*elect, "unclean", "--topic", "eta", "--partition", "0"])
    broker("start-2", "start", 2)
    wait_for(home, bootstrap, "eta", "Isr: 3,2")
    run("describe-eta-rejoined", [*describe, "eta"])
    run("describe-epsilon-rejoined", [*describe, "epsilon"])
    run("elect-preferred-all", [*elect, "preferred", "--all-topic-partitions"])
    run("describe-eta-preferred", [*describe, "eta"])
    run(
        "create-theta",
        ["kafka-topics.sh", *b, "--create", "--topic", "theta", "--replica-assignment", "1"],
    )
    records = "".join(f"value-{i:03d}-" + "x" * 200 + "\n" for i in range(50))
    run("produce-theta", ["kafka-console-producer.sh", *b, "--topic", "theta"], records)
    run(
        "reassign-execute-throttled",
        [*reassign_tool, "--execute", "--reassignment-json-file", str(reassign), "--throttle", "1"],
    )
    run("reassign-list-in-progress", [*reassign_tool, "--list"])
    run(
        "reassign-verify-in-progress",
        [
            *reassign_tool,
            "--verify",
            "--reassignment-json-file",
            str(reassign),
            "--preserve-throttles",
        ],
    )
    run("describe-theta-moving", [*describe, "theta"])
    run(
        "reassign-raise-throttle",
        [
            *reassign_tool,
            "--execute",
            "--additional",
            "--reassignment-json-file",
            str(reassign),
            "--throttle",
            "100000000",
        ],
    )
    wait_for(home, bootstrap, "theta", "Replicas: 2,3\t")
    run(
        "reassign-verify-done",
        [*reassign_tool, "--verify", "--reassignment-json-file", str(reassign)],
    )
    run("reassign-list-done", [*reassign_tool, "--list"])
    run("describe-theta-moved", [*describe, "theta"])
    for node in list(_PROCS):
        stop(node)


if __name__ == "__main__":
    try:
        main(sys.argv[1], Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4]))
    finally:
        for proc in _PROCS.values():
            proc.send_signal(signal.SIGTERM)
