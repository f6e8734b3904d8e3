"""KIP-87 down-conversion of a Fetch answer's bytes (``storage.tombstone_view``).

KIP87-PRD-7: only flagged records with a value change (to a null value); the rest of
their batch is kept field by field, the CRC recomputed, and every other entry
(unflagged batches, control batches, a torn last batch) passed on byte for byte.
Expected values are the batches as built here, with the values nulled by hand.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from lethe_formats.model import Compression, ControlType, RecordBatch
from lethe_formats.records.builder import RecordSpec, build_batch, build_end_txn_marker_batch
from lethe_formats.records.scan import read_log
from lethe_reference.storage.tombstone_view import null_flagged_values

TS = 1_800_000_000_000
FLAGGED = RecordSpec(b"k1", b"gone, with a reason", (), TS, kip87_tombstone=True)
PLAIN = RecordSpec(b"k2", b"kept", (), TS + 1)
NULL_FLAGGED = RecordSpec(b"k3", None, (), TS + 2, kip87_tombstone=True)


def batches(data: bytes) -> list[RecordBatch]:
    found = list(read_log(data))  # verifies every CRC
    assert all(isinstance(b, RecordBatch) for b in found)
    return found  # type: ignore[return-value]


@pytest.mark.parametrize("codec", list(Compression))
def test_flagged_values_become_null_and_the_rest_of_the_batch_stays(codec: Compression) -> None:
    original = build_batch(
        [FLAGGED, PLAIN, NULL_FLAGGED],
        base_offset=7,
        compression=codec,
        producer_id=42,
        producer_epoch=1,
        base_sequence=3,
        partition_leader_epoch=5,
    )
    (before,) = batches(original)
    (after,) = batches(null_flagged_values(original))
    expected_records = (
        replace(before.records[0], value=None),
        before.records[1],
        before.records[2],
    )
    assert after.records == expected_records
    assert [r.has_kip87_tombstone_flag for r in after.records] == [True, False, True]
    keep = ("base_offset", "partition_leader_epoch", "attributes", "last_offset_delta")
    keep += ("base_timestamp", "max_timestamp", "producer_id", "producer_epoch")
    keep += ("base_sequence", "records_count")
    assert {f: getattr(after.header, f) for f in keep} == {
        f: getattr(before.header, f) for f in keep
    }


def test_entries_without_a_flagged_value_pass_byte_for_byte() -> None:
    plain = build_batch([PLAIN, NULL_FLAGGED], base_offset=0)
    marker = build_end_txn_marker_batch(
        base_offset=2,
        producer_id=9,
        producer_epoch=0,
        control_type=ControlType.COMMIT,
        coordinator_epoch=0,
        timestamp=TS,
    )
    data = plain + marker
    assert null_flagged_values(data) is data


def test_a_torn_last_batch_is_passed_on_as_received() -> None:
    flagged = build_batch([FLAGGED], base_offset=0)
    torn = build_batch([FLAGGED, PLAIN], base_offset=1)[:40]
    converted = null_flagged_values(flagged + torn)
    assert converted.endswith(torn)
    (only,) = batches(converted[: -len(torn)])
    assert only.records[0].value is None


def test_only_the_flagged_batch_of_several_is_rewritten() -> None:
    first = build_batch([PLAIN], base_offset=0)
    second = build_batch([FLAGGED], base_offset=1, compression=Compression.GZIP)
    third = build_batch([PLAIN], base_offset=2)
    converted = null_flagged_values(first + second + third)
    assert converted.startswith(first) and converted.endswith(third)
    assert [b.records[0].value for b in batches(converted)] == [b"kept", None, b"kept"]


def test_empty_input_is_returned_as_is() -> None:
    assert null_flagged_values(b"") == b""
