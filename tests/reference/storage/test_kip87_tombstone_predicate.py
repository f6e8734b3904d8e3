"""The cleaner's tombstone rule per log (catalog KIP87-CLN-1..4, 7, 8; kafka-facts 4.2, 6).

Kafka: a null value is a tombstone, nothing else. KIP-87 (lethe extension):
on a compacted topic with ``tombstone.flag.enable`` a magic-2 record with bit 0
of its own attributes set is one too, whatever its value; legacy messages
keep the null-value rule (their attributes byte is the batch codec, where bit
0 means gzip); headers never count.
"""

from __future__ import annotations

import pytest
from lethe_formats.model import Header, LegacyMessage, Record
from lethe_reference.config.log_config import effective_log_config
from lethe_reference.storage.settings import StorageSettings
from lethe_reference.storage.tombstones import (
    kafka_is_tombstone,
    kip87_is_tombstone,
    record_attribute_mask,
    tombstone_predicate,
)

COMPACT_ON = StorageSettings(cleanup_policy=("compact",), tombstone_flag_enable=True)
COMPACT_OFF = StorageSettings(cleanup_policy=("compact",))
DELETE_ON = StorageSettings(cleanup_policy=("delete",), tombstone_flag_enable=True)
BOTH_ON = StorageSettings(cleanup_policy=("compact", "delete"), tombstone_flag_enable=True)


def _record(value: bytes | None, attributes: int = 0, headers: tuple[Header, ...] = ()) -> Record:
    return Record(attributes, 0, 0, b"k", value, headers)


def _legacy(value: bytes | None, magic: int, attributes: int) -> LegacyMessage:
    return LegacyMessage(0, 0, 0, magic, attributes, None if magic == 0 else 5, b"k", value)


FLAGGED = _record(b"with a value", 0x01)
FLAGGED_NULL = _record(None, 0x01)
NULL = _record(None)
PLAIN = _record(b"v")
OTHER_BITS = _record(b"v", 0x7E)  # every bit but 0 (and the sign bit)
ALL_BITS = _record(b"v", -1)  # 0xff as the signed byte a decoder returns


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (FLAGGED, True),
        (FLAGGED_NULL, True),
        (NULL, True),
        (PLAIN, False),
        (OTHER_BITS, False),
        (ALL_BITS, True),
    ],
    ids=["flagged", "flagged-null", "null", "plain", "other-bits", "all-bits"],
)
def test_flag_enabled_compacted_magic_2(record: Record, expected: bool) -> None:
    assert tombstone_predicate(COMPACT_ON)(record, 2) is expected
    assert tombstone_predicate(BOTH_ON)(record, 2) is expected


@pytest.mark.parametrize("settings", [COMPACT_OFF, DELETE_ON], ids=["flag-off", "delete-only"])
def test_otherwise_only_a_null_value_is_a_tombstone(settings: StorageSettings) -> None:
    predicate = tombstone_predicate(settings)
    assert predicate is kafka_is_tombstone
    assert [predicate(r, 2) for r in (FLAGGED, FLAGGED_NULL, NULL, PLAIN, ALL_BITS)] == [
        False,
        True,
        True,
        False,
        False,
    ]


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_messages_use_the_null_value_alone(magic: int) -> None:
    """Bit 0 of a legacy message's attributes is the gzip codec, never a flag (CLN-3)."""
    predicate = tombstone_predicate(COMPACT_ON)
    assert predicate(_legacy(b"v", magic, 0x01), magic) is False
    assert predicate(_legacy(None, magic, 0x01), magic) is True
    assert predicate(_legacy(None, magic, 0x00), magic) is True
    # a magic-2 record shape handed in with a legacy magic: still the null-value rule
    assert kip87_is_tombstone(FLAGGED, magic) is False


def test_headers_never_make_a_tombstone() -> None:
    named = (Header(b"tombstone", b"true"), Header(b"5", b"\x01"), Header(b"isTombstone", None))
    for settings in (COMPACT_ON, COMPACT_OFF):
        assert tombstone_predicate(settings)(_record(b"v", 0, named), 2) is False


def test_the_decision_is_per_record() -> None:
    """A batch mixing flagged and plain records: only the flagged ones (CLN-4)."""
    batch = (PLAIN, FLAGGED, PLAIN, NULL)
    assert [tombstone_predicate(COMPACT_ON)(r, 2) for r in batch] == [False, True, False, True]


def test_rewrites_keep_bit_0_only_with_the_flag() -> None:
    assert record_attribute_mask(COMPACT_ON) == 0x01
    assert record_attribute_mask(DELETE_ON) == 0x01
    assert record_attribute_mask(COMPACT_OFF) == 0


def test_the_broker_log_config_drives_the_predicate() -> None:
    enabled = effective_log_config({"cleanup.policy": "compact", "tombstone.flag.enable": "true"})
    assert tombstone_predicate(enabled)(FLAGGED, 2) is True
    default = effective_log_config({"cleanup.policy": "compact"})
    assert tombstone_predicate(default)(FLAGGED, 2) is False
