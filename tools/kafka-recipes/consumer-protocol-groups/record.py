"""Recipe: a KIP-848 consumer group seen by Kafka's ``kafka-consumer-groups.sh``.

    python record.py KAFKA_HOME LISTEN_PORT BROKER_PORT OUT_DIR

The broker must advertise ``127.0.0.1:LISTEN_PORT`` (Kafka:
``advertised.listeners=PLAINTEXT://127.0.0.1:LISTEN_PORT``; lethe:
``--advertise 127.0.0.1:LISTEN_PORT``): every connection goes through the
recording proxy of ``../admin-tools/record.py``. The situation, step by step:

1. ``kafka-topics.sh`` creates ``orders`` (3 partitions); a librdkafka producer
   writes 3 records to each partition;
2. member ``member-a`` (librdkafka, ``group.protocol=consumer``, group ``cg848``)
   consumes the 9 records, commits, and keeps polling; the tool describes the
   group (offsets, ``--members``, ``--members --verbose``, ``--state``) and lists groups;
3. ``member-b`` joins; once both hold partitions the tool describes again;
4. both close (they leave the group); the tool describes the empty group.

``OUT_DIR/outputs.json`` gets each tool step's command line, exit status and
stdout; ``OUT_DIR/frames.jsonl`` the ConsumerGroupHeartbeat (68),
ConsumerGroupDescribe (69), DescribeGroups (15), ListGroups (16), OffsetCommit (8)
and OffsetFetch (9) frames, as ``../admin-tools/record.py`` writes them.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer

_SPEC = importlib.util.spec_from_file_location(
    "admin_tools_record", Path(__file__).parent.parent / "admin-tools" / "record.py"
)
assert _SPEC is not None and _SPEC.loader is not None
proxy = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(proxy)

TOPIC = "orders"
GROUP = "cg848"
KEYS = frozenset({68, 69, 15, 16, 8, 9})
_GROUPS = ["kafka-consumer-groups.sh", "--bootstrap-server", "{b}"]
_DESCRIBE = [*_GROUPS, "--describe", "--group", GROUP]
TOOL_STEPS: dict[str, list[str]] = {
    "describe": _DESCRIBE,
    "members": [*_DESCRIBE, "--members"],
    "members-verbose": [*_DESCRIBE, "--members", "--verbose"],
    "state": [*_DESCRIBE, "--state"],
    "list": [*_GROUPS, "--list"],
}


class Member:
    """A librdkafka consumer-protocol member polling in its own thread."""

    def __init__(self, bootstrap: str, client_id: str) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": GROUP,
                "group.protocol": "consumer",
                "client.id": client_id,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            }
        )
        self.consumer.subscribe([TOPIC])
        self.consumed = 0
        self.lock = threading.Lock()
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop:
            with self.lock:
                message = self.consumer.poll(0.1)
            if message is not None and not message.error():
                self.consumed += 1

    def assigned(self) -> int:
        with self.lock:
            return len(self.consumer.assignment())

    def commit(self) -> None:
        with self.lock:
            self.consumer.commit(asynchronous=False)

    def close(self) -> None:
        self.stop = True
        self.thread.join()
        self.consumer.close()


def _wait(condition: Any, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.1)


def _tool(home: str, bootstrap: str, recorder: Any, name: str, argv: list[str]) -> dict[str, Any]:
    recorder.step = name
    full = [f"{home}/bin/{argv[0]}"] + [a.replace("{b}", bootstrap) for a in argv[1:]]
    done = subprocess.run(full, check=False, capture_output=True, text=True, timeout=120)
    return {
        "step": name,
        "argv": [argv[0], *full[1:]],
        "exit": done.returncode,
        "stdout": done.stdout,
    }


def main(home: str, listen: int, upstream: int, out: Path) -> None:
    recorder = proxy.Recorder()
    proxy.KEYS = KEYS
    proxy.serve(recorder, listen, upstream)
    bootstrap = f"127.0.0.1:{listen}"
    outputs = []
    create = [*_GROUPS[:0], "kafka-topics.sh", "--bootstrap-server", "{b}", "--create"]
    create += ["--topic", TOPIC, "--partitions", "3", "--replication-factor", "1"]
    outputs.append(_tool(home, bootstrap, recorder, "create-topic", create))
    recorder.step = "produce"
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(9):
        producer.produce(TOPIC, key=b"k%d" % i, value=b"v%d" % i, partition=i % 3)
    producer.flush(30)
    recorder.step = "member-a"
    a = Member(bootstrap, "member-a")
    _wait(lambda: a.consumed == 9 and a.assigned() == 3, "member-a consumed everything")
    a.commit()
    time.sleep(6)  # one more heartbeat round: the member is reconciled
    for name, argv in TOOL_STEPS.items():
        outputs.append(_tool(home, bootstrap, recorder, f"one-{name}", argv))
    recorder.step = "member-b"
    b = Member(bootstrap, "member-b")
    _wait(lambda: a.assigned() + b.assigned() == 3 and b.assigned() > 0, "member-b got some")
    time.sleep(6)
    for name in ("describe", "members-verbose", "state"):
        outputs.append(_tool(home, bootstrap, recorder, f"two-{name}", TOOL_STEPS[name]))
    recorder.step = "close"
    a.close()
    b.close()
    for name in ("describe", "members", "state"):
        outputs.append(_tool(home, bootstrap, recorder, f"empty-{name}", TOOL_STEPS[name]))
    out.mkdir(parents=True, exist_ok=True)
    (out / "frames.jsonl").write_text("".join(json.dumps(f) + "\n" for f in recorder.frames))
    (out / "outputs.json").write_text(json.dumps(outputs, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
