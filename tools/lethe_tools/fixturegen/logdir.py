"""Assemble a whole log directory (as a :data:`~.tree.FileTree`) from a spec.

Layout produced, as a Kafka 4.0 broker leaves it after a clean shutdown::

    meta.properties                      if the spec has meta_properties
    .kafka_cleanshutdown                 if the spec has clean_shutdown
    recovery-point-offset-checkpoint     each root checkpoint the spec lists
    replication-offset-checkpoint          (derived, explicit or a 0-byte file)
    log-start-offset-checkpoint
    cleaner-offset-checkpoint
    <topic>-<partition>/
        <base offset, 20 digits>.log     segments laid out by segment.PartitionLogWriter
        <...>.index  <...>.timeindex     always, trimmed to their entries
        <...>.txnindex                   only for segments with aborted transactions
        leader-epoch-checkpoint          derived by default
        partition.metadata               if the topic has a topic_id

Not produced: producer-state ``.snapshot`` files (Kafka rebuilds producer
state from the log when they are missing) and the ``.tmp`` leftovers of
atomic writes. Every file's bytes come from the lethe_formats encoders, so
the fixtures exercise the same code paths a broker built on them would.
"""

from __future__ import annotations

from lethe_formats.errors import FormatError
from lethe_formats.storage.checkpoint import (
    format_leader_epoch_checkpoint,
    format_offset_checkpoint,
)
from lethe_formats.storage.clean_shutdown import format_clean_shutdown
from lethe_formats.storage.filenames import FileKind, partition_dir_name, segment_file_name
from lethe_formats.storage.index import encode_offset_index, encode_time_index
from lethe_formats.storage.kafka_uuid import KafkaUuid
from lethe_formats.storage.meta_properties import MetaProperties, format_meta_properties
from lethe_formats.storage.partition_metadata import format_partition_metadata
from lethe_formats.storage.txn_index import encode_txn_index

from lethe_tools.fixturegen.derive import (
    PartitionLayout,
    derive_leader_epochs,
    derive_offset_checkpoint,
)
from lethe_tools.fixturegen.encode import encode_batch
from lethe_tools.fixturegen.segment import PartitionLogWriter, SegmentContent
from lethe_tools.fixturegen.spec import (
    CheckpointMode,
    CheckpointSpec,
    LogDirSpec,
    MetaPropertiesSpec,
    PartitionSpec,
    SpecError,
    TopicSpec,
)

__all__ = ["build_log_dir", "write_partition"]


def build_log_dir(spec: LogDirSpec) -> dict[str, bytes]:
    """Every file of the log directory ``spec`` describes, keyed by relative path."""
    files: dict[str, bytes] = {}
    layouts = []
    for topic in spec.topics:
        for partition in topic.partitions:
            segments = write_partition(topic, partition, file=spec.file)
            layouts.append(PartitionLayout(topic, partition, segments))
            directory = partition_dir_name(topic.name, partition.partition)
            for name, data in _partition_files(topic, partition, segments).items():
                files[f"{directory}/{name}"] = data
    files.update(_root_files(spec, layouts))
    return dict(sorted(files.items()))


def write_partition(
    topic: TopicSpec, partition: PartitionSpec, *, file: str
) -> list[SegmentContent]:
    """Encode the partition's batches and append them as a broker would."""
    writer = PartitionLogWriter(
        segment_bytes=topic.segment_bytes,
        index_interval_bytes=topic.index_interval_bytes,
        start_offset=partition.start_offset,
    )
    for batch in partition.batches:
        try:
            data = encode_batch(batch)
            writer.append(
                data,
                first_offset=batch.base_offset,
                roll=batch.roll,
                roll_base_offset=batch.roll_base_offset,
            )
        except (FormatError, ValueError) as error:
            raise SpecError(
                f"cannot encode this batch: {error}", file=file, path=batch.path
            ) from None
    return writer.close()


def _partition_files(
    topic: TopicSpec, partition: PartitionSpec, segments: list[SegmentContent]
) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for segment in segments:
        base = segment.base_offset
        files[segment_file_name(base, FileKind.LOG)] = segment.log
        files[segment_file_name(base, FileKind.INDEX)] = encode_offset_index(segment.offset_index)
        files[segment_file_name(base, FileKind.TIME_INDEX)] = encode_time_index(segment.time_index)
        if segment.aborted_txns:
            files[segment_file_name(base, FileKind.TXN_INDEX)] = encode_txn_index(
                segment.aborted_txns
            )
    epochs = partition.leader_epoch_checkpoint
    if epochs.mode is CheckpointMode.EMPTY_FILE:
        files["leader-epoch-checkpoint"] = b""
    else:
        entries = (
            derive_leader_epochs(partition)
            if epochs.mode is CheckpointMode.DERIVE
            else epochs.entries
        )
        text = format_leader_epoch_checkpoint([(e.epoch, e.start_offset) for e in entries])
        files["leader-epoch-checkpoint"] = text.encode("utf-8")
    if topic.topic_id is not None:
        files["partition.metadata"] = format_partition_metadata(topic.topic_id).encode("utf-8")
    return files


def _root_files(spec: LogDirSpec, layouts: list[PartitionLayout]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    if spec.meta_properties is not None:
        files["meta.properties"] = _meta_properties_text(spec.meta_properties).encode("utf-8")
    if spec.clean_shutdown_broker_epoch is not None:
        text = format_clean_shutdown(spec.clean_shutdown_broker_epoch)
        files[".kafka_cleanshutdown"] = text.encode("utf-8")
    for name, checkpoint in spec.checkpoints.items():
        files[name] = _offset_checkpoint_bytes(name, checkpoint, layouts)
    return files


def _offset_checkpoint_bytes(
    name: str, checkpoint: CheckpointSpec, layouts: list[PartitionLayout]
) -> bytes:
    if checkpoint.mode is CheckpointMode.EMPTY_FILE:
        return b""
    entries = (
        derive_offset_checkpoint(name, layouts)
        if checkpoint.mode is CheckpointMode.DERIVE
        else checkpoint.entries
    )
    rows = [(e.topic, e.partition, e.offset) for e in entries]
    return format_offset_checkpoint(rows).encode("utf-8")


def _meta_properties_text(meta: MetaPropertiesSpec) -> str:
    """meta.properties in the JDK 17 hash order a broker writes, with the spec's date line."""
    directory_id = KafkaUuid.from_string(meta.directory_id) if meta.directory_id else None
    values = MetaProperties(meta.version, meta.cluster_id, meta.node_id, directory_id)
    return format_meta_properties(values, date_comment=meta.comment_date)
