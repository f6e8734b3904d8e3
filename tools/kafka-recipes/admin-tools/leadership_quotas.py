"""Recipe: Kafka's leader-election, reassignment and client-quota tools, through the proxy.

    python leadership_quotas.py KAFKA_HOME LISTEN_PORT BROKER_PORT OUT_DIR [STEP ...]

Same machinery as record.py (run it from this folder; give OUT_DIR as a relative path,
the reassignment files are named by it in the recorded command lines). The broker is a
fresh single node with id 1, as for record.py. ``OUT_DIR/frames.jsonl`` gets the frames
of ApiVersions (18), ElectLeaders (43), Alter/ListPartitionReassignments (45, 46) and
Describe/AlterClientQuotas (48, 49); ``OUT_DIR/outputs.json`` each step's command line,
exit status, stdout and stderr (the tools print their errors there).
"""

from __future__ import annotations

import sys
from pathlib import Path

from record import main

KEYS = frozenset({18, 43, 45, 46, 48, 49})

#: file name -> content, written into OUT_DIR before the steps run
FILES = {
    "move.json": '{"version":1,"topics":[{"topic":"delta"}]}',
    "reassign.json": (
        '{"version":1,"partitions":[{"topic":"delta","partition":0,"replicas":[1]},'
        '{"topic":"delta","partition":1,"replicas":[1]}]}'
    ),
    "reassign-absent-broker.json": (
        '{"version":1,"partitions":[{"topic":"delta","partition":0,"replicas":[1,2]}]}'
    ),
    "reassign-absent-topic.json": (
        '{"version":1,"partitions":[{"topic":"nosuch","partition":0,"replicas":[1]}]}'
    ),
}

_B = ["--bootstrap-server", "{b}"]
_ELECT = ["kafka-leader-election.sh", *_B]
_REASSIGN = ["kafka-reassign-partitions.sh", *_B]
_CONFIGS = ["kafka-configs.sh", *_B]


def _alter(entity: list[str], change: str, value: str) -> list[str]:
    return [*_CONFIGS, *entity, "--alter", change, value]


def _describe(entity: list[str]) -> list[str]:
    return [*_CONFIGS, *entity, "--describe"]


_CLIENT = ["--entity-type", "clients", "--entity-name", "c1"]
_USER = ["--entity-type", "users", "--entity-name", "u1"]
_USER_CLIENT = [*_USER, *_CLIENT]
_USER_DEFAULT = ["--entity-type", "users", "--entity-default"]
_CLIENT_DEFAULT = ["--entity-type", "clients", "--entity-default"]
_IP = ["--entity-type", "ips", "--entity-name", "127.0.0.1"]
_IP_DEFAULT = ["--entity-type", "ips", "--entity-default"]

STEPS: dict[str, tuple[list[str], str, int]] = {
    "api-versions": (["kafka-broker-api-versions.sh", *_B], "", 0),
    "create-delta": (
        [
            "kafka-topics.sh",
            *_B,
            "--create",
            "--topic",
            "delta",
            "--partitions",
            "2",
            "--replication-factor",
            "1",
        ],
        "",
        0,
    ),
    "elect-preferred-all": (
        [*_ELECT, "--election-type", "preferred", "--all-topic-partitions"],
        "",
        0,
    ),
    "elect-preferred-one": (
        [*_ELECT, "--election-type", "PREFERRED", "--topic", "delta", "--partition", "0"],
        "",
        0,
    ),
    "elect-unclean-one": (
        [*_ELECT, "--election-type", "unclean", "--topic", "delta", "--partition", "1"],
        "",
        0,
    ),
    "elect-unknown-topic": (
        [*_ELECT, "--election-type", "preferred", "--topic", "nosuch", "--partition", "0"],
        "",
        0,
    ),
    "elect-unknown-partition": (
        [*_ELECT, "--election-type", "preferred", "--topic", "delta", "--partition", "7"],
        "",
        0,
    ),
    "reassign-generate": (
        [
            *_REASSIGN,
            "--generate",
            "--topics-to-move-json-file",
            "{out}/move.json",
            "--broker-list",
            "1",
        ],
        "",
        0,
    ),
    "reassign-list-none": ([*_REASSIGN, "--list"], "", 0),
    "reassign-execute": (
        [*_REASSIGN, "--execute", "--reassignment-json-file", "{out}/reassign.json"],
        "",
        0,
    ),
    "reassign-verify": (
        [*_REASSIGN, "--verify", "--reassignment-json-file", "{out}/reassign.json"],
        "",
        0,
    ),
    "reassign-list-after": ([*_REASSIGN, "--list"], "", 0),
    "reassign-absent-broker": (
        [*_REASSIGN, "--execute", "--reassignment-json-file", "{out}/reassign-absent-broker.json"],
        "",
        0,
    ),
    "reassign-absent-topic": (
        [*_REASSIGN, "--execute", "--reassignment-json-file", "{out}/reassign-absent-topic.json"],
        "",
        0,
    ),
    "quota-describe-empty": (_describe(["--entity-type", "clients"]), "", 0),
    "quota-client": (
        _alter(_CLIENT, "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048"),
        "",
        0,
    ),
    "quota-user": (_alter(_USER, "--add-config", "request_percentage=50"), "", 0),
    "quota-user-client": (_alter(_USER_CLIENT, "--add-config", "producer_byte_rate=4096"), "", 0),
    "quota-user-default": (
        _alter(
            _USER_DEFAULT, "--add-config", "consumer_byte_rate=8192,controller_mutation_rate=10"
        ),
        "",
        0,
    ),
    "quota-client-default": (
        _alter(_CLIENT_DEFAULT, "--add-config", "producer_byte_rate=512"),
        "",
        0,
    ),
    "quota-ip": (_alter(_IP, "--add-config", "connection_creation_rate=10"), "", 0),
    "quota-ip-default": (_alter(_IP_DEFAULT, "--add-config", "connection_creation_rate=20"), "", 0),
    "describe-client": (_describe(_CLIENT), "", 0),
    "describe-clients": (_describe(["--entity-type", "clients"]), "", 0),
    "describe-client-default": (_describe(_CLIENT_DEFAULT), "", 0),
    "describe-user": (_describe(_USER), "", 0),
    "describe-users": (_describe(["--entity-type", "users"]), "", 0),
    "describe-user-client": (_describe(_USER_CLIENT), "", 0),
    "describe-user-default": (_describe(_USER_DEFAULT), "", 0),
    "describe-ip": (_describe(_IP), "", 0),
    "describe-ips": (_describe(["--entity-type", "ips"]), "", 0),
    "describe-ip-default": (_describe(_IP_DEFAULT), "", 0),
    "describe-unknown-client": (
        _describe(["--entity-type", "clients", "--entity-name", "nobody"]),
        "",
        0,
    ),
    "invalid-value": (_alter(_CLIENT, "--add-config", "producer_byte_rate=abc"), "", 0),
    "invalid-fraction": (_alter(_CLIENT, "--add-config", "producer_byte_rate=1.5"), "", 0),
    "invalid-key": (_alter(_CLIENT, "--add-config", "nosuch_rate=1"), "", 0),
    "invalid-ip-key": (_alter(_IP, "--add-config", "producer_byte_rate=1"), "", 0),
    "invalid-client-key": (_alter(_CLIENT, "--add-config", "connection_creation_rate=1"), "", 0),
    "invalid-ip-name": (
        _alter(
            ["--entity-type", "ips", "--entity-name", "not-an-ip"],
            "--add-config",
            "connection_creation_rate=1",
        ),
        "",
        0,
    ),
    "invalid-negative": (_alter(_USER, "--add-config", "request_percentage=-1"), "", 0),
    "delete-client-key": (_alter(_CLIENT, "--delete-config", "consumer_byte_rate"), "", 0),
    "describe-client-after-delete": (_describe(_CLIENT), "", 0),
    "delete-absent-key": (_alter(_USER, "--delete-config", "producer_byte_rate"), "", 0),
    "delete-ip": (_alter(_IP, "--delete-config", "connection_creation_rate"), "", 0),
    "describe-ips-after-delete": (_describe(["--entity-type", "ips"]), "", 0),
}


if __name__ == "__main__":
    out = Path(sys.argv[4])
    out.mkdir(parents=True, exist_ok=True)
    for name, text in FILES.items():
        (out / name).write_text(text)
    main(
        sys.argv[1],
        int(sys.argv[2]),
        int(sys.argv[3]),
        out,
        sys.argv[5:],
        steps=STEPS,
        keys=KEYS,
        keep_stderr=True,
    )
