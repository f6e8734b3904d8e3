"""EndTxn (key 26, KIP-98), versions 0-5, flexible 3+.

The producer asks its coordinator to commit (``committed`` true) or abort the
open transaction; the coordinator then writes the markers.

Request::

    transactional_id  string
    producer_id       int64
    producer_epoch    int16
    committed         bool

Response::

    throttle_time_ms  int32
    error_code        int16
    producer_id       int64 (v5+, default -1, ignorable)
    producer_epoch    int16 (v5+, default -1, ignorable)

v5 is transaction version 2 (KIP-890 part 2): the coordinator bumps the
producer epoch at every transaction end and returns the id and epoch the
producer must use next.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Struct, message, proto

__all__ = ["EndTxnRequest", "EndTxnResponse"]


@message(api_key=26, kind="request", valid="0-5", flexible="3+")
@dataclass(frozen=True, slots=True)
class EndTxnRequest(Struct):
    transactional_id: str = proto(STRING, "0+")
    producer_id: int = proto(INT64, "0+")
    producer_epoch: int = proto(INT16, "0+")
    committed: bool = proto(BOOL, "0+")


@message(api_key=26, kind="response", valid="0-5", flexible="3+")
@dataclass(frozen=True, slots=True)
class EndTxnResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    producer_id: int = proto(INT64, "5+", default=-1, ignorable=True)
    producer_epoch: int = proto(INT16, "5+", default=-1, ignorable=True)
