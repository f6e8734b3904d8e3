"""The partial-rights probes (carol: DESCRIBE on authz-* topics, READ on the group) and
the super user's bit fields, with Kafka 4.0's answers (see authz_table for the frame)."""

from __future__ import annotations

from dataclasses import replace

import authz_calls as c
import authz_partial_calls as pc
from authz_probes import PROBES
from authz_table import (
    ABSENT,
    BROKER_RESOURCE,
    CAF,
    CLUSTER_DENIED,
    DESCRIBE_AND_CONFIGS,
    GAF,
    GROUP,
    NEW,
    OMITTED,
    OTHER_GROUP,
    READ_GROUP,
    RETENTION,
    TAF,
    TOPIC,
    TOPIC_DENIED,
    TOPIC_RESOURCE,
    UNKNOWN_TP,
    ZERO,
    Probe,
    same,
)
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.messages import (
    describe_cluster,
    describe_groups,
    list_groups,
    metadata,
)

__all__ = ["PARTIAL_PROBES", "SUPER_PROBES"]


def again(name: str, label: str) -> Probe:
    """A no-rights probe whose answer a partial right does not change, under a new label."""
    (probe,) = (p for p in PROBES if p.name == name)
    return replace(probe, name=label)


PARTIAL_PROBES: tuple[Probe, ...] = (
    Probe(
        "offset for leader epoch: DESCRIBE is enough; the absent topic is 3",
        ApiKey.OFFSET_FOR_LEADER_EPOCH,
        4,
        "handleOffsetForLeaderEpochRequest / ReplicaManager.lastOffsetForLeaderEpoch: epoch 0 "
        "is the latest, so it ends at the log end offset (3 records)",
        pc.epochs_request,
        pc.epochs_answered,
        same([(ABSENT, 0, 3, -1, -1), (TOPIC, 0, 0, 0, 3)]),
    ),
    again("describe producers", "describe producers: DESCRIBE is not READ"),
    Probe(
        "describe topic partitions: DESCRIBE on both, the absent one is 3",
        ApiKey.DESCRIBE_TOPIC_PARTITIONS,
        0,
        "DescribeTopicPartitionsRequestHandler / getTopicMetadataForDescribeTopicResponse: "
        "operations filled in for every answered topic, errors included",
        pc.partitions_request([TOPIC, ABSENT]),
        pc.partitions_described,
        same([(0, TOPIC, False, 1, DESCRIBE_AND_CONFIGS), (3, ABSENT, True, 0, 1 << 8)]),
    ),
    Probe(
        "describe topic partitions: all topics, only the describable ones",
        ApiKey.DESCRIBE_TOPIC_PARTITIONS,
        0,
        "DescribeTopicPartitionsRequestHandler: undescribable topics (__consumer_offsets) left out",
        pc.partitions_request([]),
        pc.partitions_described,
        same([(0, TOPIC, False, 1, DESCRIBE_AND_CONFIGS)]),
    ),
    Probe(
        "create topics: CREATE without DESCRIBE_CONFIGS; refusals after the others",
        ApiKey.CREATE_TOPICS,
        7,
        "ControllerApis.createTopics (refused topics after the controller's results) and "
        "ReplicationControlManager.createTopic (configs only with DESCRIBE_CONFIGS, else "
        "topic_config_error_code 29, counts -1)",
        pc.create_mixed_request,
        pc.created_with_config_error,
        same(
            [
                (NEW, 0, None, True, -1, -1, TAF, ()),
                (pc.DENIED_NEW, TAF, "Authorization failed.", False, -1, -1, 0, ()),
            ]
        ),
    ),
    Probe(
        "delete topics: DESCRIBE without DELETE",
        ApiKey.DELETE_TOPICS,
        6,
        "ControllerApis.deleteTopics: describable and absent -> UNKNOWN_TOPIC_OR_PARTITION; "
        "describable, no DELETE -> 29 with a zero id",
        c.delete_topics_request,
        c.deleted,
        same([(ABSENT, ZERO, 3, UNKNOWN_TP), (TOPIC, ZERO, TAF, TOPIC_DENIED)]),
    ),
    Probe(
        "delete topics by id: DESCRIBE without DELETE",
        ApiKey.DELETE_TOPICS,
        6,
        "ControllerApis.deleteTopics: an id that is describable but not deletable keeps its name",
        pc.by_id_only_request,
        c.deleted,
        lambda w: [(TOPIC, w.topic_id, TAF, TOPIC_DENIED)],
    ),
    Probe(
        "metadata: DESCRIBE without CREATE",
        ApiKey.METADATA,
        12,
        "handleTopicMetadataRequest: a described topic with its operations (DESCRIBE only); "
        "an absent one auto-creation would make needs CREATE -> 29",
        c.metadata_request([TOPIC, ABSENT]),
        pc.meta_named,
        same([(0, TOPIC, 1, DESCRIBE_AND_CONFIGS), (TAF, ABSENT, 0, OMITTED)]),
    ),
    Probe(
        "metadata all topics: only the describable",
        ApiKey.METADATA,
        12,
        "handleTopicMetadataRequest: all topics lists only those with DESCRIBE",
        c.metadata_request(None),
        pc.meta_named,
        same([(0, TOPIC, 1, DESCRIBE_AND_CONFIGS)]),
    ),
    Probe(
        "list offsets: DESCRIBE is enough; absent described topic is 3",
        ApiKey.LIST_OFFSETS,
        10,
        "handleListOffsetRequest: DESCRIBE, then existence",
        c.list_offsets_request,
        c.listed,
        same([(ABSENT, 0, 3, -1, -1), (TOPIC, 0, 0, -1, 3)]),
    ),
    Probe(
        "list offsets: the authorized topics first, then the refused",
        ApiKey.LIST_OFFSETS,
        10,
        "handleListOffsetRequest: partitionSeqByAuthorized, then response ++ unauthorized",
        pc.list_offsets_mixed_request,
        pc.listed_in_order,
        same([(TOPIC, 0, 0, -1, 3), (pc.HIDDEN, 0, TAF, -1, -1)]),
    ),
    Probe(
        "offset fetch: the describable topics first, then the refused",
        ApiKey.OFFSET_FETCH,
        9,
        "handleOffsetFetchRequest: partitionSeqByAuthorized; refused topics appended with 29",
        pc.offset_fetch_mixed_request,
        pc.offsets_with_topics,
        same([(GROUP, 0, [(TOPIC, 0, 2, 0), (pc.HIDDEN, 0, -1, TAF)])]),
    ),
    Probe(
        "metadata: the described topics first, then the refused",
        ApiKey.METADATA,
        12,
        "handleTopicMetadataRequest: topicMetadata ++ unauthorizedForCreate ++ "
        "unauthorizedForDescribe",
        pc.metadata_mixed_request,
        pc.meta_in_order,
        same([(0, TOPIC, 1), (TAF, pc.HIDDEN, 0)]),
    ),
    again("delete records", "delete records: DESCRIBE is not DELETE"),
    again("create partitions", "create partitions: DESCRIBE is not ALTER"),
    Probe(
        "describe configs: the described resource first, then the refused ones",
        ApiKey.DESCRIBE_CONFIGS,
        4,
        "ConfigHelper.handleDescribeConfigsRequest: DESCRIBE_CONFIGS per resource (DESCRIBE "
        "is not enough); authorized results first, then the refused, each in request order",
        pc.describe_configs_reversed_request,
        pc.configs_described_dynamic,
        lambda w: [
            (TOPIC_RESOURCE, TOPIC, 0, "", [(RETENTION, "86400000")]),
            (BROKER_RESOURCE, str(w.broker_id), CAF, CLUSTER_DENIED, []),
            (TOPIC_RESOURCE, ABSENT, TAF, TOPIC_DENIED, []),
        ],
    ),
    Probe(
        "offset fetch: the group's READ and the topic's DESCRIBE",
        ApiKey.OFFSET_FETCH,
        9,
        "handleOffsetFetchRequest: DESCRIBE on the group, DESCRIBE on each topic",
        c.offset_fetch_request,
        pc.offsets_with_topics,
        same([(GROUP, 0, [(TOPIC, 0, 2, 0)])]),
    ),
    Probe(
        "offset commit: READ on the group, not on the topic",
        ApiKey.OFFSET_COMMIT,
        9,
        "handleOffsetCommitRequest: READ on the group, then READ on each topic",
        c.offset_commit_request,
        c.committed,
        same([(TOPIC, 0, TAF)]),
    ),
    Probe(
        "describe groups: READ gives READ and DESCRIBE; refused groups first",
        ApiKey.DESCRIBE_GROUPS,
        5,
        "handleDescribeGroupsRequest: refused groups answered before the described ones; "
        "AuthHelper.authorizedOperations over AclEntry.supportedOperations(GROUP)",
        lambda _: describe_groups.DescribeGroupsRequest(
            groups=(GROUP, OTHER_GROUP), include_authorized_operations=True
        ),
        pc.groups_described_ops,
        same([(OTHER_GROUP, GAF, "", OMITTED), (GROUP, 0, "Empty", READ_GROUP)]),
    ),
    Probe(
        "list groups: the describable group",
        ApiKey.LIST_GROUPS,
        5,
        "handleListGroupsRequest: DESCRIBE on the group",
        lambda _: list_groups.ListGroupsRequest(),
        pc.groups_listed_named,
        same((0, [(GROUP, "Empty")])),
    ),
    Probe(
        "find coordinator: DESCRIBE on the group",
        ApiKey.FIND_COORDINATOR,
        6,
        "handleFindCoordinatorRequestV4AndAbove: DESCRIBE on the group",
        c.find_request(GROUP, 0),
        pc.coordinator_found,
        same([(GROUP, 0, True)]),
    ),
    again("delete groups", "delete groups: READ is not DELETE"),
    again("offset delete", "offset delete: READ is not DELETE"),
    again("init producer id", "init producer id: DESCRIBE is not WRITE"),
    again(
        "delete partitions (KIP-694 extension)",
        "delete partitions (KIP-694): DESCRIBE is not DELETE",
    ),
)

#: read-only requests of the super user: every supported operation in the bit fields
SUPER_PROBES: tuple[Probe, ...] = (
    Probe(
        "describe producers: a super user reads the producer state",
        ApiKey.DESCRIBE_PRODUCERS,
        0,
        "handleDescribeProducersRequest: the topic's records were not idempotent (no "
        "producer); the absent topic 3 with ApiError's message",
        pc.producers_request,
        pc.producers_described,
        same([(TOPIC, 0, 0, None, 0), (ABSENT, 0, 3, UNKNOWN_TP, 0)]),
    ),
    Probe(
        "describe log dirs: a super user sees the log dir",
        ApiKey.DESCRIBE_LOG_DIRS,
        4,
        "handleDescribeLogDirsRequest: ReplicaManager.describeLogDirs, one result per log dir",
        pc.log_dirs_request,
        pc.log_dirs_described,
        same((0, [0])),
    ),
    Probe(
        "describe topic partitions: a super user's topic operations",
        ApiKey.DESCRIBE_TOPIC_PARTITIONS,
        0,
        "DescribeTopicPartitionsRequestHandler: AuthHelper.authorizedOperations(TOPIC)",
        pc.partitions_request([TOPIC]),
        pc.partitions_described,
        same([(0, TOPIC, False, 1, 3576)]),
    ),
    Probe(
        "describe groups: a super user's operations",
        ApiKey.DESCRIBE_GROUPS,
        5,
        "AuthHelper.authorizedOperations: READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS",
        lambda _: describe_groups.DescribeGroupsRequest(
            groups=(GROUP,), include_authorized_operations=True
        ),
        pc.groups_described_ops,
        same([(GROUP, 0, "Empty", 3400)]),
    ),
    Probe(
        "metadata: a super user's topic and cluster operations",
        ApiKey.METADATA,
        10,
        "handleTopicMetadataRequest: AclEntry.supportedOperations(TOPIC / CLUSTER)",
        lambda _: metadata.MetadataRequest(
            topics=(metadata.MetadataRequestTopic(name=TOPIC),),
            allow_auto_topic_creation=False,
            include_cluster_authorized_operations=True,
            include_topic_authorized_operations=True,
        ),
        lambda r, _: (
            [t.topic_authorized_operations for t in r.topics],
            r.cluster_authorized_operations,
        ),
        same(([3576], 8096)),
    ),
    Probe(
        "describe cluster: a super user's cluster operations",
        ApiKey.DESCRIBE_CLUSTER,
        1,
        "AuthHelper.computeDescribeClusterResponse",
        lambda _: describe_cluster.DescribeClusterRequest(
            include_cluster_authorized_operations=True
        ),
        c.cluster,
        same((0, 8096, 1)),
    ),
)
