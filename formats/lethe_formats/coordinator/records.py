"""Decode and encode whole ``__consumer_offsets`` records (key + value).

Theory of operation
-------------------
A record of the group coordinator's log is a key and a value, each starting
with an int16 version::

    key   = type int16 | key fields (classic)           -> keys.KeySchema
    value = version int16 | value fields of that version  (null = tombstone)

The key's version *is* the record type and picks the value's message
(0/1 OffsetCommitValue, 2 GroupMetadataValue, 3-8 the KIP-848 values); the
value's own version picks its layout. A null value is a tombstone: the offset,
group or member the key names is deleted.

Errors are typed :class:`~lethe_formats.errors.FormatError` subclasses whose
position is the byte offset inside the key or the value (a record does not know
its file position) and whose field starts with ``key`` or ``value``. Trailing
bytes after a message are rejected: Kafka never writes them, and a value that
holds more than it says would not survive a round trip.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from construct import ConstructError

from lethe_formats.coordinator._message import (
    Reject,
    UnknownRecordTypeError,
    UnsupportedVersionError,
    message_schema,
    version_cases,
)
from lethe_formats.coordinator.classic import (
    GROUP_METADATA_VALUE,
    OFFSET_COMMIT_VALUE,
    GroupMetadataValue,
    OffsetCommitValue,
)
from lethe_formats.coordinator.consumer_group import (
    CONSUMER_GROUP_VALUE_SPECS,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataValue,
    ConsumerGroupPartitionMetadataValue,
    ConsumerGroupTargetAssignmentMemberValue,
    ConsumerGroupTargetAssignmentMetadataValue,
)
from lethe_formats.coordinator.keys import CoordinatorKey, KeySchema
from lethe_formats.errors import CorruptRecordError, FormatError
from lethe_formats.model import Record
from lethe_formats.primitives import Window

__all__ = [
    "VALUE_SPECS",
    "CoordinatorRecord",
    "CoordinatorValue",
    "decode_key",
    "decode_record",
    "decode_value",
    "encode_key",
    "encode_record",
    "encode_value",
]

CoordinatorValue = (
    OffsetCommitValue
    | GroupMetadataValue
    | ConsumerGroupMetadataValue
    | ConsumerGroupPartitionMetadataValue
    | ConsumerGroupMemberMetadataValue
    | ConsumerGroupTargetAssignmentMetadataValue
    | ConsumerGroupTargetAssignmentMemberValue
    | ConsumerGroupCurrentMemberAssignmentValue
)

_SPECS = {0: OFFSET_COMMIT_VALUE, 1: OFFSET_COMMIT_VALUE, 2: GROUP_METADATA_VALUE}
_SPECS.update(CONSUMER_GROUP_VALUE_SPECS)
#: record type -> the value's message table (renderers read fields and flexible versions)
VALUE_SPECS = MappingProxyType(_SPECS)


def _value_schema(name: str, cases: dict[int, Any]) -> Any:
    def message(context: Any) -> str:
        return f"{name}: unsupported version {context.version}"

    return message_schema(cases, Reject(UnsupportedVersionError, message))


_BY_NAME = {spec.name: _value_schema(spec.name, version_cases(spec)) for spec in _SPECS.values()}
#: record type -> value schema
VALUE_SCHEMAS: dict[int, Any] = {kind: _BY_NAME[spec.name] for kind, spec in _SPECS.items()}
_BY_CLASS: dict[type[Any], Any] = {spec.struct.cls: _BY_NAME[spec.name] for spec in _SPECS.values()}


@dataclass(frozen=True, slots=True)
class CoordinatorRecord:
    """A decoded ``__consumer_offsets`` record; ``value`` None is a tombstone."""

    key: CoordinatorKey
    value: CoordinatorValue | None

    @property
    def is_tombstone(self) -> bool:
        return self.value is None


def _parse(schema: Any, data: bytes, what: str) -> Any:
    try:
        return schema.parse_stream(Window(bytes(data)))
    except FormatError as error:
        clone = type(error).__new__(type(error))
        clone.__dict__.update(error.__dict__)
        clone.args = error.args
        clone.field = what if error.field in (None, "value") else f"{what}.{error.field}"
        raise clone from None
    except ConstructError as error:  # a construct fault our fields did not type
        raise CorruptRecordError(str(error), position=0, field=what) from None


def decode_key(data: bytes | None) -> CoordinatorKey:
    """The key dataclass of a record; its ``version`` is the record type."""
    if data is None:
        raise CorruptRecordError("a coordinator record needs a key", position=0, field="key")
    key: CoordinatorKey = _parse(KeySchema, data, "key")
    return key


def decode_value(record_type: int, data: bytes | None) -> CoordinatorValue | None:
    """The value of a record of ``record_type`` (None for a tombstone)."""
    if data is None:
        return None
    schema = VALUE_SCHEMAS.get(record_type)
    if schema is None:
        raise UnknownRecordTypeError(
            f"unknown coordinator record type {record_type}", position=0, field="key.version"
        )
    value: CoordinatorValue = _parse(schema, data, "value")
    return value


def decode_record(record: Record | tuple[bytes | None, bytes | None]) -> CoordinatorRecord:
    """Key and value of a log record (or a ``(key, value)`` pair)."""
    key_bytes, value_bytes = (record.key, record.value) if isinstance(record, Record) else record
    key = decode_key(key_bytes)
    return CoordinatorRecord(key, decode_value(key.version, value_bytes))


def encode_key(key: CoordinatorKey) -> bytes:
    """Key bytes; ``key.version`` picks the record type."""
    return bytes(KeySchema.build(key))


def encode_value(value: CoordinatorValue) -> bytes:
    """Value bytes at ``value.version``."""
    return bytes(_BY_CLASS[type(value)].build(value))


def encode_record(record: CoordinatorRecord) -> tuple[bytes, bytes | None]:
    """(key bytes, value bytes or None for a tombstone)."""
    value = None if record.value is None else encode_value(record.value)
    return encode_key(record.key), value
