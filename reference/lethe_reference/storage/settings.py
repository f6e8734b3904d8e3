"""The topic settings the storage engine reads, as a protocol any config object can meet.

Theory of operation
-------------------
Storage code never parses configuration: it reads a handful of typed values
off whatever object the broker hands it. :class:`LogSettings` names them
(Kafka's topic config key in each docstring), so the broker's full topic
config, :class:`lethe_reference.config.log_config.LogConfig`, satisfies it
structurally (checked by mypy below), and :class:`StorageSettings` is a small
frozen implementation with Kafka 4.0's defaults (kafka-facts 4.5) for tests
and embedded use.

Two values are derived the way Kafka's ``LogConfig`` derives them:

* ``compact`` / ``delete``: whether ``cleanup.policy`` lists ``compact`` /
  ``delete`` (``compact,delete`` sets both);
* :func:`max_segment_ms`: ``segment.ms``, replaced by
  ``min(segment.ms, max.compaction.lag.ms)`` for compacted topics
  (``LogConfig.maxSegmentMs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from lethe_formats.model import TimestampType

if TYPE_CHECKING:
    from lethe_reference.config.log_config import LogConfig

__all__ = ["LogSettings", "StorageSettings", "max_segment_ms"]

LONG_MAX = 2**63 - 1


class LogSettings(Protocol):
    """Read-only topic settings used by segments, logs and retention."""

    @property
    def segment_bytes(self) -> int:
        """``segment.bytes``."""
        ...

    @property
    def segment_ms(self) -> int:
        """``segment.ms``."""
        ...

    @property
    def segment_jitter_ms(self) -> int:
        """``segment.jitter.ms``."""
        ...

    @property
    def segment_index_bytes(self) -> int:
        """``segment.index.bytes``."""
        ...

    @property
    def index_interval_bytes(self) -> int:
        """``index.interval.bytes``."""
        ...

    @property
    def retention_ms(self) -> int:
        """``retention.ms`` (-1: unlimited)."""
        ...

    @property
    def retention_bytes(self) -> int:
        """``retention.bytes`` (-1: unlimited)."""
        ...

    @property
    def file_delete_delay_ms(self) -> int:
        """``file.delete.delay.ms``."""
        ...

    @property
    def max_message_bytes(self) -> int:
        """``max.message.bytes``."""
        ...

    @property
    def max_compaction_lag_ms(self) -> int:
        """``max.compaction.lag.ms``."""
        ...

    @property
    def message_timestamp_type(self) -> TimestampType:
        """``message.timestamp.type``."""
        ...

    @property
    def message_timestamp_before_max_ms(self) -> int:
        """``message.timestamp.before.max.ms``."""
        ...

    @property
    def message_timestamp_after_max_ms(self) -> int:
        """``message.timestamp.after.max.ms``."""
        ...

    @property
    def compression_type(self) -> str:
        """``compression.type``: ``producer``, ``uncompressed`` or a codec name."""
        ...

    @property
    def tombstone_flag_enable(self) -> bool:
        """``tombstone.flag.enable`` (KIP-87 extension): record attribute bit 0 is kept
        through every rewrite and marks a tombstone for the cleaner."""
        ...

    @property
    def compact(self) -> bool:
        """``cleanup.policy`` contains ``compact``."""
        ...

    @property
    def delete(self) -> bool:
        """``cleanup.policy`` contains ``delete``."""
        ...


@dataclass(frozen=True, slots=True)
class StorageSettings:
    """A :class:`LogSettings` with Kafka 4.0's defaults (kafka-facts 4.5)."""

    segment_bytes: int = 1073741824
    segment_ms: int = 604800000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10485760
    index_interval_bytes: int = 4096
    retention_ms: int = 604800000
    retention_bytes: int = -1
    file_delete_delay_ms: int = 60000
    max_message_bytes: int = 1048588
    max_compaction_lag_ms: int = LONG_MAX
    message_timestamp_type: TimestampType = TimestampType.CREATE_TIME
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = 3600000  # KIP-1030, 4.0
    compression_type: str = "producer"
    cleanup_policy: tuple[str, ...] = ("delete",)
    tombstone_flag_enable: bool = False  # KIP-87 extension, off as in Kafka

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy


def max_segment_ms(settings: LogSettings) -> int:
    """``segment.ms``, capped by ``max.compaction.lag.ms`` on compacted topics."""
    if settings.compact and settings.max_compaction_lag_ms > 0:
        return min(settings.max_compaction_lag_ms, settings.segment_ms)
    return settings.segment_ms


if TYPE_CHECKING:

    def _log_config_is_log_settings(config: LogConfig) -> LogSettings:
        return config  # a static proof: mypy fails here if LogConfig stops matching
