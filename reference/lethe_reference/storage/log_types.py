"""The values a :class:`~.log.PartitionLog` exchanges with its callers.

Theory of operation
-------------------
:mod:`.log` holds the log's behaviour; these are the plain types at its
edges, kept apart so the log module stays one readable unit:

* :class:`LogStartOffsetIncrementReason`: why the log start offset moved
  (Kafka's ``LogStartOffsetIncrementReason``, kafka-facts 1.6). Its value is
  the wording Kafka's log line uses ("Incremented log start offset to N due
  to client delete records request").
* :class:`SegmentDeleter`: what removes ``.deleted`` segment files once
  ``file.delete.delay.ms`` has passed (the log manager's pending deletions
  stand for Kafka's one-shot ``delete-file`` tasks).
* :class:`AppendResult`: what one append reports back (``LogAppendInfo``),
  i.e. what a ProduceResponse partition needs.

:mod:`.log` re-exports all three, so ``from lethe_reference.storage.log
import AppendResult`` keeps working.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from lethe_reference.storage.segment import LogSegment

__all__ = ["AppendResult", "LogStartOffsetIncrementReason", "SegmentDeleter"]


class LogStartOffsetIncrementReason(enum.Enum):
    """Why the log start offset moved; the value is Kafka's log wording (kafka-facts 1.6)."""

    LEADER_OFFSET_INCREMENTED = "leader offset increment"
    SEGMENT_DELETION = "segment deletion"
    CLIENT_RECORD_DELETION = "client delete records request"
    SNAPSHOT_GENERATED = "snapshot generated"

    def __str__(self) -> str:
        return self.value


class SegmentDeleter(Protocol):
    """Removes ``.deleted`` segment files once ``due_ms`` has passed."""

    def schedule(self, segments: Sequence[LogSegment], due_ms: int) -> None: ...


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What a ProduceResponse partition needs (``LogAppendInfo``)."""

    first_offset: int
    last_offset: int
    #: The broker time of a LogAppendTime topic, else -1.
    log_append_time: int
    log_start_offset: int
    max_timestamp: int
    #: True: a retried batch of an idempotent producer; nothing was appended and
    #: the offsets are the original batch's (``log_append_time``: its max timestamp).
    duplicate: bool = False
