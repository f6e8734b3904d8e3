"""KIP-87 down-conversion: flagged tombstones as a consumer that knows no flag must see them.

Theory of operation
-------------------
KIP-87's migration plan has the broker down-convert for consumers that do not
understand the flag: "the downgrade would make the value null for a tombstone
message", so that an old consumer never takes a delete for an update. lethe's
flag is bit 0 of a v2 record's attributes (catalog KIP87-BIT-1), which every
stock client ignores, so a flagged record that carries a value would otherwise
reach such a client as an ordinary update.

:func:`null_flagged_values` rewrites the bytes of a Fetch answer: every data
batch holding a flagged record with a non-null value is re-encoded with those
values null (KIP87-PRD-7); everything else is copied byte for byte::

    fetched bytes  | batch A (no flag) | batch B (flag, value) | torn tail |
    answer         | batch A, as is    | batch B', values null | torn tail |

B' keeps B's header fields (base offset, leader epoch, attributes and so the
codec, timestamps, producer id/epoch/sequence, delete horizon) and every
record's attributes (bit 0 stays set: the record still says "tombstone"),
deltas, key and headers; only the flagged values, the batch length and the CRC
change, recomputed as the Java client would check them. Compressed batches are
decompressed and written again with their own codec (snappy in the xerial
framing, as Kafka's writers write it). Control batches, magic 0/1 entries
(they have no record attributes, KIP87-CLN-3), a batch whose records do not
decode and a torn last batch are never touched: a consumer gets them exactly
as it would from Kafka.

Which fetches are converted is the Fetch handler's choice (a consumer without
the KIP-87 signal, a topic with ``tombstone.flag.enable``); this module only
knows bytes.
"""

from __future__ import annotations

from dataclasses import replace

from lethe_formats.errors import FormatError
from lethe_formats.model import BatchHeader, RecordBatch
from lethe_formats.records.batch import encode_batch
from lethe_formats.records.scan import LogScanner, ScannedEntry, decode_records

__all__ = ["null_flagged_values"]

_BATCH_LENGTH_PREFIX = 12  # baseOffset (8) + batchLength (4)


def null_flagged_values(data: bytes) -> bytes:
    """``data`` with every flagged record's value null (see the module docstring)."""
    if not data:
        return data
    scanner = LogScanner(data, verify_crc=False)
    out: list[bytes] = []
    position = 0
    changed = False
    for entry in scanner:
        header = entry.header
        end = entry.position + _entry_size(data, entry.position)
        chunk = data[entry.position : end]
        if isinstance(header, BatchHeader) and not header.is_control:
            rewritten = _rewrite(data, entry, header)
            if rewritten is not None:
                chunk, changed = rewritten, True
        out.append(chunk)
        position = end
    if not changed:
        return data
    out.append(data[position:])  # a torn last batch or a stop, as received
    return b"".join(out)


def _entry_size(data: bytes, position: int) -> int:
    length = int.from_bytes(data[position + 8 : position + 12], "big", signed=True)
    return _BATCH_LENGTH_PREFIX + length


def _rewrite(data: bytes, entry: ScannedEntry, header: BatchHeader) -> bytes | None:
    """The batch re-encoded with its flagged values null, or None when nothing changes."""
    try:
        records = decode_records(data, entry)
    except FormatError:
        return None  # what cannot be read is passed on as stored
    if not any(r.has_kip87_tombstone_flag and r.value is not None for r in records):
        return None
    nulled = tuple(replace(r, value=None) if r.has_kip87_tombstone_flag else r for r in records)
    return encode_batch(RecordBatch(header, nulled), snappy_framing="xerial")
