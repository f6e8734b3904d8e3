"""KIP-848 consumer groups (``group.protocol=consumer``), sans-IO.

Modules, bottom up: ``assignors`` (``uniform``, ``range``), ``member`` (a
member and its reconciliation), ``group`` (epochs, target, state), ``api``
(request and result values), ``heartbeat`` (ConsumerGroupHeartbeat, timers)
and ``logic`` (ConsumerGroupDescribe and the requests shared with classic
groups). :class:`~lethe_reference.cluster.group.GroupCoordinator` includes
``logic`` as its top layer.
"""

from __future__ import annotations

from lethe_reference.cluster.group.consumer.api import (
    ConsumerConfig,
    ConsumerHeartbeat,
    ConsumerHeartbeatResult,
    DescribedConsumerGroup,
    DescribedConsumerMember,
)
from lethe_reference.cluster.group.consumer.assignors import ASSIGNORS, DEFAULT_ASSIGNOR
from lethe_reference.cluster.group.consumer.group import ConsumerGroup
from lethe_reference.cluster.group.consumer.logic import CONSUMER_PROTOCOL_TYPE, ConsumerGroupLogic
from lethe_reference.cluster.group.consumer.member import ConsumerMember, MemberState

__all__ = [
    "ASSIGNORS",
    "CONSUMER_PROTOCOL_TYPE",
    "DEFAULT_ASSIGNOR",
    "ConsumerConfig",
    "ConsumerGroup",
    "ConsumerGroupLogic",
    "ConsumerHeartbeat",
    "ConsumerHeartbeatResult",
    "ConsumerMember",
    "DescribedConsumerGroup",
    "DescribedConsumerMember",
    "MemberState",
]
