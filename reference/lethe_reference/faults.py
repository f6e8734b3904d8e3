"""Deliberate faults: named mistakes the reference broker can be told to make.

Theory of operation
-------------------
A conformance suite is only as good as the wrong brokers it catches. Each
:class:`Fault` here is a mistake an implementer of KIP-107 (or of the
extensions) plausibly makes, with the catalog requirements it breaks. The
broker config ``lethe.faults`` (comma-separated names, default empty) turns
faults on; the conformance kit (``lethe conformance faults``) starts an
embedded broker per fault and requires the suite to fail, so the suite's power
is measured rather than assumed.

Where a fault acts, the code asks one question::

    if faults.active(scope, "fetch-below-log-start-returns-data"):
        ...wrong behaviour...

``scope`` is whatever the code at that place holds: the :class:`Broker` or its
:class:`BrokerConfig` (handlers), a storage object that lives in a log
directory (``LogManager``: ``.log_dir``; ``PartitionLog``: ``.directory``), or
the path of a file in a partition directory, as a string (the pure cleaner
knows only the segment file it reads; ``None`` there means no faults).
Storage never sees the broker config, so the broker *binds* its log directory
to its faults when it is built (:func:`bind`), and storage objects are looked
up by the log directory they live in. With no fault bound anywhere, the query
for a storage object is one set lookup that fails, so a stock broker pays
nothing noticeable. An unknown name in a query is a programming error
(``KeyError``), so a typo at a hook cannot silently disable a fault.

``lethe.faults`` is validated at startup like every broker config (the
``ConfigKey`` in ``config/broker_defs.py`` lists :data:`FAULTS`): an unknown
name stops the broker with ``Invalid value X for configuration lethe.faults``.
It is an internal config: DescribeConfigs does not list it unless it was set,
as Kafka treats its ``defineInternal`` configs.

Every fault, what it does and what it breaks: ``conformance/FAULTS.md``
(kept in sync with this registry by a test).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

__all__ = ["CONFIG_NAME", "FAULTS", "Fault", "active", "bind", "enabled", "names"]

CONFIG_NAME = "lethe.faults"


@dataclass(frozen=True, slots=True)
class Fault:
    """One deliberate mistake: its name, the requirements it breaks, where it acts, why."""

    name: str
    requirements: tuple[str, ...]
    where: str
    description: str


_ALL = (
    # --- DeleteRecords ---------------------------------------------------------------------
    Fault(
        "delete-records-above-high-watermark",
        ("KIP107-DEL-4",),
        "handlers/partition_ops/delete.py",
        "DeleteRecords clamps an offset above the high watermark down to the high watermark "
        "and succeeds, instead of failing the partition with OFFSET_OUT_OF_RANGE: the "
        "implementer treats 'too far' as 'everything' to be helpful, and a client that asked "
        "for a typo'd offset silently loses the whole partition.",
    ),
    Fault(
        "delete-records-minus-one-literal",
        ("KIP107-DEL-1", "KIP107-DEL-3"),
        "handlers/partition_ops/delete.py",
        "The offset -1 is not replaced by the high watermark: it falls through to the "
        "'negative offset' check and fails with OFFSET_OUT_OF_RANGE, as in an implementation "
        "that validates the request before resolving the special value.",
    ),
    Fault(
        "low-watermark-is-requested-offset",
        ("KIP107-DEL-5", "KIP107-LWM-2"),
        "handlers/partition_ops/delete.py",
        "A successful partition answers with the requested offset as its low watermark "
        "instead of the partition's low watermark, so a delete below the current log start "
        "offset reports a value lower than what is really readable.",
    ),
    Fault(
        "delete-records-one-error-fails-all",
        ("KIP107-API-7",),
        "handlers/delete_records.py",
        "One failing partition fails the whole request: every partition is answered with "
        "the first error and low watermark -1, as when per-partition checks are written as "
        "request validation, although the other partitions' log start offsets may have moved.",
    ),
    Fault(
        "delete-records-skips-authorization",
        ("KIP107-AUTH-1", "KIP107-AUTH-2"),
        "handlers/delete_records.py",
        "DeleteRecords never asks the authorizer for DELETE on the topic: any authenticated "
        "principal can move any topic's log start offset, and an absent topic answers "
        "UNKNOWN_TOPIC_OR_PARTITION instead of TOPIC_AUTHORIZATION_FAILED, as when the "
        "handler is written without the KIP's 'API Authorization' section.",
    ),
    Fault(
        "low-watermark-is-leader-log-start",
        ("KIP107-LWM-1", "KIP107-PUR-2"),
        "cluster/membership.py",
        "The low watermark of a replicated partition is the leader's own log start offset: the "
        "log start offsets followers report are ignored, so DeleteRecords answers at once while "
        "the followers still hold the records, as when lowWatermarkIfLeader is written for one "
        "replica.",
    ),
    Fault(
        "follower-restart-keeps-high-watermark",
        ("KIP107-HW-1",),
        "storage/log.py",
        "A follower whose log ends below its leader's log start offset starts its log there "
        "but keeps its old high watermark, below the new log start offset, until the leader "
        "sends another: the implementer resets the log end and log start offsets and leaves "
        "the high watermark to replication, so a consumer reading from the follower sees a "
        "high watermark below the first readable offset.",
    ),
    Fault(
        "list-offsets-checks-existence-first",
        ("KIP107-LST-8",),
        "handlers/list_offsets.py",
        "ListOffsets authorizes only topics it can find and answers the rest with what it "
        "knows: a principal without DESCRIBE gets the offsets of an existing topic, as when "
        "the DESCRIBE check is written inside the per-partition lookup after an early "
        "return for known partitions.",
    ),
    Fault(
        "delete-records-ignores-cleanup-policy",
        ("KIP107-DEL-7",),
        "handlers/partition_ops/delete.py",
        "DeleteRecords skips the cleanup.policy check and moves the log start offset of a "
        "compact-only topic, instead of failing with POLICY_VIOLATION (44): the check was "
        "added to Kafka later (3.x) and is easy to forget.",
    ),
    Fault(
        "delete-records-on-internal-topic",
        ("KIP107-ERR-2", "KIP107-ERR-3"),
        "handlers/partition_ops/delete.py",
        "The internal-topic check is missing, so __consumer_offsets reaches the policy check "
        "and answers POLICY_VIOLATION (44) instead of INVALID_TOPIC_EXCEPTION (17): the "
        "right refusal for the wrong reason, visible in the error code.",
    ),
    Fault(
        "delete-records-deletes-segments-at-once",
        ("KIP107-DEL-8",),
        "handlers/partition_ops/delete.py",
        "DeleteRecords runs the log-start-offset retention rule itself, while handling the "
        "request, so segments below the new log start offset disappear at once instead of "
        "at the next retention pass.",
    ),
    Fault(
        "epoch-cache-not-truncated",
        ("KIP107-DEL-9",),
        "storage/log.py",
        "Raising the log start offset leaves the leader-epoch cache alone, so "
        "leader-epoch-checkpoint keeps an entry starting below the log start offset.",
    ),
    # --- log start offset checkpoint ---------------------------------------------------
    Fault(
        "log-start-offset-not-checkpointed",
        ("KIP107-CKP-1", "KIP107-CKP-3", "KIP107-CKP-4", "KIP107-LSO-4"),
        "storage/log_manager.py",
        "log-start-offset-checkpoint is written without entries (the implementer keeps the "
        "log start offset in memory only), so a log start offset raised by DeleteRecords is "
        "lost on restart and deleted records come back.",
    ),
    Fault(
        "log-start-offset-checkpoint-every-partition",
        ("KIP107-CKP-3",),
        "storage/log_manager.py",
        "log-start-offset-checkpoint lists every partition, not only those whose log start "
        "offset is above their first segment's base offset, as a natural 'checkpoint "
        "everything' implementation does.",
    ),
    Fault(
        "log-start-offset-not-clamped-on-restart",
        ("KIP107-LSO-3",),
        "storage/loader.py",
        "At startup the log start offset is taken from the checkpoint alone, not "
        "max(checkpoint, first segment's base offset), so a partition missing from the "
        "checkpoint (retention moved its start to a segment boundary) restarts at 0.",
    ),
    # --- ListOffsets ---------------------------------------------------------------------
    Fault(
        "list-offsets-earliest-first-segment-base",
        ("KIP107-LST-1", "KIP107-LST-4"),
        "storage/log_reads.py",
        "ListOffsets EARLIEST (and EARLIEST_LOCAL) answers the first segment's base offset "
        "instead of the log start offset, which is what a broker that equates 'earliest' "
        "with 'oldest file' returns after DeleteRecords inside a segment.",
    ),
    Fault(
        "list-offsets-search-below-log-start",
        ("KIP107-LST-7",),
        "storage/log_reads.py",
        "A ListOffsets timestamp search starts at the first segment, not at the log start "
        "offset, so it can answer an offset that DeleteRecords already removed.",
    ),
    Fault(
        "list-offsets-max-timestamp-clamped",
        ("KIP107-LST-3",),
        "storage/log_reads.py",
        "ListOffsets MAX_TIMESTAMP is clamped up to the log start offset like the other "
        "lookups, while Kafka answers the record with the largest timestamp even below it.",
    ),
    # --- Fetch ---------------------------------------------------------------------------
    Fault(
        "fetch-below-log-start-returns-data",
        ("KIP107-FET-3",),
        "storage/log_reads.py",
        "A Fetch below the log start offset reads whatever is still on disk instead of "
        "failing with OFFSET_OUT_OF_RANGE, so deleted records stay visible until retention "
        "removes their segment.",
    ),
    Fault(
        "fetch-out-of-range-keeps-offsets",
        ("KIP107-FET-4",),
        "handlers/partition_ops/read.py",
        "An OFFSET_OUT_OF_RANGE partition answer carries the real high watermark and log "
        "start offset instead of -1 for both, as an implementation that fills the "
        "partition header before reading does.",
    ),
    Fault(
        "fetch-above-log-end-empty",
        ("KIP107-FET-5",),
        "storage/log_reads.py",
        "A consumer Fetch above the log end offset returns no records and no error, like a "
        "fetch at the high watermark, instead of OFFSET_OUT_OF_RANGE.",
    ),
    # --- retention and segment deletion ------------------------------------------------
    Fault(
        "retention-deletes-straddling-segment",
        ("KIP107-SEG-1", "KIP107-DEL-8"),
        "retention/policies.py",
        "The log-start-offset rule deletes a segment whose own base offset is below the log "
        "start offset, not one whose next segment's base is at or below it, so the segment "
        "holding the log start offset goes and records at or above it are lost.",
    ),
    Fault(
        "retention-keeps-active-segment",
        ("KIP107-RET-7", "KIP107-SEG-6"),
        "retention/deletable.py",
        "Retention never deletes the active segment, even when it is non-empty and wholly "
        "expired, a common simplification that keeps expired records readable forever on a "
        "quiet partition.",
    ),
    Fault(
        "segments-deleted-at-once",
        ("KIP107-SEG-4",),
        "storage/log.py",
        "Deleted segments are removed from disk at once instead of being renamed .deleted "
        "and removed file.delete.delay.ms later, so readers holding them fail.",
    ),
    Fault(
        "size-retention-ignores-active-segment",
        ("KIP107-RET-4",),
        "retention/policies.py",
        "retention.bytes compares the size without the active segment, so the log keeps "
        "more than retention.bytes allows.",
    ),
    Fault(
        "retention-not-prefix",
        ("KIP107-SEG-5", "KIP107-RET-6"),
        "retention/deletable.py",
        "Retention filters segments instead of taking the oldest prefix: a young segment "
        "does not stop the pass, so older-timestamped segments after it are deleted too.",
    ),
    Fault(
        "retention-minus-one-not-unlimited",
        ("KIP107-RET-3",),
        "retention/policies.py",
        "retention.ms -1 is not treated as 'no limit': it is compared like any value, so "
        "every segment with a timestamp in the past is deleted.",
    ),
    Fault(
        "config-change-needs-restart",
        ("KIP107-RET-9",),
        "storage/log_manager.py",
        "AlterConfigs stores the new topic config but the partition logs keep the settings "
        "they were opened with until a restart.",
    ),
    Fault(
        "log-start-offset-not-moved-by-retention",
        ("KIP107-LSO-2",),
        "retention/deletable.py",
        "Retention deletes segments without raising the log start offset to the first "
        "remaining segment's base, so ListOffsets EARLIEST points at deleted records.",
    ),
    Fault(
        "retention-on-compact-topics",
        ("KIP107-RET-1", "KIP534-TMB-5"),
        "retention/policies.py",
        "Time and size retention also run on compact-only topics, whose records should "
        "only go through compaction: the policy check is made once for all three rules "
        "instead of only for retention.ms and retention.bytes, and old segments holding "
        "the latest value of their keys are deleted.",
    ),
    # --- KIP-534: the cleaner and delete horizons ---------------------------------------
    Fault(
        "cleaner-ignores-delete-retention",
        ("KIP534-HZN-3", "KIP534-TMB-1", "KIP534-TMB-3"),
        "cleaner/service.py",
        "The cleaner gives tombstone batches the horizon 'now' instead of now + "
        "delete.retention.ms (the topic's setting is not read through), so a tombstone "
        "disappears at the next cleaning and consumers that were away miss the delete.",
    ),
    Fault(
        "cleaner-forgets-active-producers",
        ("KIP534-TXN-7",),
        "cleaner/service.py",
        "The cleaner does not know which producers are still active and removes the batch "
        "holding a producer's last sequence when its records are superseded, instead of "
        "keeping it empty; the producer's next append then fails the sequence check.",
    ),
    Fault(
        "cleaner-ignores-min-compaction-lag",
        ("KIP534-CLN-2",),
        "cleaner/manager.py",
        "The cleaner's dirty range ignores min.compaction.lag.ms and compacts records as "
        "soon as their segment is inactive, removing superseded values a reader was "
        "promised for that long.",
    ),
    Fault(
        "cleaner-drops-tombstones-at-once",
        ("KIP534-TMB-1", "KIP534-HZN-3"),
        "cleaner/filter.py",
        "The cleaner treats every tombstone as past its delete horizon and removes the "
        "latest tombstone of a key at the first cleaning, so a consumer that had read the "
        "old value never learns it was deleted.",
    ),
    Fault(
        "cleaner-horizon-reset-every-cleaning",
        ("KIP534-HZN-4", "KIP534-HZN-9"),
        "cleaner/filter.py",
        "Each cleaning stamps a new horizon (now + delete.retention.ms) on every batch "
        "keeping a tombstone, even one that already has a horizon, so tombstones live as "
        "long as the log keeps being cleaned more often than delete.retention.ms.",
    ),
    # --- KIP-68: consumed retention ----------------------------------------------------------
    Fault(
        "consumed-retention-without-commits",
        ("KIP68-MCO-2",),
        "retention/consumed.py",
        "A partition no group has committed for is taken as fully consumed (the minimum "
        "over no groups defaulting to the high watermark), so consumed retention deletes "
        "records nobody has read.",
    ),
    Fault(
        "consumed-retention-past-committed-offset",
        ("KIP68-RET-2", "KIP68-RET-8"),
        "retention/consumed.py",
        "Consumed retention deletes a segment once the committed offset has entered it "
        "(its base offset is below the min committed offset) rather than passed it, losing "
        "the unconsumed records at its end.",
    ),
    Fault(
        "consumed-retention-ignores-age",
        ("KIP68-RET-3",),
        "retention/consumed.py",
        "Consumed retention deletes consumed segments at once, without waiting for "
        "retention.commitoffset.ms, reading the KIP's 'consumed' as the only condition.",
    ),
    Fault(
        "offset-delete-leaves-offsets-counting",
        ("KIP68-MCO-4",),
        "handlers/group_deletion.py",
        "OffsetDelete writes its tombstones and answers NONE but leaves the group's "
        "in-memory offsets as they were, so OffsetFetch still returns a deleted offset and "
        "consumed retention keeps counting it until the coordinator reloads the partition.",
    ),
    # --- KIP-694: partition reduction ----------------------------------------------------
    Fault(
        "produce-accepted-on-read-only-partition",
        ("KIP694-MODE-2",),
        "handlers/produce.py",
        "Produce ignores the partition mode and appends to a ReadOnly (or None) partition "
        "that is about to be deleted, so acknowledged records are lost with it.",
    ),
    Fault(
        "metadata-omits-partition-mode",
        ("KIP694-META-1", "KIP694-META-2"),
        "handlers/metadata.py",
        "Metadata never reports a partition's mode (no tagged field 10694 in v9+, no "
        "LEADER_NOT_AVAILABLE below v9), so clients keep producing to partitions being "
        "removed.",
    ),
    # --- KIP-87: the tombstone flag ----------------------------------------------------------
    Fault(
        "tombstone-flag-cleared-on-recompression",
        ("KIP87-BIT-5",),
        "storage/log.py",
        "The broker rebuilds a batch it recompresses (or converts) with record attributes "
        "0, as Kafka does, even on a tombstone.flag.enable topic, so flagged tombstones "
        "become ordinary records.",
    ),
    Fault(
        "tombstone-flag-cleared-by-cleaner",
        ("KIP87-BIT-5", "KIP87-CLN-5"),
        "cleaner/service.py",
        "The cleaner writes rebuilt batches with record attributes 0 and drops bit 0 of the "
        "records it keeps, so a flagged tombstone kept until its horizon turns into a value.",
    ),
    Fault(
        "tombstone-flag-ignored-by-cleaner",
        ("KIP87-CLN-1", "KIP87-CLN-6"),
        "cleaner/service.py",
        "The cleaner keeps Kafka's null-value tombstone rule on a flag-enabled compacted "
        "topic, so flagged tombstones never expire and the keys they delete stay forever.",
    ),
    Fault(
        "flagged-values-sent-to-unaware-consumers",
        ("KIP87-PRD-7",),
        "handlers/fetch.py",
        "The broker serves flagged tombstones as stored to every consumer, as if all knew the "
        "flag (no down-conversion), so a stock consumer takes each flagged delete for an "
        "update of the key.",
    ),
    Fault(
        "flagged-values-nulled-for-replicas",
        ("KIP87-PRD-9",),
        "handlers/fetch.py",
        "The broker down-converts every fetch without the KIP-87 signal, a follower's "
        "included, so the followers store flagged tombstones without their values and lose "
        "them for good once one of them leads.",
    ),
)

FAULTS: Mapping[str, Fault] = MappingProxyType({fault.name: fault for fault in _ALL})
assert len(FAULTS) == len(_ALL), "duplicate fault name"

_BOUND: dict[str, frozenset[str]] = {}


def names() -> tuple[str, ...]:
    """Every registered fault name, in registry order."""
    return tuple(FAULTS)


def bind(log_dir: str | Path, configured: object) -> frozenset[str]:
    """Bind ``log_dir``'s storage objects to the faults ``configured`` enables.

    ``configured`` is a BrokerConfig (or a broker); the broker calls this once
    it is built, so a restart on the same directory re-binds it.
    """
    found = enabled(configured)
    key = _key(Path(log_dir))
    if found:
        _BOUND[key] = found
    else:
        _BOUND.pop(key, None)
    return found


def enabled(scope: object) -> frozenset[str]:
    """The faults active for ``scope`` (see the module docstring)."""
    config = getattr(scope, "config", scope)
    values = getattr(config, "values", None)
    if callable(values):
        listed = values().get(CONFIG_NAME, ())
        return frozenset(listed) if isinstance(listed, tuple) else frozenset()
    if not _BOUND:
        return frozenset()
    directory = _log_dir_of(scope)
    return _BOUND.get(_key(directory), frozenset()) if directory is not None else frozenset()


def active(scope: object, name: str) -> bool:
    """Whether fault ``name`` is on where ``scope`` lives; KeyError for an unknown name."""
    if name not in FAULTS:
        raise KeyError(f"unknown fault {name!r}")
    return name in enabled(scope)


def _log_dir_of(scope: object) -> Path | None:
    if isinstance(scope, str):  # <log dir>/<topic>-<partition>/<file>
        return Path(scope).parent.parent
    log_dir = getattr(scope, "log_dir", None)
    if isinstance(log_dir, Path):
        return log_dir
    directory = getattr(scope, "directory", None)
    if isinstance(directory, Path):
        return directory.parent
    return None


def _key(path: Path) -> str:
    return os.path.abspath(path)
