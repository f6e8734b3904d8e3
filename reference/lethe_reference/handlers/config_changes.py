"""One resource of an AlterConfigs / IncrementalAlterConfigs request, checked and applied.

Theory of operation
-------------------
:func:`alter_resource` runs Kafka 4.0's checks for one resource in order and
returns an :class:`Outcome` (code and message; code 0 = applied, or accepted
with ``validate_only``):

1. request shape (``ConfigAdminManager.preprocess``): duplicate config names
   ``Error due to duplicate config keys``; a null value (any op but DELETE)
   ``Null value not supported for : a, b``; both INVALID_REQUEST;
2. by resource type:

   * TOPIC 2: the new override set is computed and validated by the config
     package (INVALID_CONFIG with its wording), then the name is checked
     (``Default topic resources are not allowed.`` INVALID_REQUEST; ``Topic name
     is invalid: ...`` INVALID_TOPIC_EXCEPTION), then existence
     (UNKNOWN_TOPIC_OR_PARTITION ``The topic 'x' does not exist.``) - the
     controller validates before it looks the topic up;
   * BROKER 4: a non-empty name must be this node's id (``Node id must be an
     integer, but it is: x`` / ``Unexpected broker id, expected 1, but received
     x``); "" is the cluster-wide default layer; the config package refuses
     static-only names (KAFKA-13609, INVALID_REQUEST);
   * BROKER_LOGGER 8 (IncrementalAlterConfigs only): Python loggers stand in for
     log4j ones (``RuntimeLoggerManager``): SET a level of
     TRACE/DEBUG/INFO/WARN/ERROR/FATAL on an existing logger, DELETE (not on
     ``root``); APPEND/SUBTRACT refused;
   * anything else: INVALID_REQUEST ``Unknown resource type N``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lethe_formats.protocol.error_codes import ErrorCode

from lethe_reference.config import (
    AlterOp,
    ConfigError,
    ConfigOp,
    alter_broker_configs,
    alter_topic_configs,
    incremental_alter_broker_configs,
    incremental_alter_topic_configs,
)
from lethe_reference.metadata import topic_name_problem

if TYPE_CHECKING:
    from lethe_reference.broker import Broker

__all__ = [
    "BROKER",
    "BROKER_LOGGER",
    "OK",
    "TOPIC",
    "Outcome",
    "ResourceError",
    "alter_resource",
    "check_unique_resources",
    "logger_levels",
    "resource_type_name",
]

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
_TYPE_NAMES = {2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
#: ``LogLevelConfig.VALID_LOG_LEVELS`` in the order Java's HashSet prints them.
_LEVELS = ("TRACE", "ERROR", "INFO", "FATAL", "DEBUG", "WARN")
_PY_LEVELS = {"TRACE": 5, "DEBUG": 10, "INFO": 20, "WARN": 30, "ERROR": 40, "FATAL": 50}
_ROOT = "root"


class ResourceError(Exception):
    """A per-resource failure with Kafka's code and message."""

    def __init__(self, code: ErrorCode, message: str | None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Outcome:
    code: ErrorCode
    message: str | None


OK = Outcome(ErrorCode.NONE, None)


def resource_type_name(resource_type: int) -> str:
    """``ConfigResource.Type.forId(id).name()`` (UNKNOWN for ids Kafka does not know)."""
    return _TYPE_NAMES.get(resource_type, "UNKNOWN")


def check_unique_resources(keys: Sequence[tuple[int, str]]) -> dict[int, Outcome]:
    """Indexes of resources named more than once, with Kafka's error for each."""
    seen: dict[tuple[int, str], list[int]] = {}
    for index, key in enumerate(keys):
        seen.setdefault(key, []).append(index)
    error = Outcome(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")
    return {i: error for indexes in seen.values() if len(indexes) > 1 for i in indexes}


def _check_shape(names: list[str], nulls: list[str]) -> None:
    if len(set(names)) != len(names):
        raise ResourceError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    if nulls:
        raise ResourceError(
            ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls)
        )


def _config_error(error: ConfigError) -> ResourceError:
    return ResourceError(ErrorCode[error.error_name], error.message)


def alter_resource(
    broker: Broker,
    resource_type: int,
    name: str,
    *,
    entries: list[tuple[str, str | None]] | None = None,
    ops: list[ConfigOp] | None = None,
    validate_only: bool = False,
) -> Outcome:
    """Check and (unless ``validate_only``) apply one resource; see the module docstring."""
    try:
        if entries is not None:
            _check_shape([n for n, _ in entries], [n for n, v in entries if v is None])
        else:
            assert ops is not None
            nulls = [op.name for op in ops if op.op != AlterOp.DELETE and op.value is None]
            _check_shape([op.name for op in ops], nulls)
        if resource_type == TOPIC:
            _alter_topic(broker, name, entries, ops, validate_only)
        elif resource_type == BROKER:
            _alter_broker(broker, name, entries, ops, validate_only)
        elif resource_type == BROKER_LOGGER and ops is not None:
            _check_node_id(broker, name)
            _alter_loggers(ops, validate_only)
        else:
            raise ResourceError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {resource_type}")
    except ResourceError as error:
        return Outcome(error.code, error.message)
    return OK


def _alter_topic(
    broker: Broker,
    name: str,
    entries: list[tuple[str, str | None]] | None,
    ops: list[ConfigOp] | None,
    validate_only: bool,
) -> None:
    info = broker.metadata.get(name)
    current = dict(info.configs) if info is not None else {}
    try:
        if entries is not None:
            new = alter_topic_configs(current, entries, broker.config)
        else:
            assert ops is not None
            new = incremental_alter_topic_configs(current, ops, broker.config)
    except ConfigError as error:
        raise _config_error(error) from None
    if not name:
        raise ResourceError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    problem = topic_name_problem(name)
    if problem is not None:
        raise ResourceError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {problem}")
    if info is None:
        raise ResourceError(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist."
        )
    if not validate_only:
        broker.set_topic_configs(name, new)


def _check_node_id(broker: Broker, name: str) -> None:
    try:
        node = int(name)
    except ValueError:
        raise ResourceError(
            ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}"
        ) from None
    if node != broker.node_id:
        raise ResourceError(
            ErrorCode.INVALID_REQUEST,
            f"Unexpected broker id, expected {broker.node_id}, but received {name}",
        )


def _alter_broker(
    broker: Broker,
    name: str,
    entries: list[tuple[str, str | None]] | None,
    ops: list[ConfigOp] | None,
    validate_only: bool,
) -> None:
    if name:
        _check_node_id(broker, name)
    try:
        if entries is not None:
            new = alter_broker_configs(broker.config, entries, per_broker=bool(name))
        else:
            assert ops is not None
            new = incremental_alter_broker_configs(broker.config, ops, per_broker=bool(name))
    except ConfigError as error:
        raise _config_error(error) from None
    if not validate_only:
        broker.set_config(new)


# --- loggers --------------------------------------------------------------------------------


def _python_logger(name: str) -> logging.Logger | None:
    if name == _ROOT:
        return logging.getLogger()
    if name in logging.Logger.manager.loggerDict:
        return logging.getLogger(name)
    return None


def _level_name(level: int) -> str:
    for name, value in sorted(_PY_LEVELS.items(), key=lambda item: -item[1]):
        if level >= value:
            return name
    return "TRACE"


def logger_levels() -> list[tuple[str, str]]:
    """``Log4jController.loggers``: root first, then every named logger's effective level."""
    out = [(_ROOT, _level_name(logging.getLogger().getEffectiveLevel()))]
    for name in sorted(logging.Logger.manager.loggerDict):
        out.append((name, _level_name(logging.getLogger(name).getEffectiveLevel())))
    return out


def _alter_loggers(ops: list[ConfigOp], validate_only: bool) -> None:
    for op in ops:
        _check_logger_op(op)
    if validate_only:
        return
    for op in ops:
        logger = _python_logger(op.name)
        assert logger is not None
        if op.op == AlterOp.SET:
            assert op.value is not None
            logger.setLevel(_PY_LEVELS[op.value])
        else:
            logger.setLevel(logging.NOTSET)


def _check_logger_op(op: ConfigOp) -> None:
    """``RuntimeLoggerManager.validateLogLevelConfigs``."""
    if op.op in (AlterOp.SET, AlterOp.DELETE) and _python_logger(op.name) is None:
        raise ResourceError(ErrorCode.INVALID_CONFIG, f"Logger {op.name} does not exist!")
    if op.op == AlterOp.SET and op.value not in _LEVELS:
        raise ResourceError(
            ErrorCode.INVALID_CONFIG,
            f"Cannot set the log level of {op.name} to {op.value} as it is not a supported "
            f"log level. Valid log levels are {', '.join(_LEVELS)}",
        )
    if op.op == AlterOp.DELETE and op.name == _ROOT:
        raise ResourceError(
            ErrorCode.INVALID_REQUEST, "Removing the log level of the root logger is not allowed"
        )
    if op.op in (AlterOp.APPEND, AlterOp.SUBTRACT):
        verb = AlterOp(op.op).name
        raise ResourceError(
            ErrorCode.INVALID_REQUEST,
            f"{verb} operation is not allowed for the BROKER_LOGGER resource",
        )
    if op.op not in AlterOp._value2member_map_:
        raise ResourceError(
            ErrorCode.INVALID_REQUEST,
            f"Unknown operation type {int(op.op)} is not allowed for the BROKER_LOGGER resource",
        )
