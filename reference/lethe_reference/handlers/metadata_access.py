"""Metadata (key 3) under an authorizer: which topics a principal may see or create.

Theory of operation
-------------------
``KafkaApis.handleTopicMetadataRequest`` authorizes before it looks anything
up, so a principal learns nothing about topics it may not DESCRIBE:

* an all-topics request lists only the topics the principal may DESCRIBE
  (:func:`visible`); the others are left out silently;
* a requested topic without DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED
  (29), no partitions, ``is_internal`` false and a zero id; one requested by
  id (v12+) keeps its id and a null name (ids are not secret). Existence is
  not checked, so an absent topic gets 29 too;
* a requested topic that does not exist, when auto-creation would create it,
  also needs CREATE on the CLUSTER or on the TOPIC; without it the entry is
  29 (``is_internal`` as the name says) and nothing is created.

:func:`restrict` takes those topics out of the request before the normal path
(existence, auto-creation, partitions) runs on the rest, and returns their
entries; the handler appends them after the others in Kafka's order
(CREATE refusals, then DESCRIBE refusals). Those entries carry no authorized
operations. Without an authorizer nothing changes.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.metadata import (
    MetadataRequest,
    MetadataRequestTopic,
    MetadataResponseTopic,
)
from lethe_formats.protocol.schema import ZERO_UUID
from lethe_formats.storage.kafka_uuid import KafkaUuid

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorize, authorize_cluster, authorizer_of
from lethe_reference.handlers.context import RequestContext
from lethe_reference.metadata import INTERNAL_TOPICS

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["restrict", "visible"]

_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED


def _may(broker: Broker, ctx: RequestContext, op: AclOperation, name: str) -> bool:
    return authorize(broker, ctx, op, ResourceType.TOPIC, name)


def _refused(name: str | None, topic_id: uuid.UUID, internal: bool) -> MetadataResponseTopic:
    return MetadataResponseTopic(
        error_code=_DENIED, name=name, topic_id=topic_id, is_internal=internal
    )


def _name_of(broker: Broker, topic: MetadataRequestTopic, by_id: bool) -> str | None:
    if not by_id:
        return topic.name
    info = broker.metadata.by_id(KafkaUuid(topic.topic_id.bytes))
    return None if info is None else info.name  # unknown ids stay for the normal path


def restrict(
    broker: Broker, ctx: RequestContext, request: MetadataRequest, version: int
) -> tuple[MetadataRequest | None, list[MetadataResponseTopic]]:
    """(the request without refused topics, or None when none is left; their entries)."""
    if authorizer_of(broker) is None or request.topics is None:
        return request, []
    if version == 0 and not request.topics:
        return request, []
    by_id = version >= 12 and any(t.topic_id != ZERO_UUID for t in request.topics)
    kept: list[MetadataRequestTopic] = []
    no_describe: list[MetadataResponseTopic] = []
    no_create: list[MetadataResponseTopic] = []
    auto = request.allow_auto_topic_creation and broker.config.get_bool("auto.create.topics.enable")
    may_create_any = auto and authorize_cluster(broker, ctx, AclOperation.CREATE)
    for topic in request.topics:
        name = _name_of(broker, topic, by_id)
        if name is None:
            kept.append(topic)
        elif not _may(broker, ctx, AclOperation.DESCRIBE, name):
            shown = None if by_id else name
            no_describe.append(_refused(shown, topic.topic_id if by_id else ZERO_UUID, False))
        elif (
            auto
            and not may_create_any
            and broker.metadata.get(name) is None
            and not _may(broker, ctx, AclOperation.CREATE, name)
        ):
            no_create.append(_refused(name, ZERO_UUID, name in INTERNAL_TOPICS))
        else:
            kept.append(topic)
    refused = _once(no_create) + _once(no_describe)
    if not kept:
        return None, refused
    return replace(request, topics=tuple(kept)), refused


def _once(entries: list[MetadataResponseTopic]) -> list[MetadataResponseTopic]:
    seen: set[tuple[str | None, uuid.UUID]] = set()
    out = []
    for entry in entries:
        key = (entry.name, entry.topic_id)
        if key not in seen:
            seen.add(key)
            out.append(entry)
    return out


def visible(
    broker: Broker, ctx: RequestContext, topics: list[MetadataResponseTopic]
) -> list[MetadataResponseTopic]:
    """The entries of an all-topics answer the principal may DESCRIBE."""
    if authorizer_of(broker) is None:
        return topics
    return [t for t in topics if t.name is None or _may(broker, ctx, AclOperation.DESCRIBE, t.name)]
