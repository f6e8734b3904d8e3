"""``__cluster_metadata`` records and KRaft control records, as Kafka 4.0 writes them.

Byte layouts. A metadata record has no key; its value is a frame::

    frame version  uvarint (1)   apiKey  uvarint   version  uvarint
    then the record's fields at that version, flexible encoding (every
    metadata record is flexible from version 0): compact strings/arrays,
    a tagged-field section after each struct

The record types (``MetadataRecordType``, by apiKey) decoded here are the
ones a single KRaft node writes in ordinary use: REGISTER_BROKER_RECORD 0,
UNREGISTER_BROKER_RECORD 1, TOPIC_RECORD 2, PARTITION_RECORD 3, CONFIG_RECORD 4,
PARTITION_CHANGE_RECORD 5, FENCE_BROKER_RECORD 7, UNFENCE_BROKER_RECORD 8,
REMOVE_TOPIC_RECORD 9, FEATURE_LEVEL_RECORD 12, PRODUCER_IDS_RECORD 15,
BROKER_REGISTRATION_CHANGE_RECORD 17, NO_OP_RECORD 20, BEGIN_TRANSACTION_RECORD 23,
END_TRANSACTION_RECORD 24, REGISTER_CONTROLLER_RECORD 27. Another apiKey is an
:class:`UnknownRecordTypeError`.

KRaft's control records (in control batches of the metadata log and of its
``.checkpoint`` snapshots) are one flexible version-0 struct each, whose
first field is the record's own ``version``: SnapshotHeader (type 3),
SnapshotFooter (4), KRaftVersion (5), KRaftVoters (6).

The tables are Kafka's message specs (``metadata/src/main/resources/common/
metadata/*.json``, ``clients/.../message/{KRaftVersion,Voters,SnapshotHeader,
SnapshotFooter}Record.json``) written as :class:`Field` rows; the dataclasses
are made from the rows, each field defaulting to Kafka's default, so a tagged
field left out of the bytes reads as Kafka reads it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from construct import ConstructError

from lethe_formats.coordinator._fields import read_uvarint
from lethe_formats.coordinator._message import (
    ArrayOf,
    Field,
    StructSpec,
    UnknownRecordTypeError,
    UnsupportedVersionError,
    Versions,
    compile_struct,
    since,
)
from lethe_formats.errors import CorruptRecordError, FormatError
from lethe_formats.primitives import Window

__all__ = [
    "CONTROL_RECORDS",
    "METADATA_RECORDS",
    "MetadataRecord",
    "decode_control_record",
    "decode_metadata_record",
]

_N = since(0)  # nullable in every version
Row = tuple[str, Any, Versions, Versions | None, int | None, Any]


def _row(
    name: str,
    kind: Any,
    versions: Versions = _N,
    *,
    nullable: Versions | None = None,
    tag: int | None = None,
    default: Any = dataclasses.MISSING,
) -> Row:
    return (name, kind, versions, nullable, tag, default)


def _default(kind: Any, nullable: Versions | None, default: Any) -> Any:
    if default is not dataclasses.MISSING:
        return default
    if isinstance(kind, ArrayOf):
        return ()
    if kind in ("int8", "int16", "int32", "int64", "uint16"):
        return 0
    if kind == "bool":
        return False
    if kind == "string":
        return None if nullable is not None else ""
    return None  # uuid, struct


def _struct(name: str, rows: Sequence[Row]) -> StructSpec:
    """A dataclass made from Kafka's field rows, and its table."""
    fields: list[tuple[str, Any, Any]] = [
        (row[0], Any, dataclasses.field(default=_default(row[1], row[3], row[5]))) for row in rows
    ]
    fields.append(("unknown_tags", Any, dataclasses.field(default=())))
    cls = dataclasses.make_dataclass(name, fields, frozen=True, slots=True)
    cls.__module__ = __name__
    table = tuple(Field(row[0], row[1], row[2], row[3] or Versions(1, 0), row[4]) for row in rows)
    return StructSpec(cls, table)


_ENDPOINT = _struct(
    "BrokerEndpoint",
    [
        _row("name", "string"),
        _row("host", "string"),
        _row("port", "uint16"),
        _row("security_protocol", "int16"),
    ],
)
_FEATURE = _struct(
    "BrokerFeature",
    [
        _row("name", "string"),
        _row("min_supported_version", "int16"),
        _row("max_supported_version", "int16"),
    ],
)
_UUIDS = ArrayOf("uuid")
_INTS = ArrayOf("int32")

#: apiKey -> (MetadataRecordType name, table, valid versions)
METADATA_RECORDS: dict[int, tuple[str, StructSpec, Versions]] = {
    0: (
        "REGISTER_BROKER_RECORD",
        _struct(
            "RegisterBrokerRecord",
            [
                _row("broker_id", "int32"),
                _row("is_migrating_zk_broker", "bool", since(2)),
                _row("incarnation_id", "uuid"),
                _row("broker_epoch", "int64"),
                _row("end_points", ArrayOf(_ENDPOINT)),
                _row("features", ArrayOf(_FEATURE)),
                _row("rack", "string", nullable=_N),
                _row("fenced", "bool", default=True),
                _row("in_controlled_shutdown", "bool", since(1)),
                _row("log_dirs", _UUIDS, since(3), tag=0),
            ],
        ),
        Versions(0, 3),
    ),
    1: (
        "UNREGISTER_BROKER_RECORD",
        _struct(
            "UnregisterBrokerRecord", [_row("broker_id", "int32"), _row("broker_epoch", "int64")]
        ),
        Versions(0, 0),
    ),
    2: (
        "TOPIC_RECORD",
        _struct("TopicRecord", [_row("name", "string"), _row("topic_id", "uuid")]),
        Versions(0, 0),
    ),
    3: (
        "PARTITION_RECORD",
        _struct(
            "PartitionRecord",
            [
                _row("partition_id", "int32", default=-1),
                _row("topic_id", "uuid"),
                _row("replicas", _INTS),
                _row("isr", _INTS),
                _row("removing_replicas", _INTS),
                _row("adding_replicas", _INTS),
                _row("leader", "int32", default=-1),
                _row("leader_recovery_state", "int8", tag=0),
                _row("leader_epoch", "int32", default=-1),
                _row("partition_epoch", "int32", default=-1),
                _row("directories", _UUIDS, since(1)),
                _row(
                    "eligible_leader_replicas",
                    _INTS,
                    since(2),
                    nullable=since(2),
                    tag=1,
                    default=None,
                ),
                _row("last_known_elr", _INTS, since(2), nullable=since(2), tag=2, default=None),
            ],
        ),
        Versions(0, 2),
    ),
    4: (
        "CONFIG_RECORD",
        _struct(
            "ConfigRecord",
            [
                _row("resource_type", "int8"),
                _row("resource_name", "string"),
                _row("name", "string"),
                _row("value", "string", nullable=_N),
            ],
        ),
        Versions(0, 0),
    ),
    5: (
        "PARTITION_CHANGE_RECORD",
        _struct(
            "PartitionChangeRecord",
            [
                _row("partition_id", "int32", default=-1),
                _row("topic_id", "uuid"),
                _row("isr", _INTS, nullable=_N, tag=0, default=None),
                _row("leader", "int32", tag=1, default=-2),
                _row("replicas", _INTS, nullable=_N, tag=2, default=None),
                _row("removing_replicas", _INTS, nullable=_N, tag=3, default=None),
                _row("adding_replicas", _INTS, nullable=_N, tag=4, default=None),
                _row("leader_recovery_state", "int8", tag=5, default=-1),
                _row("directories", _UUIDS, since(1), nullable=since(1), tag=8, default=None),
                _row(
                    "eligible_leader_replicas",
                    _INTS,
                    since(2),
                    nullable=since(2),
                    tag=6,
                    default=None,
                ),
                _row("last_known_elr", _INTS, since(2), nullable=since(2), tag=7, default=None),
            ],
        ),
        Versions(0, 2),
    ),
    7: (
        "FENCE_BROKER_RECORD",
        _struct("FenceBrokerRecord", [_row("id", "int32"), _row("epoch", "int64")]),
        Versions(0, 0),
    ),
    8: (
        "UNFENCE_BROKER_RECORD",
        _struct("UnfenceBrokerRecord", [_row("id", "int32"), _row("epoch", "int64")]),
        Versions(0, 0),
    ),
    9: (
        "REMOVE_TOPIC_RECORD",
        _struct("RemoveTopicRecord", [_row("topic_id", "uuid")]),
        Versions(0, 0),
    ),
    12: (
        "FEATURE_LEVEL_RECORD",
        _struct("FeatureLevelRecord", [_row("name", "string"), _row("feature_level", "int16")]),
        Versions(0, 0),
    ),
    15: (
        "PRODUCER_IDS_RECORD",
        _struct(
            "ProducerIdsRecord",
            [
                _row("broker_id", "int32"),
                _row("broker_epoch", "int64", default=-1),
                _row("next_producer_id", "int64"),
            ],
        ),
        Versions(0, 0),
    ),
    17: (
        "BROKER_REGISTRATION_CHANGE_RECORD",
        _struct(
            "BrokerRegistrationChangeRecord",
            [
                _row("broker_id", "int32"),
                _row("broker_epoch", "int64"),
                _row("fenced", "int8", tag=0),
                _row("in_controlled_shutdown", "int8", since(1), tag=1),
                _row("log_dirs", _UUIDS, since(2), tag=2),
            ],
        ),
        Versions(0, 2),
    ),
    20: ("NO_OP_RECORD", _struct("NoOpRecord", []), Versions(0, 0)),
    23: (
        "BEGIN_TRANSACTION_RECORD",
        _struct(
            "BeginTransactionRecord",
            [_row("name", "string", nullable=_N, tag=0, default=None)],
        ),
        Versions(0, 0),
    ),
    24: ("END_TRANSACTION_RECORD", _struct("EndTransactionRecord", []), Versions(0, 0)),
    27: (
        "REGISTER_CONTROLLER_RECORD",
        _struct(
            "RegisterControllerRecord",
            [
                _row("controller_id", "int32"),
                _row("incarnation_id", "uuid"),
                _row("zk_migration_ready", "bool"),
                _row("end_points", ArrayOf(_ENDPOINT)),
                _row("features", ArrayOf(_FEATURE)),
            ],
        ),
        Versions(0, 0),
    ),
}

_VOTER_ENDPOINT = _struct(
    "VoterEndpoint", [_row("name", "string"), _row("host", "string"), _row("port", "uint16")]
)
_KRAFT_FEATURE = _struct(
    "KRaftVersionFeature",
    [_row("min_supported_version", "int16"), _row("max_supported_version", "int16")],
)
_VOTER = _struct(
    "Voter",
    [
        _row("voter_id", "int32"),
        _row("voter_directory_id", "uuid"),
        _row("endpoints", ArrayOf(_VOTER_ENDPOINT)),
        _row("k_raft_version_feature", _KRAFT_FEATURE),
    ],
)

#: control record type -> (the name kafka-dump-log prints, table)
CONTROL_RECORDS: dict[int, tuple[str, StructSpec]] = {
    3: (
        "SnapshotHeader",
        _struct(
            "SnapshotHeaderRecord",
            [_row("version", "int16"), _row("last_contained_log_timestamp", "int64")],
        ),
    ),
    4: ("SnapshotFooter", _struct("SnapshotFooterRecord", [_row("version", "int16")])),
    5: (
        "KRaftVersion",
        _struct("KRaftVersionRecord", [_row("version", "int16"), _row("k_raft_version", "int16")]),
    ),
    6: (
        "KRaftVoters",
        _struct("VotersRecord", [_row("version", "int16"), _row("voters", ArrayOf(_VOTER))]),
    ),
}


@dataclasses.dataclass(frozen=True, slots=True)
class MetadataRecord:
    """A decoded metadata record: its type name, version and message."""

    type_name: str
    version: int
    message: Any


def _parse(spec: StructSpec, version: int, data: bytes, at: int, what: str) -> Any:
    stream = Window(bytes(data))
    stream.seek(at)
    try:
        return compile_struct(spec, version, True).parse_stream(stream)
    except FormatError as error:
        error.field = f"{what}.{error.field}" if error.field else what
        raise
    except ConstructError as error:
        raise CorruptRecordError(str(error), position=at, field=what) from None


def decode_metadata_record(value: bytes | None) -> MetadataRecord:
    """``MetadataRecordSerde.read`` of a record value."""
    if value is None:
        raise CorruptRecordError("a metadata record needs a value", position=0, field="value")
    stream = Window(bytes(value))
    frame = read_uvarint(stream, "frame version")
    if frame != 1:
        raise CorruptRecordError(
            f"Could not deserialize metadata record due to unknown frame version {frame}",
            position=0,
            field="frame version",
        )
    api_key = read_uvarint(stream, "apiKey")
    version = read_uvarint(stream, "version")
    known = METADATA_RECORDS.get(api_key)
    if known is None:
        raise UnknownRecordTypeError(
            f"unknown metadata record type {api_key}", position=1, field="apiKey"
        )
    name, spec, versions = known
    if version not in versions:
        raise UnsupportedVersionError(
            f"{name}: unsupported version {version}", position=2, field="version"
        )
    return MetadataRecord(name, version, _parse(spec, version, value, stream.tell(), name))


def decode_control_record(control_type: int, value: bytes | None) -> tuple[str, Any] | None:
    """(name, message) of a KRaft control record; None for other control types."""
    known = CONTROL_RECORDS.get(control_type)
    if known is None:
        return None
    name, spec = known
    return name, _parse(spec, 0, value or b"", 0, name)
