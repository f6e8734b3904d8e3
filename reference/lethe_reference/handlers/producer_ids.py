"""InitProducerId (key 22, v0-5): producer ids for idempotent producers.

Theory of operation
-------------------
``KafkaApis.handleInitProducerIdRequest`` and
``TransactionCoordinator.handleInitProducerId`` of Kafka 4.0, in their order:

0. authorization (only with an authorizer, :mod:`.authz`): WRITE on the
   TRANSACTIONAL_ID (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 53); an
   idempotent producer needs IDEMPOTENT_WRITE on the CLUSTER or WRITE on some
   topic (else CLUSTER_AUTHORIZATION_FAILED, 31);

1. ``producer_id`` / ``producer_epoch`` (v3+): both -1, or both set; one
   without the other is INVALID_REQUEST (42);
2. ``transactional_id`` null (an idempotent producer): a new producer id,
   epoch 0, whatever id and epoch the producer had (Kafka "blindly accepts");
3. ``transactional_id`` "": INVALID_REQUEST; a ``transaction_timeout_ms`` not in
   ``1..transaction.max.timeout.ms`` (900000): INVALID_TRANSACTION_TIMEOUT (50);
4. any other transactional id: the transaction coordinator
   (:mod:`lethe_reference.cluster.txn`): NOT_COORDINATOR when this broker does
   not hold the id's ``__transaction_state`` partition, else a new epoch (the
   first: a new producer id, epoch 0), CONCURRENT_TRANSACTIONS while an open
   transaction of the id is fenced and aborted, PRODUCER_FENCED (before v4:
   INVALID_PRODUCER_EPOCH) for an expected id/epoch that is not current.

Every error answers producer id -1, epoch -1.

Producer ids. Kafka's brokers take blocks of 1000 ids from the controller
(``ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE``), which records each block
durably, so ids grow from 0 and a restarted broker continues with the next
block, never reusing one. :class:`ProducerIdManager` does the same with a file
of its own in the log directory, ``lethe-producer-ids``, written (temporary
file, fsync, rename) whenever a block is taken::

    0          format version
    2000       the first id of the next block (the blocks below are used up)

A missing file means no id was ever handed out. An unreadable one is refused
(KAFKA_STORAGE_ERROR) rather than risk handing out an id twice. Kafka's first
InitProducerId after startup may answer COORDINATOR_LOAD_IN_PROGRESS (14)
while the first block is fetched; here the block is taken at once.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.init_producer_id import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    InitProducerIdRequest,
    InitProducerIdResponse,
)

from lethe_reference.cluster.acl import AclOperation, ResourceType
from lethe_reference.handlers.authz import authorize, authorize_any, authorize_cluster
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "BLOCK_SIZE",
    "PRODUCER_IDS_FILE",
    "ProducerIdError",
    "ProducerIdManager",
    "handle_init_producer_id",
    "producer_ids",
]

#: ``ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE``.
BLOCK_SIZE = 1000
PRODUCER_IDS_FILE = "lethe-producer-ids"
_VERSION = 0
_EXTENSION = "handlers.producer_ids"


class ProducerIdError(Exception):
    """The block file cannot be read or written."""


class ProducerIdManager:
    """Hands out producer ids from durable blocks (see the module docstring)."""

    def __init__(self, log_dir: Path, *, durable: bool = True) -> None:
        self.path = Path(log_dir) / PRODUCER_IDS_FILE
        self.durable = durable
        self._next_id = self._block_end = self._read()

    def _read(self) -> int:
        if not self.path.exists():
            return 0
        try:
            lines = self.path.read_text("ascii").split()
            if len(lines) != 2 or int(lines[0]) != _VERSION or int(lines[1]) < 0:
                raise ValueError(f"unexpected content {lines!r}")
            return int(lines[1])
        except (OSError, ValueError, UnicodeDecodeError) as error:
            raise ProducerIdError(f"cannot read {self.path}: {error}") from None

    def _write(self, next_block: int) -> None:
        temporary = self.path.with_name(self.path.name + ".tmp")
        try:
            with open(temporary, "w", encoding="ascii") as out:
                out.write(f"{_VERSION}\n{next_block}\n")
                out.flush()
                if self.durable:
                    os.fsync(out.fileno())
            os.replace(temporary, self.path)
        except OSError as error:
            raise ProducerIdError(f"cannot write {self.path}: {error}") from None

    def next_id(self) -> int:
        """A producer id never handed out before, on this log directory."""
        if self._next_id >= self._block_end:
            self._write(self._next_id + BLOCK_SIZE)
            self._block_end = self._next_id + BLOCK_SIZE
        producer_id = self._next_id
        self._next_id += 1
        return producer_id


def producer_ids(broker: Broker) -> ProducerIdManager:
    """The broker's manager, made on first use (reads the block file)."""
    manager = broker.extensions.get(_EXTENSION)
    if not isinstance(manager, ProducerIdManager):
        manager = ProducerIdManager(broker.log_dir, durable=broker.durable)
        broker.extensions[_EXTENSION] = manager
    return manager


def _error(code: ErrorCode) -> InitProducerIdResponse:
    return InitProducerIdResponse(
        error_code=code, producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH
    )


def _error_response(
    request: InitProducerIdRequest, code: ErrorCode, message: str | None
) -> InitProducerIdResponse:
    """``InitProducerIdRequest.getErrorResponse``."""
    return _error(code)


def _refusal(broker: Broker, ctx: RequestContext, transactional_id: str | None) -> ErrorCode | None:
    """Step 0: WRITE on the transactional id, or for an idempotent producer
    IDEMPOTENT_WRITE on the cluster or WRITE on some topic."""
    if transactional_id is not None:
        if authorize(
            broker, ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id
        ):
            return None
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if authorize_cluster(broker, ctx, AclOperation.IDEMPOTENT_WRITE) or authorize_any(
        broker, ctx, AclOperation.WRITE, ResourceType.TOPIC
    ):
        return None
    return ErrorCode.CLUSTER_AUTHORIZATION_FAILED


@handles(ApiKey.INIT_PRODUCER_ID, error_response=_error_response)
def handle_init_producer_id(
    broker: Broker, ctx: RequestContext, request: InitProducerIdRequest
) -> InitProducerIdResponse:
    """Answer an InitProducerId request (module docstring)."""
    refusal = _refusal(broker, ctx, request.transactional_id)
    if refusal is not None:
        return _error(refusal)
    no_id = request.producer_id == NO_PRODUCER_ID
    no_epoch = request.producer_epoch == NO_PRODUCER_EPOCH
    if no_id != no_epoch:
        return _error(ErrorCode.INVALID_REQUEST)
    transactional_id = request.transactional_id
    if transactional_id is None:
        try:
            producer_id = producer_ids(broker).next_id()
        except ProducerIdError:
            return _error(ErrorCode.KAFKA_STORAGE_ERROR)
        return InitProducerIdResponse(
            error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=0
        )
    if transactional_id == "":
        return _error(ErrorCode.INVALID_REQUEST)
    if (
        not 0
        < request.transaction_timeout_ms
        <= broker.config.get_int("transaction.max.timeout.ms")
    ):
        return _error(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
    from lethe_reference.cluster.txn_runtime import txn_runtime_of  # noqa: PLC0415 (cycle)

    expected = None if no_id else (request.producer_id, request.producer_epoch)
    result = txn_runtime_of(broker).coordinator.init_producer_id(
        transactional_id, request.transaction_timeout_ms, expected
    )
    code = result.error
    if code is ErrorCode.PRODUCER_FENCED and ctx.api_version < 4:
        code = ErrorCode.INVALID_PRODUCER_EPOCH  # clients before v4 do not know PRODUCER_FENCED
    if code is not ErrorCode.NONE:
        return _error(code)
    return InitProducerIdResponse(
        error_code=code, producer_id=result.producer_id, producer_epoch=result.producer_epoch
    )
