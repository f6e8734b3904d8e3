"""DescribeCluster (60), and SASL (17, 36) once a connection is past authentication.

DescribeCluster (``AuthHelper.computeDescribeClusterResponse``): this listener
serves the BROKER endpoint type (1). An unknown type is UNSUPPORTED_ENDPOINT_TYPE
(v1+; INVALID_REQUEST in v0) ``Unsupported endpoint type N``; asking for
CONTROLLER (2) here is MISMATCHED_ENDPOINT_TYPE ``The request was sent to an
endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER``.
Otherwise: cluster id, controller id (this node, as KRaft reports a random alive
broker), this broker with its advertised host and port, and the cluster's
authorized operations when asked (what the principal may do on the cluster;
no authorizer: all, see :mod:`.authz`).
``include_fenced_brokers`` changes nothing: this node is never fenced.

SASL. These handlers see SaslHandshake/SaslAuthenticate only where no
authentication is running: on a PLAINTEXT listener, or on a SASL_PLAINTEXT one
after it completed (before that, :mod:`lethe_reference.protocol.sasl` answers
them). On a PLAINTEXT listener Kafka 4.0 still advertises SaslHandshake 0-1 and
SaslAuthenticate 0-2, and a
request for either reaches ``KafkaApis``, which answers ILLEGAL_SASL_STATE (34):
SaslHandshake with no mechanisms, SaslAuthenticate with the message
``SaslAuthenticate request received after successful authentication`` (the
connection counts as already authenticated). lethe answers the same, so a
client configured for SASL fails the way it fails against a PLAINTEXT Kafka
port; a second handshake after SASL authentication gets the same answer.
The ``error_response`` builders are those requests' ``getErrorResponse``,
which the SASL authenticator uses to refuse them in the wrong state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode
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

from lethe_reference.handlers.authz import OMITTED, cluster_operations
from lethe_reference.handlers.context import RequestContext
from lethe_reference.handlers.dispatch import handles
from lethe_reference.handlers.endpoints import advertised_endpoint

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = ["describe_cluster", "sasl_authenticate", "sasl_handshake"]

_ENDPOINT_NAMES = {1: "BROKER", 2: "CONTROLLER"}
_BROKER_ENDPOINT = 1


@handles(ApiKey.DESCRIBE_CLUSTER)
def describe_cluster(
    broker: Broker, ctx: RequestContext, request: DescribeClusterRequest
) -> DescribeClusterResponse:
    wanted = request.endpoint_type
    if wanted not in _ENDPOINT_NAMES:
        code = (
            ErrorCode.INVALID_REQUEST
            if ctx.api_version == 0
            else ErrorCode.UNSUPPORTED_ENDPOINT_TYPE
        )
        return DescribeClusterResponse(
            error_code=code, error_message=f"Unsupported endpoint type {wanted}"
        )
    if wanted != _BROKER_ENDPOINT:
        code = (
            ErrorCode.INVALID_REQUEST
            if ctx.api_version == 0
            else ErrorCode.MISMATCHED_ENDPOINT_TYPE
        )
        return DescribeClusterResponse(
            error_code=code,
            error_message=(
                f"The request was sent to an endpoint of type {_ENDPOINT_NAMES[_BROKER_ENDPOINT]}, "
                f"but we wanted an endpoint of type {_ENDPOINT_NAMES[wanted]}"
            ),
        )
    operations = OMITTED
    if request.include_cluster_authorized_operations:
        operations = cluster_operations(broker, ctx)
    host, port = advertised_endpoint(broker, ctx)
    node = DescribeClusterBroker(broker_id=broker.node_id, host=host, port=port)
    return DescribeClusterResponse(
        error_code=ErrorCode.NONE,
        error_message=None,
        endpoint_type=_BROKER_ENDPOINT,
        cluster_id=broker.cluster_id,
        controller_id=broker.node_id,
        brokers=(node,),
        cluster_authorized_operations=operations,
    )


def _handshake_error(
    request: SaslHandshakeRequest, code: ErrorCode, _message: str | None
) -> SaslHandshakeResponse:
    return SaslHandshakeResponse(error_code=code, mechanisms=())


def _authenticate_error(
    request: SaslAuthenticateRequest, code: ErrorCode, message: str | None
) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse(error_code=code, error_message=message)


@handles(ApiKey.SASL_HANDSHAKE, error_response=_handshake_error)
def sasl_handshake(
    broker: Broker, ctx: RequestContext, request: SaslHandshakeRequest
) -> SaslHandshakeResponse:
    return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=())


@handles(ApiKey.SASL_AUTHENTICATE, error_response=_authenticate_error)
def sasl_authenticate(
    broker: Broker, ctx: RequestContext, request: SaslAuthenticateRequest
) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse(
        error_code=ErrorCode.ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
    )
