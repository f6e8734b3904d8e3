"""Helpers of the group, offset and producer-id handler tests.

A broker set up as the golden wire broker was (fixtures/golden/wire/case.json:
node 1 advertised at 127.0.0.1:19092, ``offsets.topic.replication.factor=1``,
``group.initial.rebalance.delay.ms=0``), the recorded frames decoded with the
protocol layer, and small request builders. Expected values come from the
golden responses and Kafka's source, never from running lethe.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from lethe_formats.fixtures import fixtures_root
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.envelope import decode_request, decode_response
from lethe_formats.protocol.messages.find_coordinator import FindCoordinatorRequest
from lethe_formats.protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from lethe_formats.protocol.messages.sync_group import (
    SyncGroupRequest,
    SyncGroupRequestAssignment,
)
from lethe_formats.protocol.schema import Struct
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig
from lethe_reference.handlers import groups, offsets, producer_ids
from lethe_reference.handlers.context import RequestContext
from lethe_reference.purgatory import Deferred

FRAMES = fixtures_root() / "golden" / "wire" / "frames.jsonl"
#: The golden broker's settings that matter here (case.json ``broker.settings``).
GOLDEN_SETTINGS = {
    "offsets.topic.replication.factor": "1",
    "group.initial.rebalance.delay.ms": "0",
}
START_MS = 1_795_289_550_774
RANGE_METADATA = b"\x00\x00\x00\x00\x00\x01\x00\x06events\x00\x00\x00\x00"

HANDLERS: dict[int, Callable[[Broker, RequestContext, Any], Any]] = {
    ApiKey.FIND_COORDINATOR: groups.handle_find_coordinator,
    ApiKey.JOIN_GROUP: groups.handle_join_group,
    ApiKey.SYNC_GROUP: groups.handle_sync_group,
    ApiKey.HEARTBEAT: groups.handle_heartbeat,
    ApiKey.LEAVE_GROUP: groups.handle_leave_group,
    ApiKey.DESCRIBE_GROUPS: groups.handle_describe_groups,
    ApiKey.LIST_GROUPS: groups.handle_list_groups,
    ApiKey.OFFSET_COMMIT: offsets.handle_offset_commit,
    ApiKey.OFFSET_FETCH: offsets.handle_offset_fetch,
    ApiKey.INIT_PRODUCER_ID: producer_ids.handle_init_producer_id,
}


def new_broker(
    log_dir: Path, settings: dict[str, str] | None = None, *, start_ms: int = START_MS
) -> Broker:
    """A started broker like the golden one (``settings`` override its config)."""
    config = BrokerConfig({**GOLDEN_SETTINGS, **(settings or {})})
    broker = Broker(
        log_dir=log_dir,
        config=config,
        clock=ManualClock(start_ms),
        host="127.0.0.1",
        port=19092,
        node_id=1,
        durable=False,
    )
    broker.startup()
    return broker


def clock(broker: Broker) -> ManualClock:
    assert isinstance(broker.clock, ManualClock)
    return broker.clock


def ctx(api_key: int, version: int, client_id: str = "lethe-test", conn: int = 1) -> RequestContext:
    return RequestContext(int(api_key), version, 1, client_id, conn)


def call(
    broker: Broker, api_key: int, version: int, request: Struct, client_id: str = "lethe-test"
) -> Any:
    """Run the handler; a deferred comes back as is unless already complete."""
    result = HANDLERS[api_key](broker, ctx(api_key, version, client_id), request)
    if isinstance(result, Deferred) and result.done:
        return result.result()
    return result


def advance(broker: Broker, ms: int) -> list[str]:
    """Move the broker's clock and run what became due (as the server's timer does)."""
    clock(broker).advance(ms)
    return broker.run_due()


def find(broker: Broker, version: int, keys: tuple[str, ...], key_type: int = 0) -> Any:
    """FindCoordinator v0-3 for ``keys[0]``, v4+ for all ``keys``."""
    if version < 4:
        request = FindCoordinatorRequest(key=keys[0], key_type=key_type)
    else:
        request = FindCoordinatorRequest(key_type=key_type, coordinator_keys=keys)
    return call(broker, ApiKey.FIND_COORDINATOR, version, request)


# -- golden frames -------------------------------------------------------------------------


@dataclass(frozen=True)
class Exchange:
    seq: int
    conn: int
    client_id: str
    api_key: int
    version: int
    request_ms: int
    request: Struct
    response_ms: int | None
    response: Struct | None


@cache
def exchanges() -> tuple[Exchange, ...]:
    """Every recorded exchange, in request order, both halves decoded."""
    requests, answers = [], {}
    for line in FRAMES.read_text().splitlines():
        raw = json.loads(line)
        payload = bytes.fromhex(raw["hex"])[4:]
        if raw["dir"] == "request":
            requests.append((raw, decode_request(payload)[1]))
        else:
            body = decode_response(raw["api_key"], raw["api_version"], payload)[1]
            answers[raw["conn"], raw["correlation_id"]] = (raw["ts_ms"], body)
    out = []
    for raw, body in requests:
        answer_ms, answer = answers.get((raw["conn"], raw["correlation_id"]), (None, None))
        out.append(
            Exchange(
                raw["seq"],
                raw["conn"],
                raw["client_id"],
                raw["api_key"],
                raw["api_version"],
                raw["ts_ms"],
                body,
                answer_ms,
                answer,
            )
        )
    return tuple(out)


def swap_strings(value: Any, mapping: dict[str, str]) -> Any:
    """``value`` with every string found in ``mapping`` replaced (member ids)."""
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, tuple):
        return tuple(swap_strings(item, mapping) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: swap_strings(getattr(value, f.name), mapping) for f in fields(value)}
        return replace(value, **changes)
    return value


def without_throttle(response: Any) -> Any:
    return (
        replace(response, throttle_time_ms=0) if hasattr(response, "throttle_time_ms") else response
    )


# -- request builders ----------------------------------------------------------------------


def join_request(
    member_id: str = "", group: str = "g", session_ms: int = 10_000, rebalance_ms: int = 30_000
) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group,
        session_timeout_ms=session_ms,
        rebalance_timeout_ms=rebalance_ms,
        member_id=member_id,
        protocol_type="consumer",
        protocols=(JoinGroupRequestProtocol("range", RANGE_METADATA),),
    )


def sync_request(
    member_id: str,
    generation: int,
    assignments: dict[str, bytes] | None = None,
    group: str = "g",
    protocol: tuple[str | None, str | None] = (None, None),
) -> SyncGroupRequest:
    return SyncGroupRequest(
        group_id=group,
        generation_id=generation,
        member_id=member_id,
        protocol_type=protocol[0],
        protocol_name=protocol[1],
        assignments=tuple(SyncGroupRequestAssignment(m, a) for m, a in (assignments or {}).items()),
    )
