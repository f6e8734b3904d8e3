"""``lethe topics --alter --partitions N`` below the current count: KIP-694's reduction.

Theory of operation
-------------------
KIP-694 ("Kafka Topic Command changes") lets ``--partitions`` go below the
current count and adds ``--delete-partitions-delay`` (milliseconds, default 0 =
delete at once); the tool then sends DeletePartitions (key 10694, catalog
KIP694-API-1/2) with the new total count (KIP694-CLI-1)::

    ApiVersions lists 10694? --no--> DISABLED warning, error line, exit 1
        | yes
    keyed records?  --yes--> KEYED warning (the reduction still goes ahead)
        |
    DeletePartitions(count=N, delay_ms=MS, immediate_delete = MS == 0)
        |
    stdout: "Partitions 3,4 of topic t: deleted."            (status -1, None)
            "Partitions 3,4 of topic t: read-only, deleted after 60000 ms."  (status 1)
            ("Partition 3 of ..." when one partition goes)

The warnings are the KIP's own sentences, on stderr (KIP694-CLI-2):

* **under change** — the Metadata answer shows a partition of the topic whose
  mode is not ReadWrite (ReadOnly: a delayed reduction is pending; None: being
  deleted). Checked before every ``--alter``, growing or shrinking; the request
  is still sent and the broker's answer (INVALID_PARTITIONS, KIP694-ERR-5)
  decides, since the pending deletion may end in between.
* **feature disabled** — the broker does not list DeletePartitions in
  ApiVersions (KIP694-DISC-1/2: it does not while
  ``delete.topic.partition.enable`` is false, and a stock Kafka never does).
  Nothing is sent; the command fails naming the topic and the API.
* **keyed records** — the topic "holds keyed records" when either its
  ``cleanup.policy`` includes ``compact`` (a compacted topic only takes keyed
  records) or a sample of its data has a record with a key: per partition, the
  first 64 KiB from the log start, one Fetch to the leader
  (:meth:`~lethe_tools.kafka_client.topic_admin.TopicCaller.holds_keys`).
  Keys are what tie records to partitions (``hash(key) % count``), so these
  are the topics whose ordering the reduction breaks. A key that only appears
  past the sample is not seen: reading every partition in full is not
  something a topic command should do.
"""

from __future__ import annotations

import sys
from typing import TextIO

from lethe_formats.protocol.messages.delete_partitions import DELETE_PARTITIONS_API_KEY
from lethe_formats.protocol.messages.metadata import MetadataResponseTopic

from lethe_tools.commands.topics import TopicCommandError, _call
from lethe_tools.kafka_client.topic_admin import TopicCaller

__all__ = [
    "DISABLED_WARNING",
    "KEYED_WARNING",
    "UNDER_CHANGE_WARNING",
    "reduce",
    "warn_if_under_change",
]

KEYED_WARNING = (
    "WARNING: If partitions are increased for a topic that has a key, the partition logic "
    "or ordering of the messages will be affected"
)
DISABLED_WARNING = (
    "WARNING: This feature is only enabled with Metadata version above 10 and "
    "delete.topic.partition.enable turned on"
)
UNDER_CHANGE_WARNING = "WARNING: The topic is currently under changes"
_READ_ONLY, _NONE = 1, -1


def warn_if_under_change(topic: MetadataResponseTopic, err: TextIO) -> bool:
    """Print the under-change warning when a partition is not ReadWrite; True if printed."""
    if any(p.mode != 0 for p in topic.partitions):
        print(UNDER_CHANGE_WARNING, file=err)
        return True
    return False


def reduce(caller: TopicCaller, topic: MetadataResponseTopic, count: int, delay_ms: int) -> int:
    """Reduce ``topic`` to ``count`` partitions (see the module docstring); exit status."""
    name = topic.name or ""
    if not caller.supports(DELETE_PARTITIONS_API_KEY):
        print(DISABLED_WARNING, file=sys.stderr)
        raise TopicCommandError(
            f"Topic '{name}': the broker does not offer DeletePartitions (API key "
            f"{DELETE_PARTITIONS_API_KEY}, KIP-694), so the topic cannot go from "
            f"{len(topic.partitions)} to {count} partitions"
        )
    if _holds_keys(caller, topic):
        print(KEYED_WARNING, file=sys.stderr)
    modes: dict[int, int] = _call(
        name, caller.delete_partitions, name, count, delay_ms, _timeout(caller)
    )
    print(_summary(name, modes, delay_ms))
    return 0


def _timeout(caller: TopicCaller) -> int:
    return caller.admin.config.default_api_timeout_ms


def _holds_keys(caller: TopicCaller, topic: MetadataResponseTopic) -> bool:
    name = topic.name or ""
    for entry in _call(name, caller.configs, name):
        if entry.name == "cleanup.policy" and "compact" in (entry.value or "").split(","):
            return True
    return caller.holds_keys(topic)


def _summary(name: str, modes: dict[int, int], delay_ms: int) -> str:
    deleted = [p for p, mode in sorted(modes.items()) if mode == _NONE]
    pending = [p for p, mode in sorted(modes.items()) if mode == _READ_ONLY]
    parts = []
    if deleted:
        parts.append(f"{_ids(deleted)} of topic {name}: deleted.")
    if pending:
        parts.append(f"{_ids(pending)} of topic {name}: read-only, deleted after {delay_ms} ms.")
    return " ".join(parts) or f"Topic {name}: no partition removed."


def _ids(partitions: list[int]) -> str:
    noun = "Partition" if len(partitions) == 1 else "Partitions"
    return f"{noun} " + ",".join(str(p) for p in partitions)
