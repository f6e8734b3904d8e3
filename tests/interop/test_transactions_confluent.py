"""confluent-kafka (librdkafka 2.16) transactions against ``lethe broker`` from the CLI.

What Kafka 4.0 guarantees and these tests pin (the golden transactions case,
recorded with the same client against Kafka 4.0.0, has the same layout): every
transaction ends with one marker batch in each of its partitions, so a
committed transaction of two records at offsets 0-1 puts its COMMIT at 2; a
read_committed consumer sees the records of committed transactions only, a
read_uncommitted one sees every data record and no marker; offsets sent to a
transaction become the group's committed offsets only if it commits; a second
producer with the same transactional id fences the first, whose open
transaction is aborted.
"""

from __future__ import annotations

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from interop_support import CLIENT_TIMEOUT_S
from txn_support import BrokerProcess, cli_broker, create_topic, read_partition

__all__ = ["cli_broker"]

T = CLIENT_TIMEOUT_S


def _producer(bootstrap: str, transactional_id: str) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id})
    producer.init_transactions(T)
    return producer


def test_commit_and_abort_read_committed_sees_committed_only(cli_broker: BrokerProcess) -> None:
    bootstrap, topic = cli_broker.bootstrap, "ck-commit-abort"
    create_topic(bootstrap, topic)
    producer = _producer(bootstrap, "ck-tx-1")
    producer.begin_transaction()
    producer.produce(topic, key=b"a", value=b"a1")
    producer.produce(topic, key=b"b", value=b"b1")
    producer.commit_transaction(T)
    producer.begin_transaction()
    producer.produce(topic, key=b"x", value=b"aborted")
    producer.flush(T)
    producer.abort_transaction(T)
    producer.begin_transaction()
    producer.produce(topic, key=b"d", value=b"d1")
    producer.commit_transaction(T)
    # data 0-1, COMMIT 2, data 3, ABORT 4, data 5, COMMIT 6
    assert read_partition(bootstrap, topic, "read_committed") == [
        (0, b"a1"), (1, b"b1"), (5, b"d1"),
    ]  # fmt: skip
    assert read_partition(bootstrap, topic, "read_uncommitted") == [
        (0, b"a1"), (1, b"b1"), (3, b"aborted"), (5, b"d1"),
    ]  # fmt: skip


def test_send_offsets_visible_on_commit_dropped_on_abort(cli_broker: BrokerProcess) -> None:
    bootstrap, source, sink = cli_broker.bootstrap, "ck-offsets-src", "ck-offsets-dst"
    create_topic(bootstrap, source)
    create_topic(bootstrap, sink)
    plain = Producer({"bootstrap.servers": bootstrap})
    for i in range(5):
        plain.produce(source, value=b"v%d" % i)
    plain.flush(T)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "ck-offsets-group",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([source])
    seen = 0
    while seen < 5:
        message = consumer.poll(T)
        assert message is not None and message.error() is None
        seen += 1
    producer = _producer(bootstrap, "ck-tx-offsets")
    wanted = [TopicPartition(source, 0)]
    producer.begin_transaction()
    producer.produce(sink, value=b"r1")
    producer.send_offsets_to_transaction(
        [TopicPartition(source, 0, 3)], consumer.consumer_group_metadata(), T
    )
    producer.flush(T)
    producer.abort_transaction(T)
    assert consumer.committed(wanted, T)[0].offset < 0  # nothing committed
    producer.begin_transaction()
    producer.produce(sink, value=b"r2")
    producer.send_offsets_to_transaction(
        [TopicPartition(source, 0, 5)], consumer.consumer_group_metadata(), T
    )
    producer.commit_transaction(T)
    assert consumer.committed(wanted, T)[0].offset == 5
    consumer.close()
    # r1 0, ABORT 1, r2 2, COMMIT 3
    assert read_partition(bootstrap, sink, "read_committed") == [(2, b"r2")]


def test_second_producer_with_the_same_id_fences_the_first(cli_broker: BrokerProcess) -> None:
    bootstrap, topic = cli_broker.bootstrap, "ck-fencing"
    create_topic(bootstrap, topic)
    first = _producer(bootstrap, "ck-tx-fenced")
    first.begin_transaction()
    first.produce(topic, value=b"zombie")
    first.flush(T)
    second = _producer(bootstrap, "ck-tx-fenced")  # aborts the first one's transaction
    second.begin_transaction()
    second.produce(topic, value=b"live")
    second.commit_transaction(T)
    try:
        first.commit_transaction(T)
    except KafkaException as error:
        assert error.args[0].fatal(), error
    else:
        raise AssertionError("the fenced producer committed")
    # zombie 0, ABORT 1 (the fence), live 2, COMMIT 3
    assert read_partition(bootstrap, topic, "read_committed") == [(2, b"live")]
