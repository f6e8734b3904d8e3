"""Deterministic fixture log directories, generated from data specs.

Pipeline (each stage a module, each pure until the last)::

    specs/<name>.json --load--> LogDirSpec --logdir--> FileTree --build--> disk / --check
                      (schema + rules)      (encode: builders,       (write or compare
                                             segment: Kafka's          byte for byte)
                                             append/roll/index rules,
                                             derive: checkpoints)

The segment writer is the part that must match Kafka; it is tested against
the golden segments Kafka 4.0 wrote (tests/tools/test_fixtures_build.py).
"""

from __future__ import annotations

from lethe_tools.fixturegen.build import (
    BuiltLogDir,
    CheckReport,
    build_specs,
    check_all,
    default_logs_root,
    find_spec_files,
    write_all,
)
from lethe_tools.fixturegen.load import load_spec, parse_spec, schema_path
from lethe_tools.fixturegen.logdir import build_log_dir
from lethe_tools.fixturegen.segment import PartitionLogWriter, SegmentContent
from lethe_tools.fixturegen.spec import LogDirSpec, SpecError

__all__ = [
    "BuiltLogDir",
    "CheckReport",
    "LogDirSpec",
    "PartitionLogWriter",
    "SegmentContent",
    "SpecError",
    "build_log_dir",
    "build_specs",
    "check_all",
    "default_logs_root",
    "find_spec_files",
    "load_spec",
    "parse_spec",
    "schema_path",
    "write_all",
]
