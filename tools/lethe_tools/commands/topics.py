"""``lethe topics``: Kafka's ``kafka-topics.sh`` (``TopicCommand``), with KIP-694's reduction.

Usage::

    lethe topics --bootstrap-server HOST:PORT [--command-config FILE] ACTION ...
      --list [--topic REGEX] [--exclude-internal]
      --describe [--topic REGEX] [--exclude-internal]
      --create --topic T [--partitions N] [--replication-factor R] [--config k=v ...]
      --delete --topic REGEX
      --alter --topic REGEX --partitions N [--delete-partitions-delay MS]

Theory of operation
-------------------
The option checks run first, in ``TopicCommandOptions.checkArgs``'s order, and
end the command with status 1 and the message on stderr (usage follows where
Kafka prints it): no option at all; not exactly one action ("Command must
include exactly one action: --list, --describe, --create, --alter or
--delete"); no ``--bootstrap-server`` ("--bootstrap-server must be
specified"); no ``--topic`` outside list/describe and no ``--partitions`` with
alter (``Missing required argument "[topic]"``); an option used with an action
it does not belong to (``Option "[replication-factor]" can't be used with
option "[alter]"``).

Then one admin client (:mod:`lethe_tools.kafka_client`, ``--command-config``
read as ``lethe delete-records`` reads it) and the action. ``--topic`` is a
Kafka ``IncludeList`` everywhere but ``--create``: a regular expression
matched against the whole name, commas meaning "or". Every topic action but
``--create`` lists the topics first (Metadata), and a ``--topic`` that matches
nothing is "Topic 'T' does not exist as expected". Outputs as Kafka's:
``--list`` prints the sorted names, ``--describe`` the lines of
:mod:`lethe_tools.render.topics`, ``--create`` "Created topic T.",
``--delete`` and a growing ``--alter`` nothing.

A failure after the options (a Kafka error answer, an unknown topic, a broker
that cannot be reached) is printed as Kafka's tool prints any exception:
``Error while executing topic command : <message>`` on stdout, status 1. The
message of a Kafka error is the Java exception's (the broker's error message,
else the code's default), prefixed by lethe with the topic name and Kafka's
exception class so the line alone says what failed where, e.g.::

    Error while executing topic command : Topic 'kv': org.apache.kafka.common.errors.
    TopicExistsException: Topic 'kv' already exists.            (one line)

A ``--partitions`` below the current count is KIP-694's reduction, handled by
:mod:`lethe_tools.commands.topics_reduce` (DeletePartitions and its warnings).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from lethe_formats.protocol.messages.metadata import MetadataResponseTopic
from lethe_formats.storage.kafka_uuid import KafkaUuid

from lethe_tools.commands.delete_records import CommandError, load_command_config
from lethe_tools.kafka_client.admin import AdminClient
from lethe_tools.kafka_client.config import ClientConfigError, client_config
from lethe_tools.kafka_client.connection import AuthenticationFailedError, ClientError
from lethe_tools.kafka_client.topic_admin import TopicCaller, TopicCallError
from lethe_tools.render.topics import describe_lines

__all__ = ["TopicCommandError", "register", "run"]

DESCRIPTION = "This tool helps to create, delete, describe, or change a topic."
_ACTIONS = ("list", "describe", "create", "alter", "delete")
#: option -> the actions it may be used with (``checkInvalidArgs``).
_ALLOWED = {
    "partitions": {"create", "alter"},
    "replication_factor": {"create"},
    "config": {"create"},
    "delete_partitions_delay": {"alter"},
    "exclude_internal": {"list", "describe"},
}


class TopicCommandError(Exception):
    """Ends the command: printed as ``Error while executing topic command : <message>``."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "topics",
        help="list, describe, create, delete and alter topics (kafka-topics.sh, KIP-694)",
        description=DESCRIPTION,
    )
    add = parser.add_argument
    add("--bootstrap-server", metavar="SERVER", help="REQUIRED: The Kafka server to connect to.")
    add("--command-config", metavar="FILE", help="Property file passed to the Admin Client.")
    for action in _ACTIONS:
        add(f"--{action}", action="store_true", help=f"{action.capitalize()} topics.")
    add("--topic", metavar="TOPIC", help="The topic (a regular expression except with --create).")
    add("--partitions", type=int, metavar="N", help="Partition count to create or alter to.")
    add("--replication-factor", type=int, metavar="R", help="Replication factor (--create).")
    add("--config", action="append", metavar="NAME=VALUE", help="Topic config (--create).")
    add(
        "--delete-partitions-delay",
        type=int,
        metavar="MS",
        help="KIP-694: with --alter to fewer partitions, keep the removed partitions "
        "read-only this long before deleting them (default 0: delete at once).",
    )
    add("--exclude-internal", action="store_true", help="Leave internal topics out.")
    parser.set_defaults(func=run, usage_parser=parser)


def run(args: argparse.Namespace) -> int:
    problem = _usage_problem(args)
    if problem is not None:
        message, show_usage = problem
        print(message, file=sys.stderr)
        if show_usage:
            args.usage_parser.print_usage(sys.stderr)
        return 1
    try:
        config = client_config(load_command_config(args.command_config), args.bootstrap_server)
    except (ClientConfigError, CommandError) as error:
        print(f"Error while executing topic command : {error}")
        return 1
    with AdminClient(config) as admin:
        try:
            return _execute(TopicCaller(admin), args)
        except TopicCommandError as error:
            print(f"Error while executing topic command : {error}")
        except AuthenticationFailedError as error:
            print(f"Error while executing topic command : {error.java}")
        except ClientError as error:
            print(f"Error while executing topic command : {error}")
    return 1


def _usage_problem(args: argparse.Namespace) -> tuple[str, bool] | None:
    """The first option problem ``checkArgs`` would report, and whether usage follows."""
    chosen = [a for a in _ACTIONS if getattr(args, a)]
    if not chosen and args.bootstrap_server is None and args.topic is None:
        return DESCRIPTION, True
    if len(chosen) != 1:
        return (
            "Command must include exactly one action: "
            "--list, --describe, --create, --alter or --delete",
            True,
        )
    action = chosen[0]
    if args.bootstrap_server is None:
        return "--bootstrap-server must be specified", False
    if action not in {"list", "describe"} and args.topic is None:
        return 'Missing required argument "[topic]"', True
    if action == "alter" and args.partitions is None:
        return 'Missing required argument "[partitions]"', True
    for option, allowed in _ALLOWED.items():
        value = getattr(args, option)
        if value not in (None, False) and action not in allowed:
            name = option.replace("_", "-")
            return f'Option "[{name}]" can\'t be used with option "[{action}]"', True
    if args.delete_partitions_delay is not None and args.delete_partitions_delay < 0:
        return "The delete-partitions-delay must be 0 or more (milliseconds)", True
    return None


def _execute(caller: TopicCaller, args: argparse.Namespace) -> int:
    if args.create:
        _create(caller, args)
        return 0
    known = caller.topics()
    names = _matching(sorted(known), args.topic, args.exclude_internal, known)
    if args.list:
        print("\n".join(names))
        return 0
    if args.topic is not None and not names:
        raise TopicCommandError(f"Topic '{args.topic}' does not exist as expected")
    if args.describe:
        for name in names:
            topic = known[name]
            topic_id = str(KafkaUuid(topic.topic_id.bytes))
            for line in describe_lines(topic, _call(name, caller.configs, name), topic_id):
                print(line)
        return 0
    if args.delete:
        for name in names:
            _call(name, caller.delete_topic, name, caller.admin.config.default_api_timeout_ms)
        return 0
    return _alter(caller, args, [known[n] for n in names])


def _alter(
    caller: TopicCaller, args: argparse.Namespace, topics: list[MetadataResponseTopic]
) -> int:
    from lethe_tools.commands import topics_reduce  # noqa: PLC0415 - only for --alter

    timeout_ms = caller.admin.config.default_api_timeout_ms
    status = 0
    for topic in topics:
        name = topic.name or ""
        current = len(topic.partitions)
        topics_reduce.warn_if_under_change(topic, sys.stderr)
        if args.partitions < current:
            delay = args.delete_partitions_delay or 0
            status = max(status, topics_reduce.reduce(caller, topic, args.partitions, delay))
        else:
            _call(name, caller.create_partitions, name, args.partitions, timeout_ms)
    return status


def _create(caller: TopicCaller, args: argparse.Namespace) -> None:
    """``TopicService.createTopic``: argument checks, CreateTopics, "Created topic T."."""
    name = args.topic
    factor, partitions = args.replication_factor, args.partitions
    if factor is not None and not 1 <= factor <= 32767:
        raise TopicCommandError("The replication factor must be between 1 and 32767 inclusive")
    if partitions is not None and partitions < 1:
        raise TopicCommandError("The partitions must be greater than 0")
    if _collides(name):
        print(
            "WARNING: Due to limitations in metric names, topics with a period ('.') or "
            "underscore ('_') could collide. To avoid issues it is best to use either, "
            "but not both."
        )
    configs = _topic_configs(args.config or [])
    timeout_ms = caller.admin.config.default_api_timeout_ms
    _call(name, caller.create_topic, name, partitions, factor, configs, timeout_ms)
    print(f"Created topic {name}.")


def _collides(name: str) -> bool:
    """``Topic.hasCollisionChars``: a period or an underscore in the name."""
    return "." in name or "_" in name


def _topic_configs(pairs: list[str]) -> dict[str, str]:
    """``parseTopicConfigsToBeAdded``: each ``k=v`` split on ``=`` with spaces around it."""
    configs: dict[str, str] = {}
    for pair in pairs:
        parts = re.split(r"\s*=\s*", pair)
        if len(parts) != 2:
            raise TopicCommandError(
                "requirement failed: Invalid topic config: all configs to be added must be "
                'in the format "key=val".'
            )
        configs[parts[0].strip()] = parts[1].strip()
    return configs


def _matching(
    names: list[str],
    include: str | None,
    exclude_internal: bool,
    known: dict[str, MetadataResponseTopic],
) -> list[str]:
    """``doGetTopics`` over Kafka's ``IncludeList``: the names the pattern fully matches."""
    if include is None:
        pattern = None
    else:
        text = include.strip().replace(",", "|").replace(" ", "")
        text = re.sub(r"^[\"']+", "", re.sub(r"[\"']+$", "", text))
        try:
            pattern = re.compile(text)
        except re.error as error:
            message = f"Invalid topic regular expression '{include}': {error}"
            raise TopicCommandError(message) from None
    return [
        name
        for name in names
        if (pattern is None or pattern.fullmatch(name))
        and not (exclude_internal and known[name].is_internal)
    ]


def _call(topic: str, fn: Any, *args: Any) -> Any:
    """Run one topic call; a Kafka error becomes the command's error line."""
    try:
        return fn(*args)
    except TopicCallError as error:
        raise TopicCommandError(f"Topic '{topic}': {error.java}") from None
