"""What goes into the consumer-group logic and what comes out: plain frozen values.

The handler maps topic ids to names (and back) at the edge; here topics are
names. ``owned`` is None when the heartbeat did not list the owned partitions
(null: unchanged), a mapping (possibly empty) when it did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from lethe_reference.cluster.group import codes

__all__ = [
    "ConsumerConfig",
    "ConsumerHeartbeat",
    "ConsumerHeartbeatResult",
    "DescribedConsumerGroup",
    "DescribedConsumerMember",
]

Partitions = Mapping[str, frozenset[int]]


@dataclass(frozen=True, slots=True)
class ConsumerConfig:
    """Broker settings of consumer groups (Kafka 4.0 defaults)."""

    heartbeat_interval_ms: int = 5000
    session_timeout_ms: int = 45000
    #: ``group.consumer.assignors``: the first is the default
    assignors: tuple[str, ...] = ("uniform", "range")
    max_size: int = 2**31 - 1


@dataclass(frozen=True, slots=True)
class ConsumerHeartbeat:
    group_id: str
    member_id: str
    member_epoch: int
    client_id: str = ""
    client_host: str = ""
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Partitions | None = None
    api_version: int = 1


@dataclass(frozen=True, slots=True)
class ConsumerHeartbeatResult:
    error_code: int
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    #: the member's partitions, when the response carries them
    assignment: Partitions | None = None


@dataclass(frozen=True, slots=True)
class DescribedConsumerMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    assignment: Partitions
    target_assignment: Partitions


@dataclass(frozen=True, slots=True)
class DescribedConsumerGroup:
    group_id: str
    error_code: int = codes.NONE
    error_message: str | None = None
    state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[DescribedConsumerMember, ...] = field(default=())
