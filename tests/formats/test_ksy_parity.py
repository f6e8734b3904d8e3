"""Triple parity: Kaitai specs, Construct schemas and the fast path agree on every fixture file.

Each file under fixtures/ (the golden set from real Kafka and the generated
logs under fixtures/logs/, picked up automatically as they appear) is decoded
by the three independent definitions of the format:

* Kaitai: the compiled ``.ksy`` specs through ``lethe_formats.ksy.adapter``;
* Construct: ``lethe_formats.records.log.decode_log`` and the
  ``lethe_formats.storage`` readers;
* fast path: ``lethe_formats.records.scan.read_log`` (segments only).

They must give equal model values, or, for a deliberately broken file, fail
with the same error class.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest_ksy import (
    LEADER_EPOCH_CHECKPOINT,
    OFFSET_CHECKPOINTS,
    PARTITION_METADATA,
    kaitai_specs,
    relative_id,
)
from lethe_formats.errors import FormatError
from lethe_formats.fixtures import fixtures_root
from lethe_formats.ksy import KaitaiSpecs, adapter, adapter_files
from lethe_formats.records.log import decode_log
from lethe_formats.records.scan import read_log
from lethe_formats.storage.checkpoint import (
    read_leader_epoch_checkpoint,
    read_offset_checkpoint,
)
from lethe_formats.storage.index import read_offset_index, read_time_index
from lethe_formats.storage.partition_metadata import read_partition_metadata
from lethe_formats.storage.txn_index import read_txn_index

__all__ = ["kaitai_specs"]
pytestmark = pytest.mark.kaitai

ROOT = fixtures_root()
_SEGMENT = re.compile(r"^\d{20}\.(?P<kind>log|index|timeindex|txnindex)$")


def _fixture_files() -> dict[str, list[Path]]:
    """Every file of a kind the specs cover, anywhere under fixtures/."""
    kinds: dict[str, list[Path]] = {
        "log": [],
        "index": [],
        "timeindex": [],
        "txnindex": [],
        "offset-checkpoint": [],
        "leader-epoch-checkpoint": [],
        "partition-metadata": [],
    }
    for path in sorted(ROOT.rglob("*")):
        if not path.is_file():
            continue
        match = _SEGMENT.match(path.name)
        if match is not None:
            kinds[match.group("kind")].append(path)
        elif path.name in OFFSET_CHECKPOINTS:
            kinds["offset-checkpoint"].append(path)
        elif path.name == LEADER_EPOCH_CHECKPOINT:
            kinds["leader-epoch-checkpoint"].append(path)
        elif path.name == PARTITION_METADATA:
            kinds["partition-metadata"].append(path)
    return kinds


FILES = _fixture_files()


def outcome(decode: Callable[[], Any]) -> tuple[str, Any]:
    """("ok", value) or ("error", error class name): what parity compares."""
    try:
        return "ok", decode()
    except FormatError as error:
        return "error", type(error).__name__


def test_fixture_discovery_finds_the_golden_set() -> None:
    golden = {kind: [p for p in paths if "golden" in p.parts] for kind, paths in FILES.items()}
    assert len(golden["log"]) == 41
    assert len(golden["index"]) == 40 and len(golden["timeindex"]) == 40
    assert len(golden["txnindex"]) == 2
    assert len(golden["partition-metadata"]) == 15


@pytest.mark.parametrize("path", FILES["log"], ids=relative_id)
def test_log_segments_decode_identically_in_all_three_decoders(
    kaitai_specs: KaitaiSpecs, path: Path
) -> None:
    data = path.read_bytes()
    kaitai = outcome(lambda: adapter.decode_log(kaitai_specs, data, file=str(path)))
    construct = outcome(lambda: decode_log(data, file=str(path)))
    fast = outcome(lambda: list(read_log(data, file=str(path))))
    assert kaitai == construct
    assert kaitai == fast


@pytest.mark.parametrize("path", FILES["index"], ids=relative_id)
def test_offset_indexes_decode_identically(kaitai_specs: KaitaiSpecs, path: Path) -> None:
    data = path.read_bytes()
    kaitai = outcome(lambda: adapter_files.decode_offset_index(kaitai_specs, data))
    construct = outcome(lambda: list(read_offset_index(data, stop_at_zero_entry=False)))
    assert kaitai == construct


@pytest.mark.parametrize("path", FILES["timeindex"], ids=relative_id)
def test_time_indexes_decode_identically(kaitai_specs: KaitaiSpecs, path: Path) -> None:
    data = path.read_bytes()
    kaitai = outcome(lambda: adapter_files.decode_time_index(kaitai_specs, data))
    construct = outcome(lambda: list(read_time_index(data, stop_at_zero_entry=False)))
    assert kaitai == construct


@pytest.mark.parametrize("path", FILES["txnindex"], ids=relative_id)
def test_txn_indexes_decode_identically(kaitai_specs: KaitaiSpecs, path: Path) -> None:
    data = path.read_bytes()
    kaitai = outcome(lambda: adapter_files.decode_txn_index(kaitai_specs, data))
    construct = outcome(lambda: list(read_txn_index(data)))
    assert kaitai == construct


@pytest.mark.parametrize("path", FILES["offset-checkpoint"], ids=relative_id)
def test_offset_checkpoints_decode_identically(kaitai_specs: KaitaiSpecs, path: Path) -> None:
    data = path.read_bytes()
    kaitai = outcome(lambda: adapter_files.decode_offset_checkpoint(kaitai_specs, data))
    storage = outcome(lambda: [tuple(e) for e in read_offset_checkpoint(data).entries])
    assert kaitai == storage


@pytest.mark.parametrize("path", FILES["leader-epoch-checkpoint"], ids=relative_id)
def test_leader_epoch_checkpoints_decode_identically(kaitai_specs: KaitaiSpecs, path: Path) -> None:
    data = path.read_bytes()
    kaitai = outcome(lambda: adapter_files.decode_leader_epoch_checkpoint(kaitai_specs, data))
    storage = outcome(lambda: [tuple(e) for e in read_leader_epoch_checkpoint(data).entries])
    assert kaitai == storage


@pytest.mark.parametrize("path", FILES["partition-metadata"], ids=relative_id)
def test_partition_metadata_decodes_identically(kaitai_specs: KaitaiSpecs, path: Path) -> None:
    data = path.read_bytes()

    def storage() -> tuple[int, str]:
        metadata = read_partition_metadata(data)
        return metadata.version, str(metadata.topic_id)

    kaitai = outcome(lambda: adapter_files.decode_partition_metadata(kaitai_specs, data))
    assert kaitai == outcome(storage)
