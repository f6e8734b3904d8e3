"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51) against what a
single-node Kafka 4.0.0 answered ``kafka-configs.sh --entity-type users`` with SCRAM
configs, and lethe's protocol client's requests no tool sends (fixtures/golden/
admin-tools/scram-users), replayed in order on a fresh lethe broker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from admin_tools_support import (
    SCRAM_USERS,
    exchanges,
    load_frames,
    replay,
    roundtrip_bytes,
    tool_broker,
)
from lethe_formats.protocol.error_codes import ErrorCode

TOOL_FRAMES = load_frames(SCRAM_USERS, "frames.jsonl")
PROBE_FRAMES = load_frames(SCRAM_USERS, "probes.jsonl")
OUTPUTS: list[dict[str, Any]] = json.loads((SCRAM_USERS / "outputs.json").read_text())


def in_order(frames: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    pairs = exchanges(50, frames=frames) + exchanges(51, frames=frames)
    return sorted(pairs, key=lambda p: p[0]["seq"])


def test_the_recording_has_every_step() -> None:
    alters = [req["step"] for req, _ in exchanges(51, frames=TOOL_FRAMES)]
    assert alters == [
        "add-alice-256",
        "add-alice-512",
        "too-many-iterations",
        "most-iterations",
        "both-mechanisms",
        "delete-absent",
        "delete-alice-256",
        "delete-alice-512",
    ]
    assert len(exchanges(50, frames=TOOL_FRAMES)) == 7
    assert len(in_order(PROBE_FRAMES)) == 10


@pytest.mark.parametrize("frames", [TOOL_FRAMES, PROBE_FRAMES], ids=["tools", "probes"])
def test_kafkas_frames_reencode_byte_for_byte(frames: list[dict[str, Any]]) -> None:
    for pair in in_order(frames):
        for frame in pair:
            original, ours = roundtrip_bytes(frame)
            assert ours == original


#: Kafka answers a describe from the broker's metadata image, which replays the
#: controller's records a moment after the alteration was answered: the recorded
#: ``describe-both``, sent right after ``upsert-512-many``, still showed u05-u08 without
#: the SCRAM-SHA-512 credentials (8192 iterations) that ``describe-end`` shows them with.
#: lethe's describe sees every answered alteration.
LAGGING = "describe-both"


def test_replaying_the_tools_then_the_probes_gets_kafkas_answers(tmp_path: Path) -> None:
    """Every request, in the order Kafka got it, answered as Kafka answered: results,
    their order (HashMap order of the users), codes and messages."""
    broker = tool_broker(tmp_path)
    for req, resp in in_order(TOOL_FRAMES) + in_order(PROBE_FRAMES):
        ours, theirs = replay(broker, req, resp)
        if req["step"] != LAGGING:
            assert ours == theirs, req["step"]
            continue
        assert [r.user for r in ours.results] == [r.user for r in theirs.results]
        shown = {
            r.user: [(c.mechanism, c.iterations) for c in r.credential_infos] for r in ours.results
        }
        assert shown == {
            "u04": [(1, 4096)],
            "u03": [(1, 4096)],
            "u06": [(1, 16384), (2, 8192)],
            "u05": [(1, 4096), (2, 8192)],
            "u08": [(1, 4096), (2, 8192)],
            "u07": [(1, 4096), (2, 8192)],
        }


def test_kafka_rejected_what_the_rules_say(tmp_path: Path) -> None:
    """The recorded answers themselves (so the replay cannot pass on two empty lists)."""
    ((req, resp),) = exchanges(51, "alter-mixed", frames=PROBE_FRAMES)
    _, theirs = replay(tool_broker(tmp_path), req, resp)
    by_user = {r.user: (r.error_code, r.error_message) for r in theirs.results}
    twice = "A user credential cannot be altered twice in the same request"
    assert by_user == {
        "nosuch": (
            ErrorCode.RESOURCE_NOT_FOUND,
            "Attempt to delete a user credential that does not exist",
        ),
        "u01": (ErrorCode.DUPLICATE_RESOURCE, twice),
        "": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        "u02": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "u03": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "u04": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        "u05": (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
        "u06": (ErrorCode.NONE, None),
        "u00": (ErrorCode.DUPLICATE_RESOURCE, twice),
        "u07": (ErrorCode.UNKNOWN_SERVER_ERROR, None),
        "u08": (ErrorCode.NONE, None),
        "u09": (ErrorCode.DUPLICATE_RESOURCE, twice),
    }
