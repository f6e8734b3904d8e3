"""InitProducerId: Kafka 4.0's recorded answers to librdkafka and kafka-python, the
request checks in Kafka's order, and producer ids that never repeat across restarts."""

from __future__ import annotations

from pathlib import Path

import pytest
from group_handlers_support import call, exchanges, new_broker, without_throttle
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.compiler import encode
from lethe_formats.protocol.messages.init_producer_id import (
    InitProducerIdRequest,
    InitProducerIdResponse,
)
from lethe_reference.broker import Broker
from lethe_reference.handlers.producer_ids import PRODUCER_IDS_FILE

#: Kafka's first InitProducerId after startup waited for its first id block from
#: the controller (COORDINATOR_LOAD_IN_PROGRESS); lethe takes the block at once.
BLOCK_NOT_YET_FETCHED = 27


def init(
    broker: Broker,
    version: int = 4,
    *,
    transactional_id: str | None = None,
    transaction_timeout_ms: int = -1,
    producer_id: int = -1,
    producer_epoch: int = -1,
) -> InitProducerIdResponse:
    request = InitProducerIdRequest(
        transactional_id=transactional_id,
        transaction_timeout_ms=transaction_timeout_ms,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
    )
    answer = call(broker, ApiKey.INIT_PRODUCER_ID, version, request)
    assert isinstance(answer, InitProducerIdResponse)
    return answer


def answer(response: InitProducerIdResponse) -> tuple[int, int, int]:
    return response.error_code, response.producer_id, response.producer_epoch


def test_golden_idempotent_producers_get_kafkas_ids(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    recorded = [
        ex
        for ex in exchanges()
        if ex.api_key == ApiKey.INIT_PRODUCER_ID and ex.seq != BLOCK_NOT_YET_FETCHED
    ]
    assert [ex.seq for ex in recorded] == [29, 153]
    for ex in recorded:
        ours = call(broker, ex.api_key, ex.version, ex.request, ex.client_id)
        assert without_throttle(ours) == without_throttle(ex.response)


def test_ids_continue_with_the_next_block_after_a_restart(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    assert [init(broker).producer_id for _ in range(3)] == [0, 1, 2]
    assert (tmp_path / PRODUCER_IDS_FILE).read_text() == "0\n1000\n"
    broker.shutdown()
    again = new_broker(tmp_path)
    assert answer(init(again)) == (0, 1000, 0)
    assert (tmp_path / PRODUCER_IDS_FILE).read_text() == "0\n2000\n"


def test_a_block_is_taken_when_the_last_one_is_used_up(tmp_path: Path) -> None:
    (tmp_path / PRODUCER_IDS_FILE).write_text("0\n5000\n")
    broker = new_broker(tmp_path)
    ids = [init(broker).producer_id for _ in range(1001)]
    assert (ids[0], ids[999], ids[1000]) == (5000, 5999, 6000)
    assert (tmp_path / PRODUCER_IDS_FILE).read_text() == "0\n7000\n"


@pytest.mark.parametrize("content", ["", "1\n1000\n", "0\nabc\n", "0\n-5\n", "0\n1\n2\n"])
def test_unreadable_block_file_is_a_storage_error(tmp_path: Path, content: str) -> None:
    (tmp_path / PRODUCER_IDS_FILE).write_text(content)
    broker = new_broker(tmp_path)
    assert answer(init(broker)) == (56, -1, -1)


def test_idempotent_producer_gets_a_new_id_whatever_it_had(tmp_path: Path) -> None:
    broker = new_broker(tmp_path)
    init(broker)
    assert answer(init(broker, 3, producer_id=0, producer_epoch=4)) == (0, 1, 0)


@pytest.mark.parametrize(("producer_id", "producer_epoch"), [(-1, 0), (7, -1)])
def test_id_without_epoch_or_epoch_without_id_is_invalid(
    tmp_path: Path, producer_id: int, producer_epoch: int
) -> None:
    broker = new_broker(tmp_path)
    response = init(broker, 3, producer_id=producer_id, producer_epoch=producer_epoch)
    assert answer(response) == (42, -1, -1)
    assert answer(init(broker)) == (0, 0, 0)  # no id was used up


@pytest.mark.parametrize(
    ("transactional_id", "timeout_ms", "code"),
    [
        ("", 60_000, 42),  # INVALID_REQUEST before the timeout check
        ("tx", 0, 50),  # INVALID_TRANSACTION_TIMEOUT
        ("tx", 900_001, 50),
        ("tx", 900_000, 16),  # no __transaction_state here: NOT_COORDINATOR
        ("tx", 1, 16),
    ],
)
def test_transactional_ids_are_refused_like_kafka(
    tmp_path: Path, transactional_id: str, timeout_ms: int, code: int
) -> None:
    broker = new_broker(tmp_path)
    response = init(broker, 5, transactional_id=transactional_id, transaction_timeout_ms=timeout_ms)
    assert answer(response) == (code, -1, -1)
    assert not (tmp_path / PRODUCER_IDS_FILE).exists()


def test_transaction_max_timeout_comes_from_the_broker_config(tmp_path: Path) -> None:
    broker = new_broker(tmp_path, {"transaction.max.timeout.ms": "1000"})
    refused = init(broker, 4, transactional_id="tx", transaction_timeout_ms=1001)
    assert refused.error_code == 50


@pytest.mark.parametrize("version", range(0, 6))
def test_answers_encode_at_every_version(tmp_path: Path, version: int) -> None:
    broker = new_broker(tmp_path)
    assert encode(init(broker, version), version)
    assert encode(init(broker, version, transactional_id="tx", transaction_timeout_ms=5), version)
