"""Explicit Spark schemas of the audit's tables: the contract between decoding and checks.

Theory of operation
-------------------
``lethe audit`` decodes Kafka log directories inside Spark tasks into rows of
the tables below and writes each table as Parquet under ``--out/<table>/``.
The checks (``lethe_tools.audit.checks``) read only these columns, so the
schemas are spelled out here, once, instead of being inferred from data: a
column a check relies on cannot silently change type or disappear.

Conventions shared by every table:

* ``file`` is the absolute path of the file a row was decoded from, as the
  executors see it; ``position`` is an absolute byte offset in that file.
* Offsets, positions, sizes and timestamps are ``long`` (timestamps are epoch
  milliseconds exactly as stored, ``-1`` = none; never Spark timestamps, so no
  time zone or precision is involved). Kafka's small integers (partition,
  magic, attributes, epochs, sequences, counts) are ``int``.
* Nullable means "not applicable or not present", documented per column;
  ``-1`` is kept where Kafka itself stores ``-1``.
* ``topic`` / ``partition`` come from the partition directory name
  (``lethe_formats.storage.filenames.parse_partition_dir_name``).

Tables (one row per ...):

``partitions``   partition directory (any of live/-delete/-stray/-future), with the
                 root checkpoints' entries for it joined in
``segments``     ``.log`` file (live or ``.deleted``/``.cleaned``/``.swap``)
``batches``      log entry: a magic-2 batch or a magic 0/1 message (wrapper)
``records``      record: magic-2 record or legacy (inner) message
``indexes``      entry of an ``.index``, ``.timeindex`` or ``.txnindex`` file
``checkpoints``  entry of a checkpoint file (root offset checkpoints and the
                 per-partition ``leader-epoch-checkpoint``)
``offsets``      offset-commit record (key type 0/1) of a ``__consumer_offsets`` partition
``problems``     anything that could not be decoded or read: file, position, field,
                 kind (the error class), message
"""

from __future__ import annotations

from pyspark.sql.types import (
    BooleanType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

__all__ = [
    "BATCHES",
    "CHECKPOINTS",
    "INDEXES",
    "OFFSETS",
    "PARTITIONS",
    "PROBLEMS",
    "RECORDS",
    "SEGMENTS",
    "TABLES",
    "schema_of",
]


def _schema(*columns: tuple[str, DataType, bool]) -> StructType:
    return StructType([StructField(name, kind, nullable) for name, kind, nullable in columns])


_S, _I, _L, _B = StringType(), IntegerType(), LongType(), BooleanType()

#: One row per partition directory found under a log dir.
PARTITIONS = _schema(
    ("logdir", _S, False),  # the LOGDIR argument the directory was found under
    ("path", _S, False),  # the partition directory
    ("topic", _S, False),
    ("partition", _I, False),
    ("dir_kind", _S, False),  # "live", "delete", "stray" or "future"
    ("unique_id", _S, True),  # the uniqueId of a -delete/-stray/-future dir, else null
    ("topic_id", _S, True),  # from partition.metadata; null when absent or unreadable
    ("segment_count", _I, False),  # .log files, any extra suffix included
    ("log_bytes", _L, False),  # sum of the .log files' sizes
    ("first_base_offset", _L, True),  # smallest live segment base offset; null without one
    ("active_base_offset", _L, True),  # largest live segment base offset (the active segment)
    ("log_start_offset", _L, True),  # log-start-offset-checkpoint entry, null when none
    ("recovery_point", _L, True),  # recovery-point-offset-checkpoint entry
    ("high_watermark", _L, True),  # replication-offset-checkpoint entry
    ("cleaner_offset", _L, True),  # cleaner-offset-checkpoint entry (first dirty offset)
)

#: One row per .log file. Figures are what a scan of the file found.
SEGMENTS = _schema(
    ("logdir", _S, False),
    ("topic", _S, False),
    ("partition", _I, False),
    ("file", _S, False),
    ("base_offset", _L, False),  # from the file name
    ("extra_suffix", _S, False),  # "" for a live segment, else ".deleted"/".cleaned"/".swap"
    ("is_active", _B, False),  # the live segment with the largest base offset
    ("size", _L, False),  # file size in bytes
    ("modified_ms", _L, False),  # file modification time, epoch ms
    ("valid_bytes", _L, False),  # bytes up to the end of the last well-formed entry
    ("batch_count", _I, False),
    ("record_count", _L, False),  # records (magic 2) + messages (inner ones for wrappers)
    ("first_offset", _L, True),  # first batch's base offset; null for an empty segment
    ("last_offset", _L, True),  # last batch's last offset
    ("min_timestamp", _L, True),  # smallest batch max_timestamp that is not -1
    ("max_timestamp", _L, True),  # largest batch max_timestamp (Kafka's segment largest ts)
    ("crc_failures", _I, False),  # batches whose stored CRC does not match
    ("scan_error", _S, True),  # the message of the error that ended the scan, else null
)

#: One row per log entry: a magic-2 batch or a magic 0/1 message (a wrapper for
#: compressed legacy sets). For magic 0/1, base_offset is the first inner offset,
#: producer fields are -1 and delete_horizon is null.
BATCHES = _schema(
    ("topic", _S, False),
    ("partition", _I, False),
    ("file", _S, False),
    ("segment_base_offset", _L, False),
    ("position", _L, False),  # byte position of the entry in the .log file
    ("size", _I, False),  # bytes of the entry, the 12-byte log overhead included
    ("base_offset", _L, False),
    ("last_offset", _L, False),
    ("magic", _I, False),
    ("attributes", _I, False),  # raw attribute bits
    ("compression", _S, False),  # "none", "gzip", "snappy", "lz4", "zstd"
    ("timestamp_type", _S, False),  # "CreateTime", "LogAppendTime", "NoTimestampType"
    ("is_control", _B, False),
    ("is_transactional", _B, False),
    ("delete_horizon", _L, True),  # KIP-534: base_timestamp when attribute bit 6 is set
    ("base_timestamp", _L, False),  # magic 0/1: the message timestamp (-1 for magic 0)
    ("max_timestamp", _L, False),
    ("producer_id", _L, False),
    ("producer_epoch", _I, False),
    ("base_sequence", _I, False),
    ("partition_leader_epoch", _I, False),
    ("records_count", _I, False),  # stored count (magic 2) or inner message count
    ("crc", _L, False),  # stored CRC as an unsigned 32-bit value
    ("crc_ok", _B, False),
)

#: One row per record. Legacy (magic 0/1) inner messages are records too, with
#: headers_count 0 and record_attributes their message attributes.
RECORDS = _schema(
    ("topic", _S, False),
    ("partition", _I, False),
    ("file", _S, False),
    ("segment_base_offset", _L, False),
    ("batch_position", _L, False),  # position of the record's batch in the file
    ("offset", _L, False),
    ("timestamp", _L, False),  # effective timestamp (LogAppendTime: the batch max)
    ("key_hash", _L, True),  # XXH64 (seed 0) of the key bytes, signed; null for a null key
    ("key_size", _I, False),  # -1 for a null key
    ("value_size", _I, False),  # -1 for a null value
    ("is_tombstone", _B, False),  # null value, Kafka's definition
    ("is_control", _B, False),
    ("control_type", _I, True),  # ControlRecordType of a control record (0 ABORT, 1 COMMIT, ..)
    ("headers_count", _I, False),
    ("record_attributes", _I, False),  # magic 2: the record's own byte (KIP-87 bit 0)
    ("magic", _I, False),
    ("is_transactional", _B, False),
    ("producer_id", _L, False),
    ("delete_horizon", _L, True),  # the batch's KIP-534 horizon, null when bit 6 is unset
)

#: One row per index entry. kind picks which columns are set.
INDEXES = _schema(
    ("topic", _S, False),
    ("partition", _I, False),
    ("file", _S, False),  # the index file
    ("kind", _S, False),  # "index", "timeindex" or "txnindex"
    ("segment_base_offset", _L, False),
    ("entry", _I, False),  # 0-based entry number
    ("position", _L, False),  # byte position of the entry in the index file
    ("offset", _L, True),  # index/timeindex: base + relative offset (absolute)
    ("log_position", _L, True),  # index: byte position in the .log it points at
    ("timestamp", _L, True),  # timeindex: the indexed max timestamp
    ("producer_id", _L, True),  # txnindex: aborted transaction
    ("first_offset", _L, True),  # txnindex
    ("last_offset", _L, True),  # txnindex
    ("last_stable_offset", _L, True),  # txnindex
)

#: One row per checkpoint entry (a checkpoint with no entries gives no row; a
#: file that cannot be read gives a problem instead).
CHECKPOINTS = _schema(
    ("logdir", _S, False),
    ("file", _S, False),
    ("kind", _S, False),  # the file name, e.g. "log-start-offset-checkpoint"
    ("version", _I, True),
    ("topic", _S, False),  # for leader-epoch-checkpoint: from its partition directory
    ("partition", _I, False),
    ("offset", _L, True),  # offset checkpoints: the entry's offset
    ("epoch", _I, True),  # leader-epoch-checkpoint: the epoch
    ("start_offset", _L, True),  # leader-epoch-checkpoint: the epoch's start offset
)

#: One row per offset-commit record (key types 0/1) in a __consumer_offsets
#: partition, tombstones included; the latest record per (group, topic,
#: partition) by log_offset is the committed state.
OFFSETS = _schema(
    ("file", _S, False),
    ("coordinator_partition", _I, False),  # partition of __consumer_offsets
    ("log_offset", _L, False),  # offset of the record in __consumer_offsets
    ("record_timestamp", _L, False),
    ("is_transactional", _B, False),  # written by a transactional producer (sendOffsetsToTxn)
    ("producer_id", _L, False),
    ("key_version", _I, False),  # 0 or 1 (the record type)
    ("group", _S, False),
    ("topic", _S, False),
    ("partition", _I, False),
    ("is_tombstone", _B, False),  # null value: the committed offset was deleted
    ("value_version", _I, True),  # 0-4; null for a tombstone
    ("committed_offset", _L, True),
    ("leader_epoch", _I, True),  # -1 when none (v3+), null before v3
    ("metadata", _S, True),
    ("commit_timestamp", _L, True),
    ("expire_timestamp", _L, True),  # v1 only (-1 = none), null otherwise
)

#: One row per problem found while discovering or decoding.
PROBLEMS = _schema(
    ("file", _S, False),
    ("position", _L, True),  # absolute byte position; null when the file as a whole failed
    ("field", _S, True),
    ("kind", _S, False),  # the error class, e.g. "ChecksumError", "TruncatedError"
    ("message", _S, False),
    ("topic", _S, True),
    ("partition", _I, True),
    ("stage", _S, False),  # "discover", "segment", "records", "index", "checkpoint", ...
)

#: Table name -> schema, in the order the job writes them.
TABLES: dict[str, StructType] = {
    "partitions": PARTITIONS,
    "segments": SEGMENTS,
    "batches": BATCHES,
    "records": RECORDS,
    "indexes": INDEXES,
    "checkpoints": CHECKPOINTS,
    "offsets": OFFSETS,
    "problems": PROBLEMS,
}


def schema_of(table: str) -> StructType:
    """The schema of ``table``; KeyError names the tables that exist."""
    try:
        return TABLES[table]
    except KeyError:
        raise KeyError(f"no audit table {table!r}; tables: {', '.join(TABLES)}") from None
