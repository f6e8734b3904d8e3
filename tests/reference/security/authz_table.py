"""The authorization table's frame: the world the probes run against, the snapshot that
shows nothing changed, and :class:`Probe`, one request and Kafka 4.0's answer to it.

The probes (authz_probes.PROBES for a principal without any right,
authz_partial.PARTIAL_PROBES for one with a few, authz_partial.SUPER_PROBES for the
super user's bit fields) each name the Kafka method that decides their answer
(``KafkaApis`` unless said otherwise; ``ControllerApis`` for the requests a broker
forwards to the controller, ``AclApis`` for the ACL requests, ``ConfigHelper`` for
DescribeConfigs). A probe's ``summary`` keeps the fields the decision shows (error
codes per topic / partition / group / resource, messages, the values Kafka puts beside
an error such as offset -1 or node -1, authorized-operation bit fields) and sorts
entries where Kafka's order comes from a hash set (or a shuffle, as in DeleteTopics).

The tables use only lethe_conformance's protocol client, so they run against any
broker address: the reference broker's test (test_authorization_table.py) and a real
Kafka 4.0.0 alike. :class:`World` builds, as a super user, the state the probes try to
change (a topic with records and a raised log start offset, a topic config, a group
with a committed offset, ACLs) and :func:`snapshot` reads it back.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lethe_conformance.client import calls
from lethe_conformance.client.acl_calls import Acl, create_acls
from lethe_conformance.client.connection import KafkaConnection
from lethe_formats.protocol.messages import describe_acls, list_groups, offset_fetch
from lethe_formats.protocol.schema import Struct
from lethe_formats.records.builder import RecordSpec, build_batch

__all__ = [
    "Probe",
    "World",
    "run",
    "same",
    "snapshot",
]

TOPIC = "authz-t"
ABSENT = "authz-absent"
NEW = "authz-new"
GROUP = "authz-g"
OTHER_GROUP = "authz-none"
TXN = "authz-tx"
ZERO = uuid.UUID(int=0)
OMITTED = -(1 << 31)
TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4
RETENTION = "retention.ms"
#: carol may DESCRIBE every topic named authz-* (PREFIXED), DESCRIBE_CONFIGS the topic,
#: CREATE topics named authz-new* and READ the group (which implies DESCRIBE on it),
#: nothing else: the partial-rights probes
CAROL = "User:carol"
CAROL_ACLS = (
    Acl(TOPIC_RESOURCE, "authz-", 4, CAROL, "*", 8, 3),
    Acl(TOPIC_RESOURCE, TOPIC, 3, CAROL, "*", 10, 3),  # DESCRIBE_CONFIGS on the topic
    Acl(TOPIC_RESOURCE, NEW, 4, CAROL, "*", 5, 3),  # CREATE on authz-new*
    Acl(3, GROUP, 3, CAROL, "*", 3, 3),
)
RECORDS = build_batch([RecordSpec(b"k", b"v", (), 1000 + i) for i in range(3)], base_offset=0)
UNKNOWN_ID = uuid.UUID("0f0e0d0c-0b0a-4908-8706-050403020100")

TAF, GAF, CAF = 29, 30, 31
TXN_AF, SASL_STATE = 53, 34
TOPIC_DENIED = "Topic authorization failed."
CLUSTER_DENIED = "Cluster authorization failed."


def same(value: Any) -> Callable[[World], Any]:
    return lambda _: value


UNKNOWN_TP = "This server does not host this topic-partition."
DESCRIBE_AND_CONFIGS = (1 << 8) | (1 << 10)
READ_GROUP = (1 << 3) | (1 << 8)  # READ implies DESCRIBE


@dataclass(frozen=True)
class World:
    """What the probes run against: ids learnt while setting it up."""

    topic_id: uuid.UUID
    broker_id: int

    @classmethod
    def build(cls, admin: KafkaConnection) -> World:
        """Create the state as the super user (a fresh broker is assumed)."""
        created = calls.create_topic(admin, TOPIC, 1, {RETENTION: "86400000"})
        assert created.topics[0].error_code == 0, created
        _until_done(
            lambda: calls.produce(admin, TOPIC, 0, RECORDS),
            lambda r: r.responses[0].partition_responses[0].error_code,
        )
        _until_done(
            lambda: calls.delete_records(admin, [(TOPIC, 0, 1)]),
            lambda r: r.topics[0].partitions[0].error_code,
        )
        _until_done(
            lambda: (
                calls.find_coordinator(admin, GROUP),  # makes Kafka create __consumer_offsets
                calls.offset_commit(admin, GROUP, [(TOPIC, 0, 2)]),
            )[1],
            lambda r: r.topics[0].partitions[0].error_code,
        )
        acls = [Acl(TOPIC_RESOURCE, TOPIC, 3, "User:bob", "*", 3, 3), *CAROL_ACLS]
        assert [r.error_code for r in create_acls(admin, acls).results] == [0] * len(acls)
        described = calls.metadata(admin, [TOPIC])
        return cls(calls.topic_id(admin, TOPIC), described.brokers[0].node_id)


#: what a real Kafka answers while a new topic's leader or the group coordinator comes up
_NOT_YET = frozenset({3, 5, 6, 14, 15, 16})


def _until_done(send: Callable[[], Any], code_of: Callable[[Any], int]) -> None:
    """Repeat ``send`` while a real Kafka is still settling (the reference broker answers
    at once); any other error fails the setup."""
    for _ in range(200):
        answer = send()
        code = code_of(answer)
        if code == 0:
            return
        assert code in _NOT_YET, answer
        time.sleep(0.05)
    raise AssertionError(f"still settling: {answer}")


def snapshot(admin: KafkaConnection) -> dict[str, Any]:
    """Topics and partition counts, offsets (earliest = log start, latest), dynamic topic
    configs, groups and their offsets, ACLs: read as the super user."""
    topics = {
        t.name or "": (t.topic_id, len(t.partitions)) for t in calls.metadata(admin, None).topics
    }
    ours = {n: count for n, (_, count) in topics.items() if not n.startswith("__")}
    offsets = sorted(
        (t.name, p.partition_index, spec, p.offset, p.error_code)
        for spec in (-2, -1)  # earliest (the log start offset), latest
        for t in calls.list_offsets(
            admin, [(n, p, spec) for n, count in ours.items() for p in range(count)]
        ).topics
        for p in t.partitions
    )
    configs = {
        name: sorted(
            (c.name, c.value)
            for c in calls.describe_configs(admin, TOPIC_RESOURCE, name).results[0].configs
            if c.config_source == 1  # DYNAMIC_TOPIC_CONFIG
        )
        for name in ours
    }
    groups = sorted(
        (g.group_id, g.group_state)
        for g in admin.call(list_groups.ListGroupsRequest(), list_groups.ListGroupsResponse).groups
    )
    fetched = admin.call(
        offset_fetch.OffsetFetchRequest(
            groups=(offset_fetch.OffsetFetchRequestGroup(GROUP, topics=None),)
        ),
        offset_fetch.OffsetFetchResponse,
    )
    group_offsets = sorted(
        (g.group_id, t.name, p.partition_index, p.committed_offset)
        for g in fetched.groups
        for t in g.topics
        for p in t.partitions
    )
    acls = admin.call(
        describe_acls.DescribeAclsRequest(
            resource_type_filter=1, pattern_type_filter=1, operation=1, permission_type=1
        ),
        describe_acls.DescribeAclsResponse,
    )
    return {
        "topics": topics,
        "offsets": offsets,
        "configs": configs,
        "groups": groups,
        "group_offsets": group_offsets,
        "acls": sorted(
            (r.resource_type, r.resource_name, r.pattern_type, a.principal, a.operation)
            for r in acls.resources
            for a in r.acls
        ),
    }


@dataclass(frozen=True)
class Probe:
    """One request and Kafka's answer to a principal without rights."""

    name: str
    api_key: int
    version: int
    kafka: str  #: the Kafka method whose checks decide the answer
    request: Callable[[World], Struct]
    summary: Callable[[Any, World], Any]
    expected: Callable[[World], Any]


def run(
    conn: KafkaConnection, world: World, probes: Sequence[Probe]
) -> list[tuple[Probe, Any, Any]]:
    """(probe, observed summary, expected summary) for every probe of an API ``conn``'s
    broker advertises, at the probe's version."""
    out = []
    for probe in probes:
        if not conn.supports(probe.api_key):
            continue
        answer = conn.request(probe.request(world), version=probe.version)
        out.append((probe, probe.summary(answer, world), probe.expected(world)))
    return out
