"""``lethe delete-records`` behaves as Kafka 4.0's ``kafka-delete-records.sh``.

Expected texts come from ``DeleteRecordsCommand``, ``CommandLineUtils``,
Kafka's JSON decoders and the Java admin client (kafka-facts.md section 1.7).
The validation cases run before any connection is made, as in Kafka, so they
need no broker; the rest run against the embedded reference broker serving a
copy of the golden delete-records log directory.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lethe_reference.embedded import EmbeddedBroker
from lethe_tools.commands.delete_records import CommandError, parse_offset_json
from lethe_tools.kafka_client.admin import TopicPartition
from tools_support import Run

LetheRun = Callable[..., Run]
UNREACHABLE = "127.0.0.1:1"
ADMIN_OPERATION = (
    'Exception in thread "main" org.apache.kafka.server.common.AdminOperationException'
)
JSON_MAPPING = 'Exception in thread "main" com.fasterxml.jackson.databind.JsonMappingException'


def write(tmp_path: Path, text: str, name: str = "offsets.json") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def run_with_json(lethe: LetheRun, tmp_path: Path, text: str) -> Run:
    return lethe(
        "delete-records",
        "--bootstrap-server",
        UNREACHABLE,
        "--offset-json-file",
        write(tmp_path, text),
    )


# -- options ------------------------------------------------------------------


def test_no_options_print_the_description_and_usage_and_exit_1(lethe: LetheRun) -> None:
    run = lethe("delete-records")
    assert run.status == 1
    assert run.out == ""
    first, *rest = run.err.splitlines()
    assert first == (
        "This tool helps to delete records of the given partitions down to the specified offset."
    )
    assert any("--offset-json-file" in line for line in rest)


@pytest.mark.parametrize(
    ("argv", "missing"),
    [
        (["--offset-json-file", "x.json"], "bootstrap-server"),
        (["--bootstrap-server", UNREACHABLE], "offset-json-file"),
        (["--command-config", "x.properties"], "bootstrap-server"),
    ],
)
def test_a_missing_required_option_is_named_like_kafka(
    lethe: LetheRun, argv: list[str], missing: str
) -> None:
    run = lethe("delete-records", *argv)
    assert run.status == 1
    assert run.out == ""
    assert run.err.splitlines()[0] == f'Missing required argument "[{missing}]"'
    assert "usage:" in run.err


# -- the offset JSON file ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("not json", f"{ADMIN_OPERATION}: The input string is not a valid JSON"),
        ("", f"{ADMIN_OPERATION}: The input string is not a valid JSON"),
        (
            '{"partitions": [], "offset": NaN}',
            f"{ADMIN_OPERATION}: The input string is not a valid JSON",
        ),
        (
            '{"version": 2, "partitions": []}',
            f"{ADMIN_OPERATION}: Not supported version field value 2",
        ),
        ('{"version": 0}', f"{ADMIN_OPERATION}: Not supported version field value 0"),
        ('{"version": 1}', f"{ADMIN_OPERATION}: Missing partitions field"),
        ("{}", f"{ADMIN_OPERATION}: Missing partitions field"),
        ("[1, 2]", f"{JSON_MAPPING}: Expected JSON object, received [1,2]"),
        (
            '{"partitions": {"topic": "t"}}',
            f'{JSON_MAPPING}: Expected JSON array, received {{"topic":"t"}}',
        ),
        (
            '{"version": "1", "partitions": []}',
            f'{JSON_MAPPING}: Expected `Integer` value, received "1"',
        ),
        (
            '{"partitions": [{"partition": 0, "offset": 1}]}',
            f"{JSON_MAPPING}: No such field exists: `topic`",
        ),
        (
            '{"partitions": [{"topic": "t", "partition": 0}]}',
            f"{JSON_MAPPING}: No such field exists: `offset`",
        ),
        (
            '{"partitions": [{"topic": "t", "partition": "0", "offset": 1}]}',
            f'{JSON_MAPPING}: Expected `Integer` value, received "0"',
        ),
        (
            '{"partitions": [{"topic": "t", "partition": 4294967296, "offset": 1}]}',
            f"{JSON_MAPPING}: Expected `Integer` value, received 4294967296",
        ),
        (
            '{"partitions": [{"topic": "t", "partition": 0, "offset": 1.5}]}',
            f"{JSON_MAPPING}: Expected `Long` value, received 1.5",
        ),
        (
            '{"partitions": [{"topic": 7, "partition": 0, "offset": 1}]}',
            f"{JSON_MAPPING}: Expected `String` value, received 7",
        ),
        (
            '{"partitions": [{"topic": "t", "partition": 0, "offset": 1},'
            ' {"topic": "u", "partition": 0, "offset": 1},'
            ' {"topic": "t", "partition": 0, "offset": 5}]}',
            'Exception in thread "main" org.apache.kafka.server.common.AdminCommandFailedException:'
            " Offset json file contains duplicate topic partitions: t-0",
        ),
    ],
)
def test_bad_offset_json_fails_with_kafkas_message_before_any_output(
    lethe: LetheRun, tmp_path: Path, text: str, expected: str
) -> None:
    run = run_with_json(lethe, tmp_path, text)
    assert run.status == 1
    assert run.out == ""
    assert run.err.splitlines() == [expected]


def test_a_missing_offset_file_is_javas_no_such_file(lethe: LetheRun, tmp_path: Path) -> None:
    missing = str(tmp_path / "absent.json")
    run = lethe("delete-records", "--bootstrap-server", UNREACHABLE, "--offset-json-file", missing)
    assert run.status == 1
    assert run.err.splitlines() == [
        f'Exception in thread "main" java.nio.file.NoSuchFileException: {missing}'
    ]


def test_offsets_keep_file_order_and_minus_one_and_version_defaults_to_1() -> None:
    text = json.dumps(
        {
            "partitions": [
                {"topic": "b", "partition": 2, "offset": -1},
                {"topic": "a", "partition": 0, "offset": 19},
                {"topic": "b", "partition": 0, "offset": 2**63 - 1},
            ]
        }
    )
    assert list(parse_offset_json(text).items()) == [
        (TopicPartition("b", 2), -1),
        (TopicPartition("a", 0), 19),
        (TopicPartition("b", 0), 2**63 - 1),
    ]


def test_text_after_the_json_value_is_ignored_as_jackson_does() -> None:
    text = '{"partitions": [{"topic": "t", "partition": 0, "offset": 3}], "version": 1} trailing'
    assert parse_offset_json(text) == {TopicPartition("t", 0): 3}


def test_a_null_version_is_not_an_integer() -> None:
    with pytest.raises(CommandError) as raised:
        parse_offset_json('{"version": null, "partitions": []}')
    assert str(raised.value) == (
        "com.fasterxml.jackson.databind.JsonMappingException: "
        "Expected `Integer` value, received null"
    )


# -- --command-config --------------------------------------------------------------


@pytest.mark.parametrize(
    ("properties", "fragment"),
    [
        (
            "security.protocol=SSL\nssl.truststore.location=/t.jks\n",
            "ssl.truststore.type=JKS is not supported",
        ),
        (
            "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n",
            "security.protocol=SASL_SSL with sasl.mechanism=PLAIN needs sasl.jaas.config",
        ),
        (
            "security.protocol=BOGUS\n",
            "Invalid value BOGUS for configuration security.protocol: String must be one of: "
            "PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL",
        ),
        (
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\n",
            "sasl.mechanism=GSSAPI is not supported",
        ),
        ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n", "needs sasl.jaas.config"),
        (
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
            "org.apache.kafka.common.security.scram.ScramLoginModule required"
            " username=a password=b;\n",
            "does not go with sasl.mechanism=PLAIN",
        ),
        (
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="a";\n',
            "PlainLoginModule needs password",
        ),
        ("request.timeout.ms=soon\n", "Invalid value soon for configuration request.timeout.ms"),
    ],
)
def test_unusable_command_config_fails_clearly_before_any_output(
    lethe: LetheRun, tmp_path: Path, properties: str, fragment: str
) -> None:
    offsets = write(tmp_path, '{"partitions": [{"topic": "t", "partition": 0, "offset": 1}]}')
    config = write(tmp_path, properties, "admin.properties")
    run = lethe(
        "delete-records",
        "--bootstrap-server",
        UNREACHABLE,
        "--offset-json-file",
        offsets,
        "--command-config",
        config,
    )
    assert run.status == 1
    assert run.out == ""
    (line,) = run.err.splitlines()
    assert line.startswith(
        'Exception in thread "main" org.apache.kafka.common.config.ConfigException: '
    )
    assert fragment in line


def test_a_bad_bootstrap_server_is_kafkas_invalid_url(lethe: LetheRun, tmp_path: Path) -> None:
    offsets = write(tmp_path, '{"partitions": []}')
    run = lethe("delete-records", "--bootstrap-server", "nohost", "--offset-json-file", offsets)
    assert run.status == 1
    assert run.err.splitlines() == [
        'Exception in thread "main" org.apache.kafka.common.config.ConfigException: '
        "Invalid url in bootstrap.servers: nohost"
    ]


def test_an_empty_partition_list_prints_both_headers_and_nothing_else(
    lethe: LetheRun, tmp_path: Path
) -> None:
    run = run_with_json(lethe, tmp_path, '{"partitions": [], "version": 1}')
    assert run.status == 0
    assert run.out == "Executing records delete operation\nRecords delete operation completed:\n"


# -- against the embedded reference broker ------------------------------------------
#
# The broker serves a copy of the golden delete-records log directory, written by
# Kafka 4.0 after its DeleteRecords: golden-delrec has log start offsets 19 / 24 / 30
# and high watermarks 40 / 36 / 30. Every expected low watermark and error below is
# what Kafka answered for the same offsets on that data (case.json edge cases).

GOLDEN_FILES = (
    "meta.properties",
    "log-start-offset-checkpoint",
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "cleaner-offset-checkpoint",
    ".kafka_cleanshutdown",
)
TOPIC = "golden-delrec"
COMPACTED = "golden-delrec-compacted"
HEADER = ["Executing records delete operation", "Records delete operation completed:"]
OUT_OF_RANGE = (
    "org.apache.kafka.common.errors.OffsetOutOfRangeException: "
    "The requested offset is not within the range of offsets maintained by the server."
)


@pytest.fixture
def kafka(golden: Path, tmp_path: Path) -> Iterator[EmbeddedBroker]:
    """A broker on a copy of the golden case, plus a compact topic as in case.json."""
    source = golden / "delete-records"
    log_dir = tmp_path / "log-dir"
    log_dir.mkdir()
    for name in GOLDEN_FILES:
        shutil.copy2(source / name, log_dir / name)
    for partition in range(3):
        shutil.copytree(source / f"{TOPIC}-{partition}", log_dir / f"{TOPIC}-{partition}")
    with EmbeddedBroker(log_dir) as broker:
        broker.call(lambda b: b.create_topic(COMPACTED, 1, {"cleanup.policy": "compact"}))
        yield broker


def delete(
    lethe: LetheRun,
    tmp_path: Path,
    bootstrap: str,
    offsets: list[tuple[str, int, int]],
    *config: str,
) -> Run:
    document = {
        "partitions": [{"topic": t, "partition": p, "offset": o} for t, p, o in offsets],
        "version": 1,
    }
    argv = [
        "--bootstrap-server",
        bootstrap,
        "--offset-json-file",
        write(tmp_path, json.dumps(document)),
    ]
    if config:
        argv += ["--command-config", write(tmp_path, "\n".join(config) + "\n", "admin.properties")]
    return lethe("delete-records", *argv)


def test_below_and_at_the_log_start_offset_print_the_current_low_watermark(
    lethe: LetheRun, tmp_path: Path, kafka: EmbeddedBroker
) -> None:
    run = delete(lethe, tmp_path, kafka.bootstrap, [(TOPIC, 0, 17), (TOPIC, 1, 24), (TOPIC, 2, 30)])
    assert run.status == 0
    assert run.err == ""
    assert run.lines == [
        *HEADER,
        f"partition: {TOPIC}-0\tlow_watermark: 19",
        f"partition: {TOPIC}-1\tlow_watermark: 24",
        f"partition: {TOPIC}-2\tlow_watermark: 30",
    ]


def test_above_the_high_watermark_is_an_error_line_and_the_rest_still_runs(
    lethe: LetheRun, tmp_path: Path, kafka: EmbeddedBroker
) -> None:
    run = delete(lethe, tmp_path, kafka.bootstrap, [(TOPIC, 0, 45), (TOPIC, 1, 36), (TOPIC, 2, -1)])
    assert run.status == 0
    assert run.lines == [
        *HEADER,
        f"partition: {TOPIC}-0\terror: {OUT_OF_RANGE}",
        f"partition: {TOPIC}-1\tlow_watermark: 36",
        f"partition: {TOPIC}-2\tlow_watermark: 30",
    ]


def test_a_delete_moves_the_low_watermark_for_the_next_run(
    lethe: LetheRun, tmp_path: Path, kafka: EmbeddedBroker
) -> None:
    assert delete(lethe, tmp_path, kafka.bootstrap, [(TOPIC, 0, 33)]).lines[-1] == (
        f"partition: {TOPIC}-0\tlow_watermark: 33"
    )
    assert delete(lethe, tmp_path, kafka.bootstrap, [(TOPIC, 0, 20)]).lines[-1] == (
        f"partition: {TOPIC}-0\tlow_watermark: 33"
    )


def test_a_compact_topic_is_a_policy_violation_line(
    lethe: LetheRun, tmp_path: Path, kafka: EmbeddedBroker
) -> None:
    run = delete(lethe, tmp_path, kafka.bootstrap, [(COMPACTED, 0, 1)])
    assert run.status == 0
    assert run.lines == [
        *HEADER,
        f"partition: {COMPACTED}-0\terror: "
        "org.apache.kafka.common.errors.PolicyViolationException: "
        "Request parameters do not satisfy the configured policy.",
    ]


def test_unknown_partitions_time_out_like_the_java_admin(
    lethe: LetheRun, tmp_path: Path, kafka: EmbeddedBroker
) -> None:
    """The Java admin keeps looking an unknown topic up until default.api.timeout.ms."""
    offsets = [(TOPIC, 7, 1), ("golden-delrec-does-not-exist", 0, 1), (TOPIC, 1, 30)]
    started = time.monotonic()
    run = delete(lethe, tmp_path, kafka.bootstrap, offsets, "default.api.timeout.ms=1500")
    elapsed = time.monotonic() - started
    timeout = (
        "error: org.apache.kafka.common.errors.TimeoutException: "
        "Timed out waiting for a node assignment. Call: deleteRecords(api=METADATA)"
    )
    assert run.status == 0
    assert run.lines == [
        *HEADER,
        f"partition: {TOPIC}-7\t{timeout}",
        f"partition: golden-delrec-does-not-exist-0\t{timeout}",
        f"partition: {TOPIC}-1\tlow_watermark: 30",
    ]
    assert 1.4 < elapsed < 10


def test_an_unreachable_broker_times_out_every_partition(lethe: LetheRun, tmp_path: Path) -> None:
    run = delete(lethe, tmp_path, UNREACHABLE, [(TOPIC, 0, 1)], "default.api.timeout.ms=500")
    assert run.status == 0
    assert run.lines == [
        *HEADER,
        f"partition: {TOPIC}-0\terror: org.apache.kafka.common.errors.TimeoutException: "
        "Timed out waiting for a node assignment. Call: deleteRecords(api=METADATA)",
    ]


def test_sasl_plain_against_a_plaintext_listener_fails_every_partition_at_once(
    lethe: LetheRun, tmp_path: Path, kafka: EmbeddedBroker
) -> None:
    """A PLAINTEXT listener answers SaslHandshake with ILLEGAL_SASL_STATE and no
    mechanisms; Java's SaslClientAuthenticator turns that into this exception,
    which is not retried."""
    started = time.monotonic()
    run = delete(
        lethe,
        tmp_path,
        kafka.bootstrap,
        [(TOPIC, 0, 19), (TOPIC, 1, 24)],
        "security.protocol=SASL_PLAINTEXT",
        "sasl.mechanism=PLAIN",
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="alice" password="alice-secret";',
    )
    error = (
        "error: org.apache.kafka.common.errors.IllegalSaslStateException: "
        "Unexpected handshake request with client mechanism PLAIN, enabled mechanisms are []"
    )
    assert run.status == 0
    assert run.lines == [
        *HEADER,
        f"partition: {TOPIC}-0\t{error}",
        f"partition: {TOPIC}-1\t{error}",
    ]
    assert time.monotonic() - started < 10
