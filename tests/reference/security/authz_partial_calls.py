"""Requests and summaries of the partial-rights probes (authz_partial): mixed requests,
where part is allowed and part refused, and summaries that keep Kafka's order."""

from __future__ import annotations

from typing import Any

import authz_calls as c
from authz_table import ABSENT, GROUP, NEW, TOPIC, ZERO, World
from lethe_formats.protocol.messages import (
    create_topics,
    delete_topics,
    describe_configs,
    describe_groups,
    describe_log_dirs,
    describe_producers,
    describe_topic_partitions,
    find_coordinator,
    list_groups,
    list_offsets,
    metadata,
    offset_fetch,
    offset_for_leader_epoch,
)
from lethe_formats.protocol.schema import Struct

DENIED_NEW = "zz-denied"
HIDDEN = "zz-hidden"  # a name no ACL of carol's covers


def by_id_only_request(w: World) -> Struct:
    states = (delete_topics.DeleteTopicState(name=None, topic_id=w.topic_id),)
    return delete_topics.DeleteTopicsRequest(topics=states, timeout_ms=5000)


def offsets_with_topics(r: offset_fetch.OffsetFetchResponse, _: World) -> Any:
    return [
        (
            g.group_id,
            g.error_code,
            [
                (t.name, p.partition_index, p.committed_offset, p.error_code)
                for t in g.topics
                for p in t.partitions
            ],
        )
        for g in r.groups
    ]


def meta_named(r: metadata.MetadataResponse, _: World) -> Any:
    return sorted(
        (t.error_code, t.name or "", len(t.partitions), t.topic_authorized_operations)
        for t in r.topics
    )


def coordinator_found(r: find_coordinator.FindCoordinatorResponse, _: World) -> Any:
    return [(c.key, c.error_code, c.node_id >= 0) for c in r.coordinators]


def groups_listed_named(r: list_groups.ListGroupsResponse, _: World) -> Any:
    return r.error_code, sorted((g.group_id, g.group_state) for g in r.groups)


def groups_described_ops(r: describe_groups.DescribeGroupsResponse, _: World) -> Any:
    return [(g.group_id, g.error_code, g.group_state, g.authorized_operations) for g in r.groups]


def configs_described_dynamic(r: describe_configs.DescribeConfigsResponse, _: World) -> Any:
    """Each resource's error and its dynamic topic configs (source 1)."""
    return [
        (
            x.resource_type,
            x.resource_name,
            x.error_code,
            x.error_message,
            sorted((c.name, c.value) for c in x.configs if c.config_source == 1),
        )
        for x in r.results
    ]


def describe_configs_reversed_request(w: World) -> Struct:
    """The broker, the absent topic, then the topic (the one a partial principal may see)."""
    resources = c.describe_configs_request(w).resources  # type: ignore[attr-defined]
    return describe_configs.DescribeConfigsRequest(tuple(reversed(resources)))


def create_mixed_request(_: World) -> Struct:
    """Validate only: a topic the principal may not create, then one it may."""
    topics = tuple(
        create_topics.CreatableTopic(name=n, num_partitions=1, replication_factor=1)
        for n in (DENIED_NEW, NEW)
    )
    return create_topics.CreateTopicsRequest(topics, 5000, validate_only=True)


def created_with_config_error(r: create_topics.CreateTopicsResponse, _: World) -> Any:
    return [
        (
            t.name,
            t.error_code,
            t.error_message,
            t.topic_id != ZERO,
            t.num_partitions,
            t.replication_factor,
            t.topic_config_error_code,
            t.configs,
        )
        for t in r.topics
    ]


def list_offsets_mixed_request(_: World) -> Struct:
    topics = tuple(
        list_offsets.ListOffsetsTopic(name, (list_offsets.ListOffsetsPartition(0, timestamp=-1),))
        for name in (HIDDEN, TOPIC)
    )
    return list_offsets.ListOffsetsRequest(replica_id=-1, topics=topics)


def listed_in_order(r: list_offsets.ListOffsetsResponse, _: World) -> Any:
    return [
        (t.name, p.partition_index, p.error_code, p.timestamp, p.offset)
        for t in r.topics
        for p in t.partitions
    ]


def offset_fetch_mixed_request(_: World) -> Struct:
    topics = tuple(offset_fetch.OffsetFetchRequestTopic(n, (0,)) for n in (HIDDEN, TOPIC))
    return offset_fetch.OffsetFetchRequest(
        groups=(offset_fetch.OffsetFetchRequestGroup(GROUP, topics=topics),)
    )


def metadata_mixed_request(_: World) -> Struct:
    return metadata.MetadataRequest(
        topics=tuple(metadata.MetadataRequestTopic(name=n) for n in (HIDDEN, TOPIC)),
        allow_auto_topic_creation=False,
    )


def meta_in_order(r: metadata.MetadataResponse, _: World) -> Any:
    return [(t.error_code, t.name, len(t.partitions)) for t in r.topics]


def partitions_request(names: list[str]) -> Any:
    """DescribeTopicPartitions of ``names`` (empty: every topic)."""

    def build(_: World) -> Struct:
        topics = tuple(
            describe_topic_partitions.DescribeTopicPartitionsRequestTopic(n) for n in names
        )
        return describe_topic_partitions.DescribeTopicPartitionsRequest(topics=topics)

    return build


def partitions_described(
    r: describe_topic_partitions.DescribeTopicPartitionsResponse, _: World
) -> Any:
    """(error, name, id, partition count, operations) per topic, sorted (Kafka appends the
    refused ones from a hash set)."""
    return sorted(
        (
            t.error_code,
            t.name or "",
            t.topic_id == ZERO,
            len(t.partitions),
            t.topic_authorized_operations,
        )
        for t in r.topics
    )


def log_dirs_request(_: World) -> Struct:
    return describe_log_dirs.DescribeLogDirsRequest(topics=None)


def log_dirs_described(r: describe_log_dirs.DescribeLogDirsResponse, _: World) -> Any:
    """(top error, each log dir's error)."""
    return r.error_code, [d.error_code for d in r.results]


def epochs_request(_: World) -> Struct:
    """OffsetForLeaderEpoch of partition 0 of the topic and the absent one, epoch 0."""
    m = offset_for_leader_epoch
    return m.OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=tuple(
            m.OffsetForLeaderTopic(n, (m.OffsetForLeaderPartition(0, -1, 0),))
            for n in (TOPIC, ABSENT)
        ),
    )


def epochs_answered(r: offset_for_leader_epoch.OffsetForLeaderEpochResponse, _: World) -> Any:
    return sorted(
        (t.topic, p.partition, p.error_code, p.leader_epoch, p.end_offset)
        for t in r.topics
        for p in t.partitions
    )


def producers_request(_: World) -> Struct:
    m = describe_producers
    return m.DescribeProducersRequest(
        tuple(m.DescribeProducersRequestTopic(n, (0,)) for n in (TOPIC, ABSENT))
    )


def producers_described(r: describe_producers.DescribeProducersResponse, _: World) -> Any:
    return [
        (t.name, p.partition_index, p.error_code, p.error_message, len(p.active_producers))
        for t in r.topics
        for p in t.partitions
    ]
