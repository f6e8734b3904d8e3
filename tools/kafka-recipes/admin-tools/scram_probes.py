"""Recipe: Describe/AlterUserScramCredentials requests no tool sends, asked of a real broker.

    python scram_probes.py LISTEN_PORT BROKER_PORT OUT_DIR

Run after scram_users.py against the same broker (bob then holds a SCRAM-SHA-512
credential, alice none). ``kafka-configs.sh`` names one user and one change per
request and checks iterations itself, so Kafka's own rules (an empty user, mechanism
types 0 and 3, iterations out of bounds, a user named twice, an empty salted password,
the order of many users' results, a null user list) are asked with lethe's protocol
client. Salts and salted passwords are fixed bytes, not real credentials.
``OUT_DIR/probes.jsonl`` gets the frames (same form as frames.jsonl).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lethe_conformance.client import KafkaConnection
from lethe_formats.protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    ScramDeletion,
    ScramUpsertion,
)
from lethe_formats.protocol.messages.describe_user_scram_credentials import (
    DescribeUserScramCredentialsRequest,
    ScramUserName,
)
from lethe_formats.protocol.schema import Struct
from record import Recorder, serve

USERS = [f"u{n:02d}" for n in range(20)]
SALT = b"0123456789abcdef"


def upsert(
    name: str, mechanism: int = 1, iterations: int = 4096, salted: bytes = b"\x01" * 32
) -> ScramUpsertion:
    return ScramUpsertion(name, mechanism, iterations, SALT, salted)


def describe(*names: str) -> DescribeUserScramCredentialsRequest:
    return DescribeUserScramCredentialsRequest(tuple(ScramUserName(n) for n in names))


def requests() -> list[tuple[str, Struct]]:
    mixed = AlterUserScramCredentialsRequest(
        deletions=(
            ScramDeletion("u00", 1),
            ScramDeletion("nosuch", 1),
            ScramDeletion("u01", 1),
            ScramDeletion("u01", 1),
            ScramDeletion("u01", 1),
            ScramDeletion("", 1),
            ScramDeletion("u02", 0),
            ScramDeletion("u03", 3),
        ),
        upsertions=(
            upsert("u04", iterations=4095),
            upsert("u05", iterations=16385),
            upsert("u06", iterations=16384),
            upsert("u00"),
            upsert("u07", salted=b""),
            upsert("u08", mechanism=2),
            upsert("nosuch"),
            upsert(""),
            upsert("u09", mechanism=2, iterations=4096),
            upsert("u09", mechanism=1),
        ),
    )
    return [
        ("describe-null", DescribeUserScramCredentialsRequest(None)),
        ("upsert-many", AlterUserScramCredentialsRequest((), tuple(upsert(u) for u in USERS))),
        ("describe-all", describe()),
        ("describe-some", describe("u01", "u01", "nosuch", "u02", "u01", "")),
        ("alter-mixed", mixed),
        ("describe-after-mixed", DescribeUserScramCredentialsRequest(None)),
        (
            "upsert-512-many",
            AlterUserScramCredentialsRequest((), tuple(upsert(u, 2, 8192) for u in USERS[5:12])),
        ),
        ("describe-both", describe(*USERS[3:9])),
        (
            "delete-many",
            AlterUserScramCredentialsRequest(tuple(ScramDeletion(u, 1) for u in USERS), ()),
        ),
        ("describe-end", describe()),
    ]


def main(listen: int, upstream: int, out: Path) -> None:
    recorder = Recorder(frozenset({50, 51}))
    serve(recorder, listen, upstream)
    with KafkaConnection.open("127.0.0.1", listen) as conn:
        for step, request in requests():
            recorder.step = step
            conn.request(request, version=0)
    out.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(f) + "\n" for f in recorder.frames)
    (out / "probes.jsonl").write_text(lines)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
