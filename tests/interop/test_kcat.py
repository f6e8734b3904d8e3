"""kcat (librdkafka's command-line client) against the reference broker: -L, -P, -C -e.

The broker is a single KRaft node (id 1) that leads every partition, and lists
itself under the address clients bootstrap from. Records go in with keys and
headers and come back in order from offset 0.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from interop_support import CLIENT_TIMEOUT_S

KCAT = shutil.which("kcat")
NODE_ID = 1


def kcat(bootstrap: str, *args: str, stdin: str | None = None) -> str:
    assert KCAT is not None, "kcat is missing: run .ci/install-system-packages"
    run = subprocess.run(
        [KCAT, "-b", bootstrap, "-m", "10", "-X", "socket.timeout.ms=10000", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT_S,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def create(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics(
        [NewTopic(name, num_partitions=partitions, replication_factor=1)],
        request_timeout=CLIENT_TIMEOUT_S,
    )
    futures[name].result(timeout=CLIENT_TIMEOUT_S)


def test_metadata_list_shows_the_broker_and_the_topic(bootstrap: str, topic: str) -> None:
    create(bootstrap, topic, 3)
    listing = json.loads(kcat(bootstrap, "-L", "-J", "-t", topic))
    assert [(b["id"], b["name"]) for b in listing["brokers"]] == [(NODE_ID, bootstrap)]
    (described,) = listing["topics"]
    assert described["topic"] == topic
    partitions = sorted(described["partitions"], key=lambda p: p["partition"])
    assert [p["partition"] for p in partitions] == [0, 1, 2]
    for p in partitions:
        assert p["leader"] == NODE_ID
        assert [r["id"] for r in p["replicas"]] == [NODE_ID]
        assert [r["id"] for r in p["isrs"]] == [NODE_ID]


def test_produce_then_consume_to_the_end(bootstrap: str, topic: str) -> None:
    create(bootstrap, topic, 1)
    lines = ["alpha:one", "beta:two", "gamma:three with spaces"]
    kcat(
        bootstrap,
        "-P",
        "-t",
        topic,
        "-p",
        "0",
        "-K",
        ":",
        "-H",
        "source=kcat",
        stdin="\n".join(lines) + "\n",
    )
    out = kcat(
        bootstrap, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-f", "%o|%k|%s|%h\\n"
    )
    assert out.splitlines() == [
        "0|alpha|one|source=kcat",
        "1|beta|two|source=kcat",
        "2|gamma|three with spaces|source=kcat",
    ]


@pytest.mark.parametrize("start", ["1", "-1"])
def test_consume_from_an_offset(bootstrap: str, topic: str, start: str) -> None:
    create(bootstrap, topic, 1)
    kcat(bootstrap, "-P", "-t", topic, "-p", "0", stdin="a\nb\nc\n")
    out = kcat(bootstrap, "-C", "-t", topic, "-p", "0", "-o", start, "-e", "-f", "%o %s\\n")
    expected = {"1": ["1 b", "2 c"], "-1": ["2 c"]}[start]
    assert out.splitlines() == expected
