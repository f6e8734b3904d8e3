"""The coordinator's shared state and plumbing: config, clock, timers, writes, loading.

Theory of operation
-------------------
:class:`CoordinatorRuntime` owns everything the request logic (``rebalance``,
``membership``, ``offsets``) works on:

* the groups and committed offsets of the ``__consumer_offsets`` partitions
  this coordinator has loaded (``load``); a request for a group in another
  partition is answered NOT_COORDINATOR, as Kafka answers for a partition it
  does not lead;
* the injected clock (any object with ``now_ms()``) and :class:`Timers`. Every
  public operation first fires the timers already due, then does its work, then
  fires again (a zero ``group.initial.rebalance.delay.ms`` completes the join in
  the same call); :meth:`tick` fires them on the server's schedule, which should
  call it whenever :meth:`next_deadline_ms` has passed;
* the injected ``append(partition, batch_bytes)``: records reach the log through
  it, synchronously. It may raise :class:`AppendError` with a Kafka error code
  (NOT_LEADER_OR_FOLLOWER, ...), which the request logic turns into the code
  the client gets. Any other exception is a bug and propagates.

Pending replies are completed through their callbacks, which must not call
back into the coordinator (queue the response, do not handle a new request).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from lethe_formats.model import Record
from lethe_formats.records.builder import RecordSpec

from lethe_reference.cluster.group import codes
from lethe_reference.cluster.group.api import (
    DescribedGroup,
    DescribedMember,
    JoinResult,
    ListedGroup,
    SyncResult,
    TopicPartition,
)
from lethe_reference.cluster.group.group import ClassicGroup, Member
from lethe_reference.cluster.group.persistence import (
    OffsetAndMetadata,
    build_records_batch,
    build_txn_batch,
    group_from_value,
    replay,
)
from lethe_reference.cluster.group.state import GroupEvent, GroupState
from lethe_reference.cluster.group.support import Timers, partition_for

__all__ = ["AppendError", "CoordinatorRuntime", "GroupConfig", "NowMs"]

_log = logging.getLogger("lethe_reference.cluster.group")

AppendFn = Callable[[int, bytes], None]
_Offsets = dict[TopicPartition, OffsetAndMetadata]


class NowMs(Protocol):
    def now_ms(self) -> int: ...


class AppendError(Exception):
    """Raised by the append function: the write failed with Kafka error ``code``."""

    def __init__(self, error_code: int, message: str = "") -> None:
        super().__init__(message or f"append failed with error {error_code}")
        self.error_code = error_code


@dataclass(frozen=True, slots=True)
class GroupConfig:
    """Broker settings the coordinator uses (Kafka 4.0 defaults)."""

    offsets_topic_num_partitions: int = 50
    group_initial_rebalance_delay_ms: int = 3000
    group_min_session_timeout_ms: int = 6000
    group_max_session_timeout_ms: int = 1_800_000
    group_max_size: int = 2**31 - 1
    offset_metadata_max_bytes: int = 4096
    #: how long a new member's JoinGroup may wait (Kafka's fixed 5 minutes)
    new_member_join_timeout_ms: int = 300_000


def _random_suffix() -> str:
    return str(uuid.uuid4())


class CoordinatorRuntime:
    """State and plumbing shared by the request logic (see the module docstring)."""

    def __init__(
        self,
        clock: NowMs,
        append: AppendFn,
        config: GroupConfig | None = None,
        *,
        new_uuid: Callable[[], str] = _random_suffix,
    ) -> None:
        self.clock = clock
        self.config = config or GroupConfig()
        self._append = append
        self._new_uuid = new_uuid
        self.groups: dict[str, ClassicGroup] = {}
        self.offsets: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
        self.loaded: set[int] = set()
        self.timers = Timers()
        #: transactional offset commits waiting for their marker:
        #: (producer id, group) -> offsets (TxnOffsetCommit, Kafka's pendingTransactionalOffsets)
        self.pending_txn_offsets: dict[
            tuple[int, str], dict[TopicPartition, OffsetAndMetadata]
        ] = {}

    # -- time ---------------------------------------------------------------

    def now(self) -> int:
        return self.clock.now_ms()

    def tick(self, now_ms: int | None = None) -> int:
        """Fire the timers due at ``now_ms`` (default: the clock); how many ran."""
        return self.timers.fire_due(self.now() if now_ms is None else now_ms)

    def next_deadline_ms(self) -> int | None:
        """When :meth:`tick` next has work (None: no timer)."""
        return self.timers.next_deadline()

    def _advance(self) -> None:
        self.timers.fire_due(self.now())

    # -- partitions ---------------------------------------------------------

    def partition_for(self, group_id: str) -> int:
        """The ``__consumer_offsets`` partition of ``group_id``."""
        return partition_for(group_id, self.config.offsets_topic_num_partitions)

    def _not_coordinator(self, group_id: str) -> bool:
        return self.partition_for(group_id) not in self.loaded

    def load(
        self, partition: int, records: Iterable[Record | tuple[bytes | None, bytes | None]]
    ) -> None:
        """Become coordinator for ``partition``, rebuilding its groups and offsets
        from its records (in log order; committed, non-control batches only)."""
        self.unload(partition)
        state = replay(records)
        now = self.now()
        for group_id, value in state.groups.items():
            if value is not None:
                self.groups[group_id] = group_from_value(group_id, value)
        for group_id, stored in state.offsets.items():
            kept = {tp: value for tp, value in stored.items() if value is not None}
            if kept:
                self.offsets[group_id] = kept
                self.groups.setdefault(group_id, ClassicGroup(group_id, now))
        for group in self._groups_of(partition):
            for member in group.members.values():
                self._schedule_heartbeat(group, member.member_id, member.session_timeout_ms)
        self.loaded.add(partition)
        if state.skipped:
            _log.info(
                "partition %d: skipped %d records of other group types", partition, state.skipped
            )

    def unload(self, partition: int) -> None:
        """Stop coordinating ``partition``: its groups die, waiting replies get NOT_COORDINATOR."""
        now = self.now()
        for group in self._groups_of(partition):
            for member in group.members.values():
                group.complete_join(member, JoinResult(codes.NOT_COORDINATOR, member.member_id))
                self._complete_sync(member, SyncResult(codes.NOT_COORDINATOR))
                self.timers.cancel(("heartbeat", group.group_id, member.member_id))
            for member_id in group.pending_members:
                self.timers.cancel(("heartbeat", group.group_id, member_id))
            self.timers.cancel(("join", group.group_id))
            self.timers.cancel(("sync", group.group_id))
            group.fire(GroupEvent.UNLOAD, now)
            del self.groups[group.group_id]
            self.offsets.pop(group.group_id, None)
        self.loaded.discard(partition)

    def _groups_of(self, partition: int) -> list[ClassicGroup]:
        return [g for g in self.groups.values() if self.partition_for(g.group_id) == partition]

    # -- writes -------------------------------------------------------------

    def _write(
        self, group_id: str, records: list[RecordSpec], txn: tuple[int, int] | None = None
    ) -> int:
        """Append ``records`` to the group's partition; NONE or the append's error code.
        ``txn``: (producer id, epoch) of a transactional offset commit."""
        batch = build_records_batch(records) if txn is None else build_txn_batch(records, *txn)
        try:
            self._append(self.partition_for(group_id), batch)
        except AppendError as error:
            _log.warning("write for group %s failed: %s", group_id, error)
            return error.error_code
        return codes.NONE

    # -- helpers shared by the request logic --------------------------------

    def _schedule_heartbeat(self, group: ClassicGroup, member_id: str, timeout_ms: int) -> None:
        group_id = group.group_id
        self.timers.schedule(
            ("heartbeat", group_id, member_id),
            self.now() + timeout_ms,
            lambda: self._expire_heartbeat(group_id, member_id),
        )

    def _expire_heartbeat(self, group_id: str, member_id: str) -> None:
        raise NotImplementedError  # provided by the rebalance logic

    @staticmethod
    def _complete_sync(member: Member, result: SyncResult) -> None:
        pending, member.sync_pending = member.sync_pending, None
        if pending is not None:
            pending.complete(result)

    # -- DescribeGroups / ListGroups ----------------------------------------

    def describe_group(self, group_id: str) -> DescribedGroup:
        """DescribeGroups for one group (an unknown group is reported Dead)."""
        self._advance()
        if self._not_coordinator(group_id):
            return DescribedGroup(group_id, error_code=codes.NOT_COORDINATOR, state="")
        group = self.groups.get(group_id)
        if group is None:
            return DescribedGroup(group_id)
        stable = group.state is GroupState.STABLE
        protocol = group.protocol_name or "" if stable else ""
        members = tuple(
            DescribedMember(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                metadata=m.metadata(protocol) if stable else b"",
                assignment=m.assignment if stable else b"",
            )
            for m in group.members.values()
        )
        return DescribedGroup(
            group_id,
            state=group.state.value,
            protocol_type=group.protocol_type or "",
            protocol_data=protocol,
            members=members,
            exists=True,
        )

    def list_groups(
        self, states: Iterable[str] = (), types: Iterable[str] = ()
    ) -> list[ListedGroup]:
        """ListGroups: groups in the loaded partitions, optionally filtered by
        state names and group types (both case-insensitive, as Kafka 4.0)."""
        self._advance()
        wanted_states = {s.lower() for s in states}
        wanted_types = {t.lower() for t in types}
        listed = []
        for group in self.groups.values():
            if wanted_states and group.state.value.lower() not in wanted_states:
                continue
            if wanted_types and "classic" not in wanted_types:
                continue
            listed.append(ListedGroup(group.group_id, group.protocol_type or "", group.state.value))
        return listed
