"""Writing ``__transaction_state`` records: the golden partition's bytes, reproduced.

Kafka 4.0.0 wrote ``__transaction_state-24`` of the golden transactions case
(one transactional id through Empty, Ongoing, PrepareCommit, CompleteCommit,
an abort and a second commit); every key and value re-encoded from its decoded
form must be the bytes Kafka wrote, and v1's tagged fields appear only when
they differ from their defaults.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from lethe_formats.coordinator.transaction_log import (
    TRANSACTION_STATES,
    decode_transaction_key,
    decode_transaction_value,
    encode_transaction_key,
    encode_transaction_value,
)
from lethe_formats.model import RecordBatch
from lethe_formats.records.scan import read_log

GOLDEN = Path(__file__).parents[3] / "fixtures/golden/transactions/pass0/__transaction_state-24"


def _records() -> list[tuple[bytes, bytes]]:
    data = (GOLDEN / "00000000000000000000.log").read_bytes()
    out: list[tuple[bytes, bytes]] = []
    for batch in read_log(data):
        assert isinstance(batch, RecordBatch)
        out.extend((bytes(r.key or b""), bytes(r.value or b"")) for r in batch.records)
    return out


def _status(value: bytes) -> str:
    decoded = decode_transaction_value(value)
    assert decoded is not None
    return TRANSACTION_STATES[decoded.transaction_status]


def test_golden_states_in_order() -> None:
    states = [_status(v) for _, v in _records()]
    assert states == [
        "Empty", "Ongoing", "PrepareCommit", "CompleteCommit", "Ongoing",
        "PrepareAbort", "CompleteAbort", "Ongoing", "PrepareCommit", "CompleteCommit",
    ]  # fmt: skip


@pytest.mark.parametrize("index", range(10))
def test_golden_record_reencodes_to_kafkas_bytes(index: int) -> None:
    key, value = _records()[index]
    decoded = decode_transaction_value(value)
    assert decoded is not None
    assert encode_transaction_value(decoded) == value
    transactional_id = decode_transaction_key(key).transactional_id
    assert transactional_id == "golden-txn-writer"
    assert encode_transaction_key(transactional_id) == key


def test_tagged_fields_only_when_not_default() -> None:
    _, value = _records()[0]
    decoded = decode_transaction_value(value)
    assert decoded is not None
    assert value.endswith(b"\x00")  # no tagged field at TV0 with no previous/next id
    bumped = dataclasses.replace(decoded, client_transaction_version=2, previous_producer_id=5)
    wire = encode_transaction_value(bumped)
    assert wire.endswith(b"\x02" + b"\x00\x08" + (5).to_bytes(8, "big") + b"\x02\x02\x00\x02")
    assert decode_transaction_value(wire) == bumped
