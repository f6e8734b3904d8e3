"""Transaction messages: AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
WriteTxnMarkers, TxnOffsetCommit, DescribeTransactions, ListTransactions, and
InitProducerId's transactional form.

* the version ranges are the ones Kafka 4.0 advertised in the recorded
  ApiVersions response (golden frame #0002);
* (every version round-trips any valid value: test_protocol_roundtrip covers every
  registered message, these included);
* hand-laid bytes from Kafka 4.0's message specs pin the boundaries: the client
  (v0-3) and broker (v4+) forms of AddPartitionsToTxn, the ignorable top-level
  error code, EndTxn v5's producer id and epoch, compact vs classic encodings.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from lethe_formats.protocol.compiler import decode, encode
from lethe_formats.protocol.envelope import decode_response
from lethe_formats.protocol.exceptions import UnsupportedVersionError
from lethe_formats.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from lethe_formats.protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTopicResult,
    AddPartitionsToTxnTransaction,
)
from lethe_formats.protocol.messages.describe_transactions import (
    DescribedTransaction,
    DescribedTransactionTopic,
    DescribeTransactionsResponse,
)
from lethe_formats.protocol.messages.end_txn import EndTxnRequest, EndTxnResponse
from lethe_formats.protocol.messages.init_producer_id import InitProducerIdRequest
from lethe_formats.protocol.messages.list_transactions import ListTransactionsRequest
from lethe_formats.protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from lethe_formats.protocol.messages.write_txn_markers import (
    WritableTxnMarker,
    WritableTxnMarkerTopic,
    WriteTxnMarkersRequest,
)
from lethe_formats.protocol.registry import api
from wire_golden import frame_by_seq

#: API key -> (lowest, highest) version Kafka 4.0 advertised (golden ApiVersions frame #0002).
TXN_APIS = {
    22: (0, 5),  # InitProducerId
    24: (0, 5),  # AddPartitionsToTxn
    25: (0, 4),  # AddOffsetsToTxn
    26: (0, 5),  # EndTxn
    27: (1, 1),  # WriteTxnMarkers (v0 removed in 4.0)
    28: (0, 5),  # TxnOffsetCommit
    65: (0, 0),  # DescribeTransactions
    66: (0, 1),  # ListTransactions
}


def _i16(value: int) -> bytes:
    return struct.pack(">h", value)


def _i32(value: int) -> bytes:
    return struct.pack(">i", value)


def _i64(value: int) -> bytes:
    return struct.pack(">q", value)


def _str(text: str) -> bytes:
    return _i16(len(text)) + text.encode()


def _cstr(text: str) -> bytes:
    return bytes([len(text) + 1]) + text.encode()


def _carr(count: int) -> bytes:
    return bytes([count + 1])


TAGS = b"\x00"  # an empty tagged-field buffer


# ------------------------------------------------------------------ ranges, round trips


def test_kafka_40_advertises_these_ranges() -> None:
    frame = frame_by_seq(2)
    response: Any = decode_response(frame.api_key, frame.api_version, frame.payload)[1]
    advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert {key: advertised[key] for key in TXN_APIS} == TXN_APIS


def test_registry_ranges_are_kafka_40s() -> None:
    for api_key, (low, high) in TXN_APIS.items():
        spec = api(api_key)
        assert (spec.min_version, spec.max_version) == (low, high), spec.name


# ------------------------------------------------------------------ InitProducerId


def test_init_producer_id_carries_a_transactional_id() -> None:
    request = InitProducerIdRequest(transactional_id="tx-1", transaction_timeout_ms=60000)
    assert encode(request, 4) == _cstr("tx-1") + _i32(60000) + _i64(-1) + _i16(-1) + TAGS
    assert encode(request, 1) == _str("tx-1") + _i32(60000)
    assert decode(InitProducerIdRequest, 5, encode(request, 5)).transactional_id == "tx-1"


# ------------------------------------------------------------------ AddPartitionsToTxn


def _client_request() -> AddPartitionsToTxnRequest:
    return AddPartitionsToTxnRequest(
        v3_and_below_transactional_id="tx",
        v3_and_below_producer_id=7,
        v3_and_below_producer_epoch=2,
        v3_and_below_topics=(AddPartitionsToTxnTopic(name="t", partitions=(0, 3)),),
    )


def test_add_partitions_v2_is_classic_client_form() -> None:
    wire = _str("tx") + _i64(7) + _i16(2) + _i32(1) + _str("t") + _i32(2) + _i32(0) + _i32(3)
    assert encode(_client_request(), 2) == wire
    assert decode(AddPartitionsToTxnRequest, 2, wire) == _client_request()


def test_add_partitions_v3_is_compact_client_form() -> None:
    topic = _cstr("t") + _carr(2) + _i32(0) + _i32(3) + TAGS
    wire = _cstr("tx") + _i64(7) + _i16(2) + _carr(1) + topic + TAGS
    assert encode(_client_request(), 3) == wire


def test_add_partitions_v4_is_the_broker_form_with_verify_only() -> None:
    request = AddPartitionsToTxnRequest(
        transactions=(
            AddPartitionsToTxnTransaction(
                transactional_id="tx",
                producer_id=7,
                producer_epoch=2,
                verify_only=True,
                topics=(AddPartitionsToTxnTopic(name="t", partitions=(1,)),),
            ),
        )
    )
    topic = _cstr("t") + _carr(1) + _i32(1) + TAGS
    txn = _cstr("tx") + _i64(7) + _i16(2) + b"\x01" + _carr(1) + topic + TAGS
    assert encode(request, 4) == _carr(1) + txn + TAGS
    with pytest.raises(UnsupportedVersionError):
        encode(request, 3)  # the broker form has no v3 layout
    with pytest.raises(UnsupportedVersionError):
        encode(_client_request(), 4)  # nor the client form a v4 one


def test_add_partitions_response_top_level_error_from_v4_only() -> None:
    result = AddPartitionsToTxnTopicResult(
        name="t",
        results_by_partition=(
            AddPartitionsToTxnPartitionResult(partition_index=0, partition_error_code=48),
        ),
    )
    v3 = AddPartitionsToTxnResponse(error_code=0, results_by_topic_v3_and_below=(result,))
    body = _cstr("t") + _carr(1) + _i32(0) + _i16(48) + TAGS + TAGS
    assert encode(v3, 3) == _i32(0) + _carr(1) + body + TAGS
    v5 = AddPartitionsToTxnResponse(
        error_code=51,
        results_by_transaction=(
            AddPartitionsToTxnResult(transactional_id="tx", topic_results=(result,)),
        ),
    )
    assert (
        encode(v5, 5) == _i32(0) + _i16(51) + _carr(1) + _cstr("tx") + _carr(1) + body + TAGS + TAGS
    )
    # ignorable: a top-level error is dropped, not refused, below v4
    assert encode(AddPartitionsToTxnResponse(error_code=51), 3) == _i32(0) + _carr(0) + TAGS


# ------------------------------------------------------------------ EndTxn, AddOffsetsToTxn


def test_end_txn_v5_returns_the_next_producer_id_and_epoch() -> None:
    response = EndTxnResponse(error_code=0, producer_id=9, producer_epoch=4)
    assert encode(response, 5) == _i32(0) + _i16(0) + _i64(9) + _i16(4) + TAGS
    assert encode(response, 4) == _i32(0) + _i16(0) + TAGS  # ignorable below v5
    assert encode(response, 2) == _i32(0) + _i16(0)
    assert decode(EndTxnResponse, 4, _i32(0) + _i16(0) + TAGS).producer_id == -1


def test_end_txn_request_layout() -> None:
    request = EndTxnRequest(transactional_id="tx", producer_id=7, producer_epoch=2, committed=True)
    assert encode(request, 0) == _str("tx") + _i64(7) + _i16(2) + b"\x01"
    assert encode(request, 5) == _cstr("tx") + _i64(7) + _i16(2) + b"\x01" + TAGS


def test_add_offsets_to_txn_request_layout() -> None:
    request = AddOffsetsToTxnRequest(
        transactional_id="tx", producer_id=7, producer_epoch=2, group_id="g"
    )
    assert encode(request, 2) == _str("tx") + _i64(7) + _i16(2) + _str("g")
    assert encode(request, 4) == _cstr("tx") + _i64(7) + _i16(2) + _cstr("g") + TAGS


# ------------------------------------------------------------------ WriteTxnMarkers


def test_write_txn_markers_is_v1_only_and_flexible() -> None:
    request = WriteTxnMarkersRequest(
        markers=(
            WritableTxnMarker(
                producer_id=7,
                producer_epoch=2,
                transaction_result=False,
                topics=(WritableTxnMarkerTopic(name="t", partition_indexes=(0,)),),
                coordinator_epoch=3,
            ),
        )
    )
    topic = _cstr("t") + _carr(1) + _i32(0) + TAGS
    marker = _i64(7) + _i16(2) + b"\x00" + _carr(1) + topic + _i32(3) + TAGS
    assert encode(request, 1) == _carr(1) + marker + TAGS
    with pytest.raises(UnsupportedVersionError):
        encode(request, 0)


# ------------------------------------------------------------------ TxnOffsetCommit


def test_txn_offset_commit_member_fields_from_v3() -> None:
    partition = TxnOffsetCommitRequestPartition(
        partition_index=0, committed_offset=42, committed_leader_epoch=5, committed_metadata=None
    )
    request = TxnOffsetCommitRequest(
        transactional_id="tx",
        group_id="g",
        producer_id=7,
        producer_epoch=2,
        topics=(TxnOffsetCommitRequestTopic(name="t", partitions=(partition,)),),
    )
    head = _str("tx") + _str("g") + _i64(7) + _i16(2)
    v1 = head + _i32(1) + _str("t") + _i32(1) + _i32(0) + _i64(42) + _i16(-1)
    assert encode(request, 1) == v1  # leader epoch ignorable below v2
    v3 = (
        _cstr("tx") + _cstr("g") + _i64(7) + _i16(2) + _i32(-1) + _cstr("") + b"\x00"
        + _carr(1) + _cstr("t") + _carr(1) + _i32(0) + _i64(42) + _i32(5) + b"\x00" + TAGS
        + TAGS + TAGS
    )  # fmt: skip
    assert encode(request, 3) == v3
    assert decode(TxnOffsetCommitRequest, 3, v3) == request


# ------------------------------------------------------------------ Describe/ListTransactions


def test_describe_transactions_response_layout() -> None:
    response = DescribeTransactionsResponse(
        transaction_states=(
            DescribedTransaction(
                error_code=0,
                transactional_id="tx",
                transaction_state="Ongoing",
                transaction_timeout_ms=60000,
                transaction_start_time_ms=1000,
                producer_id=7,
                producer_epoch=2,
                topics=(DescribedTransactionTopic(topic="t", partitions=(0,)),),
            ),
        )
    )
    topic = _cstr("t") + _carr(1) + _i32(0) + TAGS
    state = (
        _i16(0) + _cstr("tx") + _cstr("Ongoing") + _i32(60000) + _i64(1000) + _i64(7) + _i16(2)
        + _carr(1) + topic + TAGS
    )  # fmt: skip
    assert encode(response, 0) == _i32(0) + _carr(1) + state + TAGS


def test_list_transactions_duration_filter_from_v1() -> None:
    request = ListTransactionsRequest(state_filters=("Ongoing",), producer_id_filters=(7,))
    v0 = _carr(1) + _cstr("Ongoing") + _carr(1) + _i64(7) + TAGS
    assert encode(request, 0) == v0
    assert encode(request, 1) == v0[:-1] + _i64(-1) + TAGS
    with pytest.raises(UnsupportedVersionError):
        encode(ListTransactionsRequest(duration_filter=1000), 0)  # not ignorable
