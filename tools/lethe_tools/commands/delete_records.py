"""``lethe delete-records``: Kafka's ``kafka-delete-records.sh``, same input, output and exit codes.

Usage::

    lethe delete-records --bootstrap-server HOST:PORT --offset-json-file FILE
                         [--command-config PROPERTIES_FILE]

Theory of operation
-------------------
The steps and their order are those of ``org.apache.kafka.tools.DeleteRecordsCommand``:

1. Options. No option at all prints the tool's description and the usage;
   a missing ``--bootstrap-server`` or ``--offset-json-file`` prints
   ``Missing required argument "[bootstrap-server]"`` and the usage; both go
   to stderr with exit status 1 (``CommandLineUtils.printUsageAndExit``).
2. The admin client: ``--command-config`` is a Java properties file
   (``security.protocol``, ``ssl.*``, ``sasl.*``, timeouts; see
   :mod:`lethe_tools.kafka_client.config`); ``--bootstrap-server`` overrides
   its ``bootstrap.servers``.
3. The offset JSON file, read as Kafka's ``Json.parseFull`` and ``DecodeJson``
   read it::

       {"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}

   ``version`` may be left out (1); any other value is "Not supported version
   field value N"; no ``partitions`` is "Missing partitions field"; bytes that
   are not JSON are "The input string is not a valid JSON"; wrong types are
   Jackson's "Expected `Integer` value, received ..." and a missing key "No such
   field exists: `topic`". A partition listed twice is "Offset json file
   contains duplicate topic partitions: t-0". ``offset`` -1 means the high
   watermark (the broker maps it).
4. Output on stdout, TAB-separated, one line per partition::

       Executing records delete operation
       Records delete operation completed:
       partition: golden-delrec-0<TAB>low_watermark: 19
       partition: kv-0<TAB>error: org.apache.kafka.common.errors.PolicyViolationException: ...

   The error text is the Java exception the admin client would complete the
   partition's future with (class name of Kafka's ``Errors`` enum for the code,
   default message). Lines follow the file's order (Kafka's follow a HashMap).

Exit status: 0 when the command ran, even if some partitions failed; 1 when it
could not run (usage, configuration, unreadable file, bad JSON), with the
exception on stderr as Java's ``Exception in thread "main" <class>: <message>``
line (without the stack trace).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from lethe_formats.storage.java_properties import JavaPropertiesError, parse_java_properties

from lethe_tools.kafka_client.admin import AdminClient, DeleteRecordsOutcome, TopicPartition
from lethe_tools.kafka_client.config import ClientConfigError, client_config
from lethe_tools.kafka_client.connection import ClientError

__all__ = [
    "CommandError",
    "load_command_config",
    "parse_offset_json",
    "register",
    "run",
    "write_outcomes",
]

DESCRIPTION = (
    "This tool helps to delete records of the given partitions down to the specified offset."
)
_ADMIN_OPERATION = "org.apache.kafka.server.common.AdminOperationException"
_ADMIN_COMMAND_FAILED = "org.apache.kafka.server.common.AdminCommandFailedException"
_JSON_MAPPING = "com.fasterxml.jackson.databind.JsonMappingException"
_CONFIG = "org.apache.kafka.common.config.ConfigException"
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)


class CommandError(Exception):
    """Why the command could not run, as the Java exception Kafka's tool would throw."""

    def __init__(self, java_class: str, message: str) -> None:
        super().__init__(message)
        self.java_class = java_class
        self.message = message

    def __str__(self) -> str:
        return f"{self.java_class}: {self.message}"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "delete-records",
        help="delete records below an offset (kafka-delete-records.sh)",
        description=DESCRIPTION,
    )
    parser.add_argument(
        "--bootstrap-server", metavar="SERVER", help="REQUIRED: The server to connect to."
    )
    parser.add_argument(
        "--offset-json-file",
        metavar="FILE",
        help="REQUIRED: The JSON file with offset per partition. The format to use is: "
        '{"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}',
    )
    parser.add_argument(
        "--command-config",
        metavar="FILE",
        help="A property file containing configs to be passed to Admin Client.",
    )
    parser.set_defaults(func=run, usage_parser=parser)


def run(args: argparse.Namespace) -> int:
    usage = _usage_problem(args)
    if usage is not None:
        print(usage, file=sys.stderr)
        args.usage_parser.print_help(sys.stderr)
        return 1
    try:
        admin = AdminClient(
            client_config(load_command_config(args.command_config), args.bootstrap_server)
        )
    except (ClientConfigError, ClientError) as error:
        return _fail(CommandError(_CONFIG, str(error)))
    except CommandError as error:
        return _fail(error)
    with admin:
        try:
            execute(admin, _read_text(args.offset_json_file), sys.stdout)
        except CommandError as error:
            return _fail(error)
    return 0


def _usage_problem(args: argparse.Namespace) -> str | None:
    if args.bootstrap_server is None and args.offset_json_file is None and not args.command_config:
        return DESCRIPTION
    for option in ("bootstrap-server", "offset-json-file"):
        if getattr(args, option.replace("-", "_")) is None:
            return f'Missing required argument "[{option}]"'
    return None


def _fail(error: CommandError) -> int:
    print(f'Exception in thread "main" {error}', file=sys.stderr)
    return 1


def _read_text(path: str) -> str:
    """``Utils.readFileAsString``: the whole file as UTF-8, Java's exceptions on failure."""
    try:
        return Path(path).read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        raise CommandError("java.nio.file.NoSuchFileException", path) from None
    except PermissionError:
        raise CommandError("java.nio.file.AccessDeniedException", path) from None
    except OSError as error:
        raise CommandError("java.io.IOException", error.strerror or str(error)) from None


def load_command_config(path: str | None) -> dict[str, str]:
    """``Utils.loadProps``: a properties file read as ISO-8859-1 (``--command-config`` of
    both admin tools, delete-records and topics)."""
    if not path:
        return {}
    try:
        text = Path(path).read_bytes().decode("latin-1")
    except FileNotFoundError:
        raise CommandError("java.nio.file.NoSuchFileException", path) from None
    except OSError as error:
        raise CommandError("java.io.IOException", error.strerror or str(error)) from None
    try:
        return parse_java_properties(text).as_dict()
    except JavaPropertiesError as error:
        raise CommandError("java.lang.IllegalArgumentException", str(error)) from None


def execute(admin: AdminClient, offset_json: str, out: TextIO) -> None:
    """Parse, delete, print: ``DeleteRecordsCommand.execute(Admin, String, PrintStream)``."""
    offsets = parse_offset_json(offset_json)
    out.write("Executing records delete operation\n")
    out.flush()
    write_outcomes(admin.delete_records(offsets), out)


def write_outcomes(outcomes: Mapping[TopicPartition, DeleteRecordsOutcome], out: TextIO) -> None:
    """The "completed" line and one line per partition (also ``lethe consumed-retention``'s)."""
    out.write("Records delete operation completed:\n")
    for tp, outcome in outcomes.items():
        if outcome.error is None:
            out.write(f"partition: {tp}\tlow_watermark: {outcome.low_watermark}\n")
        else:
            out.write(f"partition: {tp}\terror: {outcome.error}\n")
    out.flush()


def parse_offset_json(text: str) -> dict[TopicPartition, int]:
    """The file's partitions and offsets, in file order; Kafka's messages on bad input."""
    document = _parse_json(text)
    root = _as_object(document)
    version = _decode(root["version"], "Integer", _INT32) if "version" in root else 1
    if version != 1:
        raise CommandError(_ADMIN_OPERATION, f"Not supported version field value {version}")
    if "partitions" not in root:
        raise CommandError(_ADMIN_OPERATION, "Missing partitions field")
    partitions = root["partitions"]
    if not isinstance(partitions, list):
        raise _mapping_error(f"Expected JSON array, received {_node(partitions)}")
    seen: dict[TopicPartition, int] = {}
    duplicates: dict[TopicPartition, None] = {}
    for entry in partitions:
        fields = _as_object(entry)
        topic = _decode_string(_field(fields, "topic"))
        partition = _decode(_field(fields, "partition"), "Integer", _INT32)
        offset = _decode(_field(fields, "offset"), "Long", _INT64)
        tp = TopicPartition(topic, partition)
        if tp in seen:
            duplicates[tp] = None
        else:
            seen[tp] = offset
    if duplicates:
        listed = ",".join(str(tp) for tp in duplicates)
        raise CommandError(
            _ADMIN_COMMAND_FAILED, f"Offset json file contains duplicate topic partitions: {listed}"
        )
    return seen


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(text: str) -> Any:
    """Jackson's ``readTree``: one JSON value; trailing text ignored; NaN rejected."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    stripped = text.lstrip(" \t\r\n")
    try:
        value, _ = decoder.raw_decode(stripped)
    except ValueError:
        raise CommandError(_ADMIN_OPERATION, "The input string is not a valid JSON") from None
    return value


def _node(value: Any) -> str:
    """A JSON value printed as Jackson's ``JsonNode.toString`` prints it (compact)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _mapping_error(message: str) -> CommandError:
    return CommandError(_JSON_MAPPING, message)


def _as_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _mapping_error(f"Expected JSON object, received {_node(value)}")
    return value


def _field(fields: dict[str, Any], name: str) -> Any:
    if name not in fields:
        raise _mapping_error(f"No such field exists: `{name}`")
    return fields[name]


def _decode(value: Any, java_type: str, bounds: tuple[int, int]) -> int:
    """``DecodeInteger`` / ``DecodeLong``: a JSON integer within the Java type's range."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _mapping_error(f"Expected `{java_type}` value, received {_node(value)}")
    if not bounds[0] <= value <= bounds[1]:
        raise _mapping_error(f"Expected `{java_type}` value, received {_node(value)}")
    return value


def _decode_string(value: Any) -> str:
    if not isinstance(value, str):
        raise _mapping_error(f"Expected `String` value, received {_node(value)}")
    return value
