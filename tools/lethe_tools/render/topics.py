"""``lethe topics --describe`` lines, as Kafka 4.0's ``TopicCommand`` prints them.

Theory of operation
-------------------
One topic line, then one line per partition sorted by partition id, fields
separated by TABs (``TopicDescription`` / ``PartitionDescription.printDescription``)::

    Topic: t|TopicId: Q2z...|PartitionCount: 2|ReplicationFactor: 1|Configs: k=v,...
    |Topic: t|Partition: 0|Leader: 1|Replicas: 1|Isr: 1|Elr: N/A|LastKnownElr: N/A

    (``|`` is a TAB)

* ``TopicId`` is left out when the id is all zeros (a broker below Metadata v10).
* ``ReplicationFactor`` is the replica count of the lowest partition.
* ``Configs`` lists the entries whose source is not ``DEFAULT_CONFIG``, in the
  broker's order, ``name=value`` joined by commas (a static broker setting such
  as ``segment.bytes`` counts as set, as in Kafka's output).
* ``Leader`` is ``none`` without a leader; ``Replicas`` and ``Isr`` are node ids
  joined by commas.
* ``Elr``/``LastKnownElr``: lethe describes topics with Metadata, which carries
  no eligible leader replicas; Kafka's admin then builds ``TopicPartitionInfo``
  without them and the tool prints ``N/A``.
* KIP-694 (lethe extension): a partition whose mode is not ReadWrite gets
  ``<TAB>Mode: ReadOnly`` or ``<TAB>Mode: None`` at the end of its line; a
  ReadWrite partition's line is exactly Kafka's (KIP694-DISC-3).
"""

from __future__ import annotations

from collections.abc import Iterable

from lethe_formats.protocol.messages.metadata import MetadataResponseTopic

from lethe_tools.kafka_client.topic_admin import ConfigEntry

__all__ = ["MODE_NAMES", "describe_lines"]

#: KIP-694 partition modes (KIP694-MODE-1).
MODE_NAMES = {0: "ReadWrite", 1: "ReadOnly", -1: "None"}
_ZERO_ID = "AAAAAAAAAAAAAAAAAAAAAA"


def describe_lines(
    topic: MetadataResponseTopic, configs: Iterable[ConfigEntry], topic_id: str
) -> list[str]:
    """The topic line and its partition lines (no trailing newlines)."""
    partitions = sorted(topic.partitions, key=lambda p: p.partition_index)
    name = topic.name or ""
    overrides = ",".join(f"{c.name}={c.value}" for c in configs if not c.is_default)
    head = f"Topic: {name}"
    if topic_id != _ZERO_ID:
        head += f"\tTopicId: {topic_id}"
    factor = len(partitions[0].replica_nodes) if partitions else 0
    head += f"\tPartitionCount: {len(partitions)}\tReplicationFactor: {factor}"
    head += f"\tConfigs: {overrides}"
    lines = [head]
    for p in partitions:
        leader = str(p.leader_id) if p.leader_id >= 0 else "none"
        line = (
            f"\tTopic: {name}\tPartition: {p.partition_index}\tLeader: {leader}"
            f"\tReplicas: {_ids(p.replica_nodes)}\tIsr: {_ids(p.isr_nodes)}"
            "\tElr: N/A\tLastKnownElr: N/A"
        )
        if p.mode != 0:
            line += f"\tMode: {MODE_NAMES.get(p.mode, str(p.mode))}"
        lines.append(line)
    return lines


def _ids(nodes: Iterable[int]) -> str:
    return ",".join(str(n) for n in nodes)
