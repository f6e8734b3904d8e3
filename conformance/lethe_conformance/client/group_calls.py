"""Removing committed offsets and groups: OffsetDelete (key 47) and DeleteGroups (key 42).

Theory of operation
-------------------
Thin builders over :class:`~lethe_conformance.client.connection.KafkaConnection`,
like :mod:`.calls`: the caller names the group and partitions, the request is
sent at the highest version both sides speak (or the one asked for), and the
typed response comes back for the caller to judge. A target that does not
advertise the API raises ``UnsupportedApiError`` (graded UNSUPPORTED), as
for every other call.
"""

from __future__ import annotations

from collections.abc import Sequence

from lethe_formats.protocol.messages.delete_groups import DeleteGroupsRequest, DeleteGroupsResponse
from lethe_formats.protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
    OffsetDeleteResponse,
)

from lethe_conformance.client.connection import KafkaConnection

__all__ = ["delete_groups", "offset_delete"]


def offset_delete(
    conn: KafkaConnection,
    group: str,
    partitions: Sequence[tuple[str, int]],
    *,
    version: int | None = None,
) -> OffsetDeleteResponse:
    """OffsetDelete of ``group``'s offsets for ``partitions`` (grouped by topic, in order)."""
    by_topic: dict[str, list[int]] = {}
    for name, index in partitions:
        by_topic.setdefault(name, []).append(index)
    topics = tuple(
        OffsetDeleteRequestTopic(name, tuple(OffsetDeleteRequestPartition(p) for p in indexes))
        for name, indexes in by_topic.items()
    )
    request = OffsetDeleteRequest(group_id=group, topics=topics)
    return conn.call(request, OffsetDeleteResponse, version=version)


def delete_groups(
    conn: KafkaConnection, groups: Sequence[str], *, version: int | None = None
) -> DeleteGroupsResponse:
    """DeleteGroups of ``groups``."""
    request = DeleteGroupsRequest(groups_names=tuple(groups))
    return conn.call(request, DeleteGroupsResponse, version=version)
