"""DescribeTransactions (key 65) and ListTransactions (key 66): what
``kafka-transactions.sh describe`` and ``list`` ask a transaction coordinator.

Theory of operation
-------------------
``KafkaApis.handleDescribeTransactionsRequest``: per id, DESCRIBE on the
TRANSACTIONAL_ID (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then the
coordinator's state: NOT_COORDINATOR for an id of a partition this broker does
not hold, TRANSACTIONAL_ID_NOT_FOUND for an unknown one, else its state name,
timeout, start time, producer id and epoch and the partitions of the open
transaction (grouped by topic). Errors carry the id with the other fields at
their zero values.

``handleListTransactionsRequest``: every transaction of the loaded
partitions, filtered by state names (an unknown name is echoed in
``unknown_state_filters``), producer ids and (v1) a minimum running time; ids
the principal may not DESCRIBE are left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.describe_transactions import (
    DescribedTransaction,
    DescribedTransactionTopic,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
)
from lethe_formats.protocol.messages.list_transactions import (
    ListedTransaction,
    ListTransactionsRequest,
    ListTransactionsResponse,
)

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.cluster.txn.metadata import TxnMetadata
from lethe_reference.cluster.txn_runtime import txn_runtime_of
from lethe_reference.handlers.authz import authorize
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__: list[str] = []


def _failed(transactional_id: str, code: ErrorCode) -> DescribedTransaction:
    return DescribedTransaction(
        error_code=code,
        transactional_id=transactional_id,
        transaction_state="",
        transaction_timeout_ms=0,
        transaction_start_time_ms=0,
        producer_id=0,
        producer_epoch=0,
    )


def _described(metadata: TxnMetadata) -> DescribedTransaction:
    topics: dict[str, list[int]] = {}
    for topic, partition in sorted(metadata.partitions):
        topics.setdefault(topic, []).append(partition)
    return DescribedTransaction(
        error_code=ErrorCode.NONE,
        transactional_id=metadata.transactional_id,
        transaction_state=metadata.state.kafka_name,
        transaction_timeout_ms=metadata.timeout_ms,
        transaction_start_time_ms=metadata.start_ms,
        producer_id=metadata.producer_id,
        producer_epoch=metadata.producer_epoch,
        topics=tuple(DescribedTransactionTopic(t, tuple(ps)) for t, ps in topics.items()),
    )


def _describe_error(
    request: DescribeTransactionsRequest, code: ErrorCode, message: str | None
) -> DescribeTransactionsResponse:
    return DescribeTransactionsResponse(
        transaction_states=tuple(_failed(t, code) for t in request.transactional_ids)
    )


@handles(ApiKey.DESCRIBE_TRANSACTIONS, error_response=_describe_error)
def handle_describe_transactions(
    broker: Broker, ctx: RequestContext, request: DescribeTransactionsRequest
) -> DescribeTransactionsResponse:
    coordinator = txn_runtime_of(broker).coordinator
    states = []
    for transactional_id in request.transactional_ids:
        if not authorize(
            broker, ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactional_id
        ):
            states.append(
                _failed(transactional_id, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
            )
            continue
        found = coordinator.describe(transactional_id)
        if found.metadata is None:
            states.append(_failed(transactional_id, found.error))
        else:
            states.append(_described(found.metadata))
    return DescribeTransactionsResponse(transaction_states=tuple(states))


def _list_error(
    request: ListTransactionsRequest, code: ErrorCode, message: str | None
) -> ListTransactionsResponse:
    return ListTransactionsResponse(error_code=code)


@handles(ApiKey.LIST_TRANSACTIONS, error_response=_list_error)
def handle_list_transactions(
    broker: Broker, ctx: RequestContext, request: ListTransactionsRequest
) -> ListTransactionsResponse:
    coordinator = txn_runtime_of(broker).coordinator
    listed, unknown = coordinator.list_transactions(
        request.state_filters, request.producer_id_filters, request.duration_filter
    )
    visible = tuple(
        ListedTransaction(m.transactional_id, m.producer_id, m.state.kafka_name)
        for m in listed
        if authorize(
            broker, ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, m.transactional_id
        )
    )
    return ListTransactionsResponse(
        error_code=ErrorCode.NONE, unknown_state_filters=tuple(unknown), transaction_states=visible
    )
