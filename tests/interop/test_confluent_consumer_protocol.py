"""librdkafka with ``group.protocol=consumer`` (KIP-848) against the reference broker.

What Kafka 4.0 does and these tests pin: a member of a consumer-protocol group
gets every partition from the server-side assignor and consumes them; a second
member gets a share once the first gave it up; when one member leaves, the other
takes over its partitions; committed offsets are where a new member starts; and
``describe_consumer_groups`` (ConsumerGroupDescribe) sees the group, its uniform
assignor and its members. Waits are conditions with deadlines (the members
heartbeat every ``group.consumer.heartbeat.interval.ms``, 5 s by default).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

from confluent_kafka import Consumer, ConsumerGroupState, ConsumerGroupType, TopicPartition
from confluent_support import admin_client, create, produce, sample
from interop_support import CLIENT_TIMEOUT_S

TIMEOUT = CLIENT_TIMEOUT_S
PARTITIONS = 4


@contextmanager
def member(bootstrap: str, group: str, topic: str, client_id: str) -> Iterator[Consumer]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "client.id": client_id,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "socket.timeout.ms": 10000,
        }
    )
    consumer.subscribe([topic])
    try:
        yield consumer
    finally:
        consumer.close()


def owned(consumer: Consumer) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def poll_until(
    members: list[Consumer], done: Callable[[], bool], what: str, read: list[int] | None = None
) -> None:
    """Poll every member until ``done()``; ``read`` collects the partitions of the records."""
    deadline = time.monotonic() + TIMEOUT
    read = [] if read is None else read
    while not done():
        assert time.monotonic() < deadline, f"not in time: {what}"
        for consumer in members:
            message = consumer.poll(0.2)
            if message is not None:
                assert message.error() is None, message.error()
                read.append(message.partition())


def fill(bootstrap: str, topic: str, per_partition: int) -> None:
    create(admin_client(bootstrap), topic, PARTITIONS, {})
    records = [
        replace(record, partition=partition)
        for partition in range(PARTITIONS)
        for record in sample(per_partition)
    ]
    produce(bootstrap, topic, records)


def test_one_member_gets_every_partition_and_consumes_them(bootstrap: str, topic: str) -> None:
    fill(bootstrap, topic, 3)
    with member(bootstrap, f"{topic}-g", topic, "solo") as consumer:
        read: list[int] = []
        poll_until([consumer], lambda: len(read) >= 3 * PARTITIONS, "12 records read", read)
        assert sorted(read) == sorted(p for p in range(PARTITIONS) for _ in range(3))
        assert owned(consumer) == set(range(PARTITIONS))
        consumer.commit(asynchronous=False)
        admin = admin_client(bootstrap)  # kept alive until its future completes
        (described,) = admin.describe_consumer_groups([f"{topic}-g"]).values()
        group = described.result(timeout=TIMEOUT)
        assert group.type == ConsumerGroupType.CONSUMER
        assert group.state == ConsumerGroupState.STABLE
        assert group.partition_assignor == "uniform"
        (only,) = group.members
        assert only.client_id == "solo"
        assignment = {tp.partition for tp in only.assignment.topic_partitions}
        assert assignment == set(range(PARTITIONS))
    with member(bootstrap, f"{topic}-g", topic, "again") as consumer:
        poll_until([consumer], lambda: owned(consumer) == set(range(PARTITIONS)), "reassigned")
        committed = consumer.committed(
            [TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=TIMEOUT
        )
        assert [tp.offset for tp in committed] == [3] * PARTITIONS


def test_two_members_split_the_partitions_and_one_takes_over(bootstrap: str, topic: str) -> None:
    fill(bootstrap, topic, 1)
    group = f"{topic}-g"
    with member(bootstrap, group, topic, "first") as first:
        poll_until([first], lambda: owned(first) == set(range(PARTITIONS)), "first owns all")
        with member(bootstrap, group, topic, "second") as second:
            poll_until(
                [first, second],
                lambda: len(owned(first)) == len(owned(second)) == PARTITIONS // 2,
                "an even split",
            )
            assert owned(first) | owned(second) == set(range(PARTITIONS))
        poll_until([first], lambda: owned(first) == set(range(PARTITIONS)), "first takes over")


def test_a_regex_subscription_gets_the_matching_topics(bootstrap: str, topic: str) -> None:
    """librdkafka sends a ``^``-pattern as SubscribedTopicRegex (v1); the coordinator
    resolves it against the topics (whole names) and assigns what matches."""
    admin = admin_client(bootstrap)
    for name, partitions in ((f"{topic}-a", 2), (f"{topic}-b", 1), (f"x{topic}", 1)):
        create(admin, name, partitions, {})
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"{topic}-g",
            "group.protocol": "consumer",
            "socket.timeout.ms": 10000,
        }
    )
    consumer.subscribe([f"^{topic}-.*"])
    try:
        wanted = {(f"{topic}-a", 0), (f"{topic}-a", 1), (f"{topic}-b", 0)}
        poll_until(
            [consumer],
            lambda: {(tp.topic, tp.partition) for tp in consumer.assignment()} == wanted,
            "the regex's topics assigned",
        )
    finally:
        consumer.close()
