"""Handlers under an authorizer answer TOPIC_AUTHORIZATION_FAILED (29) where Kafka 4.0's
KafkaApis does, and before looking at existence: DeleteRecords (DELETE, low watermark -1),
ListOffsets (DESCRIBE, offset and timestamp -1), Produce (WRITE), DeletePartitions
(DELETE, the catalog's KIP694-ERR-4 decision), Fetch (READ), config requests
(DESCRIBE_CONFIGS / ALTER_CONFIGS: 29 on topics, 31 on the broker), CreateTopics (CREATE
on the cluster or topic), DeleteTopics (DESCRIBE before existence, then DELETE), Metadata
(DESCRIBE: hidden from an all-topics answer, 29 when named, no auto-creation without
CREATE; authorized operations as bit fields), OffsetCommit / OffsetFetch (READ on the
group, 30, then READ / DESCRIBE on the topic), group membership and FindCoordinator
(READ / DESCRIBE on the group, 53 for a transactional id). A broker without an authorizer allows
everything, as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from lethe_formats.protocol.messages.delete_groups import DeleteGroupsRequest
from lethe_formats.protocol.messages.delete_partitions import (
    DeletePartitionsRequest,
    DeletePartitionsTopic,
)
from lethe_formats.protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from lethe_formats.protocol.messages.delete_topics import DeleteTopicsRequest
from lethe_formats.protocol.messages.describe_cluster import DescribeClusterRequest
from lethe_formats.protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
)
from lethe_formats.protocol.messages.describe_groups import DescribeGroupsRequest
from lethe_formats.protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from lethe_formats.protocol.messages.find_coordinator import FindCoordinatorRequest
from lethe_formats.protocol.messages.heartbeat import HeartbeatRequest
from lethe_formats.protocol.messages.incremental_alter_configs import (
    IncrementalAlterableConfig,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResource,
)
from lethe_formats.protocol.messages.init_producer_id import InitProducerIdRequest
from lethe_formats.protocol.messages.join_group import JoinGroupRequest
from lethe_formats.protocol.messages.list_groups import ListGroupsRequest
from lethe_formats.protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from lethe_formats.protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from lethe_formats.protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from lethe_formats.protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from lethe_formats.protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
)
from lethe_formats.protocol.messages.produce import (
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.cluster.acl import AclBinding, PatternType, ResourceType
from lethe_reference.cluster.acl import AclOperation as Op
from lethe_reference.cluster.acl import AclPermission as Perm
from lethe_reference.handlers.authz import authorizer_of
from lethe_reference.handlers.dispatch import dispatch
from security_support import ADMIN, ALICE, ctx, grant, plain_broker, secured_broker

BATCH = build_batch(
    [RecordSpec(b"k", b"v", (), 1000), RecordSpec(b"k", b"w", (), 1000)], base_offset=0
)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    broker = secured_broker(tmp_path, **{"delete.topic.partition.enable": "true"})
    broker.create_topic("t", 3)
    yield broker
    broker.shutdown()


def delete_records(broker: Broker, topic: str, principal: str) -> Any:
    request = DeleteRecordsRequest(
        (DeleteRecordsTopic(topic, (DeleteRecordsPartition(0, 1),)),), 1000
    )
    return dispatch(broker, ctx(ApiKey.DELETE_RECORDS, 2, principal), request)


def produce(broker: Broker, topic: str, principal: str = ADMIN) -> int:
    data = TopicProduceData(topic, (PartitionProduceData(0, BATCH),))
    answer: Any = dispatch(
        broker,
        ctx(ApiKey.PRODUCE, 9, principal),
        ProduceRequest(acks=-1, timeout_ms=1000, topic_data=(data,)),
    )
    code: int = answer.responses[0].partition_responses[0].error_code
    return code


def test_delete_records_without_delete_is_29_with_low_watermark_minus_one(broker: Broker) -> None:
    assert produce(broker, "t") == ErrorCode.NONE
    grant(broker, "t", Op.DESCRIBE)
    answer = delete_records(broker, "t", "User:alice").topics[0].partitions[0]
    assert (answer.error_code, answer.low_watermark) == (ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1)
    assert broker.log("t", 0) is not None and broker.log("t", 0).log_start_offset == 0  # type: ignore[union-attr]
    grant(broker, "t", Op.DELETE)
    answer = delete_records(broker, "t", "User:alice").topics[0].partitions[0]
    assert (answer.error_code, answer.low_watermark) == (ErrorCode.NONE, 1)


def test_delete_records_checks_authorization_before_existence(broker: Broker) -> None:
    denied = delete_records(broker, "gone", "User:alice").topics[0].partitions[0]
    assert denied.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    allowed = delete_records(broker, "gone", ADMIN).topics[0].partitions[0]
    assert allowed.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_list_offsets_without_describe_is_29_with_minus_ones(broker: Broker) -> None:
    request = ListOffsetsRequest(topics=(ListOffsetsTopic("t", (ListOffsetsPartition(0, 0, -1),)),))
    answer: Any = dispatch(broker, ctx(ApiKey.LIST_OFFSETS, 9), request)
    got = answer.topics[0].partitions[0]
    assert (got.error_code, got.offset, got.timestamp, got.leader_epoch) == (29, -1, -1, -1)
    grant(broker, "t", Op.READ)  # READ implies DESCRIBE
    answer = dispatch(broker, ctx(ApiKey.LIST_OFFSETS, 9), request)
    assert answer.topics[0].partitions[0].error_code == ErrorCode.NONE


def test_produce_without_write_is_29_even_for_an_absent_topic(broker: Broker) -> None:
    grant(broker, "t", Op.DESCRIBE)
    assert produce(broker, "t", "User:alice") == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert produce(broker, "gone", "User:alice") == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    grant(broker, "t", Op.WRITE)
    assert produce(broker, "t", "User:alice") == ErrorCode.NONE


def test_delete_partitions_without_delete_is_29_before_existence(broker: Broker) -> None:
    request = DeletePartitionsRequest(
        delete_partitions_delay_ms=60_000,
        topics=(DeletePartitionsTopic("t", 2), DeletePartitionsTopic("missing", 1)),
    )
    answer: Any = dispatch(broker, ctx(ApiKey.DELETE_PARTITIONS, 0), request)
    assert [(r.name, r.error_code) for r in answer.responses] == [("t", 29), ("missing", 29)]
    assert broker.metadata.get("t").reduction is None  # type: ignore[union-attr]
    grant(broker, "t", Op.DELETE)
    answer = dispatch(broker, ctx(ApiKey.DELETE_PARTITIONS, 0), request)
    assert [(r.name, r.error_code) for r in answer.responses] == [("t", 0), ("missing", 29)]


def metadata(
    broker: Broker,
    names: list[str] | None,
    version: int = 12,
    *,
    auto: bool = False,
    topic_ops: bool = False,
    cluster_ops: bool = False,
) -> Any:
    topics = None if names is None else tuple(MetadataRequestTopic(name=n) for n in names)
    request = MetadataRequest(
        topics=topics,
        allow_auto_topic_creation=auto,
        include_cluster_authorized_operations=cluster_ops,
        include_topic_authorized_operations=topic_ops,
    )
    return dispatch(broker, ctx(ApiKey.METADATA, version), request)


def test_metadata_hides_undescribable_topics_and_refuses_named_ones(broker: Broker) -> None:
    broker.create_topic("u", 1)
    grant(broker, "u", Op.WRITE)
    assert [t.name for t in metadata(broker, None).topics] == ["u"]
    named = metadata(broker, ["t", "u", "nowhere"], auto=False).topics
    assert [(t.name, t.error_code) for t in named] == [("u", 0), ("t", 29), ("nowhere", 29)]
    assert named[1].partitions == () and not named[1].is_internal


def test_metadata_auto_creation_needs_create(broker: Broker) -> None:
    grant(broker, "fresh", Op.DESCRIBE)
    answer = metadata(broker, ["fresh"], auto=True).topics
    assert [(t.name, t.error_code) for t in answer] == [("fresh", 29)]
    assert broker.metadata.get("fresh") is None
    grant(broker, "fresh", Op.CREATE)
    answer = metadata(broker, ["fresh"], auto=True).topics
    assert answer[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # created, retry
    assert broker.metadata.get("fresh") is not None


def test_metadata_reports_the_principals_authorized_operations(broker: Broker) -> None:
    grant(broker, "t", Op.READ)
    answer = metadata(
        broker,
        ["t"],
        version=10,
        topic_ops=True,
        cluster_ops=True,
    )
    assert answer.topics[0].topic_authorized_operations == (1 << 3) | (1 << 8)  # READ, DESCRIBE
    assert answer.cluster_authorized_operations == 0


def test_without_an_authorizer_everything_stays_allowed(tmp_path: Path) -> None:
    broker = plain_broker(tmp_path)
    try:
        broker.create_topic("t", 1)
        assert produce(broker, "t", "User:alice") == ErrorCode.NONE
        answer = delete_records(broker, "t", "User:alice").topics[0].partitions[0]
        assert answer.error_code == ErrorCode.NONE
        ops = metadata(broker, ["t"], topic_ops=True).topics[0]
        assert ops.topic_authorized_operations == 3576
    finally:
        broker.shutdown()


def test_fetch_without_read_is_29_for_consumers(broker: Broker) -> None:
    assert produce(broker, "t") == ErrorCode.NONE
    partition = FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)
    request = FetchRequest(
        max_wait_ms=0, min_bytes=1, topics=(FetchTopic(topic="t", partitions=(partition,)),)
    )
    answer: Any = dispatch(broker, ctx(ApiKey.FETCH, 12), request)
    got = answer.responses[0].partitions[0]
    assert (got.error_code, got.records) == (ErrorCode.TOPIC_AUTHORIZATION_FAILED, b"")
    grant(broker, "t", Op.READ)
    answer = dispatch(broker, ctx(ApiKey.FETCH, 12), request)
    assert answer.responses[0].partitions[0].error_code == ErrorCode.NONE


def test_create_topics_needs_create_on_the_cluster_or_the_topic(broker: Broker) -> None:
    request = CreateTopicsRequest(
        (CreatableTopic("mine", 1, 1), CreatableTopic("theirs", 1, 1)), 1000
    )
    grant(broker, "mine", Op.CREATE)
    answer: Any = dispatch(broker, ctx(ApiKey.CREATE_TOPICS, 7), request)
    assert [(t.name, t.error_code) for t in answer.topics] == [("mine", 0), ("theirs", 29)]
    assert answer.topics[1].error_message == "Authorization failed."
    assert broker.metadata.get("theirs") is None


def test_delete_topics_hides_undescribable_names_and_needs_delete(broker: Broker) -> None:
    broker.create_topic("u", 1)
    grant(broker, "t", Op.DESCRIBE)
    grant(broker, "absent", Op.DESCRIBE)
    request = DeleteTopicsRequest(topic_names=("u", "nowhere", "absent", "t"), timeout_ms=1000)
    answer: Any = dispatch(broker, ctx(ApiKey.DELETE_TOPICS, 5), request)
    codes = {r.name: r.error_code for r in answer.responses}
    assert codes == {"u": 29, "nowhere": 29, "absent": 3, "t": 29}
    assert broker.metadata.get("t") is not None and broker.metadata.get("u") is not None
    grant(broker, "t", Op.DELETE)
    answer = dispatch(broker, ctx(ApiKey.DELETE_TOPICS, 5), DeleteTopicsRequest(topic_names=("t",)))
    assert [r.error_code for r in answer.responses] == [0]


def test_config_requests_need_describe_configs_or_alter_configs(broker: Broker) -> None:
    topic = DescribeConfigsResource(resource_type=2, resource_name="t")
    node = DescribeConfigsResource(resource_type=4, resource_name=str(broker.node_id))
    described: Any = dispatch(
        broker, ctx(ApiKey.DESCRIBE_CONFIGS, 4), DescribeConfigsRequest(resources=(topic, node))
    )
    assert [(r.error_code, r.configs) for r in described.results] == [(29, ()), (31, ())]
    grant(broker, "t", Op.ALTER_CONFIGS)  # implies DESCRIBE_CONFIGS
    described = dispatch(
        broker, ctx(ApiKey.DESCRIBE_CONFIGS, 4), DescribeConfigsRequest(resources=(topic,))
    )
    assert described.results[0].error_code == ErrorCode.NONE and described.results[0].configs
    change = IncrementalAlterConfigsResource(
        resource_type=2,
        resource_name="gone",
        configs=(IncrementalAlterableConfig("retention.ms", 0, "1000"),),
    )
    altered: Any = dispatch(
        broker,
        ctx(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1),
        IncrementalAlterConfigsRequest(resources=(change,)),
    )
    assert altered.responses[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED


def grant_group(broker: Broker, group: str) -> None:
    authorizer = authorizer_of(broker)
    assert authorizer is not None
    authorizer.add(
        [
            AclBinding(
                ResourceType.GROUP, group, PatternType.LITERAL, ALICE, "*", Op.READ, Perm.ALLOW
            )
        ]
    )


def test_offset_commit_needs_read_on_the_group_then_on_the_topic(broker: Broker) -> None:
    topic = OffsetCommitRequestTopic("t", (OffsetCommitRequestPartition(0, 1, -1, ""),))
    request = OffsetCommitRequest(group_id="g", topics=(topic,))
    answer: Any = dispatch(broker, ctx(ApiKey.OFFSET_COMMIT, 8), request)
    assert answer.topics[0].partitions[0].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    grant_group(broker, "g")
    answer = dispatch(broker, ctx(ApiKey.OFFSET_COMMIT, 8), request)
    assert answer.topics[0].partitions[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED


def test_offset_fetch_needs_read_on_the_group_and_describe_on_the_topic(broker: Broker) -> None:
    group = OffsetFetchRequestGroup("g", topics=(OffsetFetchRequestTopic("t", (0,)),))
    request = OffsetFetchRequest(groups=(group,))
    answer: Any = dispatch(broker, ctx(ApiKey.OFFSET_FETCH, 8), request)
    assert answer.groups[0].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    grant_group(broker, "g")
    for _ in range(3):  # the first call creates the offsets topic (15), as on Kafka
        found: Any = dispatch(
            broker, ctx(ApiKey.FIND_COORDINATOR, 3, ADMIN), FindCoordinatorRequest("g")
        )
    assert found.error_code == ErrorCode.NONE
    answer = dispatch(broker, ctx(ApiKey.OFFSET_FETCH, 8), request)
    assert answer.groups[0].error_code == ErrorCode.NONE
    got = answer.groups[0].topics[0].partitions[0]
    assert (got.error_code, got.committed_offset) == (ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1)


def test_describe_cluster_reports_the_principals_cluster_operations(broker: Broker) -> None:
    request = DescribeClusterRequest(include_cluster_authorized_operations=True)
    alice: Any = dispatch(broker, ctx(ApiKey.DESCRIBE_CLUSTER, 1), request)
    admin: Any = dispatch(broker, ctx(ApiKey.DESCRIBE_CLUSTER, 1, ADMIN), request)
    assert (alice.cluster_authorized_operations, admin.cluster_authorized_operations) == (0, 8096)


def test_group_membership_and_find_coordinator_need_group_rights(broker: Broker) -> None:
    join = JoinGroupRequest(group_id="g", session_timeout_ms=10_000, member_id="")
    answer: Any = dispatch(broker, ctx(ApiKey.JOIN_GROUP, 9), join)
    assert answer.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    beat: Any = dispatch(broker, ctx(ApiKey.HEARTBEAT, 4), HeartbeatRequest("g", 1, "m"))
    assert beat.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    found: Any = dispatch(broker, ctx(ApiKey.FIND_COORDINATOR, 3), FindCoordinatorRequest("g"))
    assert (found.error_code, found.node_id) == (ErrorCode.GROUP_AUTHORIZATION_FAILED, -1)
    txn = FindCoordinatorRequest(key_type=1, coordinator_keys=("tx",))
    found = dispatch(broker, ctx(ApiKey.FIND_COORDINATOR, 4), txn)
    assert found.coordinators[0].error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    grant_group(broker, "g")  # READ implies DESCRIBE
    beat = dispatch(broker, ctx(ApiKey.HEARTBEAT, 4), HeartbeatRequest("g", 1, "m"))
    assert beat.error_code != ErrorCode.GROUP_AUTHORIZATION_FAILED


def test_describe_groups_and_list_groups_show_only_describable_groups(broker: Broker) -> None:
    request = DescribeGroupsRequest(groups=("g", "h"), include_authorized_operations=True)
    grant_group(broker, "g")
    for _ in range(3):  # the first call creates the offsets topic (15), as on Kafka
        dispatch(broker, ctx(ApiKey.FIND_COORDINATOR, 3, ADMIN), FindCoordinatorRequest("g"))
    answer: Any = dispatch(broker, ctx(ApiKey.DESCRIBE_GROUPS, 5), request)
    got = {g.group_id: (g.error_code, g.authorized_operations) for g in answer.groups}
    assert got == {"g": (0, (1 << 3) | (1 << 8)), "h": (30, -(1 << 31))}  # READ, DESCRIBE
    listed: Any = dispatch(broker, ctx(ApiKey.LIST_GROUPS, 4), ListGroupsRequest())
    assert listed.error_code == ErrorCode.NONE and listed.groups == ()  # none exists yet


def test_deleting_groups_and_their_offsets_needs_delete_on_the_group(broker: Broker) -> None:
    topic = OffsetDeleteRequestTopic("t", (OffsetDeleteRequestPartition(0),))
    request = OffsetDeleteRequest(group_id="g", topics=(topic,))
    answer: Any = dispatch(broker, ctx(ApiKey.OFFSET_DELETE, 0), request)
    assert (answer.error_code, answer.topics) == (ErrorCode.GROUP_AUTHORIZATION_FAILED, ())
    deleted: Any = dispatch(broker, ctx(ApiKey.DELETE_GROUPS, 2), DeleteGroupsRequest(("g", "g")))
    assert [(r.group_id, r.error_code) for r in deleted.results] == [("g", 30)]


def test_init_producer_id_needs_idempotent_write_or_write_on_some_topic(broker: Broker) -> None:
    idempotent = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60_000)
    answer: Any = dispatch(broker, ctx(ApiKey.INIT_PRODUCER_ID, 4), idempotent)
    assert (answer.error_code, answer.producer_id) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, -1)
    grant(broker, "t", Op.WRITE)
    answer = dispatch(broker, ctx(ApiKey.INIT_PRODUCER_ID, 4), idempotent)
    assert answer.error_code == ErrorCode.NONE and answer.producer_id >= 0
    txn = InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=60_000)
    answer = dispatch(broker, ctx(ApiKey.INIT_PRODUCER_ID, 4), txn)
    assert answer.error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


def test_transactional_produce_needs_write_on_the_transactional_id(broker: Broker) -> None:
    grant(broker, "t", Op.WRITE)
    batch = build_batch(
        [RecordSpec(b"k", b"v", (), 1000)],
        base_offset=0,
        producer_id=7,
        producer_epoch=0,
        base_sequence=0,
        is_transactional=True,
    )
    data = TopicProduceData("t", (PartitionProduceData(0, batch),))
    request = ProduceRequest(transactional_id="tx", acks=-1, timeout_ms=1000, topic_data=(data,))
    answer: Any = dispatch(broker, ctx(ApiKey.PRODUCE, 9), request)
    code = answer.responses[0].partition_responses[0].error_code
    assert code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
