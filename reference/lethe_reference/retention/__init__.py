"""Time, size and log-start-offset retention of partition logs (kafka-facts 1.3, 5).

Modules::

    policies     delete_old_segments(log): LSO breach, retention.bytes, retention.ms,
                 in Kafka's order (only the LSO breach without cleanup.policy=delete)
    deletable    the shared rules: prefix only, HW >= upper bound, never an empty
                 last segment, roll first when all go, LSO := next remaining base
    pending      PendingDeletions: .deleted files removed after file.delete.delay.ms,
                 driven by the clock (delete_due_files(now_ms))
    consumed     KIP-68 extension (off unless retention.commitoffset.enable): consumed
                 segments older than retention.commitoffset.ms, below the min committed
                 offset of all groups, between the LSO breach and retention.bytes
    committed    the broker's min committed offsets per pass, from the group coordinator

Kafka runs these from the ``kafka-log-retention`` task (and the cleaner thread
for compacted logs); here the broker's scheduler calls
``LogManager.cleanup_logs`` and ``LogManager.delete_due_files``.
"""
