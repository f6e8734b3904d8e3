"""``lethe consumed-retention``: KIP-68's option 2, trimming what every consuming group has read.

Usage::

    lethe consumed-retention --bootstrap-server HOST:PORT [--topic T] [--dry-run]
                             [--command-config PROPERTIES_FILE]

Theory of operation
-------------------
KIP-68 offers two places for consumed retention: the broker (lethe's broker
does it, ``retention.commitoffset.enable``) or "the client side", where a tool
computes the min committed offset of the groups and trims the log with a
trim request, which became KIP-107's DeleteRecords. This is that tool; it uses
only APIs every Kafka broker has (catalog KIP68-CLI-5), so it runs against
Apache Kafka as well::

    read (kafka_client.group_offsets)      plan (plan_trims, pure)          act
    groups, committed offsets,      ->     per partition: min committed  -> DeleteRecords
    subscriptions, log start + HW          offset, capped at the HW          (AdminClient)

Which groups count (KIP68-CLI-2). The KIP takes the groups "which had
subscribed the topic". A client sees subscriptions only of live classic
groups, so a group is taken to consume a topic when it has a committed offset
for one of its partitions **or** a member subscribed to it. For such a group a
partition without a committed offset is one it has not read yet: that
partition is not trimmed. A topic no group consumes is not trimmed either
(KIP68-MCO-2: unconsumed data goes by forced retention only).

What is sent (KIP68-CLI-3). ``offset = min(min committed offset, high
watermark)``, and only when it is above the log start offset: DeleteRecords
never moves backwards, and one beyond the high watermark would be
OFFSET_OUT_OF_RANGE. ``--dry-run`` sends nothing and prints the same lines.

Failure (KIP68-CLI-4). If the groups, offsets or partition bounds cannot all be
read (after the client's retries), nothing is deleted and the exit status is 1,
as the KIP sets the min committed offset to -1 on any query exception.

Output (KIP68-CLI-1), stdout, the layout of ``kafka-delete-records.sh``::

    Executing records delete operation
    Records delete operation completed:
    partition: t-0<TAB>low_watermark: 42
    partition: t-1<TAB>error: org.apache.kafka.common.errors....

With ``--dry-run`` the first two lines are one, ``Records delete operation
(dry run, nothing deleted):``, and each line gives the low watermark the
partition would get. Each partition left alone gets one ``skipped: t-2: ...``
line on stderr saying why. Exit status 0 when the tool ran, even if a
partition's DeleteRecords failed (as kafka-delete-records.sh).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from lethe_tools.commands.delete_records import (
    CommandError,
    load_command_config,
    write_outcomes,
)
from lethe_tools.kafka_client.admin import AdminClient, TopicPartition
from lethe_tools.kafka_client.config import ClientConfigError, client_config
from lethe_tools.kafka_client.connection import ClientError
from lethe_tools.kafka_client.group_offsets import GroupReader, GroupReadError, PartitionBounds

__all__ = ["Plan", "plan_trims", "register", "run"]

DESCRIPTION = (
    "KIP-68 consumed retention on the client side: deletes the records of each partition "
    "below the minimum offset committed by the consumer groups that consume its topic."
)


@dataclass(frozen=True, slots=True)
class Plan:
    """What to delete below, per partition, and why the others are left alone."""

    trims: dict[TopicPartition, int]
    skipped: dict[TopicPartition, str]


def plan_trims(
    bounds: Mapping[TopicPartition, PartitionBounds],
    committed: Mapping[str, Mapping[TopicPartition, int]],
    subscribed: Mapping[str, set[str]],
) -> Plan:
    """The module docstring's rules over what was read; pure, so it is tested alone."""
    trims: dict[TopicPartition, int] = {}
    skipped: dict[TopicPartition, str] = {}
    for tp, bound in sorted(bounds.items()):
        groups = _consumers(tp.topic, committed, subscribed)
        if not groups:
            skipped[tp] = "no consumer group consumes the topic"
            continue
        missing = [g for g in groups if tp not in committed.get(g, {})]
        if missing:
            skipped[tp] = f"group {missing[0]} has no committed offset for it"
            continue
        lowest = min(committed[g][tp] for g in groups)
        offset = min(lowest, bound.high_watermark)
        if offset <= bound.log_start_offset:
            skipped[tp] = (
                f"min committed offset {lowest} is not above the log start offset "
                f"{bound.log_start_offset}"
            )
            continue
        trims[tp] = offset
    return Plan(trims, skipped)


def _consumers(
    topic: str,
    committed: Mapping[str, Mapping[TopicPartition, int]],
    subscribed: Mapping[str, set[str]],
) -> list[str]:
    """The groups that consume ``topic``: an offset for one of its partitions, or a subscription."""
    by_offsets = {g for g, seen in committed.items() if any(tp.topic == topic for tp in seen)}
    by_subscription = {g for g, topics in subscribed.items() if topic in topics}
    return sorted(by_offsets | by_subscription)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "consumed-retention",
        help="trim records every consuming group committed past (KIP-68 option 2)",
        description=DESCRIPTION,
    )
    parser.add_argument(
        "--bootstrap-server", metavar="SERVER", required=True, help="The server to connect to."
    )
    parser.add_argument(
        "--topic", metavar="TOPIC", help="Only this topic (default: every non-internal topic)."
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="Print what would be deleted; delete nothing."
    )
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="A property file containing configs to be passed to Admin Client.",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        config = client_config(load_command_config(args.command_config), args.bootstrap_server)
    except (ClientConfigError, CommandError) as error:
        return _fail(str(error))
    with AdminClient(config) as admin:
        try:
            plan = _read_and_plan(GroupReader(admin), args.topic)
        except (GroupReadError, ClientError) as error:
            return _fail(f"nothing deleted: {error}")
        for tp, reason in plan.skipped.items():
            print(f"skipped: {tp}: {reason}", file=sys.stderr)
        _act(admin, plan.trims, args.dry_run, sys.stdout)
    return 0


def _fail(message: str) -> int:
    print(f"lethe consumed-retention: {message}", file=sys.stderr)
    return 1


def _read_and_plan(reader: GroupReader, topic: str | None) -> Plan:
    partitions = _partitions(reader, topic)
    committed: dict[str, dict[TopicPartition, int]] = {}
    subscribed: dict[str, set[str]] = {}
    for group in reader.list_groups():
        committed[group.group_id] = reader.committed_offsets(group.group_id)
        subscribed[group.group_id] = reader.subscribed_topics(group)
    return plan_trims(reader.partition_bounds(partitions), committed, subscribed)


def _partitions(reader: GroupReader, topic: str | None) -> list[TopicPartition]:
    response = reader.admin.metadata(None if topic is None else [topic])
    found: list[TopicPartition] = []
    for entry in response.topics:
        if entry.name is None or (topic is None and entry.is_internal):
            continue
        if entry.error_code != 0:
            raise GroupReadError(f"topic {entry.name}: error code {entry.error_code}")
        found += [TopicPartition(entry.name, p.partition_index) for p in entry.partitions]
    return found


def _act(admin: AdminClient, trims: dict[TopicPartition, int], dry_run: bool, out: TextIO) -> None:
    if dry_run:
        out.write("Records delete operation (dry run, nothing deleted):\n")
        for tp, offset in trims.items():
            out.write(f"partition: {tp}\tlow_watermark: {offset}\n")
        return
    out.write("Executing records delete operation\n")
    out.flush()
    write_outcomes(admin.delete_records(trims) if trims else {}, out)
