"""The KIP-694 side of the conformance kit against scripted peers: the client's
DeletePartitions is UNSUPPORTED where key 10694 is not advertised, Metadata's
``canonical`` sees a default-valued tag 10694, and check_files' ``directory``
tells live, ``-delete`` and gone folders apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_broker import FakeBroker, api_versions_body, response_frame
from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.client.errors import UnsupportedApiError
from lethe_conformance.client.partition_calls import delete_partitions, metadata_exact
from lethe_conformance.scenarios.ops.files import directory_state
from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.headers import RequestHeader
from lethe_formats.protocol.messages.api_versions import ApiVersion
from lethe_formats.protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from lethe_formats.protocol.schema import RawTaggedField


def metadata_peer(partition: MetadataResponsePartition, *, with_10694: bool) -> FakeBroker:
    def answer(header: RequestHeader, payload: bytes) -> bytes | None:
        if header.api_key == ApiKey.API_VERSIONS:
            extra = (ApiVersion(10694, 0, 0),) if with_10694 else ()
            return response_frame(header, api_versions_body(extra=extra))
        topic = MetadataResponseTopic(name="t", partitions=(partition,))
        return response_frame(header, MetadataResponse(topics=(topic,)))

    return FakeBroker(answer)


def test_delete_partitions_is_unsupported_where_key_10694_is_not_advertised() -> None:
    with (
        metadata_peer(MetadataResponsePartition(), with_10694=False) as peer,
        KafkaConnection.open("127.0.0.1", peer.port) as conn,
    ):
        with pytest.raises(UnsupportedApiError):
            delete_partitions(conn, [("t", 1)])
        assert [h.api_key for h in peer.requests] == [ApiKey.API_VERSIONS]


@pytest.mark.parametrize(
    ("partition", "mode", "canonical"),
    [
        (MetadataResponsePartition(partition_index=0), 0, True),
        (MetadataResponsePartition(partition_index=0, mode=1), 1, True),
        (MetadataResponsePartition(partition_index=0, mode=-1), -1, True),
        (
            MetadataResponsePartition(
                partition_index=0, _unknown_tagged_fields=(RawTaggedField(10694, b"\x00"),)
            ),
            0,
            False,
        ),
    ],
    ids=["readwrite", "read-only", "none", "explicit-readwrite-tag"],
)
def test_metadata_reads_the_mode_and_whether_the_bytes_are_canonical(
    partition: MetadataResponsePartition, mode: int, canonical: bool
) -> None:
    with (
        metadata_peer(partition, with_10694=True) as peer,
        KafkaConnection.open("127.0.0.1", peer.port) as conn,
    ):
        response, exact = metadata_exact(conn, ["t"], version=12)
    assert response.topics[0].partitions[0].mode == mode
    assert exact is canonical


def test_directory_state_tells_live_deleted_and_gone_apart(tmp_path: Path) -> None:
    (tmp_path / "t-0").mkdir()
    (tmp_path / f"t-1.{'ab' * 16}-delete").mkdir()
    (tmp_path / f"t-2.{'ab' * 16}-stray").mkdir()
    (tmp_path / f"t-11.{'ab' * 16}-delete").mkdir()
    assert directory_state(tmp_path, "t", 0) == "live"
    assert directory_state(tmp_path, "t", 1) == "deleted"
    assert directory_state(tmp_path, "t", 2) == "gone"
    assert directory_state(tmp_path, "t", 3) == "gone"
