"""Record what ``kafka-transactions.sh list|describe|describe-producers`` prints after
a fixed set of transactional actions (fixtures/golden/admin-tools/kafka-transactions).

    python record.py BOOTSTRAP KAFKA_DIST > outputs.json

Actions (confluent-kafka, one partition of ``kt-topic``): ``kt-committed`` commits one
record, ``kt-aborted`` aborts one, ``kt-open`` (transaction.timeout.ms 120000) leaves two
records in an open transaction while the tool runs; then ``kt-open`` aborts. Each step's
command line arguments, exit status, standard output and standard error (without
the JVM's WARN/SLF4J lines) are printed as JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

STEPS = [
    ("list", ["list"]),
    ("describe-open", ["describe", "--transactional-id", "kt-open"]),
    ("describe-committed", ["describe", "--transactional-id", "kt-committed"]),
    ("describe-aborted", ["describe", "--transactional-id", "kt-aborted"]),
    ("describe-unknown", ["describe", "--transactional-id", "kt-nobody"]),
    ("describe-producers", ["describe-producers", "--topic", "kt-topic", "--partition", "0"]),
]
T = 30


def _producer(bootstrap: str, transactional_id: str, **extra: object) -> Producer:
    producer = Producer(
        {"bootstrap.servers": bootstrap, "transactional.id": transactional_id, **extra}
    )
    producer.init_transactions(T)
    producer.begin_transaction()
    return producer


def main(bootstrap: str, dist: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("kt-topic", 1, 1)])["kt-topic"].result(T)
    done = _producer(bootstrap, "kt-committed")
    done.produce("kt-topic", key=b"k", value=b"c")
    done.commit_transaction(T)
    aborted = _producer(bootstrap, "kt-aborted")
    aborted.produce("kt-topic", key=b"k", value=b"a")
    aborted.flush(T)
    aborted.abort_transaction(T)
    open_ = _producer(bootstrap, "kt-open", **{"transaction.timeout.ms": 120000})
    open_.produce("kt-topic", key=b"k1", value=b"o1")
    open_.produce("kt-topic", key=b"k2", value=b"o2")
    open_.flush(T)
    out = {}
    for name, args in STEPS:
        run = subprocess.run(
            [f"{dist}/bin/kafka-transactions.sh", "--bootstrap-server", bootstrap, *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        noise = ("WARN", "SLF4J")
        stderr = "\n".join(
            line for line in run.stderr.splitlines() if not any(n in line for n in noise)
        )
        out[name] = {"args": args, "exit": run.returncode, "stdout": run.stdout, "stderr": stderr}
    open_.abort_transaction(T)
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
