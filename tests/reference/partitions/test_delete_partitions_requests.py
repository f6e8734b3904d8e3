"""DeletePartitions as the catalog decides it (fixtures/requirements/kip694.json):
served only when enabled, every KIP694-ERR rule, and the status codes of a reduction."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import encode
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.framing import frame
from lethe_formats.protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from lethe_formats.protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopic,
)
from lethe_formats.protocol.messages.delete_partitions import (
    DeletePartitionsPartitionResult,
    DeletePartitionsRequest,
    DeletePartitionsTopic,
)
from lethe_formats.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeConfigsResponse,
)
from lethe_reference.broker import Broker
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import NoHandlerError, dispatch, handled_api_keys
from lethe_reference.protocol.loopback import LoopbackClient
from reduction_support import delete_partitions, new_broker

READ_ONLY, NONE = 1, -1


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    broker = new_broker(tmp_path)
    broker.create_topic("t", 5)
    broker.create_topic("u", 2)
    return broker


def advertised(broker: Broker) -> dict[int, tuple[int, int]]:
    response = LoopbackClient(broker).call(ApiVersionsRequest("lethe", "1"), ApiVersionsResponse, 3)
    return {v.api_key: (v.min_version, v.max_version) for v in response.api_keys}


def create_partitions(broker: Broker, topic: str, count: int) -> tuple[int, str | None]:
    request = CreatePartitionsRequest(
        topics=(CreatePartitionsTopic(topic, count, None),), timeout_ms=30000
    )
    (result,) = LoopbackClient(broker).call(request, CreatePartitionsResponse, 3).results
    return result.error_code, result.error_message


# --- served only when enabled (KIP694-API-1, KIP694-DISC-1, KIP694-CFG-1) ------------------


def test_enabled_broker_advertises_key_10694_version_0_only(broker: Broker) -> None:
    assert advertised(broker)[10694] == (0, 0)
    assert 10694 in handled_api_keys(broker)


def test_by_default_the_key_is_not_advertised_and_a_request_closes_the_connection(
    tmp_path: Path,
) -> None:
    broker = new_broker(tmp_path, enable=False)
    assert broker.config.get_bool("delete.topic.partition.enable") is False
    assert 10694 not in advertised(broker)
    assert 10694 not in handled_api_keys(broker)
    assert 10694 not in handled_api_keys()
    client = LoopbackClient(broker)
    body = encode(DeletePartitionsRequest(topics=(DeletePartitionsTopic("t", 1),)), 0)
    header = struct.pack(">hhih", 10694, 0, 1, 1) + b"c" + b"\x00"
    client.send_raw(frame(header + body))
    assert client.closed
    assert client.raw_frames() == []


def test_dispatch_refuses_a_disabled_extension_even_if_a_request_got_through(
    tmp_path: Path,
) -> None:
    broker = new_broker(tmp_path, enable=False)
    ctx = RequestContext(ApiKey.DELETE_PARTITIONS, 0, 1, "c", 1)
    with pytest.raises(NoHandlerError):
        dispatch(broker, ctx, DeletePartitionsRequest())


def test_describe_configs_lists_both_configs_read_only_while_switched_on(
    tmp_path: Path,
) -> None:
    listed = _described(new_broker(tmp_path, enable=True))
    assert listed == {
        "delete.topic.partition.enable": ("true", True),
        "delete.topic.partition.interval.delay.ms": ("300000", True),
    }


def test_describe_configs_lists_neither_while_switched_off(tmp_path: Path) -> None:
    # switched off, the extension is invisible: its names are unknown to the broker
    assert _described(new_broker(tmp_path, enable=False)) == {}


def _described(broker: Broker) -> dict[str, tuple[str | None, bool]]:
    names = ("delete.topic.partition.enable", "delete.topic.partition.interval.delay.ms")
    resource = DescribeConfigsResource(4, str(broker.node_id), names)
    request = DescribeConfigsRequest((resource,), include_synonyms=False)
    response = LoopbackClient(broker).call(request, DescribeConfigsResponse, 4)
    (result,) = response.results
    return {c.name: (c.value, c.read_only) for c in result.configs}


# --- a reduction's answer (KIP694-API-4, KIP694-API-5) -------------------------------------


def test_a_delayed_reduction_lists_the_removed_partitions_read_only(broker: Broker) -> None:
    response = delete_partitions(broker, ("t", 3), delay_ms=60000)
    assert (response.error_code, response.error_message) == (0, None)
    (result,) = response.responses
    assert (result.name, result.error_code, result.error_message) == ("t", 0, None)
    assert result.partitions == (
        DeletePartitionsPartitionResult(3, READ_ONLY, 0, None),
        DeletePartitionsPartitionResult(4, READ_ONLY, 0, None),
    )


@pytest.mark.parametrize(("delay", "immediate"), [(0, False), (60000, True)])
def test_immediate_or_zero_delay_answers_none(broker: Broker, delay: int, immediate: bool) -> None:
    (result,) = delete_partitions(broker, ("t", 4), delay_ms=delay, immediate=immediate).responses
    assert result.partitions == (DeletePartitionsPartitionResult(4, NONE, 0, None),)
    assert broker.metadata.get("t").partitions == 4  # type: ignore[union-attr]


# --- errors (KIP694-ERR-*) ------------------------------------------------------------------


def test_unknown_topic_is_error_3(broker: Broker) -> None:
    (result,) = delete_partitions(broker, ("missing", 1)).responses
    assert (result.name, result.error_code, result.partitions) == ("missing", 3, ())


def test_internal_topic_is_error_17(broker: Broker) -> None:
    broker.create_topic("__consumer_offsets", 3, {"cleanup.policy": "compact"})
    (result,) = delete_partitions(broker, ("__consumer_offsets", 1)).responses
    assert result.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert broker.metadata.get("__consumer_offsets").partitions == 3  # type: ignore[union-attr]


@pytest.mark.parametrize("count", [5, 6, 0, -1])
def test_a_count_that_is_no_reduction_or_below_1_is_error_37(broker: Broker, count: int) -> None:
    (result,) = delete_partitions(broker, ("t", count)).responses
    assert result.error_code == ErrorCode.INVALID_PARTITIONS
    assert result.error_message
    assert broker.metadata.get("t").partitions == 5  # type: ignore[union-attr]


def test_a_topic_listed_twice_is_error_42_and_the_others_proceed(broker: Broker) -> None:
    response = delete_partitions(broker, ("t", 3), ("u", 1), ("t", 2), delay_ms=1000)
    by_name = [(r.name, r.error_code, r.error_message) for r in response.responses]
    assert by_name[0] == ("t", ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
    assert (by_name[1][0], by_name[1][1]) == ("u", 0)
    assert broker.metadata.get("t").reduction is None  # type: ignore[union-attr]


def test_a_negative_delay_fails_every_topic_with_42_and_changes_nothing(broker: Broker) -> None:
    response = delete_partitions(broker, ("t", 3), ("u", 1), delay_ms=-1)
    assert response.error_code == ErrorCode.INVALID_REQUEST
    assert [r.error_code for r in response.responses] == [42, 42]
    assert all(info.reduction is None for info in broker.metadata)


def test_while_pending_delete_and_create_partitions_get_37_under_change(broker: Broker) -> None:
    delete_partitions(broker, ("t", 3), delay_ms=60000)
    (again,) = delete_partitions(broker, ("t", 2)).responses
    assert again.error_code == ErrorCode.INVALID_PARTITIONS
    assert "currently under changes" in (again.error_message or "")
    code, message = create_partitions(broker, "t", 8)
    assert code == ErrorCode.INVALID_PARTITIONS
    assert "currently under changes" in (message or "")


def test_create_partitions_at_or_below_the_count_keeps_kafkas_37(broker: Broker) -> None:
    assert create_partitions(broker, "t", 5) == (37, "Topic already has 5 partition(s).")
    assert create_partitions(broker, "t", 3) == (
        37,
        "The topic t currently has 5 partition(s); 3 would not be an increase.",
    )
