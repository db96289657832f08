"""Fresh keeps each file's small arrays in shared chunks (`Runs`) and gives them back as they
were appended, letting each chunk go once it is passed."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import engine.fresh
from engine.fresh import Runs


def test_runs_come_back_in_order_whatever_their_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.fresh, "CHUNK_ITEMS", 8)
    runs = Runs("int32")
    given = [np.arange(n, dtype=np.int32) + 100 * n for n in (3, 0, 5, 20, 2, 6, 1)]
    for run in given:
        runs.append(run)
    assert len(runs) == len(given) and runs.rows() == [3, 0, 5, 20, 2, 6, 1]
    taken = list(runs.take())
    assert [t.tolist() for t in taken] == [g.tolist() for g in given]
    assert all(t.dtype == np.int32 for t in taken)
    assert len(runs) == 0 and list(runs.take()) == []  # taken once


def test_runs_of_rows_keep_their_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.fresh, "CHUNK_ITEMS", 10)
    runs = Runs("uint8", 3)
    given = [np.arange(3 * n, dtype=np.uint8).reshape(-1, 3) for n in (2, 0, 4, 1)]
    for run in given:
        runs.append(run)
    assert runs.rows() == [2, 0, 4, 1]
    for taken, run in zip(runs.take(), given, strict=True):
        assert taken.shape == run.shape and np.array_equal(taken, run)


def test_a_chunk_is_let_go_once_its_runs_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.fresh, "CHUNK_ITEMS", 4)
    runs = Runs("int32")
    for n in (4, 4, 4):  # one chunk each
        runs.append(np.full(n, n, dtype=np.int32))
    first = weakref.ref(runs._chunks[0])
    taking = runs.take()
    next(taking)
    assert first() is not None  # its run is being read
    next(taking)
    gc.collect()
    assert first() is None
