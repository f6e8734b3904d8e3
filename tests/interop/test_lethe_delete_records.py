"""``lethe delete-records`` on data real clients wrote, and on ``__consumer_offsets``.

Kafka answers DeleteRecords on an internal topic with INVALID_TOPIC_EXCEPTION
(17) (golden delete-records case), which the Java admin reports with the
default message of ``InvalidTopicException``. The topic exists once a consumer
group has committed, as on Kafka.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_support import TIMEOUT, admin_client, create, produce, sample
from lethe_tools.cli import main

HEADER = ["Executing records delete operation", "Records delete operation completed:"]


def lethe_delete(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    bootstrap: str,
    offsets: list[tuple[str, int, int]],
) -> list[str]:
    document = {"partitions": [{"topic": t, "partition": p, "offset": o} for t, p, o in offsets]}
    path = tmp_path / "offsets.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    capsys.readouterr()
    status = main(
        ["delete-records", "--bootstrap-server", bootstrap, "--offset-json-file", str(path)]
    )
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out.splitlines()


def commit_offset(bootstrap: str, topic: str, group: str, offset: int) -> None:
    """A group commit without consuming: creates __consumer_offsets on first use."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "socket.timeout.ms": 10000}
    )
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
        (committed,) = consumer.committed([TopicPartition(topic, 0)], timeout=TIMEOUT)
        assert committed.offset == offset
    finally:
        consumer.close()


def test_records_produced_by_librdkafka_are_deleted_up_to_the_offset(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, bootstrap: str, topic: str
) -> None:
    create(admin_client(bootstrap), topic, 1, {})
    produce(bootstrap, topic, sample(5), acks="all")
    assert lethe_delete(capsys, tmp_path, bootstrap, [(topic, 0, 3)]) == [
        *HEADER,
        f"partition: {topic}-0\tlow_watermark: 3",
    ]
    assert lethe_delete(capsys, tmp_path, bootstrap, [(topic, 0, -1)]) == [
        *HEADER,
        f"partition: {topic}-0\tlow_watermark: 5",
    ]


def test_the_consumer_offsets_topic_is_an_invalid_topic_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, bootstrap: str, topic: str
) -> None:
    create(admin_client(bootstrap), topic, 1, {})
    produce(bootstrap, topic, sample(2), acks=1)
    commit_offset(bootstrap, topic, f"{topic}-group", 2)
    assert lethe_delete(capsys, tmp_path, bootstrap, [("__consumer_offsets", 0, 0)]) == [
        *HEADER,
        "partition: __consumer_offsets-0\terror: "
        "org.apache.kafka.common.errors.InvalidTopicException: "
        "The request attempted to perform an operation on an invalid topic.",
    ]
