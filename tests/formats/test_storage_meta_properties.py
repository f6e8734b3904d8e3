"""meta.properties (Kafka 4.0 MetaProperties rules on Java Properties syntax) and
.kafka_cleanshutdown."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from lethe_formats.storage.clean_shutdown import (
    CleanShutdown,
    format_clean_shutdown,
    kafka_broker_epoch,
    read_clean_shutdown,
    write_clean_shutdown,
)
from lethe_formats.storage.java_properties import (
    format_java_properties,
    java_date_comment,
    java_hash_order,
    parse_java_properties,
)
from lethe_formats.storage.java_text import CheckpointReadError
from lethe_formats.storage.meta_properties import (
    MetaProperties,
    format_meta_properties,
    read_meta_properties,
    write_meta_properties,
)

CLUSTER = "2N81Oue8RyCowbZXcMNpzg"
DIRECTORY = "05_gI4MKRaSA2QZ4_r_7Dg"
GOLDEN_TEXT = (
    "#\n#Sat Nov 21 19:26:41 UTC 2026\n"
    f"node.id=1\ndirectory.id={DIRECTORY}\nversion=1\ncluster.id={CLUSTER}\n"
)


def meta_error(text: str) -> CheckpointReadError:
    with pytest.raises(CheckpointReadError) as info:
        read_meta_properties(text, file="meta.properties")
    return info.value


def test_a_v1_file_gives_cluster_node_and_directory() -> None:
    meta = read_meta_properties(GOLDEN_TEXT)
    assert (meta.version, meta.cluster_id, meta.node_id) == (1, CLUSTER, 1)
    assert meta.directory_id is not None and str(meta.directory_id) == DIRECTORY
    assert meta.comments == ("#", "#Sat Nov 21 19:26:41 UTC 2026")


def test_store_order_of_a_jdk17_broker_is_reproduced() -> None:
    meta = read_meta_properties(GOLDEN_TEXT)
    assert format_meta_properties(meta, date_comment="Sat Nov 21 19:26:41 UTC 2026") == GOLDEN_TEXT
    assert java_hash_order(["version", "cluster.id", "node.id", "directory.id"]) == [
        "node.id",
        "directory.id",
        "version",
        "cluster.id",
    ]


def test_date_comment_is_java_date_to_string_in_utc() -> None:
    moment = datetime(2026, 11, 21, 19, 26, 41, tzinfo=UTC)
    assert java_date_comment(moment) == "Sat Nov 21 19:26:41 UTC 2026"


def test_version_defaults_to_zero_where_node_id_is_optional_broker_id() -> None:
    meta = read_meta_properties("broker.id=3\ncluster.id=c\n")
    assert meta == MetaProperties(0, "c", 3, None, (("broker.id", "3"), ("cluster.id", "c")), ())
    assert read_meta_properties("").node_id is None


def test_version_is_trimmed_before_parsing() -> None:
    assert read_meta_properties(f"version = 1 \nnode.id=2\ncluster.id={CLUSTER}").version == 1


def test_unknown_version_number_uses_kafkas_message() -> None:
    error = meta_error("version=2\nnode.id=1\ncluster.id=x\n")
    assert error.message == "Unknown meta.properties version number 2"
    assert error.kafka_exception == "RuntimeException" and error.line == 1


def test_non_numeric_version_uses_kafkas_message() -> None:
    assert meta_error("version=one\n").message == "Invalid meta.properties version string 'one'"


def test_v1_requires_node_id() -> None:
    assert meta_error(f"version=1\ncluster.id={CLUSTER}\n").message == "Failed to find node.id"


def test_node_id_must_be_base_10_and_is_not_trimmed() -> None:
    error = meta_error(f"version=1\ncluster.id={CLUSTER}\nnode.id=1 \n")
    assert error.message == "Unable to read node.id as a base-10 number."
    assert (error.line, error.field) == (3, "node.id")


def test_v1_requires_cluster_id() -> None:
    assert meta_error("version=1\nnode.id=1\n").message == "cluster.id was not found."


def test_directory_id_must_be_a_uuid() -> None:
    error = meta_error("version=1\nnode.id=1\ncluster.id=c\ndirectory.id=nope\n")
    assert error.message.startswith("Unable to read directory.id as a Uuid: ")
    assert error.line == 4


def test_v0_broker_id_must_be_an_int_when_present() -> None:
    assert meta_error("broker.id=x\n").message == "Unable to read broker.id as a base-10 number."


def test_java_properties_syntax() -> None:
    text = (
        "! bang comment\n"
        "  # indented comment\n"
        "a.key : spaced value\n"
        "b\tvalue with = sign\n"
        "c=first \\\n"
        "    continued\n"
        "d\\ e=\\u0041\\tz\\q\n"
        "\n"
        "a.key=last wins\n"
    )
    props = parse_java_properties(text)
    assert props.as_dict() == {
        "a.key": "last wins",
        "b": "value with = sign",
        "c": "first continued",
        "d e": "A\tzq",
    }
    assert props.comments == ("! bang comment", "# indented comment")
    winner = props.find("a.key")
    assert winner is not None and winner.line == 9


def test_malformed_unicode_escape_is_an_illegal_argument_exception() -> None:
    error = meta_error("cluster.id=\\u12\n")
    assert error.message == "Malformed \\uxxxx encoding."
    assert error.kafka_exception == "IllegalArgumentException"


def test_bytes_are_read_as_latin_1() -> None:
    meta = read_meta_properties(b"cluster.id=caf\xe9\n")
    assert meta.cluster_id == "café"


def test_store_escapes_special_characters() -> None:
    text = format_java_properties([("a key", " v=1#")], date_comment="D")
    assert text == "#\n#D\na\\ key=\\ v\\=1\\#\n"
    assert parse_java_properties(text).as_dict() == {"a key": " v=1#"}


def test_write_meta_properties_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "meta.properties"
    write_meta_properties(
        path, read_meta_properties(GOLDEN_TEXT), date_comment="Sat Nov 21 19:26:41 UTC 2026"
    )
    assert path.read_text() == GOLDEN_TEXT
    assert [p.name for p in tmp_path.iterdir()] == ["meta.properties"]


def test_clean_shutdown_is_compact_json_without_newline() -> None:
    assert format_clean_shutdown(9) == '{"version":0,"brokerEpoch":9}'
    assert read_clean_shutdown('{"version":0,"brokerEpoch":9}') == CleanShutdown(0, 9)


def test_clean_shutdown_ignores_unknown_fields_and_defaults_the_version() -> None:
    assert read_clean_shutdown('{"brokerEpoch":12,"extra":true}') == CleanShutdown(0, 12)


@pytest.mark.parametrize(
    ("text", "exception"),
    [
        ("{", "JsonProcessingException"),
        ('{"version":0}', "NullPointerException"),
        ('{"version":0,"brokerEpoch":null}', "NullPointerException"),
        ('{"version":0,"brokerEpoch":"9"}', "JsonMappingException"),
        ("[]", "JsonMappingException"),
    ],
)
def test_unreadable_marker_is_strict_here_but_no_epoch_for_kafka(text: str, exception: str) -> None:
    with pytest.raises(CheckpointReadError) as info:
        read_clean_shutdown(text)
    assert info.value.kafka_exception == exception
    assert not info.value.marks_dir_offline
    assert kafka_broker_epoch(text) is None


def test_clean_shutdown_write_is_in_place(tmp_path: Path) -> None:
    path = tmp_path / ".kafka_cleanshutdown"
    write_clean_shutdown(path, 42)
    assert path.read_bytes() == b'{"version":0,"brokerEpoch":42}'
    assert kafka_broker_epoch(path) == 42
    assert kafka_broker_epoch(tmp_path / "missing") is None
