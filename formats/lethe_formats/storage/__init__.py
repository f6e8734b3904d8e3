"""Kafka's non-record on-disk files: names, indexes, snapshots, checkpoints, metadata.

Import from the submodules (this package re-exports nothing, so importing one
reader never drags in the others). Every reader takes the file's bytes (binary
formats) or a ``Source`` (text formats: an ``os.PathLike`` to read, ``bytes``,
or the decoded ``str``), plus ``file=`` to name it in errors. Errors are typed
:class:`~lethe_formats.errors.FormatError` s with absolute byte positions (and
1-based ``line`` for text files).

API summary
-----------
``filenames``
    ``segment_file_name(base_offset, suffix, extra_suffix="") -> str``
    ``parse_segment_file_name(name) -> SegmentFileName(base_offset, kind, extra_suffix)``
    ``parse_partition_dir_name(name) -> PartitionDirName(topic, partition, kind, unique_id)``
    ``partition_dir_name(topic, partition, kind=LIVE, unique_id=None) -> str``
    ``FileKind``, ``PartitionDirKind``, ``FileNameError``
``index``
    ``read_offset_index(data, *, file=None, stop_at_zero_entry=True, strict=False)``
    ``    -> tuple[OffsetIndexEntry, ...]``
    ``read_time_index(data, *, file=None, stop_at_zero_entry=True, strict=False)``
    ``    -> tuple[TimeIndexEntry, ...]``
    ``encode_offset_index(entries) -> bytes``, ``encode_time_index(entries) -> bytes``
    ``check_offset_index(data, *, base_offset=0, file=None) -> list[IndexProblem]``
    ``check_time_index(data, *, base_offset=0, file=None) -> list[IndexProblem]``
    (entries keep *relative* offsets; add the base offset from the file name)
``txn_index``
    ``read_txn_index(data, *, file=None, strict=False) -> tuple[AbortedTxn, ...]``
    ``encode_txn_index(entries) -> bytes``
    ``check_txn_index(data, *, base_offset=0, file=None) -> list[IndexProblem]``
``index_problems``
    ``IndexProblem(message, position, field, kafka_check, file)``; ``.as_error()``
``producer_snapshot``
    ``read_producer_snapshot(data, *, file=None) -> ProducerSnapshot(version, crc, entries)``
    ``encode_producer_snapshot(entries, *, version=1) -> bytes``
    ``kafka_dump_line(entry) -> str``; ``CorruptSnapshotError``, ``SnapshotChecksumError``
``checkpoint``
    ``read_offset_checkpoint(source, *, file=None) -> OffsetCheckpoint(version, entries)``
    ``read_leader_epoch_checkpoint(source, *, file=None) -> LeaderEpochCheckpoint``
    ``format_offset_checkpoint(entries, version=0) -> str``
    ``format_leader_epoch_checkpoint(entries, version=0) -> str``
    ``format_checkpoint(checkpoint) -> str``
    ``write_checkpoint_atomically(path, text)``, ``write_offset_checkpoint(path, entries)``,
    ``write_leader_epoch_checkpoint(path, entries)``
    ``CHECKPOINT_KINDS: dict[file name, reader]``
``partition_metadata``
    ``read_partition_metadata(source, *, file=None) -> PartitionMetadata(version, topic_id)``
    ``format_partition_metadata(topic_id, version=0) -> str``, ``write_partition_metadata(...)``
``meta_properties``
    ``read_meta_properties(source, *, file=None) -> MetaProperties``
    ``format_meta_properties(properties, *, date_comment) -> str``
``clean_shutdown``
    ``read_clean_shutdown(source, *, file=None) -> CleanShutdown(version, broker_epoch)``
    ``kafka_broker_epoch(source) -> int | None``, ``format_clean_shutdown(broker_epoch) -> str``
``kafka_uuid``
    ``KafkaUuid.from_string(text)``, ``str(uuid)``, ``uuid.raw``
``java_text``
    ``CheckpointReadError(CheckpointError)`` with ``kafka_exception`` and ``marks_dir_offline``
``atomic``
    ``write_atomically(path, data)`` (``.tmp`` + fsync + rename + dir fsync)
"""
