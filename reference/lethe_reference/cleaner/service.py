"""The broker's log cleaner: Kafka's cleaner thread as a scheduled task (``LogCleaner``).

Theory of operation
-------------------
Kafka runs ``log.cleaner.threads`` (1) ``CleanerThread`` s when
``log.cleaner.enable`` is true. Each loops: clean the filthiest log
(:mod:`.manager`), then run ``deleteOldSegments`` (retention and the log start
offset rule) on every compacted log; when there was nothing to clean it
sleeps ``log.cleaner.backoff.ms`` (15000). Here the thread is the scheduler
task ``kafka-log-cleaner-thread-0``, every backoff from startup (Kafka's thread
also looks once right at startup; lethe's first look is one backoff later, so
startup itself never rewrites a log and other tasks' timings stay put),
and each run cleans the filthiest log again and again until none qualifies
(bounded by the number of compacted logs, so a run always ends), then runs
segment deletion on the compacted logs. :meth:`LogCleaner.clean_now` does
the cleaning part at once, whatever the backoff (for tests and the
conformance control hook).

**One cleaning** (:meth:`LogCleaner.clean_log`): read the clock once (the
horizon of every batch of the round comes from it), gather the log's
segments and producer state (:mod:`.logview`), run the pure round
(:mod:`.algorithm`), write each cleaned group ``.cleaned`` and swap it in
(:mod:`.swap`), and checkpoint the end offset (``doneCleaning``).

**Failures.** Corrupt data (a typed FormatError naming file and position)
or any other error while cleaning a log is logged with that file and
position, the checkpoint is left where the cleaning started, and the log is
marked uncleanable so the broker keeps serving it untouched and never tries
it again until restart (``LogCleaningException`` ->
``markPartitionUncleanable``). Nothing is swapped in unless the whole round
succeeded, so no data is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from lethe_formats.errors import FormatError

from lethe_reference import faults
from lethe_reference.cleaner.algorithm import CleanParams, CleanResult, clean_log
from lethe_reference.cleaner.filter import TombstonePredicate
from lethe_reference.cleaner.logview import producer_scan, source_segments
from lethe_reference.cleaner.manager import CleanerManager, LogToClean
from lethe_reference.cleaner.offset_map import slots_for
from lethe_reference.cleaner.swap import replace_segments, write_cleaned_segment
from lethe_reference.config import BrokerConfig
from lethe_reference.retention.policies import delete_old_segments
from lethe_reference.scheduler import Scheduler
from lethe_reference.storage.log_manager import LogManager
from lethe_reference.storage.settings import LogSettings
from lethe_reference.storage.tombstones import (
    kafka_is_tombstone,
    record_attribute_mask,
    tombstone_predicate,
)

__all__ = ["TASK_NAME", "LogCleaner"]

_log = logging.getLogger("lethe_reference.cleaner")
TASK_NAME = "kafka-log-cleaner-thread-0"


class LogCleaner:
    """The cleaner of one log directory; see the module docstring."""

    def __init__(self, log_manager: LogManager, config: BrokerConfig) -> None:
        self.log_manager = log_manager
        self.config = config
        self.manager = CleanerManager(log_manager)
        #: Builds ``is_tombstone(record, magic)`` from a log's settings (KIP-87 hook):
        #: Kafka's null-value rule, plus bit 0 where ``tombstone.flag.enable`` is on.
        self.tombstone_predicate_for: Callable[[LogSettings], TombstonePredicate] = (
            tombstone_predicate
        )
        self.rounds = 0
        self._scheduler: Scheduler | None = None

    @property
    def enabled(self) -> bool:
        return self.config.get_bool("log.cleaner.enable")

    @property
    def backoff_ms(self) -> int:
        return self.config.get_int("log.cleaner.backoff.ms")

    # --- scheduling -----------------------------------------------------------------------

    def start(self, scheduler: Scheduler) -> None:
        """Create an empty ``cleaner-offset-checkpoint`` if missing and queue the cleaner
        task, as Kafka's ``LogCleaner`` does when ``log.cleaner.enable`` (else nothing)."""
        self._scheduler = scheduler
        if self.enabled:
            self.manager.ensure_checkpoint_file()
            period = max(self.backoff_ms, 1)
            scheduler.schedule(TASK_NAME, period, self.run_task, period_ms=period)

    def reconfigure(self, config: BrokerConfig) -> None:
        """A dynamic broker config change: Kafka restarts its cleaner threads with
        the new values (``LogCleaner.reconfigure``); here the task is queued again
        when the backoff changed."""
        old_backoff = self.backoff_ms
        self.config = config
        scheduler = self._scheduler
        if scheduler is not None and self.backoff_ms != old_backoff:
            scheduler.cancel(TASK_NAME)
            self.start(scheduler)

    def run_task(self) -> None:
        """One wake-up of the cleaner thread: clean while work remains, then delete."""
        self.clean_now()
        self.delete_old_segments()

    def delete_old_segments(self) -> int:
        """``deleteOldSegments`` on every compacted log the cleaner may touch."""
        deleted = 0
        committed = self.log_manager.min_committed_offsets()  # KIP-68 hook, as in cleanup_logs
        for key, log in self.manager.compacted_logs():
            try:
                deleted += delete_old_segments(log, committed.get(*key))
            except Exception:
                _log.exception("Segment deletion failed for %s-%d; marking it uncleanable", *key)
                self.manager.mark_uncleanable(key)
        return deleted

    # --- cleaning -------------------------------------------------------------------------

    def clean_now(self) -> int:
        """Clean every cleanable log, filthiest first; returns how many were cleaned.
        Nothing happens when ``log.cleaner.enable`` is false: Kafka then has no cleaner."""
        if not self.enabled:
            return 0
        self.manager.forget_vanished()
        attempted: set[tuple[str, int]] = set()
        cleaned = 0
        for _ in range(len(self.log_manager.logs) + 1):
            now = self.log_manager.clock.now_ms()
            candidates = [
                c for c in self.manager.cleanable_logs(now) if c.topic_partition not in attempted
            ]
            if not candidates:
                break
            target = candidates[0]
            attempted.add(target.topic_partition)
            if self.clean_log(target) is not None:
                cleaned += 1
        return cleaned

    def clean_log(self, target: LogToClean) -> CleanResult | None:
        """One round on ``target``; None when it failed (the log is then uncleanable)."""
        key, log = target.topic_partition, target.log
        now = self.log_manager.clock.now_ms()
        _log.info("Cleaner 0: Beginning cleaning of log %s", log.name)
        try:
            params = self._params(target, now)
            if faults.active(log, "cleaner-ignores-delete-retention"):
                params = replace(params, delete_retention_ms=0)
            if faults.active(log, "cleaner-forgets-active-producers"):
                params = replace(params, active_producers={})
            if faults.active(log, "tombstone-flag-ignored-by-cleaner"):
                params = replace(params, is_tombstone=kafka_is_tombstone)
            if faults.active(log, "tombstone-flag-cleared-by-cleaner"):
                params = replace(params, record_attribute_mask=0)
            result = clean_log(source_segments(log), params)
            for cleaned in result.segments:
                old = [log.segments.get(base) for base in cleaned.replaces]
                new = write_cleaned_segment(log, cleaned)
                replace_segments(log, [new], [s for s in old if s is not None])
        except FormatError as error:
            _log.error(
                "Cleaner 0: log %s is corrupt at %s position %s (%s): %s; marking it uncleanable",
                log.name,
                error.file,
                error.position,
                error.field,
                error.message,
            )
            self._fail(key, target.first_dirty_offset)
            return None
        except Exception:
            _log.exception(
                "Cleaner 0: unexpected error cleaning %s; marking it uncleanable", log.name
            )
            self._fail(key, target.first_dirty_offset)
            return None
        self.manager.update_checkpoint(key, result.end_offset)
        self.rounds += 1
        _log.info(
            "Cleaner 0: cleaned log %s (dirty section = [%d, %d]); %d messages in, %d out",
            log.name,
            target.first_dirty_offset,
            result.end_offset,
            result.messages_read,
            result.messages_written,
        )
        return result

    def _fail(self, key: tuple[str, int], start_offset: int) -> None:
        # doneCleaning(startOffset) runs in Kafka's finally block, then the mark.
        try:
            self.manager.update_checkpoint(key, start_offset)
        finally:
            self.manager.mark_uncleanable(key)

    def _params(self, target: LogToClean, now: int) -> CleanParams:
        log, config = target.log, self.config
        settings = log.settings
        expiration = config.get_int("producer.id.expiration.ms")
        threads = max(config.get_int("log.cleaner.threads"), 1)
        factor = config.value("log.cleaner.io.buffer.load.factor")
        assert isinstance(factor, float)
        return CleanParams(
            first_dirty_offset=target.first_dirty_offset,
            first_uncleanable_offset=target.first_uncleanable_offset,
            now_ms=now,
            delete_retention_ms=int(getattr(settings, "delete_retention_ms", 86400000)),
            segment_bytes=settings.segment_bytes,
            max_index_bytes=settings.segment_index_bytes,
            index_interval_bytes=settings.index_interval_bytes,
            max_message_bytes=settings.max_message_bytes,
            active_producers=producer_scan(log, now_ms=now, expiration_ms=expiration).active,
            is_tombstone=self.tombstone_predicate_for(settings),
            record_attribute_mask=record_attribute_mask(settings),
            io_buffer_bytes=config.get_int("log.cleaner.io.buffer.size") // threads // 2,
            max_io_buffer_bytes=config.get_int("message.max.bytes"),
            map_slots=slots_for(config.get_int("log.cleaner.dedupe.buffer.size"), threads),
            map_load_factor=factor,
        )
