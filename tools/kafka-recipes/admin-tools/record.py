"""Recipe: run Kafka's own admin tools through a recording proxy.

    python record.py KAFKA_HOME LISTEN_PORT BROKER_PORT OUT_DIR [STEP ...]

The broker must advertise ``127.0.0.1:LISTEN_PORT`` (Kafka:
``advertised.listeners=PLAINTEXT://127.0.0.1:LISTEN_PORT``; lethe:
``--advertise 127.0.0.1:LISTEN_PORT``) so that every connection the tools open
goes through the proxy. Each step of :data:`STEPS` (or the named ones) runs one
``bin/kafka-*.sh`` command; ``OUT_DIR/frames.jsonl`` gets every request and
response frame of the APIs in :data:`KEYS` (hex of the whole frame, size prefix
included) with the step that sent it, and ``OUT_DIR/outputs.json`` each step's
command line, exit status and stdout. Run it once against a real Kafka 4.0.0
(the fixture) and once against ``lethe broker`` (to compare by hand).
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

#: DescribeTopicPartitions, DescribeLogDirs, OffsetForLeaderEpoch, DescribeProducers
KEYS = frozenset({75, 35, 23, 61})

#: the records the producing step sends: key TAB value, one batch each (``--sync``),
#: so every batch has the same size on any broker
RECORDS = "".join(f"k{i:02d}\tvalue-{i:02d}\n" for i in range(40))
#: what kafka-delete-records.sh deletes (``{f}`` is a file holding it)
DELETIONS = (
    '{"version":1,"partitions":[{"topic":"gamma","partition":0,"offset":10},'
    '{"topic":"gamma","partition":1,"offset":10}]}'
)
_TOPICS = ["kafka-topics.sh", "--bootstrap-server", "{b}"]
_CONSUME = [
    "kafka-console-consumer.sh",
    "--bootstrap-server",
    "{b}",
    "--topic",
    "gamma",
    "--group",
    "g1",
    "--from-beginning",
    "--max-messages",
    "5",
    "--timeout-ms",
    "30000",
]
_LOG_DIRS = ["kafka-log-dirs.sh", "--bootstrap-server", "{b}", "--describe"]

#: step name -> (tool and arguments, standard input, seconds to wait first);
#: ``{b}`` is the bootstrap address
STEPS: dict[str, tuple[list[str], str, int]] = {
    "create-alpha": (
        [
            *_TOPICS,
            "--create",
            "--topic",
            "alpha",
            "--partitions",
            "3",
            "--replication-factor",
            "1",
        ],
        "",
        0,
    ),
    "create-beta": (
        [
            *_TOPICS,
            "--create",
            "--topic",
            "beta",
            "--partitions",
            "2",
            "--replication-factor",
            "1",
            "--config",
            "retention.ms=86400000",
        ],
        "",
        0,
    ),
    "describe-alpha": ([*_TOPICS, "--describe", "--topic", "alpha"], "", 0),
    "describe-paged": (
        [*_TOPICS, "--describe", "--exclude-internal", "--partition-size-limit-per-response", "2"],
        "",
        0,
    ),
    "describe-unknown": ([*_TOPICS, "--describe", "--topic", "nosuch"], "", 0),
    "create-gamma": (
        [
            *_TOPICS,
            "--create",
            "--topic",
            "gamma",
            "--partitions",
            "2",
            "--replication-factor",
            "1",
            "--config",
            "segment.bytes=500",
        ],
        "",
        0,
    ),
    "produce-gamma": (
        [
            "kafka-console-producer.sh",
            "--bootstrap-server",
            "{b}",
            "--topic",
            "gamma",
            "--sync",
            "--property",
            "parse.key=true",
        ],
        RECORDS,
        0,
    ),
    "log-dirs-all": (_LOG_DIRS, "", 0),
    "log-dirs-gamma": ([*_LOG_DIRS, "--topic-list", "gamma,nosuch"], "", 0),
    "delete-gamma": (
        ["kafka-delete-records.sh", "--bootstrap-server", "{b}", "--offset-json-file", "{f}"],
        "",
        0,
    ),
    "producers-gamma-0": (
        [
            "kafka-transactions.sh",
            "--bootstrap-server",
            "{b}",
            "describe-producers",
            "--topic",
            "gamma",
            "--partition",
            "0",
        ],
        "",
        0,
    ),
    "producers-unknown": (
        [
            "kafka-transactions.sh",
            "--bootstrap-server",
            "{b}",
            "describe-producers",
            "--topic",
            "nosuch",
            "--partition",
            "0",
        ],
        "",
        0,
    ),
    # retention deletes the segments below the new log start offset (checked every 1 s;
    # Kafka's first pass is 30 s after startup)
    "log-dirs-after-delete": ([*_LOG_DIRS, "--topic-list", "gamma"], "", 35),
    # a group commits its position with the records' leader epoch; the next consumer of
    # the group validates that position with OffsetForLeaderEpoch (KIP-320)
    "consume-first": (_CONSUME, "", 0),
    "consume-again": (_CONSUME, "", 0),
}


class Recorder:
    """Frames seen by the proxy, in the order it read them."""

    def __init__(self, keys: frozenset[int] = KEYS) -> None:
        self.keys = keys
        self.frames: list[dict[str, Any]] = []
        self.step = ""
        self.lock = threading.Lock()
        self.conns = 0

    def add(
        self, conn: int, direction: str, frame: bytes, pending: dict[int, tuple[int, int]]
    ) -> None:
        body = frame[4:]
        if direction == "request":
            key, version, corr = struct.unpack(">hhi", body[:8])
            pending[corr] = (key, version)
        else:
            (corr,) = struct.unpack(">i", body[:4])
            key, version = pending.pop(corr, (-1, -1))
        if key not in self.keys:
            return
        with self.lock:
            self.frames.append(
                {
                    "seq": len(self.frames) + 1,
                    "step": self.step,
                    "conn": conn,
                    "dir": direction,
                    "api_key": key,
                    "api_version": version,
                    "correlation_id": corr,
                    "hex": frame.hex(),
                }
            )


def _pump(src: socket.socket, dst: socket.socket, emit: Any) -> None:
    buffer = b""
    while True:
        data = src.recv(65536)
        if not data:
            break
        buffer += data
        while len(buffer) >= 4:  # record a request before the broker can answer it
            (size,) = struct.unpack(">i", buffer[:4])
            if len(buffer) < 4 + size:
                break
            emit(buffer[: 4 + size])
            buffer = buffer[4 + size :]
        dst.sendall(data)
    for s in (src, dst):
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_RDWR)


def serve(recorder: Recorder, listen: int, upstream: int) -> None:
    server = socket.create_server(("127.0.0.1", listen))

    def handle(client: socket.socket) -> None:
        with recorder.lock:
            recorder.conns += 1
            conn = recorder.conns
        broker = socket.create_connection(("127.0.0.1", upstream))
        pending: dict[int, tuple[int, int]] = {}
        threading.Thread(
            target=_pump,
            args=(client, broker, lambda f: recorder.add(conn, "request", f, pending)),
            daemon=True,
        ).start()
        _pump(broker, client, lambda f: recorder.add(conn, "response", f, pending))

    def accept() -> None:
        while True:
            client, _ = server.accept()
            threading.Thread(target=handle, args=(client,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()


def main(
    home: str,
    listen: int,
    upstream: int,
    out: Path,
    names: list[str],
    *,
    steps: dict[str, tuple[list[str], str, int]] = STEPS,
    keys: frozenset[int] = KEYS,
    keep_stderr: bool = False,
) -> None:
    recorder = Recorder(keys)
    serve(recorder, listen, upstream)
    outputs = []
    deletions = out / "deletions.json"
    out.mkdir(parents=True, exist_ok=True)
    deletions.write_text(DELETIONS)
    for name in names or list(steps):
        recorder.step = name
        tool, stdin, wait = steps[name]
        time.sleep(wait)
        argv = [f"{home}/bin/{tool[0]}"] + [
            a.replace("{b}", f"127.0.0.1:{listen}")
            .replace("{f}", str(deletions))
            .replace("{out}", str(out))
            for a in tool[1:]
        ]
        done = subprocess.run(
            argv, check=False, input=stdin, capture_output=True, text=True, timeout=120
        )
        outputs.append(
            {
                "step": name,
                "argv": [tool[0], *argv[1:]],
                "exit": done.returncode,
                "stdout": done.stdout,
                **({"stderr": done.stderr} if keep_stderr else {}),
            }
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "frames.jsonl").write_text("".join(json.dumps(f) + "\n" for f in recorder.frames))
    (out / "outputs.json").write_text(json.dumps(outputs, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), sys.argv[5:])
