"""The conformance kit's own Kafka protocol client, built on lethe_formats only.

Third-party clients hide exactly what a conformance suite must see (error
codes, versions, raw batches, -1 fields), so the runner speaks the protocol
itself:

``connection``  :class:`KafkaConnection`: connect, ApiVersions negotiation,
                any message at any version, raw request bytes, SASL (PLAIN, SCRAM) and TLS,
                bounded timeouts
``calls``       one typed function per request the runner makes
``batches``     raw batch bytes out (fixture replay), visible records in
``versions``    the version choice rule
``errors``      unreachable / nonsense / unsupported, each naming target and API
"""

from lethe_conformance.client.connection import (
    DEFAULT_REQUEST_TIMEOUT,
    KafkaConnection,
    PlainCredentials,
)
from lethe_conformance.client.errors import (
    AuthenticationError,
    ClientError,
    TargetNonsenseError,
    TargetTimeoutError,
    TargetUnreachableError,
    UnsupportedApiError,
)

__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "AuthenticationError",
    "ClientError",
    "KafkaConnection",
    "PlainCredentials",
    "TargetNonsenseError",
    "TargetTimeoutError",
    "TargetUnreachableError",
    "UnsupportedApiError",
]
