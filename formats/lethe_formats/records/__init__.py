"""Kafka's record formats: v2 batches, v0/v1 messages, control records, segments.

The Construct schemas in these modules are the normative definitions; the
functions exported here decode bytes into ``lethe_formats.model`` values and
encode them back, and the builders derive a writer's fields from record specs.
``scan`` (the fast path) is held to parity with them.
"""

from lethe_formats.records.batch import decode_batch, encode_batch
from lethe_formats.records.builder import (
    RecordSpec,
    build_batch,
    build_empty_batch,
    build_end_txn_marker_batch,
    build_legacy_message_set,
)
from lethe_formats.records.control import (
    control_type,
    decode_control_key,
    decode_end_txn_marker,
    encode_control_key,
    encode_end_txn_marker_value,
)
from lethe_formats.records.legacy import decode_message, encode_message
from lethe_formats.records.log import decode_log

__all__ = [
    "RecordSpec",
    "build_batch",
    "build_empty_batch",
    "build_end_txn_marker_batch",
    "build_legacy_message_set",
    "control_type",
    "decode_batch",
    "decode_control_key",
    "decode_end_txn_marker",
    "decode_log",
    "decode_message",
    "encode_batch",
    "encode_control_key",
    "encode_end_txn_marker_value",
    "encode_message",
]
