"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs: Kafka 4.0's golden answers,
resource checks and messages, and changes reaching the partition logs."""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.envelope import decode_response
from lethe_formats.protocol.messages.alter_configs import (
    AlterableConfig,
    AlterConfigsRequest,
    AlterConfigsResource,
    AlterConfigsResponse,
)
from lethe_formats.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeConfigsResponse,
)
from lethe_formats.protocol.messages.incremental_alter_configs import (
    IncrementalAlterableConfig,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResource,
    IncrementalAlterConfigsResponse,
)
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig
from lethe_reference.config.topic import EXTENSION_TOPIC_CONFIGS
from lethe_reference.protocol.loopback import LoopbackClient

WIRE = fixtures_root() / "golden" / "wire"
CASE = json.loads((WIRE / "case.json").read_text())
FRAMES = [json.loads(line) for line in (WIRE / "frames.jsonl").read_text().splitlines()]
TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def golden_broker(tmp_path: Path, **static: str) -> Broker:
    settings = {k: v for k, v in CASE["broker"]["settings"].items() if k != "log.dirs"}
    broker = Broker(
        tmp_path,
        config=BrokerConfig({**settings, **static}),
        clock=ManualClock(1_795_289_550_000),
        durable=False,
    )
    broker.startup()
    return broker


def replay(broker: Broker, seq: int) -> tuple[Any, Any]:
    req = next(f for f in FRAMES if f["seq"] == seq)
    resp = next(
        f
        for f in FRAMES
        if f["dir"] == "response"
        and (f["conn"], f["correlation_id"], f["api_key"])
        == (req["conn"], req["correlation_id"], req["api_key"])
    )
    client = LoopbackClient(broker)
    expect = (req["correlation_id"], req["api_key"], req["api_version"])
    client.send_raw(bytes.fromhex(req["hex"]), expect=expect)
    ((_, ours),) = client.responses()
    _, theirs = decode_response(req["api_key"], req["api_version"], bytes.fromhex(resp["hex"])[4:])
    return ours, theirs


@pytest.mark.parametrize(
    ("seq", "topic"),
    [(11, "wire-rd-events"), (135, "wire-kp-events")],
    ids=["v1-synonyms", "v4-plain"],
)
def test_golden_describe_configs_of_a_topic(tmp_path: Path, seq: int, topic: str) -> None:
    # extensions off (the default): the answer is Kafka's, nothing of them in it
    broker = golden_broker(tmp_path / "default")
    broker.create_topic(topic, 1)
    ours, theirs = replay(broker, seq)
    assert ours.results == theirs.results


@pytest.mark.parametrize(
    ("seq", "topic"),
    [(11, "wire-rd-events"), (135, "wire-kp-events")],
    ids=["v1-synonyms", "v4-plain"],
)
def test_switched_on_extensions_list_their_configs_after_kafkas(
    tmp_path: Path, seq: int, topic: str
) -> None:
    switches = {"lethe.kip68.enable": "true", "lethe.kip87.enable": "true"}
    broker = golden_broker(tmp_path, **switches)
    broker.create_topic(topic, 1)
    ours, theirs = replay(broker, seq)
    kafkas = tuple(
        dataclasses.replace(
            r, configs=tuple(c for c in r.configs if c.name not in EXTENSION_TOPIC_CONFIGS)
        )
        for r in ours.results
    )
    assert kafkas == theirs.results
    # lethe's extension configs follow Kafka's, so Kafka's clients see them last
    assert [c.name for c in ours.results[0].configs][-len(EXTENSION_TOPIC_CONFIGS) :] == list(
        EXTENSION_TOPIC_CONFIGS
    )


def describe(broker: Broker, *resources: DescribeConfigsResource, **kw: Any) -> Any:
    response = LoopbackClient(broker).request(DescribeConfigsRequest(resources, **kw), 4)
    assert isinstance(response, DescribeConfigsResponse)
    return response.results


def test_describe_errors_per_resource(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    results = describe(
        broker,
        DescribeConfigsResource(TOPIC, "nope", None),
        DescribeConfigsResource(TOPIC, "bad/name", None),
        DescribeConfigsResource(BROKER, "2", None),
        DescribeConfigsResource(BROKER, "x", None),
        DescribeConfigsResource(BROKER_LOGGER, "", None),
    )
    assert [(r.error_code, r.error_message, r.configs) for r in results] == [
        (3, "", ()),
        (
            17,
            "Topic name is invalid: 'bad/name' contains one or more characters other than "
            "ASCII alphanumerics, '.', '_' and '-'",
            (),
        ),
        (42, "Unexpected broker id, expected 1 or empty string, but received 2", ()),
        (42, "Broker id must be an integer, but it is: x", ()),
        (42, "Broker id must not be empty", ()),
    ]


def test_describe_of_an_unknown_resource_type_fails_every_resource(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("t", 1)
    results = describe(
        broker, DescribeConfigsResource(TOPIC, "t", None), DescribeConfigsResource(99, "z", None)
    )
    assert [(r.error_code, r.error_message) for r in results] == [
        (42, "Unexpected resource type UNKNOWN for resource z"),
        (42, "Unexpected resource type UNKNOWN for resource z"),
    ]


def test_describe_broker_and_cluster_defaults(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    (node,) = describe(broker, DescribeConfigsResource(BROKER, "1", ("log.retention.hours",)))
    ((entry),) = node.configs
    assert (entry.name, entry.value, entry.config_source, entry.read_only) == (
        "log.retention.hours",
        "168",
        4,
        True,
    )
    (defaults,) = describe(broker, DescribeConfigsResource(BROKER, "", None))
    assert (defaults.error_code, defaults.configs) == (0, ())


def incremental(broker: Broker, *resources: IncrementalAlterConfigsResource, **kw: Any) -> Any:
    request = IncrementalAlterConfigsRequest(resources, **kw)
    response = LoopbackClient(broker).request(request, 1)
    assert isinstance(response, IncrementalAlterConfigsResponse)
    return [(r.error_code, r.error_message) for r in response.responses]


def ops(*items: tuple[str, int, str | None]) -> tuple[IncrementalAlterableConfig, ...]:
    return tuple(IncrementalAlterableConfig(n, o, v) for n, o, v in items)


def test_incremental_alter_reaches_the_partition_logs(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("t", 2)
    changes = ops(("retention.ms", SET, "1000"), ("cleanup.policy", APPEND, "compact"))
    assert incremental(broker, IncrementalAlterConfigsResource(TOPIC, "t", changes)) == [(0, None)]
    assert dict(broker.metadata.get("t").configs) == {
        "retention.ms": "1000",
        "cleanup.policy": "delete,compact",
    }
    for partition in (0, 1):
        log = broker.log("t", partition)
        assert log is not None and log.settings.retention_ms == 1000
    undo = ops(("retention.ms", DELETE, None))
    assert incremental(broker, IncrementalAlterConfigsResource(TOPIC, "t", undo)) == [(0, None)]
    assert broker.log("t", 0).settings.retention_ms == 604800000


def test_validate_only_changes_nothing(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("t", 1)
    change = IncrementalAlterConfigsResource(TOPIC, "t", ops(("retention.ms", SET, "5")))
    assert incremental(broker, change, validate_only=True) == [(0, None)]
    assert dict(broker.metadata.get("t").configs) == {}


def test_topic_checks_in_kafkas_order(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    good = ops(("retention.ms", SET, "5"))
    bad = ops(("retention.ms", SET, "x"))
    results = incremental(
        broker,
        IncrementalAlterConfigsResource(TOPIC, "nope", good),
        IncrementalAlterConfigsResource(TOPIC, "nope2", bad),
        IncrementalAlterConfigsResource(TOPIC, "", good),
        IncrementalAlterConfigsResource(TOPIC, "d", ops(("a", SET, "1"), ("a", DELETE, None))),
        IncrementalAlterConfigsResource(TOPIC, "n", ops(("retention.ms", SET, None))),
    )
    assert results == [
        (3, "The topic 'nope' does not exist."),
        (40, "Invalid value x for configuration retention.ms: Not a number of type LONG"),
        (42, "Default topic resources are not allowed."),
        (42, "Error due to duplicate config keys"),
        (42, "Null value not supported for : retention.ms"),
    ]


def test_a_resource_named_twice_fails_both_times(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("t", 1)
    same = IncrementalAlterConfigsResource(TOPIC, "t", ops(("retention.ms", SET, "5")))
    message = "Each resource must appear at most once."
    assert incremental(broker, same, same) == [(42, message), (42, message)]


def test_legacy_alter_configs_replaces_the_whole_set(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("t", 1, {"retention.ms": "1000", "segment.ms": "2000"})
    request = AlterConfigsRequest(
        (AlterConfigsResource(TOPIC, "t", (AlterableConfig("segment.bytes", "1048576"),)),)
    )
    response = LoopbackClient(broker).request(request, 1)
    assert isinstance(response, AlterConfigsResponse)
    assert [(r.error_code, r.error_message) for r in response.responses] == [(0, None)]
    assert dict(broker.metadata.get("t").configs) == {"segment.bytes": "1048576"}
    assert broker.log("t", 0).settings.segment_bytes == 1048576


def test_broker_dynamic_default_changes_topic_defaults(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    broker.create_topic("t", 1)
    change = IncrementalAlterConfigsResource(BROKER, "", ops(("log.retention.ms", SET, "7000")))
    assert incremental(broker, change) == [(0, None)]
    assert broker.config.dynamic_default == {"log.retention.ms": "7000"}
    assert broker.log("t", 0).settings.retention_ms == 7000


def test_broker_resource_checks(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    results = incremental(
        broker,
        IncrementalAlterConfigsResource(BROKER, "2", ops(("log.retention.ms", SET, "1"))),
        IncrementalAlterConfigsResource(BROKER, "x", ops(("log.retention.ms", SET, "1"))),
        IncrementalAlterConfigsResource(BROKER, "1", ops(("log.dirs", SET, "/tmp"))),
        IncrementalAlterConfigsResource(64, "g", ops(("a", SET, "1"))),
    )
    assert results == [
        (42, "Unexpected broker id, expected 1, but received 2"),
        (42, "Node id must be an integer, but it is: x"),
        (42, "Cannot update these configs dynamically: Set(log.dirs)"),
        (42, "Unknown resource type 64"),
    ]


def test_broker_logger_levels(tmp_path: Path) -> None:
    broker = golden_broker(tmp_path)
    name = "lethe_reference.handlers"
    logging.getLogger(name)
    before = logging.getLogger(name).level
    try:
        results = [
            incremental(broker, IncrementalAlterConfigsResource(BROKER_LOGGER, "1", change))[0]
            for change in (
                ops((name, SET, "DEBUG")),
                ops(("root", DELETE, None)),
                ops((name, SET, "LOUD")),
            )
        ]
        assert results[0] == (0, None)
        assert results[1] == (42, "Removing the log level of the root logger is not allowed")
        assert results[2][0] == 40
        assert logging.getLogger(name).level == logging.DEBUG
        (described,) = describe(broker, DescribeConfigsResource(BROKER_LOGGER, "1", (name,)))
        assert [(c.name, c.value, c.config_source) for c in described.configs] == [
            (name, "DEBUG", 6)
        ]
    finally:
        logging.getLogger(name).setLevel(before)
