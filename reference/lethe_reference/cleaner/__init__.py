"""The log cleaner (compaction) of the reference broker, as Kafka 4.0's ``LogCleaner``.

Split as DESIGN says (theory of operation in each module)::

    algorithm   pure round: offset map, groups, cleaned segments  (Cleaner.doClean)
      filter      per-chunk batch/record retention, delete horizon (MemoryRecords.filterTo)
      rebuild     rewriting a changed batch                        (buildRetainedRecordsInto)
      txn_state   aborted/committed transactions and markers       (CleanedTransactionMetadata)
      offset_map  key -> latest offset, and its build              (SkimpyOffsetMap)
      source      a segment as data; covering, aborted txns, checks
      entries     chunked entry reads with typed errors
    producers   active producers and the last stable offset, from the log
    logview     a live PartitionLog as the algorithm's inputs
    swap        .cleaned -> .swap -> live, old files .deleted      (replaceSegments)
    manager     which log, cleanable range, cleaner-offset-checkpoint (LogCleanerManager)
    service     the periodic cleaner task and clean_now()          (LogCleaner)

Public entry point: :class:`LogCleaner` (``broker.cleaner``), with
``clean_now() -> int``; the pure round is :func:`clean_log`.
"""

from lethe_reference.cleaner.algorithm import CleanParams, CleanResult, SourceSegment, clean_log
from lethe_reference.cleaner.filter import LastRecord, TombstonePredicate, default_is_tombstone
from lethe_reference.cleaner.manager import CLEANER_CHECKPOINT_FILE, CleanerManager
from lethe_reference.cleaner.service import LogCleaner

__all__ = [
    "CLEANER_CHECKPOINT_FILE",
    "CleanParams",
    "CleanResult",
    "CleanerManager",
    "LastRecord",
    "LogCleaner",
    "SourceSegment",
    "TombstonePredicate",
    "clean_log",
    "default_is_tombstone",
]
