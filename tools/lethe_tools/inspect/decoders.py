"""How ``lethe dump --print-data-log`` turns a record's key and value into text.

Theory of operation
-------------------
kafka-dump-log hands each record of a data batch to a ``MessageParser`` that
returns an optional key text and an optional payload text. Its parsers, and
lethe's equivalents (:data:`RecordParser`, ``(key, value, offset) -> (key text
or None, payload text or None)``):

* the default ``StringDecoder`` for keys and values: UTF-8 with U+FFFD for
  malformed input; a missing key or value prints nothing (:func:`string_parser`);
* ``--key-decoder-class`` / ``--value-decoder-class``: a Java class implementing
  ``Decoder``; in lethe a Python callable ``module:function`` taking the bytes
  and returning the object to print (``str()`` of it). Kafka's own
  ``org.apache.kafka.tools.api.StringDecoder`` name is accepted and means the
  default (:func:`decoder_parser`);
* ``--offsets-decoder``: ``__consumer_offsets`` records as
  ``{"type":"T","data":{...}}`` / ``{"version":"V","data":{...}}`` JSON, a
  tombstone as ``<DELETE>``; the subscription and assignment bytes of a classic
  "consumer" group decoded too; a record type or value it cannot read as
  ``Unknown record type T at offset O, skipping.`` / ``Error at offset O,
  skipping. <why>`` in the key's place (:func:`offsets_parser`);
* ``--transaction-log-decoder``: ``__transaction_state`` records as
  ``transaction_metadata::transactionalId=ID`` and ``producerId:P,producerEpoch:E,
  state=S,partitions=[t-p,...],txnLastUpdateTimestamp=T,txnTimeoutMs=M``
  (:func:`transaction_log_parser`). Kafka reads the partitions into a Scala
  ``mutable.HashSet`` (none for an Empty transaction) and prints them in that
  set's iteration order, which :func:`scala_hash_set_order` reproduces;
* ``--cluster-metadata-decoder``: ``__cluster_metadata`` records (no key) as
  ``{"type":"TOPIC_RECORD","version":0,"data":{...}}``, an unreadable one as
  ``Error at O, skipping. <why>`` (:func:`cluster_metadata_parser`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from lethe_formats.coordinator import (
    GroupMetadataValue,
    UnknownRecordTypeError,
    decode_key,
    decode_value,
)
from lethe_formats.coordinator.cluster_metadata import decode_metadata_record
from lethe_formats.coordinator.consumer_protocol import decode_assignment, decode_subscription
from lethe_formats.coordinator.records import VALUE_SPECS
from lethe_formats.coordinator.transaction_log import (
    TRANSACTION_STATES,
    decode_transaction_key,
    decode_transaction_value,
)
from lethe_formats.errors import FormatError

from lethe_tools.render.kafka_json import json_text, message_json

__all__ = [
    "JAVA_STRING_DECODER",
    "DecoderError",
    "RecordParser",
    "cluster_metadata_parser",
    "decoder_parser",
    "offsets_parser",
    "scala_hash_set_order",
    "string_parser",
    "transaction_log_parser",
]

Parsed = tuple[str | None, str | None]
RecordParser = Callable[[bytes | None, bytes | None, int], Parsed]
#: Kafka's default decoder class, accepted by name.
JAVA_STRING_DECODER = "org.apache.kafka.tools.api.StringDecoder"


class DecoderError(ValueError):
    """A ``--key-decoder-class`` / ``--value-decoder-class`` that cannot be loaded."""


def _utf8(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


def string_parser(key: bytes | None, value: bytes | None, offset: int) -> Parsed:
    del offset
    return _utf8(key), _utf8(value)


def _load(spec: str | None) -> Callable[[bytes], Any]:
    if spec is None or spec == JAVA_STRING_DECODER:
        return lambda data: data.decode("utf-8", "replace")
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise DecoderError(f"{spec!r} is not a Python callable as module:function")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as error:
        raise DecoderError(f"cannot load {spec!r}: {error}") from None
    if not callable(target):
        raise DecoderError(f"{spec!r} is not callable")
    function: Callable[[bytes], Any] = target
    return function


def decoder_parser(key_spec: str | None, value_spec: str | None) -> RecordParser:
    """Kafka's ``DecoderMessageParser`` with Python callables for the decoders."""
    decode_key_bytes, decode_value_bytes = _load(key_spec), _load(value_spec)

    def parse(key: bytes | None, value: bytes | None, offset: int) -> Parsed:
        del offset
        return (
            None if key is None else str(decode_key_bytes(key)),
            None if value is None else str(decode_value_bytes(value)),
        )

    return parse


def _embedded(data: Any, decode: Callable[[bytes], Any]) -> Any:
    """A consumer-protocol blob as its JSON tree; the bytes (base64) if unreadable."""
    try:
        decoded = decode(data)
    except (FormatError, ValueError):
        return None
    return message_json(decoded, decoded.version, False)


def _value_json(value: Any) -> dict[str, Any]:
    spec = next(s for s in VALUE_SPECS.values() if isinstance(value, s.struct.cls))
    data = message_json(value, value.version, value.version in spec.flexible)
    if isinstance(value, GroupMetadataValue) and value.protocol_type == "consumer":
        for member, node in zip(value.members, data.get("members", ()), strict=True):
            for name, decode in (
                ("subscription", decode_subscription),
                ("assignment", decode_assignment),
            ):
                tree = _embedded(getattr(member, name), decode)
                if tree is not None:
                    node[name] = tree
    return {"version": str(value.version), "data": data}


def offsets_parser(key: bytes | None, value: bytes | None, offset: int) -> Parsed:
    """``OffsetsMessageParser``: coordinator records as Kafka's JSON."""
    try:
        record_key = decode_key(key)
    except UnknownRecordTypeError:
        assert key is not None
        kind = int.from_bytes(key[:2], "big", signed=True)
        return f"Unknown record type {kind} at offset {offset}, skipping.", None
    except FormatError as error:
        return f"Error at offset {offset}, skipping. {error}", None
    try:
        record_value = decode_value(record_key.version, value)
    except FormatError as error:
        return f"Error at offset {offset}, skipping. {error}", None
    key_tree = {"type": str(record_key.version), "data": message_json(record_key, 0, False)}
    value_text = "<DELETE>" if record_value is None else json_text(_value_json(record_value))
    return json_text(key_tree), value_text


def transaction_log_parser(key: bytes | None, value: bytes | None, offset: int) -> Parsed:
    """``TransactionLog.formatRecordKeyAndValue``."""
    del offset
    record_key = decode_transaction_key(key)
    if record_key.version != 0:
        return f"unknown::version={record_key.version}", None
    key_text = f"transaction_metadata::transactionalId={record_key.transactional_id}"
    record = decode_transaction_value(value)
    if record is None:
        return key_text, "<DELETE>"
    if not 0 <= record.transaction_status < len(TRANSACTION_STATES):
        raise FormatError(
            f"unknown transaction state {record.transaction_status}",
            position=0,
            field="value.transactionStatus",
        )
    state = TRANSACTION_STATES[record.transaction_status]
    groups = [] if state == "Empty" else record.transaction_partitions or ()
    partitions = ",".join(
        f"{topic}-{partition}"
        for topic, partition in scala_hash_set_order(
            [[(entry.topic, p) for p in entry.partition_ids] for entry in groups]
        )
    )
    return key_text, (
        f"producerId:{record.producer_id},producerEpoch:{record.producer_epoch},"
        f"state={state},partitions=[{partitions}],"
        f"txnLastUpdateTimestamp={record.transaction_last_update_timestamp_ms},"
        f"txnTimeoutMs={record.transaction_timeout_ms}"
    )


def cluster_metadata_parser(key: bytes | None, value: bytes | None, offset: int) -> Parsed:
    """``ClusterMetadataLogMessageParser``: no key; the value as Kafka's JSON."""
    del key
    try:
        record = decode_metadata_record(value)
    except FormatError as error:
        return None, f"Error at {offset}, skipping. {error}"
    data = message_json(record.message, record.version, True)
    return None, json_text({"type": record.type_name, "version": record.version, "data": data})


def _java_string_hash(text: str) -> int:
    value = 0
    for unit in text.encode("utf-16-be").hex(" ", 2).split():
        value = (31 * value + int(unit, 16)) & 0xFFFFFFFF
    return value


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _topic_partition_hash(topic: str, partition: int) -> int:
    """``TopicPartition.hashCode``, then Scala's ``improveHash`` (h ^ h >>> 16)."""
    java = _int32(31 * (31 + partition) + _java_string_hash(topic))
    return _int32(java ^ ((java & 0xFFFFFFFF) >> 16))


#: Scala's immutable Set1..Set4 (larger sets are an immutable.HashSet)
_SMALL_SET = 4


def _table_size_for(capacity: int) -> int:
    return min(1 << (max(capacity - 1, 4).bit_length() - 1) << 1, 1 << 30)


def scala_hash_set_order(groups: list[list[tuple[str, int]]]) -> list[tuple[str, int]]:
    """The iteration order of a Scala 2.13 ``mutable.HashSet`` of TopicPartitions filled
    with ``++=`` once per group, as ``TransactionLog.readTxnRecordValue`` fills it.

    The set is a table of buckets (16 at first, load factor 0.75): ``++=`` first
    sizes it for the group (``sizeHint``); a group of up to four is added one by
    one, each add doubling the table when the next element would reach the
    threshold, a larger one bucket-wise without any growth; a bucket is
    ``hash & (size - 1)`` and keeps its nodes in ascending hash order, and
    iteration walks the buckets in order. So the order follows from the hashes
    and the final table size alone (checked against the JVM on random sets)."""
    size = 16
    seen: dict[tuple[str, int], int] = {}
    for group in groups:
        unique = list(dict.fromkeys(group))  # the group is a Scala immutable Set
        size = max(size, _table_size_for(int((len(unique) + 1) / 0.75)))  # sizeHint
        for element in unique:
            # an immutable.HashSet (5+ elements) is added bucket-wise without growing;
            # a Set1..Set4 element by element, each add growing the table if needed
            if len(unique) <= _SMALL_SET and len(seen) + 1 >= int(size * 0.75):
                size *= 2
            seen.setdefault(element, _topic_partition_hash(*element))
    return sorted(seen, key=lambda e: (seen[e] & (size - 1), seen[e]))
