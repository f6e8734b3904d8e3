"""Creating topics as Kafka 4.0's KRaft controller does: checks, messages, results.

Theory of operation
-------------------
Shared by CreateTopics (:mod:`.topics`) and Metadata auto-creation
(:mod:`.metadata`). :func:`plan_topic` runs the checks of
``ReplicationControlManager.createTopics`` / ``createTopic`` for one topic, in
Kafka's order, and either returns a :class:`TopicPlan` or raises
:class:`TopicError` with Kafka's code and message:

1. name (``Topic.validate``): INVALID_TOPIC_EXCEPTION 17
   ``Topic name is invalid: <reason>``; a name that differs from an existing
   one only in '.' vs '_': ``Topic '<a.b>' collides with existing topic: <a_b>``;
2. TOPIC_ALREADY_EXISTS 36 ``Topic '<name>' already exists.``;
3. configs: a null value, INVALID_CONFIG 40 ``Null value not supported for topic
   configs: a,b``; then the config module's validation (unknown name, bad value);
4. manual assignments (replication factor and partition count must be -1,
   INVALID_REQUEST 42; each replica list non-empty, on registered brokers, no
   broker twice, same size for every partition, partitions 0..n-1:
   INVALID_REPLICA_ASSIGNMENT 39), else replication factor < -1 or 0
   (INVALID_REPLICATION_FACTOR 38), partitions < -1 or 0 (INVALID_PARTITIONS 37),
   and placement: a replication factor above the number of brokers (here 1) is
   INVALID_REPLICATION_FACTOR ``Unable to replicate the partition N time(s): The
   target replication factor of N cannot be reached because only 1 broker(s) are
   registered.`` (-1 takes ``num.partitions`` / ``default.replication.factor``).

:func:`effective_configs` is ``KafkaConfigSchema.resolveEffectiveTopicConfigs``,
what CreateTopics v5+ returns: every topic config sorted by name, its value and
source taken from the first of: the topic's own string (TOPIC_CONFIG 1), a broker
synonym in the dynamic per-broker layer (2), the dynamic cluster default (3),
the static file (4), converted to the topic unit; else the topic config's default
(DEFAULT_CONFIG 5). Unlike DescribeConfigs there are no synonym lists and no
normalisation of the topic's own strings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference.cluster.membership import member_of
from lethe_reference.config import ConfigError, ConfigSource, validate_topic_configs
from lethe_reference.config.topic import TOPIC_CONFIG_DEF, TOPIC_SYNONYMS
from lethe_reference.metadata import CONSUMER_OFFSETS, TRANSACTION_STATE, topic_name_problem

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "MAX_RECORDS_PER_USER_OP",
    "EffectiveConfig",
    "TopicError",
    "TopicPlan",
    "check_new_name",
    "effective_configs",
    "internal_topic_plan",
    "plan_topic",
]

#: ``QuorumController.MAX_RECORDS_PER_USER_OP``: one request may not need more
#: metadata records (a topic is 1 + configs + partitions records).
MAX_RECORDS_PER_USER_OP = 10000


class TopicError(Exception):
    """A topic-level failure with Kafka's error code and message."""

    def __init__(self, code: ErrorCode, message: str | None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class TopicPlan:
    """A topic that passed every check: what would be created."""

    name: str
    partitions: int
    replication_factor: int
    configs: dict[str, str]

    @property
    def records(self) -> int:
        """Metadata records Kafka would write (TopicRecord, ConfigRecords, PartitionRecords)."""
        return 1 + len(self.configs) + self.partitions


@dataclass(frozen=True)
class EffectiveConfig:
    name: str
    value: str | None
    source: ConfigSource


def check_new_name(broker: Broker, name: str) -> None:
    """Steps 1 and 2 of the module docstring."""
    problem = topic_name_problem(name)
    if problem is not None:
        raise TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {problem}")
    if name in broker.metadata:
        raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
    if "." in name or "_" in name:
        unified = name.replace(".", "_")
        for other in broker.metadata.names():
            if other.replace(".", "_") == unified:
                raise TopicError(
                    ErrorCode.INVALID_TOPIC_EXCEPTION,
                    f"Topic '{name}' collides with existing topic: {other}",
                )


def _check_configs(broker: Broker, configs: Sequence[tuple[str, str | None]]) -> dict[str, str]:
    nulls = [name for name, value in configs if value is None]
    if nulls:
        raise TopicError(
            ErrorCode.INVALID_CONFIG,
            "Null value not supported for topic configs: " + ",".join(nulls),
        )
    checked = {name: value for name, value in configs if value is not None}
    try:
        validate_topic_configs(checked, broker.config)
    except ConfigError as error:
        raise TopicError(ErrorCode[error.error_name], error.message) from None
    return checked


def _manual(broker: Broker, assignments: Sequence[tuple[int, Sequence[int]]]) -> tuple[int, int]:
    """(partitions, replication factor) of a manual assignment, checked."""
    seen: dict[int, int] = {}
    factor: int | None = None
    for index, replicas in assignments:
        if index in seen:
            raise _bad_assignment(
                f"Found multiple manual partition assignments for partition {index}"
            )
        if not replicas:
            raise _bad_assignment("The manual partition assignment includes an empty replica list.")
        previous = None
        for broker_id in sorted(replicas):
            if broker_id != broker.node_id:
                raise _bad_assignment(
                    f"The manual partition assignment includes broker {broker_id}, "
                    "but no such broker is registered."
                )
            if broker_id == previous:
                raise _bad_assignment(
                    "The manual partition assignment includes the broker "
                    f"{broker_id} more than once."
                )
            previous = broker_id
        if factor is not None and len(replicas) != factor:
            raise _bad_assignment(
                f"The manual partition assignment includes a partition with {len(replicas)} "
                "replica(s), but this is not consistent with previous partitions, which have "
                f"{factor} replica(s)."
            )
        factor = len(replicas)
        seen[index] = factor
    if any(i not in seen for i in range(len(seen))):
        raise _bad_assignment("partitions should be a consecutive 0-based integer sequence")
    return len(seen), factor or 0


def _bad_assignment(message: str) -> TopicError:
    return TopicError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, message)


def plan_topic(
    broker: Broker,
    name: str,
    *,
    num_partitions: int,
    replication_factor: int,
    configs: Sequence[tuple[str, str | None]] = (),
    assignments: Sequence[tuple[int, Sequence[int]]] = (),
) -> TopicPlan:
    """Every check of the module docstring, in order; the plan or a TopicError."""
    check_new_name(broker, name)
    checked = _check_configs(broker, configs)
    if assignments:
        if replication_factor != -1:
            raise TopicError(
                ErrorCode.INVALID_REQUEST,
                "A manual partition assignment was specified, but replication "
                "factor was not set to -1.",
            )
        if num_partitions != -1:
            raise TopicError(
                ErrorCode.INVALID_REQUEST,
                "A manual partition assignment was specified, but numPartitions was not set to -1.",
            )
        partitions, factor = _manual(broker, assignments)
        return TopicPlan(name, partitions, factor, checked)
    if replication_factor < -1 or replication_factor == 0:
        raise TopicError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            "Replication factor must be larger than 0, or -1 to use the default value.",
        )
    if num_partitions < -1 or num_partitions == 0:
        raise TopicError(
            ErrorCode.INVALID_PARTITIONS,
            "Number of partitions was set to an invalid non-positive value.",
        )
    partitions = broker.config.get_int("num.partitions") if num_partitions == -1 else num_partitions
    factor = (
        broker.config.get_int("default.replication.factor")
        if replication_factor == -1
        else replication_factor
    )
    _place(factor, registered_brokers(broker))
    return TopicPlan(name, partitions, factor, checked)


def registered_brokers(broker: Broker) -> int:
    """Brokers the controller may place replicas on: 1, or the live members of an
    in-process cluster."""
    member = member_of(broker)
    return 1 if member is None else len(member.controller.alive)


def _place(factor: int, brokers: int = 1) -> None:
    """``StripedReplicaPlacer.place`` on a cluster of ``brokers`` live brokers."""
    if factor <= 0:
        reason = f"Invalid replication factor {factor}: the replication factor must be positive."
    elif factor > brokers:
        reason = (
            f"The target replication factor of {factor} cannot be reached because only "
            f"{brokers} broker(s) are registered."
        )
    else:
        return
    raise TopicError(
        ErrorCode.INVALID_REPLICATION_FACTOR,
        f"Unable to replicate the partition {factor} time(s): {reason}",
    )


def internal_topic_plan(broker: Broker, name: str) -> TopicPlan:
    """``AutoTopicCreationManager.creatableTopic`` for the internal topics."""
    config = broker.config
    if name == CONSUMER_OFFSETS:
        configs = {
            "cleanup.policy": "compact",
            "compression.type": "producer",
            "segment.bytes": str(config.get_int("offsets.topic.segment.bytes")),
        }
        partitions = config.get_int("offsets.topic.num.partitions")
        factor = config.get_int("offsets.topic.replication.factor")
    elif name == TRANSACTION_STATE:
        configs = {
            "cleanup.policy": "compact",
            "compression.type": "uncompressed",
            "min.insync.replicas": str(config.get_int("transaction.state.log.min.isr")),
            "segment.bytes": str(config.get_int("transaction.state.log.segment.bytes")),
            "unclean.leader.election.enable": "false",
        }
        partitions = config.get_int("transaction.state.log.num.partitions")
        factor = config.get_int("transaction.state.log.replication.factor")
    else:
        raise ValueError(f"{name} is not an internal topic")
    check_new_name(broker, name)
    _place(factor, registered_brokers(broker))
    return TopicPlan(name, partitions, factor, configs)


def effective_configs(broker: Broker, overrides: Mapping[str, str]) -> list[EffectiveConfig]:
    """``resolveEffectiveTopicConfigs`` (module docstring), sorted by name."""
    layers = (
        (broker.config.dynamic_broker, ConfigSource.DYNAMIC_BROKER_CONFIG),
        (broker.config.dynamic_default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        (broker.config.static, ConfigSource.STATIC_BROKER_CONFIG),
    )
    hidden = broker.config.hidden_topic_configs  # switched-off extensions: not Kafka's
    return [
        _effective(name, overrides, layers)
        for name in sorted(TOPIC_CONFIG_DEF.names())
        if name not in hidden
    ]


def _effective(
    name: str,
    overrides: Mapping[str, str],
    layers: tuple[tuple[Mapping[str, str], ConfigSource], ...],
) -> EffectiveConfig:
    if name in overrides:
        return EffectiveConfig(name, overrides[name], ConfigSource.TOPIC_CONFIG)
    for layer, source in layers:
        for synonym in TOPIC_SYNONYMS.get(name, ()):
            if synonym.name in layer:
                raw = layer[synonym.name]
                value = raw if synonym.factor == 1 else str(int(raw.strip()) * synonym.factor)
                return EffectiveConfig(name, value, source)
    return EffectiveConfig(
        name, TOPIC_CONFIG_DEF.key(name).default_string(), ConfigSource.DEFAULT_CONFIG
    )
