"""The aborted-transaction index (``.txnindex``) of a segment.

Theory of operation
-------------------
One 34-byte entry per transaction whose ABORT marker was written in the
segment (``AbortedTxn.java``), appended in marker order, big-endian, with
*absolute* offsets (unlike the other two indexes)::

    +0   int16  version            0 (AbortedTxn.CURRENT_VERSION)
    +2   int64  producerId
    +10  int64  firstOffset        first offset of the aborted transaction
    +18  int64  lastOffset         offset of the ABORT marker
    +26  int64  lastStableOffset   LSO when the abort was appended
    +34

Kafka's reader (``TransactionIndex`` iterator) stops as soon as fewer than 34
bytes remain, so a partial trailing entry is silently ignored; lethe's reader
does the same and :func:`check_txn_index` reports it. An entry whose version is
*greater* than 0 makes Kafka's iterator throw ``Unexpected aborted transaction
version N in transaction index <file>, current version is 0``;
:func:`read_txn_index` raises :class:`~lethe_formats.errors.CorruptIndexError`
with that wording. (Kafka accepts a negative version; lethe's check flags it.)

``TransactionIndex.sanityCheck`` rejects an entry whose lastOffset is below the
segment's base offset; the append path additionally requires lastOffset to
increase from entry to entry. Both are in :func:`check_txn_index`.
"""

from __future__ import annotations

from collections.abc import Iterable

from lethe_formats.errors import CorruptIndexError
from lethe_formats.model import AbortedTxn
from lethe_formats.storage.fixed_entries import EntryLayout
from lethe_formats.storage.index_problems import IndexProblem

__all__ = [
    "ABORTED_TXN_ENTRY",
    "CURRENT_VERSION",
    "TXN_INDEX_SCHEMA",
    "check_txn_index",
    "encode_txn_index",
    "read_txn_index",
]

Buffer = bytes | bytearray | memoryview

CURRENT_VERSION = 0
ABORTED_TXN_ENTRY = EntryLayout(
    "aborted transaction",
    (
        ("version", "h"),
        ("producer_id", "q"),
        ("first_offset", "q"),
        ("last_offset", "q"),
        ("last_stable_offset", "q"),
    ),
)
#: Normative Construct schema of a whole ``.txnindex`` file.
TXN_INDEX_SCHEMA = ABORTED_TXN_ENTRY.construct()
_SIZE = ABORTED_TXN_ENTRY.size
_NAMES = ABORTED_TXN_ENTRY.field_names
_BOUNDS = [(-(2**15), 2**15 - 1)] + [(-(2**63), 2**63 - 1)] * 4


def _describe(txn: AbortedTxn) -> str:
    return (
        f"AbortedTxn(version={txn.version}, producerId={txn.producer_id}, "
        f"firstOffset={txn.first_offset}, lastOffset={txn.last_offset}, "
        f"lastStableOffset={txn.last_stable_offset})"
    )


def _version_error(version: int, index: int, file: str | None) -> CorruptIndexError:
    return CorruptIndexError(
        f"Unexpected aborted transaction version {version} in transaction index "
        f"{file if file is not None else '<txnindex>'}, current version is {CURRENT_VERSION}",
        file=file,
        position=index * _SIZE,
        field="version",
    )


def read_txn_index(
    data: Buffer, *, file: str | None = None, strict: bool = False
) -> tuple[AbortedTxn, ...]:
    """Entries of a ``.txnindex`` file; raises CorruptIndexError for a version > 0.

    A partial trailing entry is ignored, as Kafka does, unless ``strict``
    (then :class:`~lethe_formats.errors.TruncatedError`).
    """
    if strict:
        ABORTED_TXN_ENTRY.require_whole(len(data), file)
    entries = []
    for index, row in enumerate(ABORTED_TXN_ENTRY.iter_unpack(data)):
        if row[0] > CURRENT_VERSION:
            raise _version_error(row[0], index, file)
        entries.append(AbortedTxn(*row))
    return tuple(entries)


def encode_txn_index(entries: Iterable[AbortedTxn]) -> bytes:
    """Bytes of a ``.txnindex`` file holding ``entries``."""
    out = bytearray()
    for txn in entries:
        values = (
            txn.version,
            txn.producer_id,
            txn.first_offset,
            txn.last_offset,
            txn.last_stable_offset,
        )
        bounds = [(-(2**15), 2**15 - 1)] + [(-(2**63), 2**63 - 1)] * 4
        for name, value, (low, high) in zip(
            ABORTED_TXN_ENTRY.field_names, values, bounds, strict=True
        ):
            if not low <= value <= high:
                raise ValueError(f"{name} {value} does not fit in {low}..{high}")
        out += ABORTED_TXN_ENTRY.pack(values)
    return bytes(out)


def check_txn_index(
    data: Buffer, *, base_offset: int = 0, file: str | None = None
) -> list[IndexProblem]:
    """Kafka's read/sanity rules plus lethe's ordering checks, as a list of problems."""
    problems: list[IndexProblem] = []
    previous: AbortedTxn | None = None
    for index, row in enumerate(ABORTED_TXN_ENTRY.iter_unpack(data)):
        txn = AbortedTxn(*row)
        at = index * _SIZE
        if txn.version > CURRENT_VERSION:
            error = _version_error(txn.version, index, file)
            problems.append(IndexProblem(error.message, at, "version", True, file))
            break  # Kafka's iterator throws here; nothing after is read
        if txn.version < 0:
            problems.append(
                IndexProblem(
                    f"entry {index}: negative version {txn.version}", at, "version", False, file
                )
            )
        if txn.last_offset < base_offset:
            problems.append(
                IndexProblem(
                    f"Last offset of aborted transaction {_describe(txn)} in index "
                    f"{file if file is not None else '<txnindex>'} is less than start offset "
                    f"{base_offset}",
                    at + 18,
                    "last_offset",
                    True,
                    file,
                )
            )
        if txn.first_offset > txn.last_offset:
            problems.append(
                IndexProblem(
                    f"entry {index}: firstOffset {txn.first_offset} is after lastOffset "
                    f"{txn.last_offset}",
                    at + 10,
                    "first_offset",
                    False,
                    file,
                )
            )
        if previous is not None and txn.last_offset <= previous.last_offset:
            problems.append(
                IndexProblem(
                    f"entry {index}: lastOffset {txn.last_offset} is not greater than the "
                    f"previous entry's {previous.last_offset}",
                    at + 18,
                    "last_offset",
                    False,
                    file,
                )
            )
        previous = txn
    tail = len(data) % _SIZE
    if tail:
        problems.append(
            IndexProblem(
                f"partial entry: {tail} trailing bytes, an entry is {_SIZE} (Kafka ignores them)",
                ABORTED_TXN_ENTRY.whole_length(len(data)),
                ABORTED_TXN_ENTRY.name,
                False,
                file,
            )
        )
    return problems
