"""Which profiles a target offers, found by asking it, never by trusting a flag.

Theory of operation
-------------------
Each profile has a probe (the table :data:`PROBES`): API keys that must all be
advertised in ApiVersions, and broker configs of which at least one must
appear in DescribeConfigs of the broker the runner is connected to. The rules
come from the requirement catalog (fixtures/requirements/README.md, "How
decisions are made"):

* the adopted KIPs are offered when the APIs they use exist: ``kip107`` needs
  DeleteRecords, ListOffsets and Fetch; ``kip534`` (a cleaner behaviour, no
  API of its own) needs Produce and Fetch;
* an extension API takes the key 10000 + its KIP number and is advertised
  only when enabled: ``kip694`` is offered when key 10694 (DeletePartitions)
  is advertised;
* an extension config has a Kafka-style name with a ``log.``-prefixed broker
  synonym: ``kip68`` is offered when the broker lists
  ``log.retention.commitoffset.enable``; ``kip87`` when it lists
  ``log.tombstone.flag.enable``.

A profile the target does not offer makes its scenarios UNSUPPORTED.
"""

from __future__ import annotations

from dataclasses import dataclass

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode

from lethe_conformance.client import calls
from lethe_conformance.client.connection import KafkaConnection

__all__ = ["PROBES", "ProfileProbe", "broker_configs", "discover_profiles"]

EXTENSION_API_BASE = 10000


@dataclass(frozen=True, slots=True)
class ProfileProbe:
    """``api_keys``: all must be advertised; ``broker_configs``: at least one must be listed."""

    profile: str
    api_keys: tuple[int, ...] = ()
    broker_configs: tuple[str, ...] = ()


PROBES: tuple[ProfileProbe, ...] = (
    ProfileProbe("kip107", api_keys=(ApiKey.DELETE_RECORDS, ApiKey.LIST_OFFSETS, ApiKey.FETCH)),
    ProfileProbe("kip534", api_keys=(ApiKey.PRODUCE, ApiKey.FETCH)),
    ProfileProbe("kip68", broker_configs=("log.retention.commitoffset.enable",)),
    ProfileProbe("kip694", api_keys=(EXTENSION_API_BASE + 694,)),
    ProfileProbe("kip87", broker_configs=("log.tombstone.flag.enable",)),
)


def discover_profiles(conn: KafkaConnection) -> frozenset[str]:
    """The profiles whose probe succeeds on the target behind ``conn``."""
    configs: frozenset[str] | None = None
    offered = set()
    for probe in PROBES:
        if not all(conn.supports(key) for key in probe.api_keys):
            continue
        if probe.broker_configs:
            if configs is None:
                configs = broker_configs(conn)
            if not configs.intersection(probe.broker_configs):
                continue
        offered.add(probe.profile)
    return frozenset(offered)


def broker_configs(conn: KafkaConnection) -> frozenset[str]:
    """Names of the configs DescribeConfigs lists for the connected broker (empty if it
    cannot be asked: no DescribeConfigs, or an error such as an authorization failure)."""
    if not conn.supports(ApiKey.DESCRIBE_CONFIGS):
        return frozenset()
    broker_id = _connected_broker_id(conn)
    if broker_id is None:
        return frozenset()
    response = calls.describe_configs(conn, calls.RESOURCE_BROKER, str(broker_id))
    names: set[str] = set()
    for result in response.results:
        if result.error_code == ErrorCode.NONE:
            names.update(config.name for config in result.configs)
    return frozenset(names)


def _connected_broker_id(conn: KafkaConnection) -> int | None:
    """The node id of the broker at the connection's address (else the first broker)."""
    brokers = calls.metadata(conn, []).brokers
    host, _, port = conn.target.rpartition(":")
    for broker in brokers:
        if broker.host == host and str(broker.port) == port:
            return broker.node_id
    return brokers[0].node_id if brokers else None
