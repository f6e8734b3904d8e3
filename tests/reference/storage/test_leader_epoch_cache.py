"""Leader-epoch cache rules (LeaderEpochFileCache) and its checkpoint file (kafka-facts 1.4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lethe_reference.storage.errors import KafkaStorageError
from lethe_reference.storage.leader_epoch import LeaderEpochCache


def _cache(tmp_path: Path, *entries: tuple[int, int]) -> LeaderEpochCache:
    cache = LeaderEpochCache.load(tmp_path)
    for epoch, start in entries:
        cache.assign(epoch, start)
    return cache


def test_the_same_epoch_is_assigned_once(tmp_path: Path) -> None:
    cache = _cache(tmp_path, (0, 0))
    assert not cache.assign(0, 5)
    assert cache.entries == ((0, 0),)


def test_a_new_entry_drops_entries_that_are_not_below_it(tmp_path: Path) -> None:
    cache = _cache(tmp_path, (0, 0), (2, 10), (3, 20))
    cache.assign(2, 15)  # epoch 2 restarts later: entries with epoch >= 2 or start >= 15 go
    assert cache.entries == ((0, 0), (2, 15))
    cache.assign(4, 5)
    assert cache.entries == ((0, 0), (4, 5))


def test_negative_epochs_or_offsets_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        _cache(tmp_path, (-1, 0))


def test_truncating_from_the_start_moves_the_surviving_epoch_to_the_new_start(
    tmp_path: Path,
) -> None:
    cache = _cache(tmp_path, (0, 0), (1, 10), (2, 20))
    cache.truncate_from_start(15)
    assert cache.entries == ((1, 15), (2, 20))
    cache.truncate_from_start(5)  # nothing at or below 5 any more
    assert cache.entries == ((1, 15), (2, 20))
    assert (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n2\n1 15\n2 20\n"


def test_truncating_from_the_end(tmp_path: Path) -> None:
    cache = _cache(tmp_path, (0, 0), (1, 10), (2, 20))
    cache.truncate_from_end(20)
    assert cache.entries == ((0, 0), (1, 10))


def test_epoch_for_offset(tmp_path: Path) -> None:
    cache = _cache(tmp_path, (1, 10), (3, 20))
    assert [cache.epoch_for_offset(o) for o in (5, 10, 19, 20, 99)] == [None, 1, 1, 3, 3]


def test_end_offset_for_an_epoch(tmp_path: Path) -> None:
    cache = _cache(tmp_path, (1, 10), (3, 20))
    assert cache.end_offset_for(3, 42) == (3, 42)  # latest epoch: the LEO
    assert cache.end_offset_for(2, 42) == (1, 20)  # floor epoch, next epoch's start
    assert cache.end_offset_for(0, 42) == (0, 10)
    assert cache.end_offset_for(4, 42) == (-1, -1)
    assert cache.end_offset_for(-1, 42) == (-1, -1)


def test_the_checkpoint_survives_a_reload(tmp_path: Path) -> None:
    _cache(tmp_path, (0, 0), (5, 7))
    assert LeaderEpochCache.load(tmp_path).entries == ((0, 0), (5, 7))


def test_a_malformed_checkpoint_is_a_storage_error(tmp_path: Path) -> None:
    (tmp_path / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n")
    with pytest.raises(KafkaStorageError) as caught:
        LeaderEpochCache.load(tmp_path)
    assert caught.value.error_code == 56
