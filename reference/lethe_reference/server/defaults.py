"""The static settings a stand-alone reference broker starts with.

Kafka 4.0 ships ``config/server.properties`` for a single-node KRaft cluster;
``kafka-server-start.sh config/server.properties`` is how nearly every client
developer meets a broker. The reference broker starts from the same values
where they matter to what it serves (a ``--config`` file and dynamic changes
go on top), so DescribeConfigs reports them as ``STATIC_BROKER_CONFIG`` just as
that Kafka would, and the internal topics can be created on one node (the
``*.replication.factor`` settings are 1 there; Kafka's built-in default of 3
could never be met by a single broker).

Only what Kafka 4.0.0's file sets is here. It does not set
``group.initial.rebalance.delay.ms`` (older releases' files set it to 0), so a
new classic group waits Kafka's default 3000 ms for more members on lethe as
on a Kafka started from that file; the golden Kafka broker ran with 0
(``fixtures/golden/README.md``), as a test broker may with ``--override``.
The settings lethe has no use for (listeners of a KRaft controller, network
and I/O thread counts, socket buffers, the share coordinator's topic) are
left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from lethe_reference.config import BrokerConfig, load_properties

__all__ = ["QUICKSTART_PROPERTIES", "broker_config"]

QUICKSTART_PROPERTIES: Mapping[str, str] = MappingProxyType(
    {
        "node.id": "1",
        "num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "log.retention.hours": "168",
        "log.segment.bytes": "1073741824",
        "log.retention.check.interval.ms": "300000",
    }
)


def broker_config(
    path: str | Path | None = None,
    overrides: Mapping[str, str] | None = None,
    *,
    quickstart: bool = True,
) -> BrokerConfig:
    """Static config: quickstart values (unless ``quickstart=False``), then the
    properties file, then ``overrides``; later layers win."""
    static: dict[str, str] = dict(QUICKSTART_PROPERTIES) if quickstart else {}
    if path is not None:
        static.update(load_properties(path))
    static.update(overrides or {})
    return BrokerConfig(static)
