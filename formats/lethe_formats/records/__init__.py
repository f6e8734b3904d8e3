"""Kafka's record formats: v2 batches, v0/v1 messages, control records, segments.

The Construct schemas in these modules are the normative definitions; the
functions exported here decode bytes into ``lethe_formats.model`` values and
encode them back. ``scan`` (the fast path) is held to parity with them.
"""

from lethe_formats.records.batch import decode_batch, encode_batch
from lethe_formats.records.legacy import decode_message, encode_message
from lethe_formats.records.log import decode_log

__all__ = [
    "decode_batch",
    "decode_log",
    "decode_message",
    "encode_batch",
    "encode_message",
]
