"""Kafka's own ``kafka-consumer-groups.sh`` against ``lethe broker`` prints what it
printed against Kafka 4.0.0 (fixtures/golden/consumer-groups).

Needs Kafka's tools and Java: set ``LETHE_KAFKA_HOME`` to a Kafka 4.0.0 distribution
(as the ``kafka`` tox environment does). CI has neither, so there the same scenario runs at
the protocol level (tests/reference/handlers/test_consumer_groups_tool_answers.py).

The recipe (tools/kafka-recipes/consumer-groups/record.py) runs unchanged against a
``lethe broker`` started from the command line. Outputs are compared line by line after
masking what differs legitimately between two runs: member ids (``<client>-<uuid>``), the
random group's number, the coordinator's port, and column padding (the tool pads to the
longest cell, and member ids differ in length). The broker keeps Kafka's default
``offsets.retention.check.interval.ms`` (600 s): with a shorter one the random group is gone
before the views that list it, so the test takes some eleven minutes.
"""

from __future__ import annotations

import faulthandler
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from interop_support import free_port, wait_listening
from lethe_formats.fixtures import fixtures_root

KAFKA_HOME = os.environ.get("LETHE_KAFKA_HOME", "")
RECIPE = Path(__file__).parents[2] / "tools" / "kafka-recipes" / "consumer-groups" / "record.py"
FIXTURE = fixtures_root() / "golden" / "consumer-groups" / "kafka" / "outputs.json"
#: steps whose output is a poll or a timing, not a table to compare; ``members-killed``
#: shows the killed member only if the tool ran within its 6 s session (timing-dependent)
NOT_COMPARED = ("poll", "poll-list", "until-Empty", "until-gone", "server-log", "members-killed")
_MASKS = (
    (re.compile(r"[\w.-]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "MEMBER"),
    (re.compile(r"console-consumer-\d+\b"), "console-consumer-N"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:PORT"),
)

pytestmark = pytest.mark.skipif(
    not (KAFKA_HOME and Path(KAFKA_HOME, "bin", "kafka-consumer-groups.sh").exists()),
    reason="needs LETHE_KAFKA_HOME (Kafka's tools); the protocol-level twin runs in CI",
)
#: the recipe starts some 40 JVMs and waits for a session expiry and a cleanup run
DEADLINE_S = 1500


@pytest.fixture(autouse=True)
def watchdog() -> Iterator[None]:
    """The interop watchdog with this test's longer deadline."""
    faulthandler.dump_traceback_later(DEADLINE_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def masked(text: str) -> list[str]:
    """``text`` with the legitimately differing parts masked, blanks collapsed."""
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return [" ".join(line.split()) for line in text.splitlines()]


def run_recipe(bootstrap: str, out: Path) -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("consumer_groups_recipe", RECIPE)
    assert spec is not None and spec.loader is not None
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    recipe.main(KAFKA_HOME, bootstrap, str(out))
    return list(json.loads(out.read_text()))


def test_the_tool_prints_what_it_printed_on_kafka(tmp_path: Path) -> None:
    lethe = shutil.which("lethe") or str(Path(sys.executable).with_name("lethe"))
    port = free_port()
    broker = subprocess.Popen(
        [
            lethe,
            "broker",
            "--log-dir",
            str(tmp_path / "logs"),
            "--listen",
            f"127.0.0.1:{port}",
            "--override",
            "group.initial.rebalance.delay.ms=0",
        ],
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, broker)
        ours = {o["step"]: o for o in run_recipe(f"127.0.0.1:{port}", tmp_path / "out.json")}
    finally:
        broker.terminate()
        broker.wait(60)
    kafka = json.loads(FIXTURE.read_text())
    compared = 0
    for theirs in kafka:
        step = theirs["step"]
        if step in NOT_COMPARED:
            continue
        assert (step, ours[step]["exit"]) == (step, theirs["exit"])
        assert (step, masked(ours[step]["stdout"])) == (step, masked(theirs["stdout"]))
        compared += 1
    assert compared >= 30
