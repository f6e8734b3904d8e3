"""No scenario may depend on the date it runs: the rule for absolute record timestamps.

Theory of operation
-------------------
A record's CreateTime is data the broker compares with its own clock: retention by
time deletes a segment once ``now - largest timestamp > retention.ms`` (KIP-68's
consumed retention once it is older than ``retention.commitoffset.ms``), the cleaner
holds a segment back while ``now - timestamp < min.compaction.lag.ms`` and forces one
once ``max.compaction.lag.ms`` passed, Kafka forgets an idle idempotent producer
``producer.id.expiration.ms`` after its last batch's timestamp, and a Produce is
refused when its timestamp lies more than ``message.timestamp.after.max.ms`` ahead
(or ``message.timestamp.before.max.ms`` behind). A scenario that writes a fixed
timestamp, say 2026-11-21, to a topic keeping Kafka's seven-day retention passes on
a broker running on the system clock until 2026-11-28 and fails from then on.

So every absolute timestamp a scenario sends (a built batch's record timestamps, a
replayed fixture batch's) must be *settled* under every such rule of its topic: the
rule's outcome is the same on every date a run can have, from
:data:`EARLIEST_RUN_MS` (the day this rule was written: no run is earlier) to
:data:`LATEST_RUN_MS` (the kit's horizon). For a rule acting at ``T + D`` that means
``T + D <= EARLIEST_RUN_MS`` (it has acted on every run) or ``T + D >
LATEST_RUN_MS`` (it never acts); ``retention.ms`` -1 and the maximum
``message.timestamp.after.max.ms`` settle every timestamp (README, *Time*), and a
timestamp relative to a captured broker time (``{"ref": ...}``) needs no rule.
LogAppendTime topics are exempt: the broker replaces the timestamps by its clock.
Steps of the virtual clock's path are exempt too: their clock starts at a fixed
moment the target chooses (the embedded one: 2027-01-15), never at today's date.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from lethe_formats.fixtures import fixtures_root

from lethe_conformance.client.batches import fixture_entries
from lethe_conformance.scenarios.model import VIRTUAL, ScenarioError

__all__ = ["EARLIEST_RUN_MS", "LATEST_RUN_MS", "check_dates"]

#: 2026-11-27T00:00:00Z, the day the rule was written: no run of the kit is earlier.
EARLIEST_RUN_MS = 1_795_737_600_000
#: 2090-01-01T00:00:00Z, the horizon: no run of the kit is later.
LATEST_RUN_MS = 3_786_912_000_000

_DAY_MS = 86_400_000
_V2 = 2
_MAGIC_AT = 16
_MAX_TIMESTAMP_AT = 35
_PRODUCER_ID_AT = 43


def check_dates(data: Mapping[str, Any], source: str) -> None:
    """Refuse an absolute timestamp whose fate depends on the date (module docstring)."""
    topics = {t["name"]: t.get("configs", {}) for t in data["setup"]["topics"]}
    expiration = int(
        data["setup"].get("broker_configs", {}).get("producer.id.expiration.ms", _DAY_MS)
    )
    for where, topic, timestamp, idempotent in _sent(data):
        configs = topics.get(topic)
        if configs is None or configs.get("message.timestamp.type") == "LogAppendTime":
            continue
        rules = dict(_rules(configs))
        if idempotent:
            rules["producer.id.expiration.ms (broker)"] = expiration
        for name, duration in rules.items():
            moment = (
                timestamp - duration
                if name.startswith("message.timestamp.after")
                else (timestamp + duration)
            )
            if EARLIEST_RUN_MS < moment <= LATEST_RUN_MS:
                raise ScenarioError(
                    source,
                    where,
                    f"timestamp {timestamp} on topic {topic!r} meets {name}={duration} at "
                    f"{moment}, a date a run can have: set retention.ms -1 and "
                    "message.timestamp.after.max.ms 9223372036854775807 on the topic, or "
                    "place the record relative to a captured broker time",
                )


def _rules(configs: Mapping[str, str]) -> Iterator[tuple[str, int]]:
    """(config, duration) of every rule comparing a record timestamp with the clock."""
    policy = configs.get("cleanup.policy", "delete").split(",")
    retention = int(configs.get("retention.ms", 7 * _DAY_MS))
    if "delete" in policy and retention >= 0:
        yield "retention.ms", retention
    consumed = int(configs.get("retention.commitoffset.ms", -1))  # KIP-68's age, when set
    if (
        "delete" in policy
        and configs.get("retention.commitoffset.enable") == "true"
        and consumed >= 0
    ):
        yield "retention.commitoffset.ms", consumed
    if "compact" in policy:
        yield "min.compaction.lag.ms", int(configs.get("min.compaction.lag.ms", 0))
        yield "max.compaction.lag.ms", int(configs.get("max.compaction.lag.ms", 2**63 - 1))
    yield (
        "message.timestamp.before.max.ms",
        int(configs.get("message.timestamp.before.max.ms", 2**63 - 1)),
    )
    yield (
        "message.timestamp.after.max.ms",
        int(configs.get("message.timestamp.after.max.ms", 3_600_000)),
    )


def _sent(data: Mapping[str, Any]) -> Iterator[tuple[str, str, int, bool]]:
    """(JSON path, topic, batch max timestamp, idempotent) of every batch sent with an
    absolute timestamp, outside the virtual clock's path."""
    for index, replay in enumerate(data["setup"].get("replay", ())):
        yield from _replayed(replay, replay["topic"], f"$.setup.replay[{index}]")
    for index, step in enumerate(data["steps"]):
        if step["op"] != "produce" or step.get("clock") == VIRTUAL:
            continue
        where = f"$.steps[{index}]"
        if "replay" in step:
            yield from _replayed(step["replay"], step["topic"], f"{where}.replay")
            continue
        for number, batch in enumerate(step["batches"]):
            fixed = [
                int(r["timestamp"]) for r in batch["records"] if isinstance(r["timestamp"], str)
            ]
            if fixed:
                yield f"{where}.batches[{number}]", step["topic"], max(fixed), "producer" in batch


def _replayed(
    replay: Mapping[str, Any], topic: str, where: str
) -> Iterator[tuple[str, str, int, bool]]:
    """The replayed v2 batches' max timestamps, read from their headers (kafka-facts 3.1)."""
    entries = fixture_entries(fixtures_root() / replay["log"] / replay["partition_dir"])
    first = replay.get("first", 0)
    end = None if replay.get("count") is None else first + replay["count"]
    for number, entry in enumerate(entries[first:end], start=first):
        if len(entry) <= _PRODUCER_ID_AT + 8 or entry[_MAGIC_AT] != _V2:
            continue  # magic 0/1 cannot be produced to Kafka 4.0
        timestamp = int.from_bytes(
            entry[_MAX_TIMESTAMP_AT : _MAX_TIMESTAMP_AT + 8], "big", signed=True
        )
        producer = int.from_bytes(entry[_PRODUCER_ID_AT : _PRODUCER_ID_AT + 8], "big", signed=True)
        yield f"{where} (batch {number})", topic, timestamp, producer >= 0
