"""Injected environmental failures: the broker answers as Kafka does when its world breaks.

Expected values: kafka-facts.md 1.2 (``getPartitionOrException`` on a partition
of an offline log dir is KAFKA_STORAGE_ERROR 56, LW -1; any other Throwable in
``deleteRecordsOnLocalLog`` is caught per partition and mapped through
``Errors.forException``: UNKNOWN_SERVER_ERROR -1, LW -1) and the golden
delete-records case (p0 to 19, p1 to 24, p2 to -1 answer 19, 24, 30).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.records.builder import RecordSpec, build_batch
from lethe_reference.broker import Broker
from lethe_reference.injected_failures import DELETE_ERROR, LOG_DIR_OFFLINE, inject
from partition_ops_support import (
    DELREC_TOPIC,
    delete_records,
    delrec_broker,
    fetch,
    fetch_request,
    list_offsets,
    produce,
)

STORAGE = int(ErrorCode.KAFKA_STORAGE_ERROR)
UNKNOWN = int(ErrorCode.UNKNOWN_SERVER_ERROR)
EARLIEST = -2


@pytest.fixture
def broker(tmp_path: Path) -> Broker:
    return delrec_broker(tmp_path)


def test_delete_records_on_an_offline_partition_is_storage_error_56(broker: Broker) -> None:
    inject(broker, LOG_DIR_OFFLINE, DELREC_TOPIC, [1])
    assert STORAGE == 56
    assert delete_records(broker, DELREC_TOPIC, {0: 19, 1: 24, 2: -1}) == {
        0: (19, 0),
        1: (-1, 56),
        2: (30, 0),
    }


def test_an_offline_partition_keeps_its_log_start_offset(broker: Broker) -> None:
    inject(broker, LOG_DIR_OFFLINE, DELREC_TOPIC, [1])
    delete_records(broker, DELREC_TOPIC, {1: 24})
    log = broker.log(DELREC_TOPIC, 1)
    assert log is not None and log.log_start_offset == 0


def test_produce_fetch_and_list_offsets_of_an_offline_partition_are_56(broker: Broker) -> None:
    inject(broker, LOG_DIR_OFFLINE, DELREC_TOPIC, [0])
    batch = build_batch([RecordSpec(key=b"k", value=b"v", timestamp=1)], base_offset=0)
    assert produce(broker, DELREC_TOPIC, 0, batch).error_code == STORAGE
    assert list_offsets(broker, DELREC_TOPIC, {0: EARLIEST})[0].error_code == STORAGE
    response = fetch(broker, fetch_request(DELREC_TOPIC, {0: 0}))
    assert [p.error_code for t in response.responses for p in t.partitions] == [STORAGE]
    assert list_offsets(broker, DELREC_TOPIC, {1: EARLIEST})[1].error_code == 0


def test_an_unexpected_delete_failure_is_unknown_server_error_for_that_partition_only(
    broker: Broker,
) -> None:
    inject(broker, DELETE_ERROR, DELREC_TOPIC, [1])
    assert delete_records(broker, DELREC_TOPIC, {0: 19, 1: 24, 2: -1}) == {
        0: (19, 0),
        1: (-1, UNKNOWN),
        2: (30, 0),
    }
    log = broker.log(DELREC_TOPIC, 1)
    assert log is not None and log.log_start_offset == 0


def test_the_delete_error_fires_once(broker: Broker) -> None:
    inject(broker, DELETE_ERROR, DELREC_TOPIC, [1])
    assert delete_records(broker, DELREC_TOPIC, {1: 24}) == {1: (-1, UNKNOWN)}
    assert delete_records(broker, DELREC_TOPIC, {1: 24}) == {1: (24, 0)}


def test_an_unknown_kind_is_refused(broker: Broker) -> None:
    with pytest.raises(ValueError, match="unknown injected failure kind 'disk-full'"):
        inject(broker, "disk-full", DELREC_TOPIC, [0])
