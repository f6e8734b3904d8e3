"""Admin, producer-id and SASL messages: CreateTopics, DeleteTopics,
CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs,
DescribeCluster, ElectLeaders, AlterPartitionReassignments, InitProducerId,
SaslHandshake, SaslAuthenticate.

Three kinds of check:

* every version Kafka 4.0 advertises round-trips any valid value;
* the recorded frames (librdkafka 2.16 and kafka-python 3.0.12 against Kafka
  4.0) decode to what the recording says was sent and what a Kafka 4.0 broker
  answers (default configs, KIP-525 configs in CreateTopics v5+, topic ids in v7);
* hand-laid bytes from the message specs pin the version boundaries: which
  versions carry a field, compact vs classic encodings, tagged fields, and
  which absent fields are dropped (ignorable) or refused.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.envelope import decode_request, decode_response
from lethe_formats.protocol.exceptions import UnsupportedVersionError
from lethe_formats.protocol.messages.alter_configs import (
    AlterableConfig,
    AlterConfigsRequest,
    AlterConfigsResource,
)
from lethe_formats.protocol.messages.alter_partition_reassignments import (
    AlterPartitionReassignmentsRequest,
    ReassignablePartition,
    ReassignableTopic,
)
from lethe_formats.protocol.messages.create_partitions import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
)
from lethe_formats.protocol.messages.create_topics import (
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
)
from lethe_formats.protocol.messages.delete_topics import (
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DeleteTopicState,
)
from lethe_formats.protocol.messages.describe_cluster import (
    AUTHORIZED_OPERATIONS_OMITTED,
    DescribeClusterBroker,
    DescribeClusterRequest,
    DescribeClusterResponse,
)
from lethe_formats.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
)
from lethe_formats.protocol.messages.elect_leaders import (
    PREFERRED,
    ElectLeadersPartitionResult,
    ElectLeadersRequest,
    ElectLeadersResponse,
    ElectLeadersTopic,
    ElectLeadersTopicResult,
)
from lethe_formats.protocol.messages.incremental_alter_configs import (
    APPEND,
    IncrementalAlterableConfig,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResource,
)
from lethe_formats.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from lethe_formats.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from lethe_formats.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from lethe_formats.protocol.registry import api
from lethe_formats.protocol.schema import Struct
from wire_bytes import cstr as _cstr
from wire_bytes import i16 as _i16
from wire_bytes import i32 as _i32
from wire_bytes import i64 as _i64
from wire_bytes import string as _str
from wire_golden import Frame, frame_by_seq
from wire_strategies import message_values

#: API key -> (lowest, highest) version Kafka 4.0 advertised (golden ApiVersions frame #0002).
ADMIN_APIS = {
    17: (0, 1),  # SaslHandshake
    19: (2, 7),  # CreateTopics (v0-1 removed in 4.0)
    20: (1, 6),  # DeleteTopics (v0 removed)
    22: (0, 5),  # InitProducerId
    32: (1, 4),  # DescribeConfigs (v0 removed)
    33: (0, 2),  # AlterConfigs
    36: (0, 2),  # SaslAuthenticate
    37: (0, 3),  # CreatePartitions
    43: (0, 2),  # ElectLeaders
    44: (0, 1),  # IncrementalAlterConfigs
    45: (0, 0),  # AlterPartitionReassignments
    60: (0, 2),  # DescribeCluster
}

TOPIC_RESOURCE = 2  # ConfigResource.Type.TOPIC
TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5  # ConfigSource ids
CONFIG_TYPE_INT, CONFIG_TYPE_LIST = 3, 7


def _body(frame: Frame) -> Any:
    if frame.direction == "request":
        return decode_request(frame.payload)[1]
    return decode_response(frame.api_key, frame.api_version, frame.payload)[1]


# ------------------------------------------------------------------ round trips


def test_advertised_ranges_are_kafka_40s() -> None:
    for api_key, (low, high) in ADMIN_APIS.items():
        spec = api(api_key)
        assert (spec.min_version, spec.max_version) == (low, high), spec.name


def _round_trip_cases() -> list[Any]:
    cases = []
    for api_key, (low, high) in ADMIN_APIS.items():
        spec = api(api_key)
        for version in range(low, high + 1):
            for cls in (spec.request, spec.response):
                cases.append(pytest.param(cls, version, id=f"{cls.__name__}-v{version}"))
    return cases


@pytest.mark.parametrize(("cls", "version"), _round_trip_cases())
@settings(max_examples=30)
@given(data=st.data())
def test_admin_message_round_trips_at_every_version(
    cls: type[Struct], version: int, data: st.DataObject
) -> None:
    value = data.draw(message_values(cls, version))
    wire = encode(value, version)
    assert decode(cls, version, wire) == value
    assert encode(decode(cls, version, wire), version) == wire


# ------------------------------------------------------------- golden: CreateTopics


@pytest.mark.parametrize(("seq", "prefix"), [(8, "wire-rd"), (133, "wire-kp")])
def test_create_topics_requests_ask_for_a_delete_topic_and_a_compact_topic(
    seq: int, prefix: str
) -> None:
    request = _body(frame_by_seq(seq))
    assert isinstance(request, CreateTopicsRequest)
    events, kv = request.topics
    assert (events.name, kv.name) == (f"{prefix}-events", f"{prefix}-kv")
    assert (events.num_partitions, kv.num_partitions) == (1, 1)
    assert events.configs == ()
    assert [(c.name, c.value) for c in kv.configs] == [("cleanup.policy", "compact")]
    assert request.validate_only is False


def test_create_topics_v4_response_has_no_v5_fields() -> None:
    response = _body(frame_by_seq(10))
    assert isinstance(response, CreateTopicsResponse)
    assert [t.name for t in response.topics] == ["wire-rd-events", "wire-rd-kv"]
    for topic in response.topics:
        assert (topic.error_code, topic.error_message) == (0, None)
        # num_partitions/replication_factor/configs/topic_id exist from v5/v7 only
        assert (topic.num_partitions, topic.replication_factor) == (-1, -1)
        assert topic.configs == ()
        assert topic.topic_id.int == 0


def test_create_topics_v7_response_returns_topic_ids_and_configs() -> None:
    response = _body(frame_by_seq(134))
    assert isinstance(response, CreateTopicsResponse)
    events, kv = response.topics
    assert (events.name, kv.name) == ("wire-kp-events", "wire-kp-kv")
    for topic in (events, kv):
        assert topic.topic_id.int != 0
        assert (topic.num_partitions, topic.replication_factor) == (1, 1)
    assert events.topic_id != kv.topic_id
    assert _config(events, "cleanup.policy") == ("delete", DEFAULT_CONFIG)
    assert _config(kv, "cleanup.policy") == ("compact", TOPIC_CONFIG)
    assert _config(kv, "segment.bytes") == ("1073741824", STATIC_BROKER_CONFIG)


def _config(topic: CreatableTopicResult, name: str) -> tuple[str | None, int]:
    assert topic.configs is not None
    (config,) = [c for c in topic.configs if c.name == name]
    return config.value, config.config_source


# ---------------------------------------------------------- golden: DescribeConfigs


@pytest.mark.parametrize(("seq", "name"), [(11, "wire-rd-events"), (135, "wire-kp-events")])
def test_describe_configs_requests_ask_for_every_config_of_a_topic(seq: int, name: str) -> None:
    request = _body(frame_by_seq(seq))
    assert isinstance(request, DescribeConfigsRequest)
    (resource,) = request.resources
    assert (resource.resource_type, resource.resource_name) == (TOPIC_RESOURCE, name)
    assert resource.configuration_keys is None
    assert request.include_documentation is False


@pytest.mark.parametrize(("seq", "name"), [(12, "wire-rd-events"), (136, "wire-kp-events")])
def test_describe_configs_response_reports_sources(seq: int, name: str) -> None:
    response = _body(frame_by_seq(seq))
    assert isinstance(response, DescribeConfigsResponse)
    (result,) = response.results
    assert (result.error_code, result.error_message) == (0, "")
    assert (result.resource_type, result.resource_name) == (TOPIC_RESOURCE, name)
    assert len(result.configs) == 33  # Kafka 4.0's topic configs
    configs = {c.name: c for c in result.configs}
    assert (configs["cleanup.policy"].value, configs["cleanup.policy"].config_source) == (
        "delete",
        DEFAULT_CONFIG,
    )
    # log.segment.bytes is set in the broker's properties
    segment = configs["segment.bytes"]
    assert (segment.value, segment.config_source) == ("1073741824", STATIC_BROKER_CONFIG)


def test_describe_configs_v1_has_no_types_v4_has_them() -> None:
    v1 = _body(frame_by_seq(12))
    v4 = _body(frame_by_seq(136))
    assert {c.config_type for c in v1.results[0].configs} == {0}
    assert {c.documentation for c in v1.results[0].configs} == {""}
    types = {c.name: c.config_type for c in v4.results[0].configs}
    assert (types["cleanup.policy"], types["segment.bytes"]) == (CONFIG_TYPE_LIST, CONFIG_TYPE_INT)
    assert {c.documentation for c in v4.results[0].configs} == {None}  # not asked for


# ----------------------------------------------------------- golden: InitProducerId


@pytest.mark.parametrize(
    ("seq", "error_code", "producer_id", "epoch"),
    [(28, 14, -1, -1), (30, 0, 0, 0), (154, 0, 1, 0)],
)
def test_init_producer_id_v4_responses(
    seq: int, error_code: int, producer_id: int, epoch: int
) -> None:
    response = _body(frame_by_seq(seq))
    assert isinstance(response, InitProducerIdResponse)
    assert (response.error_code, response.producer_id, response.producer_epoch) == (
        error_code,
        producer_id,
        epoch,
    )


@pytest.mark.parametrize("seq", [27, 29, 153])
def test_init_producer_id_requests_are_idempotent_not_transactional(seq: int) -> None:
    request = _body(frame_by_seq(seq))
    assert isinstance(request, InitProducerIdRequest)
    assert request.transactional_id is None
    assert (request.producer_id, request.producer_epoch) == (-1, -1)


# ------------------------------------------------------------ hand-laid bytes: SASL


def test_sasl_handshake_is_classic_in_both_versions() -> None:
    assert api(17).is_flexible(1) is False
    assert encode(SaslHandshakeRequest(mechanism="PLAIN"), 1) == _str("PLAIN")
    response = SaslHandshakeResponse(error_code=33, mechanisms=("PLAIN", "SCRAM-SHA-256"))
    wire = _i16(33) + _i32(2) + _str("PLAIN") + _str("SCRAM-SHA-256")
    assert encode(response, 0) == wire
    assert decode(SaslHandshakeResponse, 1, wire) == response


def test_sasl_authenticate_v2_is_compact_with_a_tag_buffer() -> None:
    token = b"\x00user\x00pass"
    assert encode(SaslAuthenticateRequest(auth_bytes=token), 1) == _i32(len(token)) + token
    assert (
        encode(SaslAuthenticateRequest(auth_bytes=token), 2)
        == bytes([len(token) + 1]) + token + b"\x00"
    )


def test_sasl_authenticate_session_lifetime_exists_from_v1() -> None:
    response = SaslAuthenticateResponse(error_code=0, error_message=None, session_lifetime_ms=1000)
    v0 = _i16(0) + _i16(-1) + _i32(0)
    assert encode(response, 0) == v0  # ignorable: dropped
    assert encode(response, 1) == v0 + _i64(1000)
    assert decode(SaslAuthenticateResponse, 0, v0).session_lifetime_ms == 0


# --------------------------------------------------------- hand-laid bytes: cluster


def test_describe_cluster_request_fields_by_version() -> None:
    assert encode(DescribeClusterRequest(include_cluster_authorized_operations=True), 0) == (
        b"\x01\x00"
    )
    assert encode(DescribeClusterRequest(), 1) == b"\x00\x01\x00"  # endpoint_type 1 (brokers)
    assert encode(DescribeClusterRequest(include_fenced_brokers=True), 2) == b"\x00\x01\x01\x00"
    with pytest.raises(UnsupportedVersionError):
        encode(DescribeClusterRequest(include_fenced_brokers=True), 1)


def test_describe_cluster_response_broker_is_fenced_only_in_v2() -> None:
    broker = DescribeClusterBroker(broker_id=1, host="h", port=9092, is_fenced=False)
    response = DescribeClusterResponse(cluster_id="c", controller_id=1, brokers=(broker,))
    common = _i32(0) + _i16(0) + b"\x00"  # throttle, error, null error message
    broker_v0 = _i32(1) + _cstr("h") + _i32(9092) + b"\x00"  # null rack
    tail = _i32(AUTHORIZED_OPERATIONS_OMITTED) + b"\x00"
    v0 = common + _cstr("c") + _i32(1) + b"\x02" + broker_v0 + b"\x00" + tail
    assert encode(response, 0) == v0
    v2 = common + b"\x01" + _cstr("c") + _i32(1) + b"\x02" + broker_v0 + b"\x00\x00" + tail
    assert encode(response, 2) == v2
    fenced = DescribeClusterBroker(broker_id=1, host="h", port=9092, is_fenced=True)
    with pytest.raises(UnsupportedVersionError):
        encode(DescribeClusterResponse(brokers=(fenced,)), 1)


# ---------------------------------------------------------- hand-laid bytes: topics


def test_delete_topics_v5_names_topics_v6_names_or_ids() -> None:
    by_name = DeleteTopicsRequest(topic_names=("a",), timeout_ms=100)
    assert encode(by_name, 3) == _i32(1) + _str("a") + _i32(100)
    assert encode(by_name, 5) == b"\x02" + _cstr("a") + _i32(100) + b"\x00"
    topic_id = uuid.UUID(int=7)
    by_id = DeleteTopicsRequest(topics=(DeleteTopicState(topic_id=topic_id),), timeout_ms=100)
    assert encode(by_id, 6) == b"\x02" + b"\x00" + topic_id.bytes + b"\x00" + _i32(100) + b"\x00"
    with pytest.raises(UnsupportedVersionError):
        encode(by_id, 5)  # topics is not ignorable: ids cannot be sent to v5
    # topic_names is ignorable: dropped in v6
    assert encode(DeleteTopicsRequest(topic_names=("a",), timeout_ms=100), 6) == (
        b"\x01" + _i32(100) + b"\x00"
    )


def test_delete_topics_response_error_message_from_v5() -> None:
    wire_v4 = _i32(0) + b"\x02" + _cstr("a") + _i16(73) + b"\x00" + b"\x00"
    response = decode(DeleteTopicsResponse, 4, wire_v4)
    assert response.responses[0].error_message is None  # default null
    assert response.responses[0].error_code == 73


def test_create_topics_v5_sends_topic_config_error_code_as_tag_0() -> None:
    result = CreatableTopicResult(name="t", error_message=None, topic_config_error_code=29)
    response = CreateTopicsResponse(topics=(result,))
    wire = (
        _i32(0)
        + b"\x02"
        + _cstr("t")
        + _i16(0)
        + b"\x00"  # null error message
        + _i32(-1)
        + _i16(-1)
        + b"\x01"  # empty configs
        + b"\x01\x00\x02"
        + _i16(29)  # one tagged field: tag 0, size 2
        + b"\x00"
    )
    assert encode(response, 5) == wire
    assert decode(CreateTopicsResponse, 5, wire) == response
    # v4 is not flexible: the tagged field is ignorable and dropped
    v4 = _i32(0) + _i32(1) + _str("t") + _i16(0) + _i16(-1)
    assert encode(response, 4) == v4


def test_create_topics_request_v4_bytes() -> None:
    request = CreateTopicsRequest(timeout_ms=30000)
    assert encode(request, 4) == _i32(0) + _i32(30000) + b"\x00"
    assert CreateTopicsRequest().timeout_ms == 60000


def test_create_partitions_assignments_may_be_null() -> None:
    topic = CreatePartitionsTopic(name="t", count=3, assignments=None)
    request = CreatePartitionsRequest(topics=(topic,), timeout_ms=5)
    assert encode(request, 1) == _i32(1) + _str("t") + _i32(3) + _i32(-1) + _i32(5) + b"\x00"
    placed = CreatePartitionsTopic(
        name="t", count=2, assignments=(CreatePartitionsAssignment(broker_ids=(1,)),)
    )
    wire = (
        b"\x02"
        + _cstr("t")
        + _i32(2)
        + b"\x02\x02"
        + _i32(1)
        + b"\x00"  # one assignment [1]
        + b"\x00"
        + _i32(5)
        + b"\x01"
        + b"\x00"
    )
    assert encode(
        CreatePartitionsRequest(topics=(placed,), timeout_ms=5, validate_only=True), 2
    ) == (wire)


# ---------------------------------------------------------- hand-laid bytes: configs


def test_alter_configs_v0_and_v2() -> None:
    resource = AlterConfigsResource(
        resource_type=TOPIC_RESOURCE,
        resource_name="t",
        configs=(AlterableConfig(name="retention.ms", value=None),),
    )
    request = AlterConfigsRequest(resources=(resource,))
    v0 = _i32(1) + b"\x02" + _str("t") + _i32(1) + _str("retention.ms") + _i16(-1) + b"\x00"
    assert encode(request, 0) == v0
    v2 = b"\x02\x02" + _cstr("t") + b"\x02" + _cstr("retention.ms") + b"\x00\x00\x00\x00\x00"
    assert encode(request, 2) == v2


def test_incremental_alter_configs_carries_the_operation() -> None:
    config = IncrementalAlterableConfig(name="cleanup.policy", config_operation=APPEND, value="x")
    resource = IncrementalAlterConfigsResource(
        resource_type=TOPIC_RESOURCE, resource_name="t", configs=(config,)
    )
    request = IncrementalAlterConfigsRequest(resources=(resource,), validate_only=True)
    v0 = (
        _i32(1)
        + b"\x02"
        + _str("t")
        + _i32(1)
        + _str("cleanup.policy")
        + b"\x02"
        + _str("x")
        + b"\x01"
    )
    assert encode(request, 0) == v0
    assert decode(IncrementalAlterConfigsRequest, 0, v0) == request


def test_init_producer_id_v3_adds_producer_id_and_epoch() -> None:
    request = InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=60000)
    v2 = _cstr("tx") + _i32(60000) + b"\x00"
    assert encode(request, 2) == v2
    assert encode(request, 3) == _cstr("tx") + _i32(60000) + _i64(-1) + _i16(-1) + b"\x00"
    assert encode(request, 0) == _str("tx") + _i32(60000)
    with pytest.raises(UnsupportedVersionError):
        encode(InitProducerIdRequest(producer_id=5), 2)


# ---------------------------------------- hand-laid: ElectLeaders, AlterPartitionReassignments


def test_elect_leaders_v0_has_no_election_type_and_v2_is_compact() -> None:
    """ElectLeadersRequest.json: ElectionType from v1, flexible from v2; the topic
    list is nullable (null: every partition)."""
    one = ElectLeadersRequest(
        election_type=PREFERRED,
        topic_partitions=(ElectLeadersTopic("t", (0, 2)),),
        timeout_ms=30000,
    )
    v0 = _i32(1) + _str("t") + _i32(2) + _i32(0) + _i32(2) + _i32(30000)
    assert encode(one, 0) == v0
    v1 = b"\x00" + v0
    assert encode(one, 1) == v1
    v2 = b"\x00" + bytes([2]) + _cstr("t") + bytes([3]) + _i32(0) + _i32(2) + b"\x00"
    assert encode(one, 2) == v2 + _i32(30000) + b"\x00"
    every = ElectLeadersRequest(election_type=PREFERRED, topic_partitions=None, timeout_ms=1)
    assert encode(every, 1) == b"\x00" + _i32(-1) + _i32(1)


def test_elect_leaders_response_v1_carries_the_request_error() -> None:
    """ElectLeadersResponse.json: ErrorCode from v1; ELECTION_NOT_NEEDED (84) per partition."""
    result = ElectLeadersTopicResult("t", (ElectLeadersPartitionResult(0, 84, "not needed"),))
    body = _i32(0) + _i16(0) + _i32(1) + _str("t") + _i32(1) + _i32(0) + _i16(84)
    wire = body + _str("not needed")
    assert decode(ElectLeadersResponse, 1, wire) == ElectLeadersResponse(0, 0, (result,))
    assert encode(ElectLeadersResponse(0, 0, (result,)), 0) == wire[:4] + wire[6:]


def test_alter_partition_reassignments_v0_is_compact_with_nullable_replicas() -> None:
    """AlterPartitionReassignmentsRequest.json: v0 only, flexible; Replicas null cancels."""
    moved = AlterPartitionReassignmentsRequest(
        timeout_ms=30000,
        topics=(ReassignableTopic("t", (ReassignablePartition(0, (3, 1, 2)),)),),
    )
    replicas = bytes([4]) + _i32(3) + _i32(1) + _i32(2)
    topic = _cstr("t") + bytes([2]) + _i32(0) + replicas + b"\x00" + b"\x00"
    assert encode(moved, 0) == _i32(30000) + bytes([2]) + topic + b"\x00"
    cancel = AlterPartitionReassignmentsRequest(
        timeout_ms=1, topics=(ReassignableTopic("t", (ReassignablePartition(0, None),)),)
    )
    assert encode(cancel, 0) == (
        _i32(1) + bytes([2]) + _cstr("t") + bytes([2]) + _i32(0) + b"\x00" * 4
    )
