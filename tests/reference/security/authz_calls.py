"""Requests and summaries of the authorization probes (authz_probes, authz_partial):
what each probe sends, and the fields of the answer its decision shows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from authz_table import (
    ABSENT,
    BROKER_RESOURCE,
    GROUP,
    NEW,
    RECORDS,
    RETENTION,
    TOPIC,
    TOPIC_RESOURCE,
    TXN,
    UNKNOWN_ID,
    World,
)
from lethe_formats.protocol.messages import (
    alter_configs,
    api_versions,
    create_partitions,
    create_topics,
    delete_acls,
    delete_groups,
    delete_partitions,
    delete_records,
    delete_topics,
    describe_acls,
    describe_cluster,
    describe_configs,
    describe_groups,
    fetch,
    find_coordinator,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    produce,
    sasl_authenticate,
    sasl_handshake,
    sync_group,
)
from lethe_formats.protocol.messages import create_acls as ca
from lethe_formats.protocol.messages import incremental_alter_configs as iac
from lethe_formats.protocol.schema import Struct
from lethe_formats.records.builder import RecordSpec, build_batch

# --- summaries ----------------------------------------------------------------------------


def produced(r: produce.ProduceResponse, _: World) -> Any:
    return sorted(
        (t.name, p.index, p.error_code, p.base_offset, p.log_start_offset)
        for t in r.responses
        for p in t.partition_responses
    )


def fetched(r: fetch.FetchResponse, w: World) -> Any:
    return r.error_code, [
        (t.topic_id == w.topic_id, p.partition_index, p.error_code, p.high_watermark, p.records)
        for t in r.responses
        for p in t.partitions
    ]


def listed(r: list_offsets.ListOffsetsResponse, _: World) -> Any:
    return sorted(
        (t.name, p.partition_index, p.error_code, p.timestamp, p.offset)
        for t in r.topics
        for p in t.partitions
    )


def meta(r: metadata.MetadataResponse, _: World) -> Any:
    topics = sorted(
        (t.error_code, t.name or "", t.topic_id, t.is_internal, len(t.partitions)) for t in r.topics
    )
    ops = sorted(t.topic_authorized_operations for t in r.topics)
    return topics, ops, r.cluster_authorized_operations, len(r.brokers)


def committed(r: offset_commit.OffsetCommitResponse, _: World) -> Any:
    return [(t.name, p.partition_index, p.error_code) for t in r.topics for p in t.partitions]


def offsets_fetched(r: offset_fetch.OffsetFetchResponse, _: World) -> Any:
    return [(g.group_id, g.error_code, len(g.topics)) for g in r.groups]


def coordinators(r: find_coordinator.FindCoordinatorResponse, _: World) -> Any:
    return [(c.key, c.error_code, c.node_id, c.host, c.port) for c in r.coordinators]


def joined(r: join_group.JoinGroupResponse, _: World) -> Any:
    return r.error_code, r.generation_id, r.member_id, r.leader, r.members


def error_code_of(r: Any, _: World) -> Any:
    return r.error_code


def left(r: leave_group.LeaveGroupResponse, _: World) -> Any:
    return r.error_code, r.members


def groups_described(r: describe_groups.DescribeGroupsResponse, _: World) -> Any:
    return [
        (g.group_id, g.error_code, g.group_state, g.protocol_type, g.authorized_operations)
        for g in r.groups
    ]


def groups_listed(r: list_groups.ListGroupsResponse, _: World) -> Any:
    return r.error_code, [g.group_id for g in r.groups]


def created(r: create_topics.CreateTopicsResponse, _: World) -> Any:
    return [
        (t.name, t.error_code, t.error_message, t.topic_id, t.num_partitions, t.configs)
        for t in r.topics
    ]


def deleted(r: delete_topics.DeleteTopicsResponse, _: World) -> Any:
    return sorted((t.name or "", t.topic_id, t.error_code, t.error_message) for t in r.responses)


def records_deleted(r: delete_records.DeleteRecordsResponse, _: World) -> Any:
    return sorted(
        (t.name, p.partition_index, p.error_code, p.low_watermark)
        for t in r.topics
        for p in t.partitions
    )


def pid(r: init_producer_id.InitProducerIdResponse, _: World) -> Any:
    return r.error_code, r.producer_id, r.producer_epoch


def acls_described(r: describe_acls.DescribeAclsResponse, _: World) -> Any:
    return r.error_code, r.resources


def acls_created(r: ca.CreateAclsResponse, _: World) -> Any:
    return [x.error_code for x in r.results]


def acls_deleted(r: delete_acls.DeleteAclsResponse, _: World) -> Any:
    return [(x.error_code, x.matching_acls) for x in r.filter_results]


def configs_described(r: describe_configs.DescribeConfigsResponse, _: World) -> Any:
    return [
        (x.resource_type, x.resource_name, x.error_code, x.error_message, x.configs)
        for x in r.results
    ]


def configs_altered(r: Any, _: World) -> Any:
    return [(x.resource_type, x.resource_name, x.error_code, x.error_message) for x in r.responses]


def handshake(r: sasl_handshake.SaslHandshakeResponse, _: World) -> Any:
    return r.error_code, r.mechanisms


def authenticated(r: sasl_authenticate.SaslAuthenticateResponse, _: World) -> Any:
    return r.error_code, r.error_message


def partitions_created(r: create_partitions.CreatePartitionsResponse, _: World) -> Any:
    return sorted((x.name, x.error_code, x.error_message) for x in r.results)


def groups_deleted(r: delete_groups.DeleteGroupsResponse, _: World) -> Any:
    return [(x.group_id, x.error_code) for x in r.results]


def offsets_deleted(r: offset_delete.OffsetDeleteResponse, _: World) -> Any:
    return r.error_code, r.topics


def cluster(r: describe_cluster.DescribeClusterResponse, _: World) -> Any:
    return r.error_code, r.cluster_authorized_operations, len(r.brokers)


def versions(r: api_versions.ApiVersionsResponse, _: World) -> Any:
    return r.error_code


def partitions_deleted(r: delete_partitions.DeletePartitionsResponse, _: World) -> Any:
    return r.error_code, [
        (x.name, x.error_code, x.error_message, x.partitions) for x in r.responses
    ]


# --- requests -----------------------------------------------------------------------------


def produce_request(_: World) -> Struct:
    data = tuple(
        produce.TopicProduceData(name, (produce.PartitionProduceData(0, RECORDS),))
        for name in (TOPIC, ABSENT)
    )
    return produce.ProduceRequest(acks=-1, timeout_ms=5000, topic_data=data)


def fetch_request(replica: int) -> Callable[[World], Struct]:
    def build(w: World) -> Struct:
        part = fetch.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 16)
        return fetch.FetchRequest(
            replica_state=fetch.ReplicaState(replica_id=replica, replica_epoch=-1),
            max_wait_ms=0,
            min_bytes=1,
            max_bytes=1 << 20,
            topics=(fetch.FetchTopic(topic_id=w.topic_id, partitions=(part,)),),
        )

    return build


def list_offsets_request(_: World) -> Struct:
    topics = tuple(
        list_offsets.ListOffsetsTopic(name, (list_offsets.ListOffsetsPartition(0, timestamp=-1),))
        for name in (TOPIC, ABSENT)
    )
    return list_offsets.ListOffsetsRequest(replica_id=-1, topics=topics)


def metadata_request(
    names: Sequence[str] | None, *, cluster_ops: bool = False
) -> Callable[[World], Any]:
    def build(_: World) -> Struct:
        topics = (
            None if names is None else tuple(metadata.MetadataRequestTopic(name=n) for n in names)
        )
        return metadata.MetadataRequest(
            topics=topics,
            allow_auto_topic_creation=True,
            include_cluster_authorized_operations=cluster_ops,
            include_topic_authorized_operations=True,
        )

    return build


def metadata_by_id_request(w: World) -> Struct:
    return metadata.MetadataRequest(
        topics=(metadata.MetadataRequestTopic(topic_id=w.topic_id, name=None),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=True,
    )


def offset_commit_request(_: World) -> Struct:
    part = offset_commit.OffsetCommitRequestPartition(0, 0, committed_metadata="")
    return offset_commit.OffsetCommitRequest(
        group_id=GROUP, topics=(offset_commit.OffsetCommitRequestTopic(TOPIC, (part,)),)
    )


def offset_fetch_request(_: World) -> Struct:
    topic = offset_fetch.OffsetFetchRequestTopic(TOPIC, (0,))
    return offset_fetch.OffsetFetchRequest(
        groups=(offset_fetch.OffsetFetchRequestGroup(GROUP, topics=(topic,)),)
    )


def find_request(key: str, key_type: int) -> Callable[[World], Struct]:
    return lambda _: find_coordinator.FindCoordinatorRequest(
        key_type=key_type, coordinator_keys=(key,)
    )


def join_request(_: World) -> Struct:
    return join_group.JoinGroupRequest(
        group_id=GROUP,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        member_id="",
        protocol_type="consumer",
        protocols=(join_group.JoinGroupRequestProtocol("range", b""),),
    )


def sync_request(_: World) -> Struct:
    return sync_group.SyncGroupRequest(
        group_id=GROUP,
        generation_id=1,
        member_id="m",
        protocol_type="consumer",
        protocol_name="range",
    )


def leave_request(_: World) -> Struct:
    return leave_group.LeaveGroupRequest(
        group_id=GROUP, members=(leave_group.LeaveGroupMemberIdentity("m"),)
    )


def create_topics_request(_: World) -> Struct:
    topic = create_topics.CreatableTopic(name=NEW, num_partitions=1, replication_factor=1)
    return create_topics.CreateTopicsRequest((topic,), 5000)


def delete_topics_request(w: World) -> Struct:
    states = (
        delete_topics.DeleteTopicState(name=TOPIC),
        delete_topics.DeleteTopicState(name=ABSENT),
    )
    return delete_topics.DeleteTopicsRequest(topics=states, timeout_ms=5000)


def delete_topics_by_id_request(w: World) -> Struct:
    states = (
        delete_topics.DeleteTopicState(name=None, topic_id=w.topic_id),
        delete_topics.DeleteTopicState(name=None, topic_id=UNKNOWN_ID),
    )
    return delete_topics.DeleteTopicsRequest(topics=states, timeout_ms=5000)


def delete_records_request(_: World) -> Struct:
    topics = tuple(
        delete_records.DeleteRecordsTopic(name, (delete_records.DeleteRecordsPartition(0, 2),))
        for name in (TOPIC, ABSENT)
    )
    return delete_records.DeleteRecordsRequest(topics, 5000)


def init_pid_request(txn: str | None) -> Callable[[World], Struct]:
    return lambda _: init_producer_id.InitProducerIdRequest(
        transactional_id=txn, transaction_timeout_ms=60_000
    )


def describe_acls_request(_: World) -> Struct:
    return describe_acls.DescribeAclsRequest(resource_type_filter=1, operation=1, permission_type=1)


def create_acls_request(_: World) -> Struct:
    acl = ca.AclCreation(TOPIC_RESOURCE, TOPIC, 3, "User:mallory", "*", 2, 3)
    return ca.CreateAclsRequest((acl,))


def delete_acls_request(_: World) -> Struct:
    return delete_acls.DeleteAclsRequest(
        (
            delete_acls.DeleteAclsFilter(
                resource_type_filter=1, pattern_type_filter=1, operation=1, permission_type=1
            ),
        )
    )


def describe_configs_request(w: World) -> Struct:
    resources = (
        describe_configs.DescribeConfigsResource(TOPIC_RESOURCE, TOPIC, None),
        describe_configs.DescribeConfigsResource(TOPIC_RESOURCE, ABSENT, None),
        describe_configs.DescribeConfigsResource(BROKER_RESOURCE, str(w.broker_id), None),
    )
    return describe_configs.DescribeConfigsRequest(resources)


def alter_configs_request(w: World) -> Struct:
    setting = (alter_configs.AlterableConfig(RETENTION, "1000"),)
    resources = (
        alter_configs.AlterConfigsResource(TOPIC_RESOURCE, TOPIC, setting),
        alter_configs.AlterConfigsResource(BROKER_RESOURCE, str(w.broker_id), ()),
    )
    return alter_configs.AlterConfigsRequest(resources)


def incremental_request(w: World) -> Struct:
    setting = (iac.IncrementalAlterableConfig(RETENTION, 0, "1000"),)
    resources = (
        iac.IncrementalAlterConfigsResource(TOPIC_RESOURCE, TOPIC, setting),
        iac.IncrementalAlterConfigsResource(TOPIC_RESOURCE, ABSENT, setting),
        iac.IncrementalAlterConfigsResource(
            BROKER_RESOURCE,
            str(w.broker_id),
            (iac.IncrementalAlterableConfig("log.cleaner.threads", 0, "2"),),
        ),
    )
    return iac.IncrementalAlterConfigsRequest(resources)


def create_partitions_request(_: World) -> Struct:
    topics = (
        create_partitions.CreatePartitionsTopic(TOPIC, 3, None),
        create_partitions.CreatePartitionsTopic(ABSENT, 2, None),
    )
    return create_partitions.CreatePartitionsRequest(topics, 5000)


def offset_delete_request(_: World) -> Struct:
    part = offset_delete.OffsetDeleteRequestPartition(0)
    return offset_delete.OffsetDeleteRequest(
        GROUP, (offset_delete.OffsetDeleteRequestTopic(TOPIC, (part,)),)
    )


def delete_partitions_request(_: World) -> Struct:
    return delete_partitions.DeletePartitionsRequest(
        timeout_ms=5000,
        topics=(
            delete_partitions.DeletePartitionsTopic(TOPIC, 1),
            delete_partitions.DeletePartitionsTopic(ABSENT, 1),
        ),
    )


# --- older versions and transactional records ---------------------------------------------


TXN_RECORDS = build_batch(
    [RecordSpec(b"k", b"t", (), 1000)],
    base_offset=0,
    producer_id=7,
    producer_epoch=0,
    base_sequence=0,
    is_transactional=True,
)


def transactional_produce_request(_: World) -> Struct:
    data = tuple(
        produce.TopicProduceData(name, (produce.PartitionProduceData(0, TXN_RECORDS),))
        for name in (TOPIC, ABSENT)
    )
    return produce.ProduceRequest(transactional_id=TXN, acks=-1, timeout_ms=5000, topic_data=data)


def offset_fetch_v7_request(_: World) -> Struct:
    topic = offset_fetch.OffsetFetchRequestTopic(TOPIC, (0,))
    return offset_fetch.OffsetFetchRequest(group_id=GROUP, topics=(topic,))


def offsets_fetched_v7(r: offset_fetch.OffsetFetchResponse, _: World) -> Any:
    return r.error_code, [
        (t.name, p.partition_index, p.committed_offset, p.error_code)
        for t in r.topics
        for p in t.partitions
    ]


def find_v3_request(_: World) -> Struct:
    return find_coordinator.FindCoordinatorRequest(key=GROUP, key_type=0)


def coordinator_v3(r: find_coordinator.FindCoordinatorResponse, _: World) -> Any:
    return r.error_code, r.error_message, r.node_id, r.host, r.port


def delete_topics_v5_request(_: World) -> Struct:
    return delete_topics.DeleteTopicsRequest(topic_names=(TOPIC, ABSENT), timeout_ms=5000)
