"""Incremental fetch sessions (KIP-227), as Kafka's ``FetchManager`` keeps them.

Theory of operation
-------------------
From Fetch v7 a client may open a *session*: the broker remembers the
partitions and answers later requests listing only what changed. The request's
``(session_id, session_epoch)`` selects one of four contexts
(``FetchManager.newContext``)::

    session_id  epoch   context        reads                       answers session_id
    ----------  ------  -------------  --------------------------  ------------------------
    any         -1      sessionless    the request's partitions    0 (an old session with
                                                                   that id is removed)
    any         0       full           the request's partitions    a new id (0 if the cache
                                                                   is full and nothing can
                                                                   be evicted)
    unknown     >0      error 70       nothing                     0, FETCH_SESSION_ID_NOT_FOUND
    known       wrong   error 71       nothing                     0, INVALID_FETCH_SESSION_EPOCH
    known       right   incremental    the session's partitions    the session id
                                       (request ones added or
                                       updated, forgotten removed)

A session created at epoch 0 expects epoch 1 next; each incremental request
moves it on (``nextEpoch``: after Int.MAX comes 1). A session whose partitions
are all forgotten is removed and the request answered sessionless. A v13+
session (topic ids) used with v12 or lower, or the reverse, is
FETCH_SESSION_TOPIC_ID_ERROR (106).

An incremental *response* leaves out partitions that have nothing new: no
records, same HW and log start offset as last sent, no error
(``CachedPartition.maybeUpdateResponseData``); partitions that returned records
move to the end of the session's order so the next response serves the others
first.

Cache size and eviction follow Kafka's defaults (``max.incremental.fetch.session
.cache.slots`` 1000, eviction after 120 s unused), in one shard: when full, the
least recently used session older than the eviction time goes, else the
smallest session created longer ago than that, if it is no larger than the new
one. Session ids are random positive ints.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.fetch import PartitionData

__all__ = [
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "FetchContext",
    "FetchSessionCache",
    "PartitionKey",
    "RequestedPartition",
    "next_epoch",
]

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
INVALID_SESSION_ID = 0
_INT_MAX = 0x7FFFFFFF
DEFAULT_MAX_SESSIONS = 1000
DEFAULT_EVICTION_MS = 120_000


def next_epoch(epoch: int) -> int:
    """``FetchMetadata.nextEpoch``."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _INT_MAX else epoch + 1


@dataclass(frozen=True, slots=True)
class PartitionKey:
    """``TopicIdPartition``: equal by topic id when it has one, else by name."""

    topic_id: uuid.UUID
    topic: str | None
    partition: int

    def _ident(self) -> tuple[object, int]:
        return (self.topic_id if self.topic_id.int else self.topic, self.partition)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PartitionKey) and self._ident() == other._ident()

    def __hash__(self) -> int:
        return hash(self._ident())


@dataclass(frozen=True, slots=True)
class RequestedPartition:
    """One partition of a fetch (``FetchRequest.PartitionData``)."""

    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    log_start_offset: int = -1


@dataclass(slots=True)
class _Cached:
    request: RequestedPartition
    high_watermark: int = -1
    log_start_offset: int = -1

    def must_respond(self, data: PartitionData) -> bool:
        """``maybeUpdateResponseData`` with updates; True if the partition is sent."""
        respond = bool(data.records) or data.preferred_read_replica != -1
        if self.high_watermark != data.high_watermark:
            respond, self.high_watermark = True, data.high_watermark
        if self.log_start_offset != data.log_start_offset:
            respond, self.log_start_offset = True, data.log_start_offset
        if data.error_code != ErrorCode.NONE:
            respond, self.high_watermark = True, -1
        return respond or data.diverging_epoch.epoch != -1


@dataclass(slots=True)
class _Session:
    id: int
    uses_topic_ids: bool
    created_ms: int
    last_used_ms: int
    epoch: int
    partitions: dict[PartitionKey, _Cached] = field(default_factory=dict)


Responses = list[tuple[PartitionKey, PartitionData]]


@dataclass(kw_only=True)
class FetchContext:
    """What to read for one request, and how to shape its response."""

    kind: str  # "sessionless", "full", "incremental" or "error"
    partitions: list[tuple[PartitionKey, RequestedPartition]]
    version: int = 0
    error: ErrorCode = ErrorCode.NONE
    request_epoch: int = FINAL_EPOCH
    session: _Session | None = None
    cache: FetchSessionCache | None = None

    def respond(self, updates: Responses, now_ms: int) -> tuple[ErrorCode, int, Responses]:
        """``updateAndGenerateResponseData``: (top-level error, session id, partitions)."""
        if self.kind == "error":
            return self.error, INVALID_SESSION_ID, []
        if self.kind == "sessionless":
            return ErrorCode.NONE, INVALID_SESSION_ID, updates
        if self.kind == "full":
            assert self.cache is not None
            requested = dict(self.partitions)
            cached = {
                key: _Cached(requested[key], data.high_watermark, data.log_start_offset)
                for key, data in updates
            }
            return ErrorCode.NONE, self.cache.maybe_create(now_ms, cached, self), updates
        return self._incremental(updates)

    def _incremental(self, updates: Responses) -> tuple[ErrorCode, int, Responses]:
        session = self.session
        assert session is not None
        if session.epoch != next_epoch(self.request_epoch):
            return ErrorCode.INVALID_FETCH_SESSION_EPOCH, session.id, []
        sent: Responses = []
        for key, data in updates:
            cached = session.partitions.get(key)
            if cached is None or not cached.must_respond(data):
                continue
            sent.append((key, data))
            if data.records:
                session.partitions[key] = session.partitions.pop(key)
        return ErrorCode.NONE, session.id, sent


def _error(version: int, code: ErrorCode) -> FetchContext:
    """A session error: nothing is read, the response carries only ``code``."""
    return FetchContext(kind="error", partitions=[], version=version, error=code)


class FetchSessionCache:
    """Sessions by id; see the module docstring."""

    def __init__(
        self,
        *,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        eviction_ms: int = DEFAULT_EVICTION_MS,
        rng: random.Random | None = None,
    ) -> None:
        self.max_sessions = max_sessions
        self.eviction_ms = eviction_ms
        self._rng = rng or random.Random()
        self.sessions: dict[int, _Session] = {}

    def new_context(
        self,
        *,
        version: int,
        session_id: int,
        epoch: int,
        fetch_data: list[tuple[PartitionKey, RequestedPartition]],
        forgotten: Iterable[PartitionKey],
        now_ms: int,
    ) -> FetchContext:
        """``FetchManager.newContext``."""
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            self.sessions.pop(session_id, None)
            kind = "sessionless" if epoch == FINAL_EPOCH else "full"
            return FetchContext(
                kind=kind, partitions=fetch_data, version=version, request_epoch=epoch, cache=self
            )
        session = self.sessions.get(session_id)
        if session is None:
            return _error(version, ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return _error(version, ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != (version >= 13):
            return _error(version, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        for key, requested in fetch_data:
            cached = session.partitions.get(key)
            if cached is None:
                session.partitions[key] = _Cached(requested)
            else:
                cached.request = requested
        for key in forgotten:
            session.partitions.pop(key, None)
        if not session.partitions:
            del self.sessions[session.id]
            return FetchContext(
                kind="sessionless", partitions=fetch_data, version=version, request_epoch=epoch
            )
        session.last_used_ms = now_ms
        session.epoch = next_epoch(session.epoch)
        partitions = [(key, cached.request) for key, cached in session.partitions.items()]
        return FetchContext(
            kind="incremental",
            partitions=partitions,
            version=version,
            request_epoch=epoch,
            session=session,
        )

    def maybe_create(
        self, now_ms: int, cached: dict[PartitionKey, _Cached], ctx: FetchContext
    ) -> int:
        """A new session for a full fetch, or 0 when the cache has no room."""
        if len(self.sessions) >= self.max_sessions and not self._try_evict(len(cached), now_ms):
            return INVALID_SESSION_ID
        session_id = self._new_id()
        self.sessions[session_id] = _Session(
            session_id, ctx.version >= 13, now_ms, now_ms, next_epoch(INITIAL_EPOCH), cached
        )
        return session_id

    def _new_id(self) -> int:
        while True:
            candidate = self._rng.randrange(1, _INT_MAX)
            if candidate not in self.sessions:
                return candidate

    def _try_evict(self, size: int, now_ms: int) -> bool:
        if not self.sessions:
            return False
        oldest = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - oldest.last_used_ms > self.eviction_ms:
            del self.sessions[oldest.id]
            return True
        old_enough = [s for s in self.sessions.values() if now_ms - s.created_ms > self.eviction_ms]
        if not old_enough:
            return False
        smallest = min(old_enough, key=lambda s: (len(s.partitions), s.id))
        if size <= len(smallest.partitions):  # (false, size, 0) sorts before an equal size
            return False
        del self.sessions[smallest.id]
        return True
