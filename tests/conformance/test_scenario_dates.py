"""No scenario depends on the date it runs (lethe_conformance.scenarios.dates).

On 2026-11-27 three kip107 scenarios wrote 2026-11-21 timestamps to topics keeping
Kafka's seven-day retention.ms: on a broker running on the system clock they would
have lost their records to retention from 2026-11-28 on. The loader now refuses
every absolute timestamp whose fate under its topic's time rules (retention.ms,
KIP-68's age, the compaction lags, producer expiration, the timestamp bounds of a
Produce) differs between two dates a run can have.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from lethe_conformance.scenarios import ScenarioError, load_scenario, scenarios_root
from lethe_conformance.scenarios.dates import EARLIEST_RUN_MS, LATEST_RUN_MS, check_dates

MAX = "9223372036854775807"
DAY_MS = 86_400_000


def fetch_bounds() -> dict[str, Any]:
    """A shipped scenario writing 2026-11-21 timestamps to a topic with retention.ms -1."""
    path = scenarios_root() / "kip107" / "kip107-fetch-bounds-and-versions.json"
    data = json.loads(path.read_text())
    assert isinstance(data, dict)
    return data


def first_batch(data: dict[str, Any]) -> dict[str, Any]:
    step = next(s for s in data["steps"] if s["op"] == "produce" and "batches" in s)
    batch: dict[str, Any] = step["batches"][0]
    return batch


def load(tmp_path: Path, data: dict[str, Any]) -> None:
    path = tmp_path / f"{data['id']}.json"
    path.write_text(json.dumps(data))
    load_scenario(path)


def refusal(tmp_path: Path, data: dict[str, Any]) -> str:
    with pytest.raises(ScenarioError) as caught:
        load(tmp_path, data)
    return str(caught.value)


def test_the_shipped_example_loads_and_its_timestamps_lie_in_the_window(tmp_path: Path) -> None:
    data = fetch_bounds()
    load(tmp_path, data)
    stamp = int(first_batch(data)["records"][0]["timestamp"])
    # a week's retention would act inside the window of dates a run can have
    assert EARLIEST_RUN_MS < stamp + 7 * DAY_MS <= LATEST_RUN_MS


def test_kafkas_default_retention_on_fixed_timestamps_is_refused(tmp_path: Path) -> None:
    data = fetch_bounds()
    del data["setup"]["topics"][0]["configs"]["retention.ms"]
    message = refusal(tmp_path, data)
    assert "$.steps[1].batches[0]" in message
    assert "topic 't' meets retention.ms=604800000" in message
    assert "set retention.ms -1" in message


def test_a_future_timestamp_needs_the_maximum_after_max(tmp_path: Path) -> None:
    data = fetch_bounds()
    del data["setup"]["topics"][0]["configs"]["message.timestamp.after.max.ms"]
    load(tmp_path, data)  # a past timestamp is never ahead of the broker's clock
    first_batch(data)["records"][0]["timestamp"] = str(EARLIEST_RUN_MS + 30 * DAY_MS)
    assert "message.timestamp.after.max.ms=3600000" in refusal(tmp_path, data)


def test_settled_timestamps_pass_whatever_the_retention(tmp_path: Path) -> None:
    data = fetch_bounds()
    data["setup"]["topics"][0]["configs"]["retention.ms"] = str(DAY_MS)
    for record in first_batch(data)["records"]:
        record["timestamp"] = "1577836800000"  # 2020-01-01: expired on every run
    load(tmp_path, data)
    for record in first_batch(data)["records"]:
        record["timestamp"] = "4102444800000"  # 2100-01-01: kept on every run
    load(tmp_path, data)


def test_compaction_lags_and_producer_expiration_are_time_rules_too(tmp_path: Path) -> None:
    data = fetch_bounds()
    configs = data["setup"]["topics"][0]["configs"]
    lagged = copy.deepcopy(data)
    lagged["setup"]["topics"][0]["configs"] = configs | {
        "cleanup.policy": "compact",
        "min.compaction.lag.ms": str(30 * DAY_MS),
    }
    assert "min.compaction.lag.ms=2592000000" in refusal(tmp_path, lagged)
    idempotent = copy.deepcopy(data)
    for record in first_batch(idempotent)["records"]:
        record["timestamp"] = str(EARLIEST_RUN_MS + 10 * DAY_MS)
    first_batch(idempotent)["producer"] = {
        "producer_id": "7",
        "producer_epoch": 0,
        "base_sequence": 0,
    }
    assert "producer.id.expiration.ms (broker)=86400000" in refusal(tmp_path, idempotent)


def test_relative_log_append_time_and_virtual_steps_are_exempt(tmp_path: Path) -> None:
    data = fetch_bounds()
    del data["setup"]["topics"][0]["configs"]["retention.ms"]
    appended = copy.deepcopy(data)
    appended["setup"]["topics"][0]["configs"]["message.timestamp.type"] = "LogAppendTime"
    load(tmp_path, appended)  # the broker stamps the records with its own clock
    for step in data["steps"]:
        step["clock"] = "virtual"  # a clock starting at a moment the target fixes
    check_dates(data, "virtual.json")


def test_replayed_fixture_batches_are_read_for_their_timestamps(tmp_path: Path) -> None:
    path = scenarios_root() / "kip107" / "kip107-delete-records-inside-compressed-batches.json"
    data = json.loads(path.read_text())
    load(tmp_path, data)
    # logs/codecs-v2 was written with 2026-01-01 timestamps: a year's retention acts in 2027
    data["setup"]["topics"][0]["configs"]["retention.ms"] = str(365 * DAY_MS)
    message = refusal(tmp_path, data)
    assert "$.setup.replay[0] (batch 0)" in message
    assert "timestamp 1767225600005" in message
