"""The log dir's JSON state files: an unreadable one is kept aside, never overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_reference.cluster.state_files import read_json_list, write_json


def test_saved_list_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "client-quotas.json"
    write_json(path, [{"entity": "user", "value": 1.5}])
    assert read_json_list(path) == [{"entity": "user", "value": 1.5}]
    assert read_json_list(tmp_path / "absent.json") == []


@pytest.mark.parametrize("content", [b"{not json", b'{"a": 1}', b"\xff\xfe"])
def test_unreadable_file_is_set_aside_with_its_bytes(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "scram-credentials.json"
    path.write_bytes(content)
    assert read_json_list(path) == []
    assert not path.exists()
    assert (tmp_path / "scram-credentials.json.unreadable").read_bytes() == content
    write_json(path, [1])  # the next save does not touch what was set aside
    assert (tmp_path / "scram-credentials.json.unreadable").read_bytes() == content
    path.write_bytes(b"[")
    assert read_json_list(path) == []
    assert (tmp_path / "scram-credentials.json.unreadable.1").read_bytes() == b"["
