"""``lethe topics`` behaves as Kafka 4.0's ``kafka-topics.sh`` for list, describe, create,
delete and a growing alter, against the embedded reference broker.

Expected texts come from ``org.apache.kafka.tools.TopicCommand`` (option checks,
``Created topic T.``, the describe line layout, ``Error while executing topic
command : ...``); expected values (ids, leaders, counts, configs) are read from
the broker's own state, never from lethe's output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lethe_reference.broker import Broker
from lethe_reference.embedded import EmbeddedBroker
from lethe_reference.server.defaults import broker_config
from tools_support import Run

LetheRun = Callable[..., Run]
UNREACHABLE = "127.0.0.1:1"
ERROR = "Error while executing topic command : "


@pytest.fixture
def kafka(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker(tmp_path / "logs") as broker:
        broker.call(lambda b: b.create_topic("orders", 3))
        broker.call(lambda b: b.create_topic("kv", 1, {"cleanup.policy": "compact"}))
        yield broker


def topics(lethe: LetheRun, kafka: EmbeddedBroker, *argv: str) -> Run:
    return lethe("topics", "--bootstrap-server", kafka.bootstrap, *argv)


def partition_count(kafka: EmbeddedBroker, name: str) -> int | None:
    def count(b: Broker) -> int | None:
        info = b.metadata.get(name)
        return None if info is None else info.partitions

    return kafka.call(count)


# -- list and describe -----------------------------------------------------------


def test_list_prints_every_topic_name_sorted_one_per_line(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = topics(lethe, kafka, "--list")
    assert run.status == 0
    assert run.err == ""
    expected = sorted(kafka.call(lambda b: b.metadata.names()))
    assert run.lines == expected
    assert {"orders", "kv"} <= set(run.lines)


def test_list_with_topic_keeps_the_names_the_regular_expression_fully_matches(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    assert topics(lethe, kafka, "--list", "--topic", "ord.*").lines == ["orders"]
    # no match: Kafka's println of the empty joined list, one empty line
    assert topics(lethe, kafka, "--list", "--topic", "ord").out == "\n"
    assert topics(lethe, kafka, "--list", "--topic", "kv,orders").lines == ["kv", "orders"]


def test_describe_prints_kafkas_topic_line_then_one_line_per_partition(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = topics(lethe, kafka, "--describe", "--topic", "orders")
    assert run.status == 0
    topic_id = kafka.call(lambda b: str(b.metadata.get("orders").topic_id))  # type: ignore[union-attr]
    node = kafka.call(lambda b: b.node_id)
    head, *partitions = run.lines
    fields = head.split("\t")
    assert fields[:4] == [
        "Topic: orders",
        f"TopicId: {topic_id}",
        "PartitionCount: 3",
        "ReplicationFactor: 1",
    ]
    assert fields[4].startswith("Configs: ")
    assert "cleanup.policy" not in fields[4]  # a default is not listed
    assert partitions == [
        f"\tTopic: orders\tPartition: {p}\tLeader: {node}\tReplicas: {node}\tIsr: {node}"
        "\tElr: N/A\tLastKnownElr: N/A"
        for p in range(3)
    ]


def test_describe_lists_a_topic_override_in_configs(lethe: LetheRun, kafka: EmbeddedBroker) -> None:
    head = topics(lethe, kafka, "--describe", "--topic", "kv").lines[0]
    configs = head.split("\tConfigs: ")[1].split(",")
    assert "cleanup.policy=compact" in configs


def test_describe_without_topic_describes_every_topic_in_name_order(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = topics(lethe, kafka, "--describe")
    heads = [line.split("\t")[0] for line in run.lines if line.startswith("Topic: ")]
    assert heads == [f"Topic: {n}" for n in sorted(kafka.call(lambda b: b.metadata.names()))]


# -- create, delete, alter (grow) ------------------------------------------------


def test_create_prints_created_topic_and_the_broker_has_it(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = topics(
        lethe,
        kafka,
        "--create",
        "--topic",
        "events",
        "--partitions",
        "4",
        "--replication-factor",
        "1",
        "--config",
        "retention.ms=60000",
    )
    assert (run.status, run.lines, run.err) == (0, ["Created topic events."], "")
    info = kafka.call(lambda b: b.metadata.get("events"))
    assert info is not None
    assert info.partitions == 4
    assert info.configs.get("retention.ms") == "60000"


def test_create_of_a_name_with_a_period_or_underscore_warns_about_metric_collisions(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = topics(lethe, kafka, "--create", "--topic", "a.b", "--partitions", "1")
    assert run.status == 0
    assert run.lines[0].startswith("WARNING: Due to limitations in metric names")
    assert run.lines[1] == "Created topic a.b."


def test_create_of_an_existing_topic_fails_naming_the_topic_and_kafkas_error(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = topics(lethe, kafka, "--create", "--topic", "orders", "--partitions", "1")
    assert run.status == 1
    (line,) = run.lines
    assert line.startswith(f"{ERROR}Topic 'orders': ")
    assert "org.apache.kafka.common.errors.TopicExistsException" in line
    assert partition_count(kafka, "orders") == 3


def test_create_rejects_a_partition_count_below_one_before_asking_the_broker(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = topics(lethe, kafka, "--create", "--topic", "zero", "--partitions", "0")
    assert (run.status, run.lines) == (1, [f"{ERROR}The partitions must be greater than 0"])
    assert partition_count(kafka, "zero") is None


def test_delete_removes_the_topic_and_prints_nothing(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = topics(lethe, kafka, "--delete", "--topic", "orders")
    assert (run.status, run.out, run.err) == (0, "", "")
    assert partition_count(kafka, "orders") is None


def test_alter_to_more_partitions_sends_create_partitions_and_prints_nothing(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = topics(lethe, kafka, "--alter", "--topic", "orders", "--partitions", "5")
    assert (run.status, run.out, run.err) == (0, "", "")
    assert partition_count(kafka, "orders") == 5


def test_alter_to_the_same_count_fails_with_kafkas_invalid_partitions(
    lethe: LetheRun, kafka: EmbeddedBroker
) -> None:
    run = topics(lethe, kafka, "--alter", "--topic", "orders", "--partitions", "3")
    assert run.status == 1
    (line,) = run.lines
    assert line.startswith(
        f"{ERROR}Topic 'orders': org.apache.kafka.common.errors.InvalidPartitionsException: "
    )


# -- bad input: one clear line, status 1, no traceback -----------------------------


@pytest.mark.parametrize("action", ["--describe", "--delete", "--alter"])
def test_an_unknown_topic_is_named_in_one_error_line(
    lethe: LetheRun, kafka: EmbeddedBroker, action: str
) -> None:
    extra = ["--partitions", "2"] if action == "--alter" else []
    run = topics(lethe, kafka, action, "--topic", "missing", *extra)
    assert run.status == 1
    assert run.lines == [f"{ERROR}Topic 'missing' does not exist as expected"]
    assert "Traceback" not in run.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--create"], 'Missing required argument "[topic]"'),
        (["--delete"], 'Missing required argument "[topic]"'),
        (["--alter", "--topic", "t"], 'Missing required argument "[partitions]"'),
        (
            ["--list", "--describe"],
            "Command must include exactly one action: "
            "--list, --describe, --create, --alter or --delete",
        ),
        (
            ["--topic", "t"],
            "Command must include exactly one action: "
            "--list, --describe, --create, --alter or --delete",
        ),
        (
            ["--alter", "--topic", "t", "--partitions", "2", "--replication-factor", "1"],
            'Option "[replication-factor]" can\'t be used with option "[alter]"',
        ),
        (
            ["--create", "--topic", "t", "--delete-partitions-delay", "5"],
            'Option "[delete-partitions-delay]" can\'t be used with option "[create]"',
        ),
    ],
)
def test_option_problems_print_kafkas_message_and_exit_1_before_connecting(
    lethe: LetheRun, argv: list[str], message: str
) -> None:
    run = lethe("topics", "--bootstrap-server", UNREACHABLE, *argv)
    assert run.status == 1
    assert run.out == ""
    assert run.err.splitlines()[0] == message


def test_a_missing_bootstrap_server_is_kafkas_one_line(lethe: LetheRun) -> None:
    run = lethe("topics", "--list")
    assert (run.status, run.out, run.err) == (1, "", "--bootstrap-server must be specified\n")


def test_an_unreachable_broker_is_one_error_line_naming_the_address(lethe: LetheRun) -> None:
    run = lethe("topics", "--bootstrap-server", UNREACHABLE, "--list")
    assert run.status == 1
    (line,) = run.lines
    assert line.startswith(ERROR)
    assert UNREACHABLE in line
    assert "Traceback" not in run.err


# -- --command-config: SASL/PLAIN as lethe delete-records takes it ------------------

JAAS_SERVER = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="admin" password="admin-secret" user_alice="alice-secret";'
)


def client_properties(tmp_path: Path, password: str) -> str:
    path = tmp_path / "admin.properties"
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="alice" password="{password}";\n',
        encoding="utf-8",
    )
    return str(path)


@pytest.fixture
def sasl_kafka(tmp_path: Path) -> Iterator[EmbeddedBroker]:
    config = broker_config(
        overrides={
            "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS_SERVER,
        }
    )
    with EmbeddedBroker(tmp_path / "sasl-logs", config=config, sasl_port=0) as broker:
        broker.call(lambda b: b.create_topic("orders", 1))
        yield broker


def test_command_config_with_sasl_plain_lists_topics_on_the_sasl_listener(
    lethe: LetheRun, tmp_path: Path, sasl_kafka: EmbeddedBroker
) -> None:
    config = client_properties(tmp_path, "alice-secret")
    run = lethe(
        "topics",
        "--bootstrap-server",
        sasl_kafka.sasl_bootstrap,
        "--command-config",
        config,
        "--list",
    )
    assert run.status == 0
    assert "orders" in run.lines


def test_a_refused_sasl_login_is_one_error_line_with_kafkas_exception(
    lethe: LetheRun, tmp_path: Path, sasl_kafka: EmbeddedBroker
) -> None:
    config = client_properties(tmp_path, "wrong")
    run = lethe(
        "topics",
        "--bootstrap-server",
        sasl_kafka.sasl_bootstrap,
        "--command-config",
        config,
        "--list",
    )
    assert run.status == 1
    (line,) = run.lines
    assert line.startswith(f"{ERROR}org.apache.kafka.common.errors.SaslAuthenticationException")
