"""Which profiles a target offers, found by asking it, never by trusting a flag.

Theory of operation
-------------------
Each profile has a probe (the table :data:`PROBES`): API keys that must all be
advertised in ApiVersions, and topic configs of which at least one must
appear in DescribeConfigs of a topic. The rules come from the requirement
catalog (fixtures/requirements/README.md, "How decisions are made";
KIP68-DISC-1, KIP694-DISC-2, KIP87-DISC-1):

* the adopted KIPs are offered when the APIs they use exist: ``kip107`` needs
  DeleteRecords, ListOffsets and Fetch; ``kip534`` (a cleaner behaviour, no
  API of its own) needs Produce and Fetch;
* an extension API takes the key 10000 + its KIP number and is advertised
  only when enabled: ``kip694`` is offered when key 10694 (DeletePartitions)
  is advertised;
* an extension config is a topic config (with a ``log.``-prefixed broker
  default): ``kip68`` is offered when DescribeConfigs of a topic lists
  ``retention.commitoffset.enable``, ``kip87`` when it lists
  ``tombstone.flag.enable``.

Which topic: the first non-internal topic Metadata lists; on a broker with
none, a probe topic ``lethe-profile-probe-<random>`` is created for the
question and deleted after it. A profile the target does not offer makes its
scenarios UNSUPPORTED.

Protocol capabilities are discovered the same way: ``transactions`` (a
capability scenarios ``require``, not a profile: KIP-534's scenarios with
markers from real transactions need it, the rest of the profile does not) when
ApiVersions lists every API of :data:`PROTOCOL_CAPABILITIES`.
"""

from __future__ import annotations

import contextlib
import secrets
from dataclasses import dataclass

from lethe_formats.protocol.api_keys import ApiKey
from lethe_formats.protocol.error_codes import ErrorCode

from lethe_conformance.client import calls
from lethe_conformance.client.connection import KafkaConnection
from lethe_conformance.client.errors import (
    ClientError,
    ConnectionClosedError,
    TargetNonsenseError,
    TargetTimeoutError,
)
from lethe_conformance.targets.base import TRANSACTIONS

__all__ = [
    "PROBES",
    "PROTOCOL_CAPABILITIES",
    "ProfileProbe",
    "ProfilesOnce",
    "discover_profiles",
    "topic_configs",
]

EXTENSION_API_BASE = 10000


@dataclass(frozen=True, slots=True)
class ProfileProbe:
    """``api_keys``: all must be advertised; ``topic_configs``: at least one must be listed."""

    profile: str
    api_keys: tuple[int, ...] = ()
    topic_configs: tuple[str, ...] = ()


PROBES: tuple[ProfileProbe, ...] = (
    ProfileProbe("kip107", api_keys=(ApiKey.DELETE_RECORDS, ApiKey.LIST_OFFSETS, ApiKey.FETCH)),
    ProfileProbe("kip534", api_keys=(ApiKey.PRODUCE, ApiKey.FETCH)),
    ProfileProbe("kip68", topic_configs=("retention.commitoffset.enable",)),
    ProfileProbe("kip694", api_keys=(EXTENSION_API_BASE + 694,)),
    ProfileProbe("kip87", topic_configs=("tombstone.flag.enable",)),
)


#: Capabilities a target has when ApiVersions lists all these APIs.
PROTOCOL_CAPABILITIES: dict[str, tuple[int, ...]] = {
    TRANSACTIONS: (
        ApiKey.ADD_PARTITIONS_TO_TXN,
        ApiKey.ADD_OFFSETS_TO_TXN,
        ApiKey.END_TXN,
        ApiKey.TXN_OFFSET_COMMIT,
    ),
}


def discover_profiles(conn: KafkaConnection) -> frozenset[str]:
    """The profiles whose probe succeeds on the target behind ``conn``."""
    configs: frozenset[str] | None = None
    offered = set()
    for probe in PROBES:
        if not all(conn.supports(key) for key in probe.api_keys):
            continue
        if probe.topic_configs:
            if configs is None:
                configs = topic_configs(conn)
            if not configs.intersection(probe.topic_configs):
                continue
        offered.add(probe.profile)
    return frozenset(offered)


def topic_configs(conn: KafkaConnection) -> frozenset[str]:
    """Names of the configs DescribeConfigs lists for a topic (empty when the target has
    no DescribeConfigs, answers with an error, e.g. an authorization failure, or does not
    answer at all: a closed connection, garbage, silence; the scenarios that use
    DescribeConfigs then show that misbehaviour as the target's, step by step)."""
    if not conn.supports(ApiKey.DESCRIBE_CONFIGS):
        return frozenset()
    existing = [t.name for t in calls.metadata(conn, None).topics if t.name and not t.is_internal]
    if existing:
        return _answered(conn, existing[0])
    probe = f"lethe-profile-probe-{secrets.token_hex(4)}"
    created = calls.create_topic(conn, probe, 1, {}).topics
    if not created or created[0].error_code != ErrorCode.NONE:
        return frozenset()
    try:
        return _answered(conn, probe)
    finally:
        with contextlib.suppress(ClientError):  # the connection may be gone: best effort
            calls.delete_topics(conn, [probe])


def _answered(conn: KafkaConnection, topic: str) -> frozenset[str]:
    try:
        return _described(conn, topic)
    except (ConnectionClosedError, TargetNonsenseError, TargetTimeoutError):
        return frozenset()


def _described(conn: KafkaConnection, topic: str) -> frozenset[str]:
    response = calls.describe_configs(conn, calls.RESOURCE_TOPIC, topic)
    names: set[str] = set()
    for result in response.results:
        if result.error_code == ErrorCode.NONE:
            names.update(config.name for config in result.configs)
    return frozenset(names)


class ProfilesOnce:
    """A target's ``profiles()``: discovered through its own :meth:`connect` on the
    first call, then kept, since a target does not change what it offers within
    a run. Targets inherit it and define ``connect``."""

    _discovered: frozenset[str] | None = None
    _capabilities: frozenset[str] | None = None

    def connect(self) -> KafkaConnection:
        raise NotImplementedError

    def profiles(self) -> frozenset[str]:
        if self._discovered is None:
            with self.connect() as conn:
                self._discovered = discover_profiles(conn)
        return self._discovered

    def protocol_capabilities(self) -> frozenset[str]:
        """The capabilities of :data:`PROTOCOL_CAPABILITIES` the target's ApiVersions shows."""
        if self._capabilities is None:
            with self.connect() as conn:
                self._capabilities = frozenset(
                    name
                    for name, keys in PROTOCOL_CAPABILITIES.items()
                    if all(conn.supports(key) for key in keys)
                )
        return self._capabilities
