"""Transactional-id expiry with a real client against ``lethe broker`` from the CLI.

Kafka 4.0 (``TransactionStateManager.removeExpiredTransactionalIds``): an id whose
transaction ended (or that never started one) and saw no update for
``transactional.id.expiration.ms`` is tombstoned in ``__transaction_state`` and
forgotten by the pass of ``transaction.remove.expired.transaction.cleanup.
interval.ms`` after that; DescribeTransactions then answers
TRANSACTIONAL_ID_NOT_FOUND (105) and the next ``init_transactions()`` gets a
new producer id at epoch 0. Here the expiration is 5 s (long enough that an
id never expires between a client's InitProducerId and its first
AddPartitionsToTxn) and the pass runs every 250 ms; the test polls with a
bound, it never sleeps a fixed time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource
from interop_support import CLIENT_TIMEOUT_S
from lethe_formats.coordinator.transaction_log import decode_transaction_key
from lethe_formats.model import RecordBatch
from lethe_formats.protocol.messages.describe_transactions import DescribeTransactionsRequest
from lethe_formats.protocol.messages.find_coordinator import (
    KEY_TYPE_TRANSACTION,
    FindCoordinatorRequest,
)
from lethe_formats.records.scan import read_log
from lethe_reference.cluster.group.support import partition_for
from txn_support import BrokerProcess, create_topic, read_partition, running_broker

T = CLIENT_TIMEOUT_S
TID = "ck-expiring"
EXPIRATION_MS = 5000
OVERRIDES = {
    "transactional.id.expiration.ms": str(EXPIRATION_MS),
    "transaction.remove.expired.transaction.cleanup.interval.ms": "250",
}


@pytest.fixture(scope="module")
def expiring_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    yield from running_broker(tmp_path_factory, "txn-expiry", OVERRIDES)


def _described(broker: BrokerProcess) -> Any:
    find = FindCoordinatorRequest(key_type=KEY_TYPE_TRANSACTION, coordinator_keys=(TID,))
    found: Any = broker.exchange(find, 4)
    assert found.coordinators[0].error_code == 0
    answer: Any = broker.exchange(DescribeTransactionsRequest((TID,)), 0)
    return answer.transaction_states[0]


def _last_record_of_id(broker: BrokerProcess) -> tuple[bytes | None, bytes | None]:
    """The last record ``__transaction_state`` holds for TID (default 50 partitions)."""
    folder = broker.log_dir / f"__transaction_state-{partition_for(TID, 50)}"
    found: list[tuple[bytes | None, bytes | None]] = []
    for path in sorted(folder.glob("*.log")):
        for batch in read_log(path.read_bytes()):
            assert isinstance(batch, RecordBatch)
            found.extend(
                (r.key, r.value)
                for r in batch.records
                if decode_transaction_key(r.key).transactional_id == TID
            )
    return found[-1]


def test_an_idle_transactional_id_is_tombstoned_and_a_new_producer_starts_afresh(
    expiring_broker: BrokerProcess,
) -> None:
    bootstrap, topic = expiring_broker.bootstrap, "ck-expiry"
    create_topic(bootstrap, topic)
    first = Producer({"bootstrap.servers": bootstrap, "transactional.id": TID})
    first.init_transactions(T)
    first.begin_transaction()
    first.produce(topic, value=b"before-expiry")
    first.commit_transaction(T)
    before = _described(expiring_broker)
    assert (before.error_code, before.transaction_state) == (0, "CompleteCommit")
    del first
    deadline = time.monotonic() + 6 * EXPIRATION_MS / 1000 + T
    while _described(expiring_broker).error_code == 0:
        assert time.monotonic() < deadline, "the id did not expire in time"
        time.sleep(0.1)
    assert _described(expiring_broker).error_code == 105  # TRANSACTIONAL_ID_NOT_FOUND
    key, value = _last_record_of_id(expiring_broker)
    raw = TID.encode()
    assert key == b"\x00\x00" + len(raw).to_bytes(2, "big") + raw and value is None
    second = Producer({"bootstrap.servers": bootstrap, "transactional.id": TID})
    second.init_transactions(T)
    after = _described(expiring_broker)
    assert (after.error_code, after.transaction_state, after.producer_epoch) == (0, "Empty", 0)
    assert after.producer_id not in (before.producer_id, -1)
    second.begin_transaction()
    second.produce(topic, value=b"after-expiry")
    second.commit_transaction(T)
    assert [v for _, v in read_partition(bootstrap, topic, "read_committed")] == [
        b"before-expiry",
        b"after-expiry",
    ]


def test_describe_configs_shows_the_expiry_settings(expiring_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": expiring_broker.bootstrap})
    [node] = admin.list_topics(timeout=T).brokers
    resource = ConfigResource(ConfigResource.Type.BROKER, str(node))
    entries = admin.describe_configs([resource], request_timeout=T)[resource].result(timeout=T)
    for name, value in OVERRIDES.items():
        entry = entries[name]
        assert (entry.value, entry.source) == (value, ConfigSource.STATIC_BROKER_CONFIG.value)
        assert entry.is_read_only and not entry.is_default
