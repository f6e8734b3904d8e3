"""KIP-848 consumer groups (``group.protocol=consumer``), sans-IO.

Modules, bottom up: ``assignors`` (``uniform``, ``range``), ``member`` (a
member and its reconciliation), ``group`` (epochs, target, state), ``api``
(request and result values), ``persistence`` (records 3-8), ``heartbeat``
(ConsumerGroupHeartbeat, timers) and ``logic`` (ConsumerGroupDescribe and the
requests shared with classic groups).
:class:`~lethe_reference.cluster.group.GroupCoordinator` includes ``logic`` as
its top layer.

What Kafka 4.0 does and lethe does not (decisions; the requirement catalog covers
the KIP profiles only, so they are recorded here):

* **Persistence** is Kafka's: records 3-8 in ``__consumer_offsets``
  (``persistence``), written before each answer, replayed on load. lethe does not
  claim the same records byte for byte (Kafka's order of members and topics
  inside a batch follows its hash maps).
* **Mixed groups.** ``group.consumer.migration.policy`` (Kafka's default
  ``bidirectional``) is not served: a non-empty classic group is not upgraded
  (GROUP_ID_NOT_FOUND "Cannot upgrade classic group ... online upgrade is
  disabled.", Kafka's answer under policy ``disabled``) and a classic JoinGroup
  to a non-empty consumer group is INCONSISTENT_GROUP_PROTOCOL.
* **Regex subscriptions** (SubscribedTopicRegex, v1) are served: Python's ``re``
  stands in for RE2J, matching whole names, resolved at each heartbeat rather
  than by Kafka's asynchronous refresh (so a new matching topic is seen at the
  next heartbeat, not after Kafka's refresh interval).
* **Rack-aware assignment**: rack ids are kept and described, not used (Kafka
  4.0's uniform assignor does not use them either for the homogeneous case).
* **Heterogeneous uniform assignment** (members with different subscriptions)
  is balanced and sticky like Kafka's but computed differently, so a result can
  differ; homogeneous groups and ``range`` give Kafka's results.
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
