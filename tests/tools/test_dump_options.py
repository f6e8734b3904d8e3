"""kafka-dump-log's other options, against Kafka 4.0.0's own output on the golden files.

``dump-options.txt`` (next to three golden ``dump.txt`` files) records
``bin/kafka-dump-log.sh`` of Kafka 4.0.0 run on the same files with the options
the cases' own dumps do not use: ``--skip-record-metadata`` (with and without
data, over a control batch), ``--verify-index-only``, ``--index-sanity-check``
(empty and non-empty indexes), ``--max-message-size``, the decoder-class options
with Kafka's ``StringDecoder`` (named and omitted), and the decoders implying
``--print-data-log``. ``fixtures/kafka-cluster-metadata/dump.txt`` does the same for
a KRaft node's ``__cluster_metadata`` log and ``.checkpoint`` snapshot
(``--cluster-metadata-decoder``, and the KRaft control records every dump prints).
Every command is replayed as ``lethe dump`` with the same arguments and must
print the same bytes. Python decoders (``module:function``)
and the decoders lethe does not implement are checked on their own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from golden_commands import (
    GoldenCommand,
    assert_replays,
    golden_commands,
    golden_root,
    recorded_commands,
)
from lethe_formats.fixtures import fixtures_root
from lethe_tools.inspect.decoders import scala_hash_set_order
from tools_support import Run

COMMANDS = golden_commands("dump-options.txt")
#: a KRaft node's __cluster_metadata log and snapshot, dumped by Kafka 4.0.0
CLUSTER_METADATA = recorded_commands(fixtures_root() / "kafka-cluster-metadata" / "dump.txt")
TXN_LOG = "golden-txn-0/00000000000000000000.log"


def test_the_recording_covers_every_option_kafka_dump_log_has_and_lethe_honours() -> None:
    flags = {a for c in COMMANDS for a in c.args if a.startswith("--")}
    assert flags == {
        "--files",
        "--print-data-log",
        "--deep-iteration",
        "--skip-record-metadata",
        "--verify-index-only",
        "--index-sanity-check",
        "--max-message-size",
        "--key-decoder-class",
        "--value-decoder-class",
        "--offsets-decoder",
        "--transaction-log-decoder",
    }
    assert len(COMMANDS) == 14


@pytest.mark.parametrize(
    "command", COMMANDS + CLUSTER_METADATA, ids=[c.id for c in COMMANDS + CLUSTER_METADATA]
)
def test_dump_matches_kafka_dump_log(
    command: GoldenCommand,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    monkeypatch.chdir(command.folder)
    assert_replays(command, command.args, capsysbinary)


def _txn_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(golden_root() / "transactions" / "pass0")


def test_a_python_callable_decodes_keys_and_values(
    monkeypatch: pytest.MonkeyPatch, lethe: Callable[..., Run]
) -> None:
    _txn_folder(monkeypatch)
    run = lethe(
        "dump", "--files", TXN_LOG, "--key-decoder-class", "builtins:len",
        "--value-decoder-class", "binascii:hexlify",
    )  # fmt: skip
    assert run.status == 0
    (record,) = [line for line in run.lines if line.startswith("| ")]
    # the record holds key "acct-A" and value "opened" (Kafka's StringDecoder output)
    assert record.endswith(" key: 6 payload: b'6f70656e6564'")


@pytest.mark.parametrize(
    "spec", ["no_such_module_xyz:f", "builtins:no_such_function", "builtins", "os:sep"]
)
def test_a_decoder_that_cannot_be_loaded_is_a_usage_error(
    spec: str, monkeypatch: pytest.MonkeyPatch, lethe: Callable[..., Run]
) -> None:
    _txn_folder(monkeypatch)
    run = lethe("dump", "--files", TXN_LOG, "--value-decoder-class", spec)
    assert (run.status, run.out) == (2, "")
    assert re.match(r"lethe dump: .*" + re.escape(repr(spec)), run.err)


def test_the_cluster_metadata_recording_covers_every_record_type_decoded() -> None:
    decoded = b"".join(c.stdout for c in CLUSTER_METADATA if "--cluster-metadata-decoder" in c.args)
    types = set(re.findall(rb'"type":"([A-Z_]+)"', decoded))
    assert len(types) == 13  # the types a single KRaft node wrote in that run
    assert {b"SnapshotHeader", b"SnapshotFooter", b"KRaftVersion", b"KRaftVoters"} <= set(
        re.findall(rb"headerKeys: \[\] (\w+) \{", b"".join(c.stdout for c in CLUSTER_METADATA))
    )


@pytest.mark.parametrize("flag", ["--remote-log-metadata-decoder", "--share-group-state-decoder"])
def test_decoders_lethe_does_not_implement_are_refused_not_guessed(
    flag: str, monkeypatch: pytest.MonkeyPatch, lethe: Callable[..., Run]
) -> None:
    _txn_folder(monkeypatch)
    run = lethe("dump", "--files", TXN_LOG, flag)
    assert (run.status, run.out, run.err) == (2, "", f"lethe dump: {flag} is not implemented\n")


def _order_cases() -> list[dict[str, Any]]:
    path = fixtures_root() / "kafka-txn-partition-order" / "cases.json"
    cases: list[dict[str, Any]] = json.loads(path.read_text("utf-8"))
    return cases


def test_a_transactions_partitions_print_in_kafkas_hash_set_order() -> None:
    cases = _order_cases()
    assert len(cases) == 150
    for case in cases:
        groups = [[(topic, p) for p in partitions] for topic, partitions in case["groups"]]
        printed = ",".join(f"{t}-{p}" for t, p in scala_hash_set_order(groups))
        assert f"[{printed}]" == case["kafka"], case["groups"]
    # the cases reach past one 16-bucket table, through both ways the set grows
    sizes = [sum(len(p) for _, p in case["groups"]) for case in cases]
    assert max(sizes) > 24 and min(sizes) == 1
