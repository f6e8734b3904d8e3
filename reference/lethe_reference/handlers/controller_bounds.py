"""How much one CreateTopics / CreatePartitions request may ask of the controller.

Theory of operation
-------------------
Kafka 4.0's controller refuses operations that would write too many metadata
records at once, with two limits of 10,000 (``ReplicationControlManager`` and
``QuorumController``); lethe applies both, with Kafka's codes and messages, and
checks them before anything is changed:

* CreateTopics: the partitions the request asks for, summed over the topics
  that reach the controller (not duplicated, authorized; ``-1`` counts as
  ``num.partitions``, manual assignments count their entries), above
  :data:`MAX_PARTITIONS_PER_BATCH` fail the whole request with POLICY_VIOLATION
  ``Excessively large number of partitions per request.``
  (``validateTotalNumberOfPartitions``, before any name is checked). Past that,
  the records of the topics that pass their checks (1 + configs + partitions
  each) above ``MAX_RECORDS_PER_USER_OP`` fail the whole request with
  POLICY_VIOLATION ``Unable to perform excessively large batch operation.``
  (a ``BoundedListTooLongException`` escaping the controller event).
* CreatePartitions: the new partitions of all topics share one budget of
  ``MAX_RECORDS_PER_USER_OP`` records, taken in request order
  (:class:`RecordBudget`). The topic whose partitions overflow it gets
  UNKNOWN_SERVER_ERROR with no message (Kafka catches the
  ``BoundedListTooLongException`` as an unexpected error), and so does every
  later topic that passed its checks, since Kafka's list is then full.

Measured on Kafka 4.0.0 (growing a 1-partition topic to 20,000 partitions):
the response is UNKNOWN_SERVER_ERROR with a null message, and the topic then
has 10,001 partitions: Kafka commits the 10,000 records that fit before the
overflow although it reported a failure. lethe answers the same bytes but
changes nothing for the failed topic (catalog KIP694-ERR-9): a client
told "failed" must not find half an operation done, and the reference broker
must not make a partial commit look like conformant behaviour.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from lethe_formats.protocol.broker_errors import error_for_code
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.create_topics import CreatableTopic

from lethe_reference.handlers.topic_creation import MAX_RECORDS_PER_USER_OP

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "MAX_PARTITIONS_PER_BATCH",
    "TOO_MANY_PARTITIONS",
    "RecordBudget",
    "check_partitions_per_request",
]

#: ``ReplicationControlManager.MAX_PARTITIONS_PER_BATCH``.
MAX_PARTITIONS_PER_BATCH = 10_000
TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."


def requested_partitions(topics: Iterable[CreatableTopic], default_partitions: int) -> int:
    """The upper bound Kafka computes before checking anything else."""
    total = 0
    for topic in topics:
        if topic.assignments:
            total += len(topic.assignments)
        elif topic.num_partitions == -1:
            total += default_partitions
        elif topic.num_partitions > 0:
            total += topic.num_partitions
    return total


def check_partitions_per_request(broker: Broker, topics: Iterable[CreatableTopic]) -> None:
    """POLICY_VIOLATION for the whole request when it asks for too many partitions."""
    default = broker.config.get_int("num.partitions")
    if requested_partitions(topics, default) > MAX_PARTITIONS_PER_BATCH:
        raise error_for_code(ErrorCode.POLICY_VIOLATION, TOO_MANY_PARTITIONS)


class RecordBudget:
    """The records one controller operation may still write (module docstring)."""

    def __init__(self, limit: int = MAX_RECORDS_PER_USER_OP) -> None:
        self.left = limit

    def take(self, records: int) -> bool:
        """Reserve ``records``; False (and the budget exhausted) when they do not fit."""
        if records > self.left:
            self.left = 0
            return False
        self.left -= records
        return True
