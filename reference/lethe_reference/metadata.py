"""The broker's topic registry: names, ids, partition counts and config overrides.

Theory of operation
-------------------
In KRaft Kafka this is the metadata image replayed from ``__cluster_metadata``:
``TopicRecord`` (name, id), ``PartitionRecord`` per partition, ``ConfigRecord``
per topic override. The reference broker is a single node that is its own
controller, so the image is a plain dict kept by :class:`TopicRegistry`:

* ``TopicInfo.topic_id`` is a Kafka ``Uuid`` (16 random bytes, base64 in text),
  never the zero Uuid, fixed at creation and written to every partition's
  ``partition.metadata`` by the log manager;
* ``TopicInfo.partitions`` only grows (CreatePartitions);
* ``TopicInfo.configs`` holds the topic's *overrides* as strings, exactly as
  CreateTopics / AlterConfigs accepted them; effective values come from
  :func:`lethe_reference.config.effective_log_config` with the broker config.

Durability. The logs themselves carry names, ids and partition counts (the
partition directories and ``partition.metadata``), so :meth:`TopicRegistry.rebuild`
recovers those from the log manager at startup (after :meth:`TopicRegistry.load`
read the saved overrides, so the logs load with their own configs). Config overrides have no place
in Kafka's log-dir files (they live in ``__cluster_metadata``), so the registry
saves them in a small JSON file at the log-dir root, :data:`METADATA_FILE`
(a dot file that no Kafka tool reads; written atomically).

KIP-694 (an opt-in extension, :mod:`lethe_reference.partitions`): a topic's
partitions that are not ReadWrite (``TopicInfo.modes``) and its pending
reduction (``TopicInfo.reduction``) stand for Kafka's ``PartitionRecord.Mode``
and ``DeleteTopicPartitionsRecord``; they are saved in the same file as the
overrides, so a reduction survives a restart. ``partitions`` stays the old
count until the removed partitions are deleted.

Broker epoch. A KRaft broker's epoch is the metadata-log offset of its
``RegisterBrokerRecord``: it grows with every registration (startup) and is
what a clean shutdown writes into ``.kafka_cleanshutdown``. The registry
stands for that log, so it keeps ``broker_epoch`` in the same file and
:meth:`TopicRegistry.register_broker` raises it at every startup.

Leadership. Each partition's leader and leader epoch (``PartitionRecord``'s
``leader``/``leaderEpoch``) are kept per topic as
:class:`~lethe_reference.leadership.Leadership` values in the same file, so
the epoch a restart raises (:mod:`lethe_reference.leadership`) is durable; a
partition without an entry is led at epoch 0, as a new partition is.

Internal topics (``__consumer_offsets``, ``__transaction_state``) are flagged
``internal`` as Kafka does (``Topic.isInternal``), which Metadata reports.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from lethe_formats.storage.atomic import write_atomically
from lethe_formats.storage.kafka_uuid import KafkaUuid

from lethe_reference.leadership import Leadership, leadership_from_json, leadership_to_json
from lethe_reference.partitions.state import (
    PartitionMode,
    Reduction,
    modes_from_json,
    modes_to_json,
)

__all__ = [
    "CONSUMER_OFFSETS",
    "INTERNAL_TOPICS",
    "MAX_NAME_LENGTH",
    "METADATA_FILE",
    "TRANSACTION_STATE",
    "TopicInfo",
    "TopicRegistry",
    "new_topic_id",
    "topic_name_problem",
]

CONSUMER_OFFSETS = "__consumer_offsets"
TRANSACTION_STATE = "__transaction_state"
INTERNAL_TOPICS = frozenset({CONSUMER_OFFSETS, TRANSACTION_STATE})
METADATA_FILE = ".lethe-topics.json"


MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]*")


def topic_name_problem(name: str) -> str | None:
    """Why ``name`` is not a legal topic name (``Topic.detectInvalidTopic``), or None.

    Kafka checks, in order: empty, ``.``, ``..``, longer than 249 (Java
    ``String.length()``, i.e. UTF-16 code units), a character outside
    ``[a-zA-Z0-9._-]``. Callers prefix ``"Topic name is invalid: "``.
    """
    if not name:
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name.encode("utf-16-le", "surrogatepass")) // 2 > MAX_NAME_LENGTH:
        return f"the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
    if _LEGAL.fullmatch(name) is None:
        return (
            f"'{name}' contains one or more characters other than "
            "ASCII alphanumerics, '.', '_' and '-'"
        )
    return None


def new_topic_id() -> KafkaUuid:
    """``Uuid.randomUuid()``: 16 random bytes, never zero (Kafka also skips ids
    whose base64 starts with '-', which command-line tools would read as a flag)."""
    while True:
        candidate = KafkaUuid(os.urandom(16))
        if not candidate.is_zero and not str(candidate).startswith("-"):
            return candidate


@dataclass(frozen=True)
class TopicInfo:
    """One topic as the controller knows it."""

    name: str
    topic_id: KafkaUuid
    partitions: int
    configs: Mapping[str, str] = field(default_factory=dict)
    #: KIP-694: partitions that are not ReadWrite, and the pending reduction.
    modes: Mapping[int, PartitionMode] = field(default_factory=dict)
    reduction: Reduction | None = None
    #: Leader and leader epoch per partition (absent: led at epoch 0).
    leadership: Mapping[int, Leadership] = field(default_factory=dict)

    @property
    def internal(self) -> bool:
        return self.name in INTERNAL_TOPICS

    def mode(self, partition: int) -> PartitionMode:
        return self.modes.get(partition, PartitionMode.READ_WRITE)

    def leader_epoch(self, partition: int) -> int:
        found = self.leadership.get(partition)
        return 0 if found is None else found.leader_epoch


class TopicRegistry:
    """Topics by name and by id; see the module docstring."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._by_name: dict[str, TopicInfo] = {}
        #: topic id -> the name it last resolved to; checked on every use (see by_id)
        self._names_by_id: dict[KafkaUuid, str] = {}
        #: This broker's registration epoch (module docstring); 0 before the first startup.
        self.broker_epoch = 0
        #: Grows with every change (stands for the metadata log offset Kafka reports).
        self.epoch = 1

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[TopicInfo]:
        return iter(sorted(self._by_name.values(), key=lambda t: t.name))

    def __len__(self) -> int:
        return len(self._by_name)

    def get(self, name: str) -> TopicInfo | None:
        return self._by_name.get(name)

    def by_id(self, topic_id: KafkaUuid) -> TopicInfo | None:
        """The topic with this id. Every Fetch v13+ asks per topic, so the name an id
        last resolved to is remembered and checked against the registry on each use
        (a deleted or re-created topic fails the check and is looked up again)."""
        info = self._by_name.get(self._names_by_id.pop(topic_id, ""))
        if info is not None and info.topic_id == topic_id:
            self._names_by_id[topic_id] = info.name
            return info
        found = next((t for t in self._by_name.values() if t.topic_id == topic_id), None)
        if found is not None:
            self._names_by_id[topic_id] = found.name
        return found

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def creation_order(self) -> list[str]:
        """Topic names in the order they were added (as saved, after a restart)."""
        return list(self._by_name)

    def add(self, info: TopicInfo) -> TopicInfo:
        if info.name in self._by_name:
            raise ValueError(f"topic {info.name!r} exists")
        self._by_name[info.name] = info
        self.save()
        return info

    def remove(self, name: str) -> TopicInfo | None:
        info = self._by_name.pop(name, None)
        self.save()
        return info

    def set_partitions(self, name: str, count: int) -> TopicInfo:
        info = replace(self._by_name[name], partitions=count)
        self._by_name[name] = info
        self.save()
        return info

    def set_reduction(
        self, name: str, reduction: Reduction | None, modes: Mapping[int, PartitionMode]
    ) -> TopicInfo:
        """Record (or, with None, finish) a KIP-694 reduction and the partitions' modes."""
        kept = {p: m for p, m in modes.items() if m is not PartitionMode.READ_WRITE}
        info = replace(self._by_name[name], reduction=reduction, modes=kept)
        self._by_name[name] = info
        self.save()
        return info

    def set_leadership(self, name: str, states: Mapping[int, Leadership]) -> TopicInfo:
        """Record new leaders and epochs of ``name``'s partitions (others keep theirs)."""
        info = self._by_name[name]
        info = replace(info, leadership={**info.leadership, **states})
        self._by_name[name] = info
        self.save()
        return info

    def leader_epoch(self, topic: str, partition: int) -> int:
        """The partition's leader epoch (0 for an unknown topic or a new partition)."""
        info = self._by_name.get(topic)
        return 0 if info is None else info.leader_epoch(partition)

    def set_configs(self, name: str, configs: Mapping[str, str]) -> TopicInfo:
        info = replace(self._by_name[name], configs=dict(configs))
        self._by_name[name] = info
        self.save()
        return info

    # --- durability ------------------------------------------------------------------

    def load(self) -> list[str]:
        """Read :data:`METADATA_FILE` as it was saved (before the logs are loaded, so
        each log is recovered with its topic's own config); returns the names."""
        self._by_name.clear()
        for name, entry in self._load_saved().items():
            topic_id = _saved_id(entry)
            count = entry.get("partitions")
            if topic_id is None or not isinstance(count, int):
                continue
            self._by_name[name] = TopicInfo(
                name,
                topic_id,
                count,
                _saved_configs(entry),
                modes_from_json(entry.get("modes")),
                Reduction.from_json(entry.get("reduction")),
                leadership_from_json(entry.get("leadership")),
            )
        return self.names()

    def rebuild(
        self, partitions: Mapping[str, int], topic_ids: Mapping[str, KafkaUuid]
    ) -> list[str]:
        """Reconcile what :meth:`load` read with the logs found on disk; returns the names.

        The logs decide which topics exist: ``partitions`` maps topic -> highest
        partition number + 1 seen on disk, ``topic_ids`` the ids read from
        ``partition.metadata``. A saved entry contributes its overrides and a
        higher partition count only when its id matches (a topic deleted and
        re-created elsewhere must not inherit them). A topic without
        ``partition.metadata`` keeps its saved id, or gets a new one.
        """
        saved = dict(self._by_name)
        self._by_name.clear()
        for name, on_disk in sorted(partitions.items()):
            entry = saved.get(name)
            topic_id = topic_ids.get(name) or (entry.topic_id if entry else None) or new_topic_id()
            if entry is not None and entry.topic_id == topic_id:
                info = replace(entry, partitions=max(on_disk, entry.partitions))
            else:
                info = TopicInfo(name, topic_id, on_disk, {})
            self._by_name[name] = info
        self.save()
        return self.names()

    def register_broker(self) -> int:
        """A new broker epoch, above every one handed out before (module docstring)."""
        self.broker_epoch += 1
        self.save()
        return self.broker_epoch

    def _load_saved(self) -> dict[str, dict[str, object]]:
        if self.path is None or not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        epoch = data.get("broker_epoch") if isinstance(data, dict) else None
        self.broker_epoch = epoch if isinstance(epoch, int) and epoch >= 0 else 0
        topics = data.get("topics") if isinstance(data, dict) else None
        return {str(k): v for k, v in topics.items() if isinstance(v, dict)} if topics else {}

    def save(self) -> None:
        """Persist and count a change (every mutation ends here)."""
        self.epoch += 1
        if self.path is None:
            return
        topics = {t.name: _entry(t) for t in self}
        saved = {"version": 1, "topics": topics, "broker_epoch": self.broker_epoch}
        text = json.dumps(saved, indent=1, sort_keys=True)
        write_atomically(self.path, text.encode("utf-8"))


def _entry(info: TopicInfo) -> dict[str, object]:
    entry: dict[str, object] = {
        "id": str(info.topic_id),
        "partitions": info.partitions,
        "configs": dict(info.configs),
    }
    if info.modes:
        entry["modes"] = modes_to_json(info.modes)
    if info.reduction is not None:
        entry["reduction"] = info.reduction.to_json()
    if info.leadership:
        entry["leadership"] = leadership_to_json(info.leadership)
    return entry


def _saved_configs(entry: Mapping[str, object]) -> dict[str, str]:
    raw = entry.get("configs")
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}


def _saved_id(entry: Mapping[str, object] | None) -> KafkaUuid | None:
    if entry is None or not isinstance(entry.get("id"), str):
        return None
    try:
        return KafkaUuid.from_string(str(entry["id"]))
    except ValueError:
        return None
