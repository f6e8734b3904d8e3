"""Recipe: fill a running ``lethe broker`` with compressed, compacted topics for
Kafka's own tools to read (issue #11's check against Kafka itself).

    lethe broker --listen 127.0.0.1:PORT --log-dir DIR --override log.cleaner.backoff.ms=1000
    python lethe_broker_check.py 127.0.0.1:PORT

For each codec it creates ``sent-CODEC`` (compact; batches produced compressed
with CODEC) and ``topic-CODEC`` (compact, compression.type=CODEC; batches
produced uncompressed, so the broker recompresses them), both with
segment.bytes=1024, min.cleanable.dirty.ratio=0.01 and min.compaction.lag.ms=0,
and produces ROUNDS batches of 20 keyed records (10 distinct keys, so every
key is duplicated). It then waits until the cleaner has cleaned every topic
(cleaner-offset-checkpoint), and prints per topic the records produced.
Afterwards run kafka-dump-log.sh --deep-iteration on every segment and
kafka-console-consumer.sh --from-beginning on every topic.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from lethe_conformance.client import KafkaConnection
from lethe_conformance.client.calls import create_topic, produce
from lethe_formats.model import Compression
from lethe_formats.records.builder import RecordSpec, build_batch

CODECS = (Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD)
ROUNDS = 8
COMPACT = {
    "cleanup.policy": "compact",
    "segment.bytes": "1024",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "0",
}


def main(host: str, port: int, log_dir: Path) -> None:
    with KafkaConnection.open(host, port) as conn:
        for codec in CODECS:
            create_topic(conn, f"sent-{codec.dump_name}", 1, COMPACT)
            create_topic(
                conn, f"topic-{codec.dump_name}", 1, COMPACT | {"compression.type": codec.dump_name}
            )
        for round_ in range(ROUNDS):
            now = int(time.time() * 1000)
            records = [
                RecordSpec(
                    f"key-{i % 10}".encode(),
                    f"round {round_} record {i} amber birch cedar delta".encode(),
                    timestamp=now,
                )
                for i in range(20)
            ]
            for codec in CODECS:
                sent = build_batch(records, base_offset=0, compression=codec)
                plain = build_batch(records, base_offset=0)
                for topic, data in (
                    (f"sent-{codec.dump_name}", sent),
                    (f"topic-{codec.dump_name}", plain),
                ):
                    answer = produce(conn, topic, 0, data).responses[0].partition_responses[0]
                    assert answer.error_code == 0, (topic, answer)
    topics = [f"{kind}-{c.dump_name}-0" for c in CODECS for kind in ("sent", "topic")]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = (log_dir / "cleaner-offset-checkpoint").read_text()
        cleaned = {line.split()[0] + "-" + line.split()[1] for line in text.splitlines()[2:]}
        if set(topics) <= cleaned:
            break
        time.sleep(1)
    print((log_dir / "cleaner-offset-checkpoint").read_text())
    for topic in topics:
        print(topic, "produced", ROUNDS * 20)


if __name__ == "__main__":
    host, _, port = sys.argv[1].partition(":")
    main(host, int(port), Path(sys.argv[2]))
