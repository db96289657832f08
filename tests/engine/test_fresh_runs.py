"""Fresh keeps each file's small arrays in shared chunks (`Runs`) and gives them back as they
were kept, letting each chunk go once it is passed."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import numpy as np
import pytest

import engine.fresh
from engine.fresh import Runs


def keep(runs: Runs, run: np.ndarray) -> None:
    """Keep one run on its own (a call a run)."""
    runs.extend(run, [len(run)])


def test_runs_come_back_in_order_whatever_their_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.fresh, "CHUNK_ITEMS", 8)
    runs = Runs("int32")
    given = [np.arange(n, dtype=np.int32) + 100 * n for n in (3, 0, 5, 20, 2, 6, 1)]
    for run in given:
        keep(runs, run)
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
        keep(runs, run)
    assert runs.rows() == [2, 0, 4, 1]
    for taken, run in zip(runs.take(), given, strict=True):
        assert taken.shape == run.shape and np.array_equal(taken, run)


def test_a_chunk_is_let_go_once_its_runs_are_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine.fresh, "CHUNK_ITEMS", 4)
    runs = Runs("int32")
    for n in (4, 4, 4):  # one chunk each
        keep(runs, np.full(n, n, dtype=np.int32))
    first = weakref.ref(runs._chunks[0])
    taking = runs.take()
    next(taking)
    assert first() is not None  # its run is being read
    next(taking)
    gc.collect()
    assert first() is None


def _runs(width: int) -> list[np.ndarray]:
    """Runs of 0 to 20 rows of `width` items, each row's items distinct across runs."""
    rows = [3, 0, 5, 20, 2, 6, 1, 0, 8, 4]
    return [np.arange(width * n, dtype=np.int32).reshape(-1, width) + 100 * n for n in rows]


@pytest.mark.parametrize("width", [1, 3])
def test_runs_kept_at_once_lie_as_if_kept_one_by_one(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    monkeypatch.setattr(engine.fresh, "CHUNK_ITEMS", 8 * width)
    given = _runs(width)
    rows = [len(run) for run in given]
    one_by_one, at_once = Runs("int32", width), Runs("int32", width)
    for run in given:
        keep(one_by_one, run)
    keep(at_once, given[0])  # a batch after a run already kept
    at_once.extend(np.concatenate(given[1:5]), rows[1:5])
    at_once.extend(np.concatenate(given[5:]), rows[5:])
    assert at_once._where == one_by_one._where
    assert [len(c) for c in at_once._chunks] == [len(c) for c in one_by_one._chunks]
    assert at_once.rows() == rows
    for taken, run in zip(at_once.take(), given, strict=True):
        assert np.array_equal(taken.reshape(-1, width), run)


def test_vocabulary_numbers_new_words_after_the_known_ones_in_their_order() -> None:
    from engine.index import Vocabulary

    vocabulary = Vocabulary.of(["alpha", "beta"])
    assert vocabulary.add_all(["gamma", "beta", "delta", "gamma"]) == [2, 1, 3, 2]
    assert vocabulary.words == ["alpha", "beta", "gamma", "delta"]
    assert vocabulary.ids == {"alpha": 0, "beta": 1, "gamma": 2, "delta": 3}
    assert vocabulary.add_all([]) == []


def test_term_rows_wait_with_their_counts_clamped_to_two_bytes(tmp_path: Path) -> None:
    """While files arrive their term counts are kept as the postings store them (uint16,
    clamped): a word said 70,000 times posts 65,535, and the body still counts all of it."""
    from engine.analyse import Analyser, analyse_batch
    from engine.fresh import Fresh
    from engine.index import COUNT_CEILING
    from engine.indexer import build_index
    from engine.model import SourceFile
    from engine.tokens import load_tokenizer

    text = "spam(spam, spam, spam, spam, spam, spam)\n" * 10_000 + "eggs()\n"
    (tmp_path / "notes.py").write_text(text, encoding="utf-8")
    batch = analyse_batch(
        str(tmp_path),
        [SourceFile("notes.py", len(text), 0, "python")],
        Analyser.create(load_tokenizer("o200k_base")),
    )
    fresh = Fresh()
    fresh.add_batch(batch.analysed, np.arange(len(batch.words), dtype=np.int32))
    ((_, terms, _, counts),) = list(fresh.take_rows())
    assert counts.dtype == np.uint16
    said = dict(zip((batch.words[t] for t in terms.tolist()), counts.tolist(), strict=True))
    assert said["spam"] == COUNT_CEILING and said["egg"] == 1
    index, _ = build_index(tmp_path, workers=1)
    spam = index.vocab["spam"]
    postings = index.postings
    row = int(postings.ptr[spam])
    assert int(postings.tf[row].max()) == COUNT_CEILING
    assert float(index.body_length[0]) == 70_001.0


@pytest.mark.parametrize("width", [1, 3])
def test_packed_runs_wait_compressed_and_come_back_the_same(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    monkeypatch.setattr(engine.fresh, "CHUNK_ITEMS", 8 * width)
    given = _runs(width)
    plain, packed = Runs("int32", width), Runs("int32", width)
    packed.pack = True
    for run in given:
        keep(plain, run)
        keep(packed, run)
    assert packed._where == plain._where
    assert all(isinstance(c, engine.fresh.Packed) for c in packed._chunks[:-1])
    assert isinstance(packed._chunks[-1], np.ndarray)  # the one being filled
    for taken, run in zip(packed.take(), given, strict=True):
        assert np.array_equal(taken.reshape(-1, width), run)


def test_a_compressed_wait_gives_the_same_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above COMPRESS_FROM_FILES what waits for the index stage is compressed; the index
    saved is the same to the byte."""
    import engine.indexer
    from engine.indexer import build_index
    from engine.store import cache_file

    monkeypatch.setattr(engine.fresh, "CHUNK_ITEMS", 64)  # many chunks, most compressed
    root = tmp_path / "repo"
    for i in range(12):
        (root / f"pkg{i % 3}").mkdir(parents=True, exist_ok=True)
        (root / f"pkg{i % 3}" / f"mod{i}.py").write_text(
            f'"""Module {i}."""\n\nimport os\n\n\ndef handle_request_{i}(path):\n'
            f'    """Handle one request."""\n    return os.path.join(path, "x{i}") * {i}\n'
            + "".join(f"\n\ndef helper_{i}_{k}():\n    return {k}\n" for k in range(i)),
            encoding="utf-8",
        )
    saved = []
    for threshold in (10**9, 0):
        monkeypatch.setattr(engine.indexer, "COMPRESS_FROM_FILES", threshold)
        cache = tmp_path / f"cache-{threshold}"
        build_index(root, cache_dir=cache, workers=1)
        saved.append(cache_file(cache, "o200k_base").read_bytes())
    assert saved[0] == saved[1]
