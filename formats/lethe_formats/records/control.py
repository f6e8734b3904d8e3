"""Control records (batch attribute bit 5): key schema and end-transaction markers.

Byte layouts::

    control key (every control record)      end-txn marker value (COMMIT / ABORT)
    0  2  version int16   (0)               0  2  version int16            (0)
    2  2  type int16                        2  4  coordinator_epoch int32

Types (ControlRecordType): ABORT 0, COMMIT 1, LEADER_CHANGE 2, SNAPSHOT_HEADER 3,
SNAPSHOT_FOOTER 4, KRAFT_VERSION 5, KRAFT_VOTERS 6; any other id is UNKNOWN and
is returned as a plain int.

Theory of operation
-------------------
Parsing follows Kafka's rules: a key shorter than 4 bytes, or with a negative
version, is an InvalidRecordError; a version above 0 is parsed as version 0
(Kafka logs it at debug level and carries on). The same holds for the 6-byte
marker value. Bytes beyond the fixed fields are ignored, as Kafka ignores them.
A record does not know its file position, so error positions here are byte
offsets inside the key or value.
"""

from __future__ import annotations

from typing import Any

from construct import Struct

from lethe_formats.errors import FormatError, InvalidRecordError
from lethe_formats.model import ControlType, EndTxnMarker, Record
from lethe_formats.primitives import Int16, Int32, Window

__all__ = [
    "ControlKeySchema",
    "EndTxnMarkerValueSchema",
    "control_type",
    "decode_control_key",
    "decode_end_txn_marker",
    "encode_control_key",
    "encode_end_txn_marker_value",
]

CONTROL_KEY_SIZE = 4
END_TXN_MARKER_VALUE_SIZE = 6

ControlKeySchema = Struct(
    "version" / Int16,
    "type" / Int16,
)

EndTxnMarkerValueSchema = Struct(
    "version" / Int16,
    "coordinator_epoch" / Int32,
)


def _parse(schema: Any, data: bytes | None, size: int, what: str) -> Any:
    if data is None:
        raise InvalidRecordError(f"{what} is null", position=0, field=what)
    if len(data) < size:
        raise InvalidRecordError(
            f"Invalid {what} size: must have at least {size} bytes, but found only {len(data)}",
            position=0,
            field=what,
        )
    try:
        parsed = schema.parse_stream(Window(bytes(data[:size])))
    except FormatError as error:
        raise InvalidRecordError(error.message, position=error.position, field=what) from None
    if parsed.version < 0:
        raise InvalidRecordError(
            f"Invalid version found for {what}: {parsed.version}. May indicate data corruption",
            position=0,
            field=f"{what}.version",
        )
    return parsed


def _type(type_id: int) -> ControlType | int:
    try:
        return ControlType(type_id)
    except ValueError:
        return type_id


def decode_control_key(key: bytes | None) -> tuple[int, ControlType | int]:
    """(version, type) of a control record key; unknown type ids stay ints."""
    parsed = _parse(ControlKeySchema, key, CONTROL_KEY_SIZE, "control record key")
    return parsed.version, _type(parsed.type)


def control_type(record: Record) -> ControlType | int:
    """The control type of a record in a control batch."""
    return decode_control_key(record.key)[1]


def decode_end_txn_marker(record: Record) -> EndTxnMarker:
    """The COMMIT/ABORT marker a transaction-marker record holds."""
    key_version, kind = decode_control_key(record.key)
    if kind not in (ControlType.COMMIT, ControlType.ABORT):
        raise InvalidRecordError(
            f"Invalid control record type for end transaction marker {kind}",
            position=2,
            field="control record key.type",
        )
    value = _parse(
        EndTxnMarkerValueSchema, record.value, END_TXN_MARKER_VALUE_SIZE, "end transaction marker"
    )
    return EndTxnMarker(
        key_version=key_version,
        control_type=ControlType(kind),
        value_version=value.version,
        coordinator_epoch=value.coordinator_epoch,
    )


def encode_control_key(kind: ControlType | int, *, version: int = 0) -> bytes:
    """The 4-byte key of a control record."""
    return bytes(ControlKeySchema.build({"version": version, "type": int(kind)}))


def encode_end_txn_marker_value(coordinator_epoch: int, *, version: int = 0) -> bytes:
    """The 6-byte value of a COMMIT/ABORT marker record."""
    return bytes(
        EndTxnMarkerValueSchema.build({"version": version, "coordinator_epoch": coordinator_epoch})
    )
