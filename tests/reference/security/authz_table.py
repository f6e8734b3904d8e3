"""The authorization table: one or more probes per API, each a request an unauthorized
principal sends and the answer Kafka 4.0 gives it, as data.

Every probe names the Kafka method that decides its answer (``KafkaApis`` unless
said otherwise; ``ControllerApis`` for the requests a broker forwards to the
controller, ``AclApis`` for the ACL requests, ``SaslServerAuthenticator`` for
the SASL ones). The principal has no ACL at all and is no super user, so every
check of the method fails; the expected answer is what the method then sends.
A probe's ``summary`` keeps the fields the decision shows (error codes per
topic / partition / group / resource, messages, the values Kafka puts beside
an error such as offset -1 or node -1, authorized-operation bit fields) and
sorts entries where Kafka's order comes from a hash set (or a shuffle, as in
DeleteTopics).

The same table drives the reference broker's test (test_authorization_table.py)
and a run against a real Kafka 4.0.0; it uses only the protocol client of
lethe_conformance, so it runs against any broker address. :class:`World`
builds the state the probes try to change (a topic with records and a raised
log start offset, a topic config, a group with a committed offset, an ACL) as
a super user, and :func:`snapshot` reads it back (as the super user), so a test
can show that nothing changed.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lethe_conformance.client import calls
from lethe_conformance.client.acl_calls import Acl, create_acls
from lethe_conformance.client.connection import KafkaConnection
from lethe_formats.protocol.api_keys import ApiKey
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
    heartbeat,
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
from lethe_formats.protocol.messages import (
    create_acls as ca,
)
from lethe_formats.protocol.messages import (
    incremental_alter_configs as iac,
)
from lethe_formats.protocol.schema import Struct
from lethe_formats.records.builder import RecordSpec, build_batch

__all__ = ["PROBES", "Probe", "World", "run", "snapshot"]

TOPIC = "authz-t"
ABSENT = "authz-absent"
NEW = "authz-new"
GROUP = "authz-g"
OTHER_GROUP = "authz-none"
TXN = "authz-tx"
ZERO = uuid.UUID(int=0)
OMITTED = -(1 << 31)
TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4
RETENTION = "retention.ms"
_RECORDS = build_batch([RecordSpec(b"k", b"v", (), 1000 + i) for i in range(3)], base_offset=0)


@dataclass(frozen=True)
class World:
    """What the probes run against: ids learnt while setting it up."""

    topic_id: uuid.UUID
    broker_id: int

    @classmethod
    def build(cls, admin: KafkaConnection) -> World:
        """Create the state as the super user (a fresh broker is assumed)."""
        created = calls.create_topic(admin, TOPIC, 1, {RETENTION: "86400000"})
        assert created.topics[0].error_code == 0, created
        _until_done(
            lambda: calls.produce(admin, TOPIC, 0, _RECORDS),
            lambda r: r.responses[0].partition_responses[0].error_code,
        )
        _until_done(
            lambda: calls.delete_records(admin, [(TOPIC, 0, 1)]),
            lambda r: r.topics[0].partitions[0].error_code,
        )
        _until_done(
            lambda: (
                calls.find_coordinator(admin, GROUP),  # makes Kafka create __consumer_offsets
                calls.offset_commit(admin, GROUP, [(TOPIC, 0, 2)]),
            )[1],
            lambda r: r.topics[0].partitions[0].error_code,
        )
        acl = Acl(TOPIC_RESOURCE, TOPIC, 3, "User:bob", "*", 3, 3)
        assert [r.error_code for r in create_acls(admin, [acl]).results] == [0]
        described = calls.metadata(admin, [TOPIC])
        return cls(calls.topic_id(admin, TOPIC), described.brokers[0].node_id)


#: what a real Kafka answers while a new topic's leader or the group coordinator comes up
_NOT_YET = frozenset({3, 5, 6, 14, 15, 16})


def _until_done(send: Callable[[], Any], code_of: Callable[[Any], int]) -> None:
    """Repeat ``send`` while a real Kafka is still settling (the reference broker answers
    at once); any other error fails the setup."""
    for _ in range(200):
        answer = send()
        code = code_of(answer)
        if code == 0:
            return
        assert code in _NOT_YET, answer
        time.sleep(0.05)
    raise AssertionError(f"still settling: {answer}")


def snapshot(admin: KafkaConnection) -> dict[str, Any]:
    """Topics and partition counts, offsets (earliest = log start, latest), dynamic topic
    configs, groups and their offsets, ACLs: read as the super user."""
    topics = {t.name: (t.topic_id, len(t.partitions)) for t in calls.metadata(admin, None).topics}
    ours = {n: count for n, (_, count) in topics.items() if not n.startswith("__")}
    offsets = sorted(
        (t.name, p.partition_index, spec, p.offset, p.error_code)
        for spec in (-2, -1)  # earliest (the log start offset), latest
        for t in calls.list_offsets(
            admin, [(n, p, spec) for n, count in ours.items() for p in range(count)]
        ).topics
        for p in t.partitions
    )
    configs = {
        name: sorted(
            (c.name, c.value)
            for c in calls.describe_configs(admin, TOPIC_RESOURCE, name).results[0].configs
            if c.config_source == 1  # DYNAMIC_TOPIC_CONFIG
        )
        for name in ours
    }
    groups = sorted(
        (g.group_id, g.group_state)
        for g in admin.call(list_groups.ListGroupsRequest(), list_groups.ListGroupsResponse).groups
    )
    fetched = admin.call(
        offset_fetch.OffsetFetchRequest(
            groups=(offset_fetch.OffsetFetchRequestGroup(GROUP, topics=None),)
        ),
        offset_fetch.OffsetFetchResponse,
    )
    group_offsets = sorted(
        (g.group_id, t.name, p.partition_index, p.committed_offset)
        for g in fetched.groups
        for t in g.topics
        for p in t.partitions
    )
    acls = admin.call(
        describe_acls.DescribeAclsRequest(resource_type_filter=1, operation=1, permission_type=1),
        describe_acls.DescribeAclsResponse,
    )
    return {
        "topics": topics,
        "offsets": offsets,
        "configs": configs,
        "groups": groups,
        "group_offsets": group_offsets,
        "acls": sorted(
            (r.resource_type, r.resource_name, a.principal, a.operation, a.permission_type)
            for r in acls.resources
            for a in r.acls
        ),
    }


@dataclass(frozen=True)
class Probe:
    """One request and Kafka's answer to a principal without rights."""

    name: str
    api_key: int
    version: int
    kafka: str  #: the Kafka method whose checks decide the answer
    request: Callable[[World], Struct]
    summary: Callable[[Any, World], Any]
    expected: Callable[[World], Any]


def _p(*parts: Any) -> tuple[Any, ...]:
    return parts


# --- summaries ----------------------------------------------------------------------------


def _produced(r: produce.ProduceResponse, _: World) -> Any:
    return sorted(
        (t.name, p.index, p.error_code, p.base_offset, p.log_start_offset)
        for t in r.responses
        for p in t.partition_responses
    )


def _fetched(r: fetch.FetchResponse, w: World) -> Any:
    return r.error_code, [
        (t.topic_id == w.topic_id, p.partition_index, p.error_code, p.high_watermark, p.records)
        for t in r.responses
        for p in t.partitions
    ]


def _listed(r: list_offsets.ListOffsetsResponse, _: World) -> Any:
    return sorted(
        (t.name, p.partition_index, p.error_code, p.timestamp, p.offset)
        for t in r.topics
        for p in t.partitions
    )


def _meta(r: metadata.MetadataResponse, _: World) -> Any:
    topics = sorted(
        (t.error_code, t.name or "", t.topic_id, t.is_internal, len(t.partitions)) for t in r.topics
    )
    ops = sorted(t.topic_authorized_operations for t in r.topics)
    return topics, ops, r.cluster_authorized_operations, len(r.brokers)


def _committed(r: offset_commit.OffsetCommitResponse, _: World) -> Any:
    return [(t.name, p.partition_index, p.error_code) for t in r.topics for p in t.partitions]


def _offsets_fetched(r: offset_fetch.OffsetFetchResponse, _: World) -> Any:
    return [(g.group_id, g.error_code, len(g.topics)) for g in r.groups]


def _coordinators(r: find_coordinator.FindCoordinatorResponse, _: World) -> Any:
    return [(c.key, c.error_code, c.node_id, c.host, c.port) for c in r.coordinators]


def _joined(r: join_group.JoinGroupResponse, _: World) -> Any:
    return r.error_code, r.generation_id, r.member_id, r.leader, r.members


def _code(r: Any, _: World) -> Any:
    return r.error_code


def _left(r: leave_group.LeaveGroupResponse, _: World) -> Any:
    return r.error_code, r.members


def _groups_described(r: describe_groups.DescribeGroupsResponse, _: World) -> Any:
    return [
        (g.group_id, g.error_code, g.group_state, g.protocol_type, g.authorized_operations)
        for g in r.groups
    ]


def _groups_listed(r: list_groups.ListGroupsResponse, _: World) -> Any:
    return r.error_code, [g.group_id for g in r.groups]


def _created(r: create_topics.CreateTopicsResponse, _: World) -> Any:
    return [
        (t.name, t.error_code, t.error_message, t.topic_id, t.num_partitions, t.configs)
        for t in r.topics
    ]


def _deleted(r: delete_topics.DeleteTopicsResponse, _: World) -> Any:
    return sorted((t.name or "", t.topic_id, t.error_code, t.error_message) for t in r.responses)


def _records_deleted(r: delete_records.DeleteRecordsResponse, _: World) -> Any:
    return sorted(
        (t.name, p.partition_index, p.error_code, p.low_watermark)
        for t in r.topics
        for p in t.partitions
    )


def _pid(r: init_producer_id.InitProducerIdResponse, _: World) -> Any:
    return r.error_code, r.producer_id, r.producer_epoch


def _acls_described(r: describe_acls.DescribeAclsResponse, _: World) -> Any:
    return r.error_code, r.resources


def _acls_created(r: ca.CreateAclsResponse, _: World) -> Any:
    return [x.error_code for x in r.results]


def _acls_deleted(r: delete_acls.DeleteAclsResponse, _: World) -> Any:
    return [(x.error_code, x.matching_acls) for x in r.filter_results]


def _configs_described(r: describe_configs.DescribeConfigsResponse, _: World) -> Any:
    return [
        (x.resource_type, x.resource_name, x.error_code, x.error_message, x.configs)
        for x in r.results
    ]


def _configs_altered(r: Any, _: World) -> Any:
    return [(x.resource_type, x.resource_name, x.error_code, x.error_message) for x in r.responses]


def _handshake(r: sasl_handshake.SaslHandshakeResponse, _: World) -> Any:
    return r.error_code, r.mechanisms


def _authenticated(r: sasl_authenticate.SaslAuthenticateResponse, _: World) -> Any:
    return r.error_code, r.error_message


def _partitions_created(r: create_partitions.CreatePartitionsResponse, _: World) -> Any:
    return sorted((x.name, x.error_code, x.error_message) for x in r.results)


def _groups_deleted(r: delete_groups.DeleteGroupsResponse, _: World) -> Any:
    return [(x.group_id, x.error_code) for x in r.results]


def _offsets_deleted(r: offset_delete.OffsetDeleteResponse, _: World) -> Any:
    return r.error_code, r.topics


def _cluster(r: describe_cluster.DescribeClusterResponse, _: World) -> Any:
    return r.error_code, r.cluster_authorized_operations, len(r.brokers)


def _versions(r: api_versions.ApiVersionsResponse, _: World) -> Any:
    return r.error_code


def _partitions_deleted(r: delete_partitions.DeletePartitionsResponse, _: World) -> Any:
    return r.error_code, [
        (x.name, x.error_code, x.error_message, x.partitions) for x in r.responses
    ]


# --- requests -----------------------------------------------------------------------------


def _produce(_: World) -> Struct:
    data = tuple(
        produce.TopicProduceData(name, (produce.PartitionProduceData(0, _RECORDS),))
        for name in (TOPIC, ABSENT)
    )
    return produce.ProduceRequest(acks=-1, timeout_ms=5000, topic_data=data)


def _fetch(replica: int) -> Callable[[World], Struct]:
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


def _list_offsets(_: World) -> Struct:
    topics = tuple(
        list_offsets.ListOffsetsTopic(name, (list_offsets.ListOffsetsPartition(0, timestamp=-1),))
        for name in (TOPIC, ABSENT)
    )
    return list_offsets.ListOffsetsRequest(replica_id=-1, topics=topics)


def _metadata(names: Sequence[str] | None, *, cluster_ops: bool = False) -> Callable[[World], Any]:
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


def _metadata_by_id(w: World) -> Struct:
    return metadata.MetadataRequest(
        topics=(metadata.MetadataRequestTopic(topic_id=w.topic_id, name=None),),
        allow_auto_topic_creation=False,
        include_topic_authorized_operations=True,
    )


def _offset_commit(_: World) -> Struct:
    part = offset_commit.OffsetCommitRequestPartition(0, 0, committed_metadata="")
    return offset_commit.OffsetCommitRequest(
        group_id=GROUP, topics=(offset_commit.OffsetCommitRequestTopic(TOPIC, (part,)),)
    )


def _offset_fetch(_: World) -> Struct:
    topic = offset_fetch.OffsetFetchRequestTopic(TOPIC, (0,))
    return offset_fetch.OffsetFetchRequest(
        groups=(offset_fetch.OffsetFetchRequestGroup(GROUP, topics=(topic,)),)
    )


def _find(key: str, key_type: int) -> Callable[[World], Struct]:
    return lambda _: find_coordinator.FindCoordinatorRequest(
        key_type=key_type, coordinator_keys=(key,)
    )


def _join(_: World) -> Struct:
    return join_group.JoinGroupRequest(
        group_id=GROUP,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        member_id="",
        protocol_type="consumer",
        protocols=(join_group.JoinGroupRequestProtocol("range", b""),),
    )


def _sync(_: World) -> Struct:
    return sync_group.SyncGroupRequest(
        group_id=GROUP,
        generation_id=1,
        member_id="m",
        protocol_type="consumer",
        protocol_name="range",
    )


def _leave(_: World) -> Struct:
    return leave_group.LeaveGroupRequest(
        group_id=GROUP, members=(leave_group.LeaveGroupMemberIdentity("m"),)
    )


def _create_topics(_: World) -> Struct:
    topic = create_topics.CreatableTopic(name=NEW, num_partitions=1, replication_factor=1)
    return create_topics.CreateTopicsRequest((topic,), 5000)


def _delete_topics(w: World) -> Struct:
    states = (
        delete_topics.DeleteTopicState(name=TOPIC),
        delete_topics.DeleteTopicState(name=ABSENT),
    )
    return delete_topics.DeleteTopicsRequest(topics=states, timeout_ms=5000)


_UNKNOWN_ID = uuid.UUID("0f0e0d0c-0b0a-4908-8706-050403020100")


def _delete_topics_by_id(w: World) -> Struct:
    states = (
        delete_topics.DeleteTopicState(name=None, topic_id=w.topic_id),
        delete_topics.DeleteTopicState(name=None, topic_id=_UNKNOWN_ID),
    )
    return delete_topics.DeleteTopicsRequest(topics=states, timeout_ms=5000)


def _delete_records(_: World) -> Struct:
    topics = tuple(
        delete_records.DeleteRecordsTopic(name, (delete_records.DeleteRecordsPartition(0, 2),))
        for name in (TOPIC, ABSENT)
    )
    return delete_records.DeleteRecordsRequest(topics, 5000)


def _init_pid(txn: str | None) -> Callable[[World], Struct]:
    return lambda _: init_producer_id.InitProducerIdRequest(
        transactional_id=txn, transaction_timeout_ms=60_000
    )


def _describe_acls(_: World) -> Struct:
    return describe_acls.DescribeAclsRequest(resource_type_filter=1, operation=1, permission_type=1)


def _create_acls(_: World) -> Struct:
    acl = ca.AclCreation(TOPIC_RESOURCE, TOPIC, 3, "User:mallory", "*", 2, 3)
    return ca.CreateAclsRequest((acl,))


def _delete_acls(_: World) -> Struct:
    return delete_acls.DeleteAclsRequest(
        (delete_acls.DeleteAclsFilter(resource_type_filter=1, operation=1, permission_type=1),)
    )


def _describe_configs(w: World) -> Struct:
    resources = (
        describe_configs.DescribeConfigsResource(TOPIC_RESOURCE, TOPIC, None),
        describe_configs.DescribeConfigsResource(TOPIC_RESOURCE, ABSENT, None),
        describe_configs.DescribeConfigsResource(BROKER_RESOURCE, str(w.broker_id), None),
    )
    return describe_configs.DescribeConfigsRequest(resources)


def _alter_configs(w: World) -> Struct:
    setting = (alter_configs.AlterableConfig(RETENTION, "1000"),)
    resources = (
        alter_configs.AlterConfigsResource(TOPIC_RESOURCE, TOPIC, setting),
        alter_configs.AlterConfigsResource(BROKER_RESOURCE, str(w.broker_id), ()),
    )
    return alter_configs.AlterConfigsRequest(resources)


def _incremental(w: World) -> Struct:
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


def _create_partitions(_: World) -> Struct:
    topics = (
        create_partitions.CreatePartitionsTopic(TOPIC, 3, None),
        create_partitions.CreatePartitionsTopic(ABSENT, 2, None),
    )
    return create_partitions.CreatePartitionsRequest(topics, 5000)


def _offset_delete(_: World) -> Struct:
    part = offset_delete.OffsetDeleteRequestPartition(0)
    return offset_delete.OffsetDeleteRequest(
        GROUP, (offset_delete.OffsetDeleteRequestTopic(TOPIC, (part,)),)
    )


def _delete_partitions(_: World) -> Struct:
    return delete_partitions.DeletePartitionsRequest(
        timeout_ms=5000,
        topics=(
            delete_partitions.DeletePartitionsTopic(TOPIC, 1),
            delete_partitions.DeletePartitionsTopic(ABSENT, 1),
        ),
    )


# --- the table ----------------------------------------------------------------------------

_TAF, _GAF, _CAF = 29, 30, 31
_TXN_AF, _SASL_STATE = 53, 34
_TOPIC_DENIED = "Topic authorization failed."
_CLUSTER_DENIED = "Cluster authorization failed."


def _same(value: Any) -> Callable[[World], Any]:
    return lambda _: value


PROBES: tuple[Probe, ...] = (
    Probe(
        "produce",
        ApiKey.PRODUCE,
        12,
        "handleProduceRequest: WRITE on each topic, before existence",
        _produce,
        _produced,
        _same([(ABSENT, 0, _TAF, -1, -1), (TOPIC, 0, _TAF, -1, -1)]),
    ),
    Probe(
        "fetch (consumer)",
        ApiKey.FETCH,
        17,
        "handleFetchRequest: READ on each topic, before existence",
        _fetch(-1),
        _fetched,
        _same((0, [(True, 0, _TAF, -1, b"")])),
    ),
    Probe(
        "fetch (replica)",
        ApiKey.FETCH,
        17,
        "handleFetchRequest: isFromFollower needs CLUSTER_ACTION on the cluster",
        _fetch(1),
        _fetched,
        _same((0, [(True, 0, _TAF, -1, b"")])),
    ),
    Probe(
        "list offsets",
        ApiKey.LIST_OFFSETS,
        10,
        "handleListOffsetRequest: DESCRIBE on each topic, before existence",
        _list_offsets,
        _listed,
        _same([(ABSENT, 0, _TAF, -1, -1), (TOPIC, 0, _TAF, -1, -1)]),
    ),
    Probe(
        "metadata (named, auto-create)",
        ApiKey.METADATA,
        12,
        "handleTopicMetadataRequest: DESCRIBE first (29, zero id, name kept, before existence)",
        _metadata([TOPIC, ABSENT]),
        _meta,
        _same(
            (
                [(_TAF, ABSENT, ZERO, False, 0), (_TAF, TOPIC, ZERO, False, 0)],
                [OMITTED, OMITTED],
                OMITTED,
                1,
            )
        ),
    ),
    Probe(
        "metadata (all topics, cluster operations)",
        ApiKey.METADATA,
        10,
        "handleTopicMetadataRequest: undescribable topics left out; cluster operations 0 "
        "without DESCRIBE on the cluster",
        _metadata(None, cluster_ops=True),
        _meta,
        _same(([], [], 0, 1)),
    ),
    Probe(
        "metadata (by id)",
        ApiKey.METADATA,
        12,
        "handleTopicMetadataRequest: a topic id without DESCRIBE keeps its id, null name",
        _metadata_by_id,
        _meta,
        lambda w: ([(_TAF, "", w.topic_id, False, 0)], [OMITTED], OMITTED, 1),
    ),
    Probe(
        "offset commit",
        ApiKey.OFFSET_COMMIT,
        9,
        "handleOffsetCommitRequest: READ on the group, else every partition 30",
        _offset_commit,
        _committed,
        _same([(TOPIC, 0, _GAF)]),
    ),
    Probe(
        "offset fetch",
        ApiKey.OFFSET_FETCH,
        9,
        "handleOffsetFetchRequest: DESCRIBE on the group, else the group 30 without topics",
        _offset_fetch,
        _offsets_fetched,
        _same([(GROUP, _GAF, 0)]),
    ),
    Probe(
        "find coordinator (group)",
        ApiKey.FIND_COORDINATOR,
        6,
        "handleFindCoordinatorRequestV4AndAbove: DESCRIBE on the group",
        _find(GROUP, 0),
        _coordinators,
        _same([(GROUP, _GAF, -1, "", -1)]),
    ),
    Probe(
        "find coordinator (transaction)",
        ApiKey.FIND_COORDINATOR,
        6,
        "handleFindCoordinatorRequestV4AndAbove: DESCRIBE on the transactional id",
        _find(TXN, 1),
        _coordinators,
        _same([(TXN, _TXN_AF, -1, "", -1)]),
    ),
    Probe(
        "join group",
        ApiKey.JOIN_GROUP,
        9,
        "handleJoinGroupRequest: READ on the group",
        _join,
        _joined,
        _same((_GAF, -1, "", "", ())),
    ),
    Probe(
        "heartbeat",
        ApiKey.HEARTBEAT,
        4,
        "handleHeartbeatRequest: READ on the group",
        lambda _: heartbeat.HeartbeatRequest(GROUP, 1, "m"),
        _code,
        _same(_GAF),
    ),
    Probe(
        "leave group",
        ApiKey.LEAVE_GROUP,
        5,
        "handleLeaveGroupRequest: READ on the group",
        _leave,
        _left,
        _same((_GAF, ())),
    ),
    Probe(
        "sync group",
        ApiKey.SYNC_GROUP,
        5,
        "handleSyncGroupRequest: READ on the group (after the protocol type/name check)",
        _sync,
        _code,
        _same(_GAF),
    ),
    Probe(
        "describe groups",
        ApiKey.DESCRIBE_GROUPS,
        5,
        "handleDescribeGroupsRequest: DESCRIBE on each group (30, empty state, operations omitted)",
        lambda _: describe_groups.DescribeGroupsRequest(
            groups=(GROUP, OTHER_GROUP), include_authorized_operations=True
        ),
        _groups_described,
        _same([(GROUP, _GAF, "", "", OMITTED), (OTHER_GROUP, _GAF, "", "", OMITTED)]),
    ),
    Probe(
        "list groups",
        ApiKey.LIST_GROUPS,
        5,
        "handleListGroupsRequest: only groups with DESCRIBE (no DESCRIBE on the cluster)",
        lambda _: list_groups.ListGroupsRequest(),
        _groups_listed,
        _same((0, [])),
    ),
    Probe(
        "sasl handshake",
        ApiKey.SASL_HANDSHAKE,
        1,
        "handleSaslHandshakeRequest: after authentication (or on PLAINTEXT) 34",
        lambda _: sasl_handshake.SaslHandshakeRequest("PLAIN"),
        _handshake,
        _same((_SASL_STATE, ())),
    ),
    Probe(
        "api versions",
        ApiKey.API_VERSIONS,
        4,
        "handleApiVersionsRequest: no authorization",
        lambda _: api_versions.ApiVersionsRequest("lethe-authz", "1"),
        _versions,
        _same(0),
    ),
    Probe(
        "create topics",
        ApiKey.CREATE_TOPICS,
        7,
        "ControllerApis.createTopics: CREATE on the cluster or the topic",
        _create_topics,
        _created,
        _same([(NEW, _TAF, "Authorization failed.", ZERO, -1, ())]),
    ),
    Probe(
        "delete topics (by name)",
        ApiKey.DELETE_TOPICS,
        6,
        "ControllerApis.deleteTopics: DESCRIBE before existence, zero id",
        _delete_topics,
        _deleted,
        _same([(ABSENT, ZERO, _TAF, _TOPIC_DENIED), (TOPIC, ZERO, _TAF, _TOPIC_DENIED)]),
    ),
    Probe(
        "delete topics (by id)",
        ApiKey.DELETE_TOPICS,
        6,
        "ControllerApis.deleteTopics: an id without DELETE or DESCRIBE has a null name; an "
        "unknown id UNKNOWN_TOPIC_ID first",
        _delete_topics_by_id,
        _deleted,
        lambda w: sorted(
            [
                ("", w.topic_id, _TAF, _TOPIC_DENIED),
                ("", _UNKNOWN_ID, 100, "This server does not host this topic ID."),
            ]
        ),
    ),
    Probe(
        "delete records",
        ApiKey.DELETE_RECORDS,
        2,
        "handleDeleteRecordsRequest: DELETE on each topic, before existence, low watermark -1",
        _delete_records,
        _records_deleted,
        _same([(ABSENT, 0, _TAF, -1), (TOPIC, 0, _TAF, -1)]),
    ),
    Probe(
        "init producer id",
        ApiKey.INIT_PRODUCER_ID,
        5,
        "handleInitProducerIdRequest: IDEMPOTENT_WRITE on the cluster or WRITE on some topic",
        _init_pid(None),
        _pid,
        _same((_CAF, -1, -1)),
    ),
    Probe(
        "init producer id (transactional)",
        ApiKey.INIT_PRODUCER_ID,
        5,
        "handleInitProducerIdRequest: WRITE on the transactional id",
        _init_pid(TXN),
        _pid,
        _same((_TXN_AF, -1, -1)),
    ),
    Probe(
        "describe acls",
        ApiKey.DESCRIBE_ACLS,
        3,
        "AclApis.handleDescribeAcls: DESCRIBE on the cluster",
        _describe_acls,
        _acls_described,
        _same((_CAF, ())),
    ),
    Probe(
        "create acls",
        ApiKey.CREATE_ACLS,
        3,
        "AclApis.handleCreateAcls: ALTER on the cluster",
        _create_acls,
        _acls_created,
        _same([_CAF]),
    ),
    Probe(
        "delete acls",
        ApiKey.DELETE_ACLS,
        3,
        "AclApis.handleDeleteAcls: ALTER on the cluster",
        _delete_acls,
        _acls_deleted,
        _same([(_CAF, ())]),
    ),
    Probe(
        "describe configs",
        ApiKey.DESCRIBE_CONFIGS,
        4,
        "ConfigHelper.handleDescribeConfigsRequest: DESCRIBE_CONFIGS per resource",
        _describe_configs,
        _configs_described,
        lambda w: [
            (TOPIC_RESOURCE, TOPIC, _TAF, _TOPIC_DENIED, ()),
            (TOPIC_RESOURCE, ABSENT, _TAF, _TOPIC_DENIED, ()),
            (BROKER_RESOURCE, str(w.broker_id), _CAF, _CLUSTER_DENIED, ()),
        ],
    ),
    Probe(
        "alter configs",
        ApiKey.ALTER_CONFIGS,
        2,
        "handleAlterConfigsRequest / authorizeAlterConfigs: ALTER_CONFIGS per resource",
        _alter_configs,
        _configs_altered,
        lambda w: [
            (TOPIC_RESOURCE, TOPIC, _TAF, _TOPIC_DENIED),
            (BROKER_RESOURCE, str(w.broker_id), _CAF, _CLUSTER_DENIED),
        ],
    ),
    Probe(
        "incremental alter configs",
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        1,
        "handleIncrementalAlterConfigsRequest / authorizeAlterConfigs: ALTER_CONFIGS per resource",
        _incremental,
        _configs_altered,
        lambda w: [
            (TOPIC_RESOURCE, TOPIC, _TAF, _TOPIC_DENIED),
            (TOPIC_RESOURCE, ABSENT, _TAF, _TOPIC_DENIED),
            (BROKER_RESOURCE, str(w.broker_id), _CAF, _CLUSTER_DENIED),
        ],
    ),
    Probe(
        "sasl authenticate",
        ApiKey.SASL_AUTHENTICATE,
        2,
        "handleSaslAuthenticateRequest: after authentication (or on PLAINTEXT) 34",
        lambda _: sasl_authenticate.SaslAuthenticateRequest(b"\0alice\0alice-secret"),
        _authenticated,
        _same((_SASL_STATE, "SaslAuthenticate request received after successful authentication")),
    ),
    Probe(
        "create partitions",
        ApiKey.CREATE_PARTITIONS,
        3,
        "ControllerApis.createPartitions: ALTER on each topic (29, null message)",
        _create_partitions,
        _partitions_created,
        _same([(ABSENT, _TAF, None), (TOPIC, _TAF, None)]),
    ),
    Probe(
        "delete groups",
        ApiKey.DELETE_GROUPS,
        2,
        "handleDeleteGroupsRequest: DELETE on each group",
        lambda _: delete_groups.DeleteGroupsRequest((GROUP,)),
        _groups_deleted,
        _same([(GROUP, _GAF)]),
    ),
    Probe(
        "offset delete",
        ApiKey.OFFSET_DELETE,
        0,
        "handleOffsetDeleteRequest: DELETE on the group, else 30 for the request",
        _offset_delete,
        _offsets_deleted,
        _same((_GAF, ())),
    ),
    Probe(
        "describe cluster",
        ApiKey.DESCRIBE_CLUSTER,
        1,
        "handleDescribeCluster / AuthHelper.computeDescribeClusterResponse: operations 0 "
        "without DESCRIBE on the cluster",
        lambda _: describe_cluster.DescribeClusterRequest(
            include_cluster_authorized_operations=True
        ),
        _cluster,
        _same((0, 0, 1)),
    ),
    Probe(
        "delete partitions (KIP-694 extension)",
        ApiKey.DELETE_PARTITIONS,
        0,
        "no Kafka method (extension): catalog KIP694-ERR-4, DELETE on each topic before "
        "existence, as handleDeleteRecordsRequest; 29 with a null message as "
        "ControllerApis.createPartitions",
        _delete_partitions,
        _partitions_deleted,
        _same((0, [(TOPIC, _TAF, None, ()), (ABSENT, _TAF, None, ())])),
    ),
)


def run(conn: KafkaConnection, world: World) -> list[tuple[Probe, Any, Any]]:
    """(probe, observed summary, expected summary) for every probe of an API ``conn``'s
    broker advertises, at the probe's version."""
    out = []
    for probe in PROBES:
        if not conn.supports(probe.api_key):
            continue
        answer = conn.request(probe.request(world), version=probe.version)
        out.append((probe, probe.summary(answer, world), probe.expected(world)))
    return out
