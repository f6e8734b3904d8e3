"""ListTransactions (key 66, KIP-664), versions 0-1, flexible 0+.

``kafka-transactions.sh list`` asks every broker for the transactions its
coordinator partitions hold, optionally filtered.

Request::

    state_filters        [string]  (empty: every state)
    producer_id_filters  [int64]   (empty: every producer)
    duration_filter      int64 (v1+, default -1: no filter; KIP-994: only
                                transactions running longer than this many ms)

Response::

    throttle_time_ms       int32
    error_code             int16
    unknown_state_filters  [string]  (filters naming no state; ignored)
    transaction_states [transactional_id string, producer_id int64,
                        transaction_state string]
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.schema import INT16, INT32, INT64, STRING, Struct, array, message, proto

__all__ = [
    "NO_DURATION_FILTER",
    "ListTransactionsRequest",
    "ListTransactionsResponse",
    "ListedTransaction",
]

#: ``duration_filter`` meaning "no duration filter".
NO_DURATION_FILTER = -1


@message(api_key=66, kind="request", valid="0-1", flexible="0+")
@dataclass(frozen=True, slots=True)
class ListTransactionsRequest(Struct):
    state_filters: tuple[str, ...] = proto(array(STRING), "0+")
    producer_id_filters: tuple[int, ...] = proto(array(INT64), "0+")
    duration_filter: int = proto(INT64, "1+", default=NO_DURATION_FILTER)


@dataclass(frozen=True, slots=True)
class ListedTransaction(Struct):
    transactional_id: str = proto(STRING, "0+")
    producer_id: int = proto(INT64, "0+")
    transaction_state: str = proto(STRING, "0+")


@message(api_key=66, kind="response", valid="0-1", flexible="0+")
@dataclass(frozen=True, slots=True)
class ListTransactionsResponse(Struct):
    throttle_time_ms: int = proto(INT32, "0+")
    error_code: int = proto(INT16, "0+")
    unknown_state_filters: tuple[str, ...] = proto(array(STRING), "0+")
    transaction_states: tuple[ListedTransaction, ...] = proto(array(ListedTransaction), "0+")
