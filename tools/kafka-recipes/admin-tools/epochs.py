"""Recipe: OffsetForLeaderEpoch asked of a real broker, through the recording proxy.

    python epochs.py LISTEN_PORT BROKER_PORT OUT_DIR

Run after record.py (topic gamma exists, its records at leader epoch 0, log start 10).
No Kafka tool sends OffsetForLeaderEpoch in ordinary use on a single stable node (a
consumer validates its position only after the leader epoch changed), so these requests
come from lethe's protocol client: each version 2-4, as a consumer (replica id -1) and
with the default -2, for the latest epoch, an older and a newer one, -1, a fenced and
an unknown current epoch, a partition out of range and an absent topic.
``OUT_DIR/epochs.jsonl`` gets the frames (same form as frames.jsonl).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from lethe_conformance.client import KafkaConnection
from lethe_formats.protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from record import Recorder, serve

#: (partition, current leader epoch, leader epoch) asked of gamma
GAMMA = ((0, -1, 0), (1, 0, 0), (0, -1, 1), (0, -1, -1), (1, 5, 0), (0, 0, 7), (9, -1, 0))


def requests() -> list[tuple[int, OffsetForLeaderEpochRequest]]:
    gamma = OffsetForLeaderTopic("gamma", tuple(OffsetForLeaderPartition(*p) for p in GAMMA))
    absent = OffsetForLeaderTopic("nosuch", (OffsetForLeaderPartition(0, -1, 0),))
    out = []
    for version in (2, 3, 4):
        for replica_id in (-1, -2):
            out.append((version, OffsetForLeaderEpochRequest(replica_id, (gamma, absent))))
    return out


def main(listen: int, upstream: int, out: Path) -> None:
    recorder = Recorder()
    serve(recorder, listen, upstream)
    recorder.step = "epochs"
    with KafkaConnection.open("127.0.0.1", listen) as conn:
        for version, request in requests():
            conn.request(request, version=version)
    out.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(f) + "\n" for f in recorder.frames)
    (out / "epochs.jsonl").write_text(lines)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
