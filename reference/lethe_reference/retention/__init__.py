"""Time, size and log-start-offset retention of partition logs (kafka-facts 1.3, 5).

``policies.delete_old_segments(log)`` is what Kafka's ``kafka-log-retention``
task (and, for compacted topics, the cleaner thread) runs per log;
``deletable`` holds the rules every deletion shares; ``pending`` removes the
``.deleted`` files after ``file.delete.delay.ms``. Import from the submodules.
"""
