"""Metadata (key 3, v0-13): brokers, cluster id, controller, topics and partitions.

Theory of operation
-------------------
``KafkaApis.handleTopicMetadataRequest`` on a single KRaft node that leads every
partition:

* brokers: this node with its advertised host and port (rack null); cluster id;
  controller id = this node (KRaft reports a random alive broker);
* which topics: all of them when ``topics`` is null (v1+) or an empty array in
  v0 (internal topics included, sorted by name); otherwise the named ones, each
  once, in request order. From v12 a topic may be named by id instead: an
  unknown id gives UNKNOWN_TOPIC_ID (100) with a null name, listed first.
  Before v12 a null name or a non-zero id is INVALID_REQUEST: Kafka throws
  from the handler and answers ``getErrorResponse`` (every requested topic with
  error 42, no brokers, no cluster id);
* a known topic: error 0, its id (v10+), ``is_internal``, and per partition
  leader = replicas = isr = [this node], leader epoch 0, no offline replicas;
* an unknown topic: with ``allow_auto_topic_creation`` (v4+; always true
  before) and ``auto.create.topics.enable`` and not an all-topics request, it is
  created (``num.partitions``, ``default.replication.factor``, or the internal
  topics' own settings) and, as Kafka's ``AutoTopicCreationManager`` answers
  while the controller creates it, reported UNKNOWN_TOPIC_OR_PARTITION (3)
  with no partitions and a zero id: the client asks again. Without
  auto-creation: UNKNOWN_TOPIC_OR_PARTITION, or INVALID_TOPIC_EXCEPTION (17)
  for an illegal name, either way;
* KIP-694 partition modes (an opt-in extension): a partition that is not
  ReadWrite carries its mode as tagged field 10694 in v9+ (ReadWrite ones carry
  nothing, so their bytes are Kafka's); below v9, where no tag can travel, it is
  listed with LEADER_NOT_AVAILABLE (5) and leader -1 so an old client does not
  write to it (catalog KIP694-META-1, KIP694-META-2);
* in an in-process cluster (:mod:`lethe_reference.cluster.metadata_view`):
  every live broker, and each partition's leader (-1 and
  LEADER_NOT_AVAILABLE (5) when none), leader epoch, replicas and ISR from
  the controller; a replica on a stopped broker is listed in
  ``offline_replicas``;
* authorization (only with an authorizer, :mod:`.metadata_access`): topics the
  principal may not DESCRIBE are left out of an all-topics answer and
  answered TOPIC_AUTHORIZATION_FAILED (29) when named, before existence is
  looked at; auto-creation needs CREATE on the cluster or the topic;
* authorized operations (v8+): -2147483648 unless requested; when requested,
  the operations the principal may do (:mod:`.authz`; every supported one
  without an authorizer) on every entry but the unknown-id and refused ones,
  errors included, as Kafka fills them in;
* the broker's address is the one of the request's listener (:mod:`.endpoints`).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.broker_errors import error_for_code
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from lethe_formats.protocol.schema import ZERO_UUID
from lethe_formats.storage.kafka_uuid import KafkaUuid

from lethe_reference import faults
from lethe_reference.cluster.acl import ResourceType
from lethe_reference.cluster.metadata_view import cluster_brokers, cluster_partition
from lethe_reference.handlers import metadata_access
from lethe_reference.handlers.authz import OMITTED, authorized_operations, cluster_operations
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.endpoints import advertised_endpoint
from lethe_reference.handlers.topic_creation import TopicError, internal_topic_plan, plan_topic
from lethe_reference.metadata import INTERNAL_TOPICS, TopicInfo, topic_name_problem
from lethe_reference.partitions.state import PartitionMode

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["LEADER_EPOCH", "handle", "partition_metadata", "to_protocol_uuid", "topic_metadata"]

_log = logging.getLogger(__name__)

#: Leader epoch of a new partition (restarts raise it: :mod:`lethe_reference.leadership`).
LEADER_EPOCH = 0
#: The first Metadata version that can carry the KIP-694 mode tag (flexible versions).
MODE_TAG_FROM = 9


def to_protocol_uuid(topic_id: KafkaUuid) -> uuid.UUID:
    return uuid.UUID(bytes=topic_id.raw)


def partition_metadata(
    broker: Broker, info: TopicInfo, index: int, version: int
) -> MetadataResponsePartition:
    """One partition's leader, epoch, replicas and ISR (DescribeTopicPartitions too)."""
    node = broker.node_id
    entry = MetadataResponsePartition(
        error_code=ErrorCode.NONE,
        partition_index=index,
        leader_id=node,
        leader_epoch=info.leader_epoch(index),
        replica_nodes=(node,),
        isr_nodes=(node,),
    )
    entry = cluster_partition(broker, info.name, entry)  # an in-process cluster's state
    mode = info.mode(index)
    if mode is PartitionMode.READ_WRITE or faults.active(broker, "metadata-omits-partition-mode"):
        return entry
    if version >= MODE_TAG_FROM:
        return replace(entry, mode=int(mode))
    return replace(entry, error_code=ErrorCode.LEADER_NOT_AVAILABLE, leader_id=-1)


def topic_metadata(broker: Broker, info: TopicInfo, version: int) -> MetadataResponseTopic:
    """The entry of a known topic, for a response at ``version``."""
    partitions = tuple(
        partition_metadata(broker, info, index, version) for index in range(info.partitions)
    )
    return MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=info.name,
        topic_id=to_protocol_uuid(info.topic_id),
        is_internal=info.internal,
        partitions=partitions,
    )


def _missing(
    code: ErrorCode, name: str | None, topic_id: uuid.UUID = ZERO_UUID
) -> MetadataResponseTopic:
    return MetadataResponseTopic(
        error_code=code, name=name, topic_id=topic_id, is_internal=name in INTERNAL_TOPICS
    )


def _check_request(request: MetadataRequest, version: int) -> None:
    if request.topics is None or version >= 12:
        return
    for topic in request.topics:
        if topic.name is None:
            raise error_for_code(
                ErrorCode.INVALID_REQUEST, f"Topic name can not be null for version {version}"
            )
        if topic.topic_id != ZERO_UUID:
            raise error_for_code(
                ErrorCode.INVALID_REQUEST,
                f"Topic IDs are not supported in requests for version {version}",
            )


def _auto_create(broker: Broker, name: str) -> MetadataResponseTopic:
    if topic_name_problem(name) is not None:
        return _missing(ErrorCode.INVALID_TOPIC_EXCEPTION, name)
    try:
        if name in INTERNAL_TOPICS:
            plan = internal_topic_plan(broker, name)
        else:
            plan = plan_topic(broker, name, num_partitions=-1, replication_factor=-1)
        broker.create_topic(plan.name, plan.partitions, plan.configs)
    except TopicError as error:
        _log.info("auto-creation of topic %s failed: %s %s", name, error.code.name, error.message)
    return _missing(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name)


def _requested(
    broker: Broker, request: MetadataRequest, version: int
) -> tuple[list[MetadataResponseTopic], list[str]]:
    """(entries for unknown ids, names to describe), duplicates dropped."""
    assert request.topics is not None
    unknown_ids: list[MetadataResponseTopic] = []
    names: list[str] = []
    ids = [t.topic_id for t in request.topics if t.topic_id != ZERO_UUID]
    if ids and version >= 12:
        for topic_id in dict.fromkeys(ids):
            info = broker.metadata.by_id(KafkaUuid(topic_id.bytes))
            if info is None:
                unknown_ids.append(_missing(ErrorCode.UNKNOWN_TOPIC_ID, None, topic_id))
            else:
                names.append(info.name)
    else:
        names = [t.name for t in request.topics if t.name is not None]
    return unknown_ids, list(dict.fromkeys(names))


def _topics(broker: Broker, request: MetadataRequest, version: int) -> list[MetadataResponseTopic]:
    all_topics = request.topics is None or (version == 0 and not request.topics)
    if all_topics:
        return [topic_metadata(broker, info, version) for info in broker.metadata]
    unknown_ids, names = _requested(broker, request, version)
    auto = request.allow_auto_topic_creation and broker.config.get_bool("auto.create.topics.enable")
    out = list(unknown_ids)
    for name in names:
        info = broker.metadata.get(name)
        if info is not None:
            out.append(topic_metadata(broker, info, version))
        elif auto:
            out.append(_auto_create(broker, name))
        elif topic_name_problem(name) is not None:
            out.append(_missing(ErrorCode.INVALID_TOPIC_EXCEPTION, name))
        else:
            out.append(_missing(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name))
    return out


def _error_response(
    request: MetadataRequest, code: ErrorCode, message: str | None
) -> MetadataResponse:
    """``MetadataRequest.getErrorResponse``: each requested topic with the error, no brokers."""
    return MetadataResponse(
        topics=tuple(
            MetadataResponseTopic(error_code=code, name=t.name or "", topic_id=t.topic_id)
            for t in request.topics or ()
        )
    )


def _topic_ops(broker: Broker, ctx: RequestContext, name: str | None) -> int:
    return authorized_operations(broker, ctx, ResourceType.TOPIC, name or "")


@handles(ApiKey.METADATA, error_response=_error_response)
def handle(broker: Broker, ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
    version = ctx.api_version
    _check_request(request, version)
    allowed, refused = metadata_access.restrict(broker, ctx, request, version)
    topics = [] if allowed is None else _topics(broker, allowed, version)
    topics = metadata_access.visible(broker, ctx, topics)
    if version >= 8 and request.include_topic_authorized_operations:
        topics = [
            t
            if t.error_code == ErrorCode.UNKNOWN_TOPIC_ID
            else replace(t, topic_authorized_operations=_topic_ops(broker, ctx, t.name))
            for t in topics
        ]
    topics += refused  # no DESCRIBE / no CREATE (metadata_access), after the others
    cluster_ops = OMITTED
    if 8 <= version <= 10 and request.include_cluster_authorized_operations:
        cluster_ops = cluster_operations(broker, ctx)
    host, port = advertised_endpoint(broker, ctx)
    broker_entry = MetadataResponseBroker(node_id=broker.node_id, host=host, port=port)
    return MetadataResponse(
        brokers=cluster_brokers(broker) or (broker_entry,),
        cluster_id=broker.cluster_id,
        controller_id=broker.node_id,
        topics=tuple(topics),
        cluster_authorized_operations=cluster_ops,
    )
