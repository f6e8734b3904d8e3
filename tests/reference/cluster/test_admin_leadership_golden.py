"""The three-broker scenario recorded on Kafka 4.0.0 (fixtures/golden/admin-tools/
leadership-cluster, tools/kafka-recipes/admin-tools/cluster_leadership.py), lived through
by an EmbeddedCluster: after each step the partition shows the leader, replicas and ISR
``kafka-topics.sh --describe`` printed there, and each election gets the answer behind
the line ``kafka-leader-election.sh`` printed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from cluster_support import START_MS, produce
from lethe_formats.fixtures import fixtures_root
from lethe_reference.clock import ManualClock
from lethe_reference.embedded_cluster import EmbeddedCluster
from test_admin_leadership import create, elect, ongoing, reassign, state

GOLDEN = fixtures_root() / "golden" / "admin-tools" / "leadership-cluster"
OUTPUTS: dict[str, dict[str, Any]] = {
    o["step"]: o for o in json.loads((GOLDEN / "outputs.json").read_text())
}
SETTINGS = {"log.retention.check.interval.ms": "1000", "log.segment.delete.delay.ms": "0"}
_LINE = re.compile(r"Leader: (\w+)\tReplicas: ([\d,]+)\tIsr: ([\d,]+)")


def described(step: str) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """(leader, replicas, ISR) of the partition line the step printed (none: -1)."""
    (match,) = _LINE.findall(OUTPUTS[step]["stdout"])
    leader = -1 if match[0] == "none" else int(match[0])
    return leader, tuple(map(int, match[1].split(","))), tuple(map(int, match[2].split(",")))


def shown(cluster: EmbeddedCluster, topic: str) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    replicas, leader, _, isr = state(cluster, topic)
    return leader, replicas, isr


def printed(step: str) -> str:
    return str(OUTPUTS[step]["stdout"]).strip()


def place_on_2_and_3(cluster: EmbeddedCluster, topic: str) -> None:
    """Kafka's recipe created the topics with ``--replica-assignment 2:3``; here they
    are created with two replicas and moved there."""
    create(cluster, topic, 2)
    assert reassign(cluster, topic, (2, 3)) == (0, None)
    cluster.advance(1000)
    assert ongoing(cluster) == []


def test_elections_on_three_brokers_go_as_on_kafka(tmp_path: Path) -> None:
    with EmbeddedCluster(tmp_path, 3, overrides=SETTINGS, clock=ManualClock(START_MS)) as cluster:
        place_on_2_and_3(cluster, "eta")
        place_on_2_and_3(cluster, "epsilon")
        assert shown(cluster, "eta") == described("describe-eta-start")
        assert (
            printed("elect-preferred-in-place")
            == "Valid replica already elected for partitions eta-0"
        )
        assert elect(cluster, 1, 0, "eta")[0] == 84
        cluster.stop_broker(3)
        cluster.stop_broker(2)
        cluster.start_broker(3)
        assert shown(cluster, "eta") == described("describe-eta-leaderless")
        assert printed("elect-preferred-unavailable").endswith(
            "PreferredLeaderNotAvailableException: The preferred leader was not available."
        )
        assert elect(cluster, 1, 0, "epsilon") == (80, "The preferred leader was not available.")
        assert printed("elect-unclean-eta") == (
            "Successfully completed leader election (UNCLEAN) for partitions eta-0"
        )
        assert elect(cluster, 3, 1, "eta") == (0, None)
        assert shown(cluster, "eta") == described("describe-eta-unclean")
        assert elect(cluster, 3, 1, "eta")[0] == 84
        assert (
            printed("elect-unclean-again") == "Valid replica already elected for partitions eta-0"
        )
        cluster.start_broker(2)
        cluster.advance(1000)
        assert shown(cluster, "eta") == described("describe-eta-rejoined")
        assert shown(cluster, "epsilon") == described("describe-epsilon-rejoined")
        assert printed("elect-preferred-all") == (
            "Successfully completed leader election (PREFERRED) for partitions eta-0"
        )
        assert elect(cluster, 1, 0, "eta") == (0, None)
        assert elect(cluster, 1, 0, "epsilon")[0] == 84
        assert shown(cluster, "eta") == described("describe-eta-preferred")


def test_a_reassignment_away_from_the_leader_goes_as_on_kafka(tmp_path: Path) -> None:
    with EmbeddedCluster(tmp_path, 3, overrides=SETTINGS, clock=ManualClock(START_MS)) as cluster:
        create(cluster, "theta", 1)
        assert shown(cluster, "theta")[1] == (1,)
        produce(cluster, 1, "theta", 50)
        assert reassign(cluster, "theta", (2, 3)) == (0, None)
        cluster.advance(1000)
        assert ongoing(cluster) == []
        assert printed("reassign-list-done") == "No partition reassignments found."
        assert "Reassignment of partition theta-0 is completed." in printed("reassign-verify-done")
        assert shown(cluster, "theta") == described("describe-theta-moved")
