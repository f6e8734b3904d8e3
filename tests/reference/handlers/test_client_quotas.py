"""DescribeClientQuotas (48) and AlterClientQuotas (49) against what a single-node Kafka
4.0.0 answered ``kafka-configs.sh --entity-type clients|users|ips`` (fixtures/golden/
admin-tools/leadership-quotas), and ``ClientQuotaControlManager`` /
``ClientQuotasImage``'s rules for what the tools never send."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from admin_tools_support import LEADERSHIP_QUOTAS, exchanges, load_frames, replay, roundtrip_bytes
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.messages.alter_client_quotas import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    AlterQuotaEntry,
    QuotaOp,
)
from lethe_formats.protocol.messages.describe_client_quotas import (
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
    QuotaComponent,
    QuotaEntity,
)
from lethe_reference.broker import Broker
from lethe_reference.clock import ManualClock
from lethe_reference.config import BrokerConfig
from lethe_reference.protocol.loopback import LoopbackClient

FRAMES = load_frames(LEADERSHIP_QUOTAS, "frames.jsonl")
OUTPUTS: list[dict[str, Any]] = json.loads((LEADERSHIP_QUOTAS / "outputs.json").read_text())
STEPS = [o["step"] for o in OUTPUTS]


def fresh(tmp_path: Path) -> Broker:
    broker = Broker(tmp_path, config=BrokerConfig({}), clock=ManualClock(0), durable=False)
    broker.startup()
    return broker


def test_the_recording_has_every_quota_step() -> None:
    alters = [req["step"] for req, _ in exchanges(49, frames=FRAMES)]
    assert alters == [
        "quota-client",
        "quota-user",
        "quota-user-client",
        "quota-user-default",
        "quota-client-default",
        "quota-ip",
        "quota-ip-default",
        "invalid-fraction",
        "invalid-negative",
        "delete-client-key",
        "delete-ip",
    ]
    assert len(exchanges(48, frames=FRAMES)) == 27


@pytest.mark.parametrize("key", [48, 49])
def test_kafkas_frames_reencode_byte_for_byte(key: int) -> None:
    for pair in exchanges(key, frames=FRAMES):
        for frame in pair:
            original, ours = roundtrip_bytes(frame)
            assert ours == original


def test_replaying_every_tool_request_in_order_gets_kafkas_answers(tmp_path: Path) -> None:
    """The tools' DescribeClientQuotas and AlterClientQuotas requests, replayed in the
    order they were sent on a fresh broker, get Kafka's answers (entries, values,
    their order and the empty error message of a successful describe)."""
    broker = fresh(tmp_path)
    pairs = sorted(
        exchanges(48, frames=FRAMES) + exchanges(49, frames=FRAMES), key=lambda p: p[0]["seq"]
    )
    for req, resp in pairs:
        ours, theirs = replay(broker, req, resp)
        assert ours == theirs, req["step"]


def describe(
    broker: Broker, *components: QuotaComponent, strict: bool = False
) -> DescribeClientQuotasResponse:
    answer = LoopbackClient(broker).request(DescribeClientQuotasRequest(components, strict), 1)
    assert isinstance(answer, DescribeClientQuotasResponse)
    return answer


def alter(
    broker: Broker, *entries: AlterQuotaEntry, validate_only: bool = False
) -> list[tuple[int, str | None]]:
    answer = LoopbackClient(broker).request(AlterClientQuotasRequest(entries, validate_only), 1)
    assert isinstance(answer, AlterClientQuotasResponse)
    return [(e.error_code, e.error_message) for e in answer.entries]


def entry(parts: dict[str, str | None], **ops: float | None) -> AlterQuotaEntry:
    return AlterQuotaEntry(
        tuple(QuotaEntity(t, n) for t, n in parts.items()),
        tuple(QuotaOp(k, 0.0 if v is None else v, v is None) for k, v in ops.items()),
    )


def test_entity_and_value_errors_carry_kafkas_messages(tmp_path: Path) -> None:
    broker = fresh(tmp_path)
    cases = [
        (entry({}, producer_byte_rate=1.0), "Invalid empty client quota entity"),
        (
            entry({"group": "g"}, producer_byte_rate=1.0),
            "Unhandled client quota entity type: group",
        ),
        (entry({"user": ""}, producer_byte_rate=1.0), "Empty user not supported"),
        (
            entry({"ip": "127.0.0.1", "user": "u"}, connection_creation_rate=1.0),
            "Invalid quota entity combination, IP entity shouldnot be combined with User or "
            "ClientId",
        ),
        (
            entry({"ip": "no.such.host.invalid"}, connection_creation_rate=1.0),
            "no.such.host.invalid is not a valid IP or resolvable host.",
        ),
        (entry({"client-id": "c"}, nosuch=1.0), "Invalid configuration key nosuch"),
        (
            entry({"client-id": "c"}, request_percentage=0.0),
            "Quota request_percentage must be greater than 0",
        ),
        (
            entry({"ip": "10.0.0.1"}, connection_creation_rate=2.0**31),
            "Proposed value for connection_creation_rate is too large for an INT.",
        ),
        (
            entry({"ip": "10.0.0.1"}, connection_creation_rate=2.5),
            "connection_creation_rate cannot be a fractional value.",
        ),
    ]
    for request_entry, message in cases:
        assert alter(broker, request_entry) == [(ErrorCode.INVALID_REQUEST, message)]
    assert describe(broker).entries == ()


def test_a_repeated_entity_keeps_its_first_changes_and_reports_the_repeat(tmp_path: Path) -> None:
    broker = fresh(tmp_path)
    first = entry({"client-id": "c"}, producer_byte_rate=100.0)
    again = entry({"client-id": "c"}, producer_byte_rate=200.0)
    assert alter(broker, first, again) == [
        (42, "Ignoring duplicate entity ClientQuotaEntity(entries={client-id=c})")
    ]
    ((values,),) = [[e.values for e in describe(broker).entries or ()]]
    assert [(v.key, v.value) for v in values] == [("producer_byte_rate", 100.0)]


def test_validate_only_and_removing_the_last_key_leave_no_entity(tmp_path: Path) -> None:
    broker = fresh(tmp_path)
    assert alter(broker, entry({"user": None}, consumer_byte_rate=5.0), validate_only=True) == [
        (0, None)
    ]
    assert describe(broker).entries == ()
    assert alter(broker, entry({"user": None}, consumer_byte_rate=5.0)) == [(0, None)]
    assert alter(broker, entry({"user": None}, consumer_byte_rate=None)) == [(0, None)]
    assert describe(broker).entries == ()


def test_filters_exact_default_any_and_strict(tmp_path: Path) -> None:
    broker = fresh(tmp_path)
    alter(
        broker,
        entry({"user": "u"}, request_percentage=10.0),
        entry({"user": "u", "client-id": "c"}, request_percentage=20.0),
        entry({"user": None}, request_percentage=30.0),
    )

    def found(*components: QuotaComponent, strict: bool = False) -> set[float]:
        return {
            e.values[0].value for e in describe(broker, *components, strict=strict).entries or ()
        }

    assert found(QuotaComponent("user", 0, "u")) == {10.0, 20.0}
    assert found(QuotaComponent("user", 0, "u"), strict=True) == {10.0}
    assert found(QuotaComponent("user", 1, None)) == {30.0}
    assert found(QuotaComponent("user", 2, None), strict=True) == {10.0, 30.0}
    assert found(QuotaComponent("client-id", 2, None)) == {20.0}
    assert found() == {10.0, 20.0, 30.0}
    assert found(strict=True) == set()


@pytest.mark.parametrize(
    ("components", "code", "message"),
    [
        ((QuotaComponent("", 0, "x"),), 42, "Invalid empty entity type."),
        ((QuotaComponent("group", 0, "x"),), 35, "Unsupported entity type group"),
        (
            (QuotaComponent("user", 0, None),),
            42,
            "Request specified MATCH_TYPE_EXACT, but set match string to null.",
        ),
        (
            (QuotaComponent("user", 1, "u"),),
            42,
            "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.",
        ),
        ((QuotaComponent("user", 7, None),), 42, "Unknown match type 7"),
        (
            (QuotaComponent("user", 2, None), QuotaComponent("user", 1, None)),
            42,
            "Entity type user cannot appear more than once in the filter.",
        ),
        (
            (QuotaComponent("ip", 2, None), QuotaComponent("user", 2, None)),
            42,
            "Invalid entity filter component combination. IP filter component should not "
            "be used with user or clientId filter component.",
        ),
    ],
)
def test_bad_filters_fail_the_whole_request(
    tmp_path: Path, components: tuple[QuotaComponent, ...], code: int, message: str
) -> None:
    answer = describe(fresh(tmp_path), *components)
    assert (answer.error_code, answer.error_message, answer.entries) == (code, message, None)


def test_quotas_survive_a_restart(tmp_path: Path) -> None:
    broker = fresh(tmp_path)
    alter(broker, entry({"ip": None}, connection_creation_rate=20.0))
    broker.shutdown()
    again = fresh(tmp_path)
    ((only,),) = [describe(again).entries or ()]
    assert (only.entity, [(v.key, v.value) for v in only.values]) == (
        (QuotaEntity("ip", None),),
        [("connection_creation_rate", 20.0)],
    )


_NAMES = {"user": "user-principal", "client-id": "client-id", "ip": "ip"}
Printed = tuple[frozenset[str], frozenset[str]]


def _parse(line: str) -> Printed:
    """A ``Quota configs for <entity> are k=v, ...`` line as (entity parts, k=v set)."""
    entity, _, values = line.removeprefix("Quota configs for ").partition(" are ")
    return frozenset(entity.split(", ")), frozenset(values.split(", "))


def _lines(answer: DescribeClientQuotasResponse) -> set[Printed]:
    """What ``kafka-configs.sh --describe`` prints for ``answer`` (``ConfigCommand``:
    each part ``type 'name'`` or ``the default type``; values as Java doubles)."""
    out = set()
    for e in answer.entries or ():
        parts = frozenset(
            f"the default {_NAMES[p.entity_type]}"
            if p.entity_name is None
            else f"{_NAMES[p.entity_type]} '{p.entity_name}'"
            for p in e.entity
        )
        out.add((parts, frozenset(f"{v.key}={v.value!r}" for v in e.values)))
    return out


def test_kafka_configs_describe_prints_what_it_printed_against_kafka(tmp_path: Path) -> None:
    broker = fresh(tmp_path)
    pairs = sorted(
        exchanges(48, frames=FRAMES) + exchanges(49, frames=FRAMES), key=lambda p: p[0]["seq"]
    )
    checked = 0
    for req, resp in pairs:
        ours, _ = replay(broker, req, resp)
        step = req["step"]
        if not step.startswith("describe-"):
            continue
        printed = {_parse(line) for line in stdout_of(step).splitlines()}
        assert _lines(ours) == printed, step
        checked += 1
    assert checked == 13


def stdout_of(step: str) -> str:
    return str(next(o["stdout"] for o in OUTPUTS if o["step"] == step))
