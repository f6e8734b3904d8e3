"""Producing Kafka's own batches again gives Kafka's own segment files, byte for byte.

The golden delete-records and codecs partitions are replayed through the
leader append path (validation, offset assignment, roll, indexes) with the
topic settings Kafka had (case.json): the ``.log``, ``.index`` and
``.timeindex`` files must equal the ones Kafka 4.0 wrote. The batches are
sent as a producer sends them (baseOffset 0, partitionLeaderEpoch -1), so
offset and epoch assignment are checked too; CreateTime batches keep their
CRC untouched.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_reference.clock import ManualClock
from lethe_reference.config.log_config import effective_log_config
from lethe_reference.storage.log import PartitionLog
from lethe_reference.storage.settings import StorageSettings
from storage_support import GOLDEN, as_client_batch, delrec_log, golden_batches

SUFFIXES = (".log", ".index", ".timeindex")


def _assert_same_files(ours: Path, kafka: Path) -> None:
    kafka_logs = sorted(p.name for p in kafka.glob("*.log"))
    assert sorted(p.name for p in ours.glob("*.log")) == kafka_logs
    for name in kafka_logs:
        for suffix in SUFFIXES:
            expected = (kafka / name).with_suffix(suffix).read_bytes()
            assert (ours / name).with_suffix(suffix).read_bytes() == expected, name + suffix


@pytest.mark.parametrize("partition", [0, 1, 2])
def test_delete_records_partitions_are_laid_out_as_kafka_did(
    tmp_path: Path, clock: ManualClock, partition: int
) -> None:
    """segment.bytes=700, index.interval.bytes=100: every roll and index entry matches."""
    log = delrec_log(tmp_path, partition, clock)
    log.close()
    _assert_same_files(log.directory, GOLDEN / "delete-records" / f"golden-delrec-{partition}")


def test_codecs_partition_with_every_codec_is_laid_out_as_kafka_did(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Compressed batches (gzip, snappy raw and xerial, lz4, zstd) are appended in place."""
    source = GOLDEN / "codecs" / "golden-codecs-0"
    settings = StorageSettings(segment_bytes=1400, index_interval_bytes=128)
    log = PartitionLog.create(tmp_path / source.name, settings, clock=clock)
    for batch in golden_batches(source):
        log.append_as_leader(as_client_batch(batch), leader_epoch=0)
    log.close()
    _assert_same_files(log.directory, source)


def test_offsets_are_assigned_from_the_log_end_offset(tmp_path: Path, clock: ManualClock) -> None:
    """case.json delivery reports: p1 batches got offsets 24..27, 28..31, 32..35."""
    log = delrec_log(tmp_path, 1, clock)
    assert log.log_end_offset == 36
    assert log.active_segment.base_offset == 32
    assert log.epoch_cache.entries == ((0, 24),)


def test_the_brokers_topic_config_drives_the_same_layout(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The broker's LogConfig (built from case.json's topic configs) is a LogSettings."""

    configs = {
        "segment.bytes": "700",
        "index.interval.bytes": "100",
        "file.delete.delay.ms": "1000",
    }
    log = delrec_log(tmp_path, 1, clock, settings=effective_log_config(configs))
    log.close()
    _assert_same_files(log.directory, GOLDEN / "delete-records" / "golden-delrec-1")
