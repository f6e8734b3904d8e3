"""AddOffsetsToTxn (key 25, KIP-98), versions 0-4, flexible 3+.

A transactional producer that will commit consumer offsets inside its
transaction first tells the coordinator the group: the coordinator adds the
group's ``__consumer_offsets`` partition to the transaction, so the commit or
abort marker also reaches the offsets written by TxnOffsetCommit.

Request::

    transactional_id  string
    producer_id       int64
    producer_epoch    int16
    group_id          string

Response::

    throttle_time_ms  int32
    error_code        int16

v2 may answer PRODUCER_FENCED, v4 TRANSACTION_ABORTABLE (KIP-890).
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, INT64, STRING, Struct, message, proto

__all__ = ["AddOffsetsToTxnRequest", "AddOffsetsToTxnResponse"]


@message(api_key=25, kind="request", valid="0-4", flexible="3+")
@dataclass(frozen=True, slots=True)
class AddOffsetsToTxnRequest(Struct):
    transactional_id: str = proto(STRING, "0+")
    producer_id: int = proto(INT64, "0+")
    producer_epoch: int = proto(INT16, "0+")
    group_id: str = proto(STRING, "0+")


@message(api_key=25, kind="response", valid="0-4", flexible="3+")
@dataclass(frozen=True, slots=True)
class AddOffsetsToTxnResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
