"""The reference broker's storage engine: segments, logs, recovery, log directories.

Split as Kafka splits ``storage/internals/log`` (one concept per module, each
with its own theory of operation); plain objects over files, no asyncio, no
sockets, time from an injected :class:`~lethe_reference.clock.Clock`. Import
from the submodules. Layers, bottom up::

    offset_index, time_index   in-memory .index / .timeindex (Kafka's rules, no mmap)
    segment_state              index + roll bookkeeping of one segment; shared with
                               lethe_tools.fixturegen, so ONE implementation lays out
                               segments byte-identical to Kafka's
    file_records               the .log file: append, pread, shallow/deep scans
    file_region                a slice of it read on demand (a Fetch's records,
                               sent with sendfile by the server)
    segment, segment_reads     LogSegment on disk; offset/timestamp lookups, reads
    segments                   base offset -> segment, ordered
    validator, rebuild         producer batch checks; offsets patched in place
    leader_epoch               leader-epoch cache + leader-epoch-checkpoint
    log, log_reads             PartitionLog (UnifiedLog): append, roll, HW, log start
                               offset, flush; Fetch reads and ListOffsets lookups
    log_types                  the log's edge types (AppendResult, deleter, reasons)
    transactions               open/completed transactions (producer state): the last
                               stable offset and the .txnindex entries of aborts
    producer_state             idempotent producers (sans-IO): duplicates, epochs,
                               sequences, expiry, snapshot rows in Kafka's order
    producer_snapshots         .snapshot files: take, delete, load and replay (the
                               ProducerStateManager's file side, rebuildProducerState)
    loader                     startup: temp files, swaps, recovery (LogLoader)
    log_manager                a log dir: partitions, root checkpoints, shutdown
    settings, errors           the config the engine reads; typed Kafka errors

Main entry points::

    LogManager(log_dir, clock=, settings_for=).startup() / .create_log(topic, p)
    PartitionLog.append_as_leader(batch_bytes, leader_epoch) -> AppendResult
    PartitionLog.maybe_increment_log_start_offset(offset, reason) -> bool
    log_reads.read(log, fetch_offset, max_bytes, isolation=, as_region=) -> FetchData
    log_reads.offset_for_timestamp(log, timestamp, isolation=) -> TimestampAndOffset | None
    retention.policies.delete_old_segments(log) -> int

Errors are :class:`~.errors.LogError` subclasses carrying Kafka's error name
and code.
"""
