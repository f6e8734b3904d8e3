"""The conformance client: negotiation, any version, raw batches, and typed failures.

Against the embedded reference broker for what a broker answers, and against a
scripted peer (``fake_broker``) for the answers no correct broker gives.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_broker import Answer, FakeBroker, api_versions_body, response_frame
from lethe_conformance.client import (
    KafkaConnection,
    TargetNonsenseError,
    TargetTimeoutError,
    TargetUnreachableError,
    UnsupportedApiError,
    calls,
)
from lethe_conformance.client.batches import (
    FetchedRecord,
    as_produced,
    build_records,
    fixture_entries,
    split_entries,
    visible_records,
)
from lethe_conformance.client.versions import common_version
from lethe_formats.fixtures import fixtures_root
from lethe_formats.model import Compression, ControlType
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.api_versions import ApiVersion, ApiVersionsResponse
from lethe_formats.protocol.messages.delete_records import DeleteRecordsResponse
from lethe_formats.records.builder import RecordSpec, build_end_txn_marker_batch
from lethe_reference.embedded import EmbeddedBroker

GOLDEN_CODECS = fixtures_root() / "golden" / "codecs" / "golden-codecs-0"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker(tmp_path_factory.mktemp("client")) as kafka:
        yield kafka


@pytest.fixture
def conn(broker: EmbeddedBroker) -> Iterator[KafkaConnection]:
    host, port = broker.bootstrap.split(":")
    with KafkaConnection.open(host, int(port), request_timeout=5) as connection:
        yield connection


def fake(answer_api: Answer) -> FakeBroker:
    """A peer that answers ApiVersions correctly and everything else with ``answer_api``."""

    def answer(header: RequestHeader, payload: bytes) -> bytes | None:
        if header.api_key == ApiKey.API_VERSIONS:
            return response_frame(header, api_versions_body())
        return answer_api(header, payload)

    return FakeBroker(answer)


# --- versions ---------------------------------------------------------------------------------


def test_common_version_is_the_highest_in_both_ranges() -> None:
    assert common_version((0, 2), (0, 2)) == 2
    assert common_version((1, 10), (0, 7)) == 7
    assert common_version((4, 17), (0, 3)) is None
    assert common_version((0, 2), None) is None


def test_negotiation_reads_the_targets_ranges_and_picks_the_highest_common(
    conn: KafkaConnection,
) -> None:
    assert conn.versions[ApiKey.DELETE_RECORDS] == (0, 2)  # Kafka 4.0 advertises 0-2
    assert conn.version_for(ApiKey.DELETE_RECORDS) == 2
    assert conn.version_for(ApiKey.LIST_OFFSETS) == 10


def test_api_versions_unsupported_version_is_retried_at_the_targets_highest() -> None:
    """KIP-511: an old broker answers UNSUPPORTED_VERSION with a v0 body listing its range."""

    def answer(header: RequestHeader, payload: bytes) -> bytes | None:
        if header.api_version > 2:
            old = ApiVersionsResponse(
                error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=(ApiVersion(18, 0, 2),)
            )
            return response_frame(RequestHeader(18, 0, header.correlation_id), old)
        return response_frame(header, api_versions_body())

    with FakeBroker(answer) as peer:
        KafkaConnection.open("127.0.0.1", peer.port).close()
    assert [h.api_version for h in peer.requests] == [4, 2]


def test_an_explicit_version_is_sent_as_asked() -> None:
    def answer(header: RequestHeader, payload: bytes) -> bytes | None:
        return response_frame(header, DeleteRecordsResponse())

    with fake(answer) as peer, KafkaConnection.open("127.0.0.1", peer.port) as connection:
        calls.delete_records(connection, [("t", 0, 5)], version=0)
        calls.delete_records(connection, [("t", 0, 5)])
    assert [h.api_version for h in peer.requests[1:]] == [0, 2]


def test_an_api_the_target_does_not_offer_is_unsupported_naming_target_and_api() -> None:
    def answer(header: RequestHeader, payload: bytes) -> bytes | None:
        return response_frame(header, api_versions_body(drop=frozenset({21})))

    with FakeBroker(answer) as peer, KafkaConnection.open("127.0.0.1", peer.port) as connection:
        assert not connection.supports(ApiKey.DELETE_RECORDS)
        with pytest.raises(UnsupportedApiError, match=rf"127.0.0.1:{peer.port} \(DELETE_RECORDS\)"):
            calls.delete_records(connection, [("t", 0, 5)])


def test_request_raw_sends_any_version_and_returns_the_body_bytes(conn: KafkaConnection) -> None:
    """ApiVersions v99: Kafka answers UNSUPPORTED_VERSION (35) in a v0 body."""
    body = conn.request_raw(ApiKey.API_VERSIONS, 99, b"\x00\x00\x00")
    assert struct.unpack_from(">h", body)[0] == ErrorCode.UNSUPPORTED_VERSION


# --- failures ---------------------------------------------------------------------------------


def test_a_closed_port_is_unreachable_naming_the_target() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TargetUnreachableError, match=f"127.0.0.1:{port}"):
        KafkaConnection.open("127.0.0.1", port, connect_timeout=2)


def test_another_correlation_id_is_nonsense_naming_the_api() -> None:
    def answer(header: RequestHeader, payload: bytes) -> bytes | None:
        return response_frame(header, DeleteRecordsResponse(), correlation_id=999)

    with (
        fake(answer) as peer,
        KafkaConnection.open("127.0.0.1", peer.port) as connection,
        pytest.raises(TargetNonsenseError, match=r"DELETE_RECORDS.*correlation id 999"),
    ):
        calls.delete_records(connection, [("t", 0, 5)])


def test_undecodable_response_bytes_are_nonsense() -> None:
    def answer(header: RequestHeader, payload: bytes) -> bytes | None:
        return response_frame(header, DeleteRecordsResponse())[:-1] + b"\x07\x07"

    with (
        fake(answer) as peer,
        KafkaConnection.open("127.0.0.1", peer.port) as connection,
        pytest.raises(TargetNonsenseError, match=r"\(DELETE_RECORDS\).*undecodable"),
    ):
        calls.delete_records(connection, [("t", 0, 5)])


def test_a_negative_frame_size_is_nonsense() -> None:
    with (
        fake(lambda header, payload: b"\xff\xff\xff\xfe") as peer,
        KafkaConnection.open("127.0.0.1", peer.port) as connection,
        pytest.raises(TargetNonsenseError, match="bad response frame"),
    ):
        calls.metadata(connection, None)


def test_silence_times_out_within_the_bound() -> None:
    with (
        fake(lambda header, payload: b"") as peer,
        KafkaConnection.open("127.0.0.1", peer.port, request_timeout=0.2) as connection,
        pytest.raises(TargetTimeoutError, match=r"\(METADATA\): no response within 0.2 s"),
    ):
        calls.metadata(connection, None)


def test_a_closed_connection_is_unreachable() -> None:
    with (
        fake(lambda header, payload: None) as peer,
        KafkaConnection.open("127.0.0.1", peer.port) as connection,
        pytest.raises(TargetUnreachableError, match="closed the connection"),
    ):
        calls.metadata(connection, None)


# --- batches ----------------------------------------------------------------------------------


def test_split_entries_cuts_kafkas_segment_into_its_batches() -> None:
    """golden codecs: kafka-dump-log lists batches at 0, 6, 11, 18, 22 | 28, 32."""
    entries = fixture_entries(GOLDEN_CODECS)
    assert [struct.unpack_from(">q", e)[0] for e in entries] == [0, 6, 11, 18, 22, 28, 32]
    log = (GOLDEN_CODECS / "00000000000000000000.log").read_bytes()
    assert b"".join(split_entries(log)) == log


def test_raw_batches_are_produced_as_they_are(conn: KafkaConnection, tmp_path: Path) -> None:
    """Kafka's own batches (every codec, idempotent ones) replayed: offsets reassigned by
    the broker, every byte from the attributes on (CRC, codec, producer id) kept."""
    assert calls.create_topic(conn, "replay", 1, {}).topics[0].error_code == 0
    entries = fixture_entries(GOLDEN_CODECS)
    offsets = []
    for entry in entries:
        sent = as_produced(entry)
        assert sent[8:] == entry[8:]
        answer = calls.produce(conn, "replay", 0, sent).responses[0].partition_responses[0]
        assert answer.error_code == 0
        offsets.append(answer.base_offset)
    assert offsets == [0, 6, 11, 18, 22, 28, 32]
    fetched = calls.fetch(conn, "replay", 0, 0).responses[0].partitions[0].records
    assert fetched is not None
    back = split_entries(fetched)
    assert [b[16:] for b in back] == [e[16:] for e in entries]  # magic, CRC and all after it


def test_visible_records_drop_offsets_below_the_fetch_offset_and_control_records() -> None:
    spec = [RecordSpec(b"k%d" % i, b"v", timestamp=1000 + i) for i in range(4)]
    data = build_records(spec, compression=Compression.GZIP)
    data += build_end_txn_marker_batch(
        base_offset=4,
        producer_id=7,
        producer_epoch=0,
        control_type=ControlType.COMMIT,
        coordinator_epoch=0,
        timestamp=2000,
    )
    seen = visible_records(data, 2)
    assert seen == [
        FetchedRecord(2, 1002, b"k2", b"v", (), 0),
        FetchedRecord(3, 1003, b"k3", b"v", (), 0),
    ]


def test_visible_records_tolerate_a_torn_last_batch() -> None:
    one = build_records([RecordSpec(b"a", b"1", timestamp=5)])
    assert [r.key for r in visible_records(one + one[:20], 0)] == [b"a"]
