"""DescribeCluster and the SASL APIs as a Kafka 4.0 PLAINTEXT listener answers them."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_formats.protocol.messages.describe_cluster import (
    DescribeClusterBroker,
    DescribeClusterRequest,
    DescribeClusterResponse,
)
from lethe_formats.protocol.messages.sasl_authenticate import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
)
from lethe_formats.protocol.messages.sasl_handshake import (
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)
from lethe_reference.broker import Broker
from lethe_reference.protocol.loopback import LoopbackClient


@pytest.fixture
def client(tmp_path: Path) -> LoopbackClient:
    broker = Broker(tmp_path, port=19092, cluster_id="bkxx8N4dTZOzsaZlPppRHg", durable=False)
    broker.startup()
    return LoopbackClient(broker)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_describe_cluster_lists_this_broker(client: LoopbackClient, version: int) -> None:
    response = client.request(DescribeClusterRequest(), version)
    assert response == DescribeClusterResponse(
        error_code=0,
        error_message=None,
        endpoint_type=1,
        cluster_id="bkxx8N4dTZOzsaZlPppRHg",
        controller_id=1,
        brokers=(DescribeClusterBroker(broker_id=1, host="127.0.0.1", port=19092),),
    )


def test_cluster_authorized_operations_when_asked(client: LoopbackClient) -> None:
    response = client.request(DescribeClusterRequest(include_cluster_authorized_operations=True))
    assert isinstance(response, DescribeClusterResponse)
    assert response.cluster_authorized_operations == 8096


def test_endpoint_type_controller_is_a_mismatch_here(client: LoopbackClient) -> None:
    response = client.request(DescribeClusterRequest(endpoint_type=2), 1)
    assert isinstance(response, DescribeClusterResponse)
    assert (response.error_code, response.error_message) == (
        114,
        "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of "
        "type CONTROLLER",
    )
    assert response.brokers == ()


def test_unknown_endpoint_type(client: LoopbackClient) -> None:
    response = client.request(DescribeClusterRequest(endpoint_type=7), 1)
    assert isinstance(response, DescribeClusterResponse)
    assert (response.error_code, response.error_message) == (115, "Unsupported endpoint type 7")


@pytest.mark.parametrize("version", [0, 1])
def test_sasl_handshake_on_plaintext_is_illegal_sasl_state(client, version) -> None:
    response = client.request(SaslHandshakeRequest("PLAIN"), version)
    assert response == SaslHandshakeResponse(error_code=34, mechanisms=())


@pytest.mark.parametrize("version", [0, 1, 2])
def test_sasl_authenticate_on_plaintext_is_illegal_sasl_state(client, version) -> None:
    response = client.request(SaslAuthenticateRequest(b"\x00user\x00pw"), version)
    assert response == SaslAuthenticateResponse(
        error_code=34,
        error_message="SaslAuthenticate request received after successful authentication",
    )
    assert not client.closed
