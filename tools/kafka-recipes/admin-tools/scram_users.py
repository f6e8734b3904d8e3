"""Recipe: ``kafka-configs.sh`` on SCRAM users, and SCRAM logins with them, through the proxy.

    python scram_users.py KAFKA_HOME LISTEN_PORT BROKER_PORT SASL_PORT OUT_DIR [STEP ...]

Same machinery as record.py (run it from this folder; give OUT_DIR as a relative path,
the client property files are named by it in the recorded command lines). The broker is
a fresh single node with a PLAINTEXT listener (BROKER_PORT, advertised as LISTEN_PORT,
the proxy) and a SASL_PLAINTEXT listener on SASL_PORT offering SCRAM-SHA-256 and
SCRAM-SHA-512 (``ScramLoginModule`` lines without users), no authorizer.
``OUT_DIR/frames.jsonl`` gets the frames of DescribeUserScramCredentials (50) and
AlterUserScramCredentials (51); ``OUT_DIR/outputs.json`` each step's command line, exit
status, stdout and stderr. The ``login-*`` steps list topics over the SASL listener
directly (not through the proxy) with the property file named after the step.
"""

from __future__ import annotations

import sys
from pathlib import Path

from record import main

KEYS = frozenset({50, 51})

_LOGIN = (
    "security.protocol=SASL_PLAINTEXT\nsasl.mechanism={m}\n"
    "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="{u}" password="{p}";\n'
)

#: file name -> content, written into OUT_DIR before the steps run
FILES = {
    "alice-256.properties": _LOGIN.format(m="SCRAM-SHA-256", u="alice", p="alice-secret"),
    "alice-256-wrong.properties": _LOGIN.format(m="SCRAM-SHA-256", u="alice", p="wrong"),
    "alice-512.properties": _LOGIN.format(m="SCRAM-SHA-512", u="alice", p="alice-512"),
    "nobody-256.properties": _LOGIN.format(m="SCRAM-SHA-256", u="nobody", p="x"),
}

_B = ["--bootstrap-server", "{b}"]
_CONFIGS = ["kafka-configs.sh", *_B, "--entity-type", "users"]
_ALICE = ["--entity-name", "alice"]
_BOB = ["--entity-name", "bob"]


def _login(sasl_port: str, props: str) -> list[str]:
    server = f"127.0.0.1:{sasl_port}"
    return ["kafka-topics.sh", "--bootstrap-server", server, "--command-config", props, "--list"]


def steps(sasl_port: str, out: str) -> dict[str, tuple[list[str], str, int]]:
    add, delete, describe = "--add-config", "--delete-config", "--describe"
    return {
        "describe-users-none": ([*_CONFIGS, describe], "", 0),
        "describe-alice-none": ([*_CONFIGS, *_ALICE, describe], "", 0),
        "add-alice-256": (
            [
                *_CONFIGS,
                *_ALICE,
                "--alter",
                add,
                "SCRAM-SHA-256=[iterations=8192,password=alice-secret]",
            ],
            "",
            0,
        ),
        "describe-alice": ([*_CONFIGS, *_ALICE, describe], "", 0),
        "login-alice-256": (_login(sasl_port, f"{out}/alice-256.properties"), "", 0),
        "login-alice-256-wrong": (_login(sasl_port, f"{out}/alice-256-wrong.properties"), "", 0),
        "login-nobody-256": (_login(sasl_port, f"{out}/nobody-256.properties"), "", 0),
        "add-alice-512": (
            [*_CONFIGS, *_ALICE, "--alter", add, "SCRAM-SHA-512=[password=alice-512]"],
            "",
            0,
        ),
        "login-alice-512": (_login(sasl_port, f"{out}/alice-512.properties"), "", 0),
        "add-bob-quota": ([*_CONFIGS, *_BOB, "--alter", add, "producer_byte_rate=1024"], "", 0),
        "describe-users": ([*_CONFIGS, describe], "", 0),
        "describe-bob": ([*_CONFIGS, *_BOB, describe], "", 0),
        "too-few-iterations": (
            [*_CONFIGS, *_BOB, "--alter", add, "SCRAM-SHA-256=[iterations=4095,password=b]"],
            "",
            0,
        ),
        "too-many-iterations": (
            [*_CONFIGS, *_BOB, "--alter", add, "SCRAM-SHA-256=[iterations=16385,password=b]"],
            "",
            0,
        ),
        "most-iterations": (
            [*_CONFIGS, *_BOB, "--alter", add, "SCRAM-SHA-512=[iterations=16384,password=b]"],
            "",
            0,
        ),
        "both-mechanisms": (
            [
                *_CONFIGS,
                "--entity-name",
                "carol",
                "--alter",
                add,
                "SCRAM-SHA-256=[password=c],SCRAM-SHA-512=[password=c]",
            ],
            "",
            0,
        ),
        "delete-absent": ([*_CONFIGS, *_BOB, "--alter", delete, "SCRAM-SHA-256"], "", 0),
        "delete-alice-256": ([*_CONFIGS, *_ALICE, "--alter", delete, "SCRAM-SHA-256"], "", 0),
        "login-alice-256-deleted": (_login(sasl_port, f"{out}/alice-256.properties"), "", 0),
        "describe-users-after": ([*_CONFIGS, describe], "", 0),
        "delete-alice-512": ([*_CONFIGS, *_ALICE, "--alter", delete, "SCRAM-SHA-512"], "", 0),
        "describe-alice-after": ([*_CONFIGS, *_ALICE, describe], "", 0),
    }


if __name__ == "__main__":
    out = Path(sys.argv[5])
    out.mkdir(parents=True, exist_ok=True)
    for name, text in FILES.items():
        (out / name).write_text(text)
    main(
        sys.argv[1],
        int(sys.argv[2]),
        int(sys.argv[3]),
        out,
        sys.argv[6:],
        steps=steps(sys.argv[4], sys.argv[5]),
        keys=KEYS,
        keep_stderr=True,
    )
