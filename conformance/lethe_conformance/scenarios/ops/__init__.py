"""Scenario ops, one function each, registered by name in ``registry.OPS``.

``messages``    produce, delete_records, list_offsets, fetch, commit_offsets,
                fetch_offsets, alter_configs, describe_configs
``files``       check_files (log-dir targets)
``control``     advance_time, wait, restart, trigger_cleaning
``passes``      await_retention_pass (wall clock: a whole retention pass ran)
``cluster``     pause_fetching, resume_fetching, move_leader, stop_broker, start_broker,
                send_delete_records, expect_pending, await_response (cluster-control)
``partitions``  the per-partition judging the multi-partition ops share
``log_dir``     restart_with_files (edit-log-dir targets)
``partition_counts`` delete_partitions (KIP-694), create_partitions, metadata,
                describe_broker_configs
``groups``      offset_delete, delete_groups
``raw``         raw_request (hand-made bytes; did the target answer or close?)
``acls``        create_acls (capability principals; any step may run as a role)
``failures``    inject_failure (capability inject-failure)
``transactions`` init_transactions, begin/commit/abort_transaction, produce in a
                transaction, send_offsets_to_transaction, describe/list_transactions,
                write_txn_markers

Importing this package registers every op.
"""

from lethe_conformance.scenarios.ops import (
    acls,
    cluster,
    control,
    failures,
    files,
    groups,
    log_dir,
    messages,
    partition_counts,
    passes,
    raw,
    transactions,
)
from lethe_conformance.scenarios.ops.control import WaitExpiredError
from lethe_conformance.scenarios.ops.registry import OPS, Op

__all__ = [
    "OPS",
    "Op",
    "WaitExpiredError",
    "acls",
    "cluster",
    "control",
    "failures",
    "files",
    "groups",
    "log_dir",
    "messages",
    "partition_counts",
    "passes",
    "raw",
    "transactions",
]
