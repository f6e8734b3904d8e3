"""lethe's opt-in extensions, their switches, and the configs a switched-off one hides.

Theory of operation
-------------------
KIP-68, KIP-87 and KIP-694 were never adopted, so a broker that has not been
told to run them must look exactly like Kafka 4.0 to every client and tool:
``kafka-configs --describe --all`` must not list their configs, and a client
that names one of their topic configs must be refused as Kafka refuses any
unknown name (CreateTopics, AlterConfigs, IncrementalAlterConfigs:
``INVALID_CONFIG``, ``Unknown topic config name: <name>``). Each extension has
one static broker switch, off by default::

    lethe.kip68.enable              KIP-68 consumed retention: the topic configs
                                    retention.commitoffset.{enable,ms,minutes,
                                    hours} and their
                                    log.retention.commitoffset.* broker defaults
    lethe.kip87.enable              KIP-87 tombstone flag: the topic config
                                    tombstone.flag.enable, broker default
                                    log.tombstone.flag.enable
    delete.topic.partition.enable   KIP-694 partition reduction (the KIP's own
                                    switch): the DeletePartitions API (key 10694),
                                    partition modes in Metadata, and
                                    delete.topic.partition.interval.delay.ms

While a switch is off its configs (the switch included) are unknown names to
the broker: left out of DescribeConfigs, refused on topics, and listed like any
unknown name when set in ``server.properties`` (Kafka lists what its file
holds); an override a topic kept from a run with the switch on has no effect.
Switched on, they are ordinary configs (catalog *-CFG-1; a target offers the
profile exactly then, *-DISC-1). This module is data: :class:`BrokerConfig`
asks it which names to hide.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["EXTENSIONS", "Extension", "hidden_broker_configs", "hidden_topic_configs"]


@dataclass(frozen=True, slots=True)
class Extension:
    """One extension profile: its switch and the configs it adds."""

    profile: str
    switch: str
    topic_configs: tuple[str, ...]
    #: broker configs besides the switch
    broker_configs: tuple[str, ...]


EXTENSIONS: tuple[Extension, ...] = (
    Extension(
        "kip68",
        "lethe.kip68.enable",
        (
            "retention.commitoffset.enable",
            "retention.commitoffset.ms",
            "retention.commitoffset.minutes",
            "retention.commitoffset.hours",
        ),
        (
            "log.retention.commitoffset.enable",
            "log.retention.commitoffset.ms",
            "log.retention.commitoffset.minutes",
            "log.retention.commitoffset.hours",
        ),
    ),
    Extension(
        "kip87", "lethe.kip87.enable", ("tombstone.flag.enable",), ("log.tombstone.flag.enable",)
    ),
    Extension(
        "kip694",
        "delete.topic.partition.enable",
        (),
        ("delete.topic.partition.interval.delay.ms",),
    ),
)


def _off(enabled: Callable[[str], bool]) -> list[Extension]:
    return [extension for extension in EXTENSIONS if not enabled(extension.switch)]


def hidden_topic_configs(enabled: Callable[[str], bool]) -> frozenset[str]:
    """Topic configs of the extensions whose switch ``enabled`` says is off."""
    return frozenset(name for ext in _off(enabled) for name in ext.topic_configs)


def hidden_broker_configs(enabled: Callable[[str], bool]) -> frozenset[str]:
    """Broker configs (switches included) of the extensions that are off."""
    return frozenset(name for ext in _off(enabled) for name in (ext.switch, *ext.broker_configs))
