"""lethe broker: run the reference broker in the foreground.

lethe broker --log-dir DIR [--config FILE] [--listen HOST:PORT]
[--advertise HOST:PORT] [--node-id N] [--override KEY=VALUE ...]

The broker starts from Kafka 4.0's quickstart server.properties values
(single node, internal topics with replication factor 1), then --config
(a Java properties file, as kafka-server-start.sh takes), then each
--override. It serves every listener named in the listeners setting (the
first is the main one) and advertises advertised.listeners, as Kafka does;
--listen and --advertise only fill in when the config names no listener.
Every port is bound before the log directory is touched. It logs to stderr
and shuts down cleanly on SIGTERM or SIGINT (Ctrl-C): listener closed, parked
requests answered, logs flushed and checkpointed, .kafka_cleanshutdown
written. Exit status: 0 after a clean shutdown, 1 when it could not start
(a port in use, a listener it cannot serve, an unreadable log dir), 2 for
unusable arguments.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from lethe_reference.config import ConfigError, PropertiesError
from lethe_reference.server import broker_config, configure_logging, parse_listen, run_broker

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "broker",
        help="run the reference broker in the foreground",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--listen",
        default="127.0.0.1:9092",
        metavar="HOST:PORT",
        help="address to serve when the config has no listeners (default 127.0.0.1:9092)",
    )
    parser.add_argument("--log-dir", required=True, metavar="DIR", help="the log directory")
    parser.add_argument("--config", metavar="FILE", help="server.properties-style file")
    parser.add_argument("--node-id", type=int, metavar="N", help="node id (default: config, 1)")
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a static config on top of --config (repeatable)",
    )
    parser.add_argument(
        "--advertise",
        metavar="HOST:PORT",
        help="address Metadata hands out when advertised.listeners does not name the "
        "main listener (default: the bound address)",
    )
    parser.add_argument(
        "--sendfile",
        action="store_true",
        help="send Fetch record sets from the segment files with sendfile (zero copy, as "
        "Kafka does) on plain TCP listeners; off by default: on loopback it made librdkafka's "
        "large fetches slower (benchmarks/README.md)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="stderr log level (default INFO)",
    )
    parser.set_defaults(func=run)


def _overrides(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--override expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value
    return out


def run(args: argparse.Namespace) -> int:
    try:
        host, port = parse_listen(args.listen)
        advertised = parse_listen(args.advertise) if args.advertise else None
        overrides = _overrides(args.override)
        if args.node_id is not None:
            overrides["node.id"] = str(args.node_id)
        config = broker_config(args.config, overrides)
    except (ValueError, OSError, ConfigError, PropertiesError) as error:
        print(f"lethe broker: {error}", file=sys.stderr)
        return 2
    configure_logging(getattr(logging, args.log_level))
    return run_broker(
        args.log_dir,
        config=config,
        host=host,
        port=port,
        node_id=args.node_id,
        advertised=advertised,
        sendfile=args.sendfile,
    )
