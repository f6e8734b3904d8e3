"""Creating the logs of new partitions as a background job, one log per step.

Theory of operation
-------------------
CreateTopics and CreatePartitions commit the metadata first (the registry file
is rewritten at once, as Kafka's controller commits its records), then the logs
are created by a :class:`LogCreation` job (:mod:`lethe_reference.background`),
one partition per step, so a topic of 10,000 partitions never holds the event
loop for more than a few milliseconds at a time. The request is answered once
its job has finished (the handler defers it), so a client that saw the
creation succeed finds every log in place.

Each step re-reads the registry: a topic deleted (or re-created under another
id, or reduced by KIP-694) while its job was queued ends the job, and no log is
created for a partition the registry no longer has. The order (metadata
before logs) is what makes an interrupted job harmless: at the next startup
the broker creates the missing logs of every registered partition.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lethe_formats.storage.kafka_uuid import KafkaUuid

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["LogCreation"]


class LogCreation:
    """Create the logs ``first .. end-1`` of ``topic`` (registered as ``topic_id``)."""

    def __init__(
        self,
        broker: Broker,
        topic: str,
        topic_id: KafkaUuid,
        partitions: range,
        *,
        on_finish: Callable[[], None] | None = None,
    ) -> None:
        self.broker = broker
        self.topic = topic
        self.topic_id = topic_id
        self.name = f"create-logs {topic} {partitions.start}..{partitions.stop - 1}"
        self._next = partitions.start
        self._stop = partitions.stop
        self._on_finish = on_finish

    @property
    def remaining(self) -> int:
        """Logs this job has still to create (at most)."""
        return max(0, self._stop - self._next)

    def step(self) -> bool:
        info = self.broker.metadata.get(self.topic)
        if info is None or info.topic_id != self.topic_id:
            return True  # deleted meanwhile: nothing left to create
        stop = min(self._stop, info.partitions)
        if self._next < stop:
            self.broker.log_manager.create_log(self.topic, self._next, topic_id=self.topic_id)
            self.broker.lead_new_partitions(info, range(self._next, self._next + 1))
            self._next += 1
        if self._next < stop:
            return False
        if self._on_finish is not None:
            self._on_finish()
        return True
