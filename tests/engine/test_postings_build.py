"""The first index's array builders, which save memory, give what plain counting gives.

Postings are built from term rows packed one int64 a row, fed part by part (each part let go
once packed) and summed without a float copy when no (file, term, field) repeats; a
declaration's length is summed without an int64 copy of every unit row. Each is compared
with a dictionary that counts the same rows one by one.
"""

from __future__ import annotations

import tracemalloc
from collections import defaultdict
from itertools import pairwise

import numpy as np
import pytest

from engine.index import (
    COUNT_CEILING,
    TermRows,
    _build_postings_wide,
    build_postings,
    pack_rows,
    postings_of_packed,
)
from engine.model import FIELDS, Postings
from engine.units import unit_lengths


def random_rows(seed: int, n_docs: int, n_terms: int, rows: int, repeats: bool) -> TermRows:
    """Rows of random files, terms, fields and counts (some past the count ceiling)."""
    rng = np.random.default_rng(seed)
    keys = rng.choice(n_docs * n_terms * len(FIELDS), size=rows, replace=repeats)
    counts = rng.integers(1, 40, size=rows)
    counts[rng.random(rows) < 0.05] = COUNT_CEILING + 7
    return TermRows(
        (keys // len(FIELDS) % n_docs).astype(np.int32),
        (keys // len(FIELDS) // n_docs).astype(np.int32),
        (keys % len(FIELDS)).astype(np.int8),
        counts.astype(np.int32),
    )


def counted(rows: TermRows) -> dict[tuple[int, int], list[int]]:
    """(term, file) -> per-field counts, each row clamped, then summed and clamped."""
    tf: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0] * len(FIELDS))
    for doc, term, field, count in zip(
        rows.docs.tolist(), rows.terms.tolist(), rows.fields.tolist(), rows.counts.tolist(),
        strict=True,
    ):  # fmt: skip
        cell = tf[(term, doc)]
        cell[field] = min(cell[field] + min(count, COUNT_CEILING), COUNT_CEILING)
    return tf


def as_dict(postings: Postings) -> dict[tuple[int, int], list[int]]:
    ptr = postings.ptr.tolist()
    return {
        (term, doc): postings.tf[i].tolist()
        for term in range(len(ptr) - 1)
        for i, doc in zip(
            range(ptr[term], ptr[term + 1]),
            postings.docs[ptr[term] : ptr[term + 1]].tolist(),
            strict=True,
        )
    }


@pytest.mark.parametrize("repeats", [False, True], ids=["distinct", "repeated"])
def test_packed_postings_count_the_rows(repeats: bool) -> None:
    rows = random_rows(seed=3, n_docs=37, n_terms=150, rows=4000, repeats=repeats)
    postings, _ = build_postings(rows, n_docs=37, n_terms=150)
    assert as_dict(postings) == counted(rows)
    assert postings.docs.dtype == np.int32 and postings.tf.dtype == np.uint16
    wide, _ = _build_postings_wide(rows, 37, 150)
    assert np.array_equal(wide.ptr, postings.ptr) and np.array_equal(wide.docs, postings.docs)
    assert np.array_equal(wide.tf, postings.tf)


def test_rows_packed_part_by_part_give_the_same_postings() -> None:
    rows = random_rows(seed=5, n_docs=20, n_terms=90, rows=1500, repeats=True)
    whole, _ = build_postings(rows, n_docs=20, n_terms=90)
    cuts = [0, 1, 700, 700, 1500]
    parts = [
        (rows.docs[a:b], rows.terms[a:b], rows.fields[a:b], rows.counts[a:b])
        for a, b in pairwise(cuts)
    ]
    packed = pack_rows(parts, n_docs=20, total=1500)
    assert parts == []  # each part let go once packed
    split = postings_of_packed(packed, n_docs=20, n_terms=90)
    assert np.array_equal(split.ptr, whole.ptr) and np.array_equal(split.docs, whole.docs)
    assert np.array_equal(split.tf, whole.tf)


def test_unit_lengths_sum_header_and_body_words_of_each_declaration() -> None:
    tf = np.array([[1, 2, 3], [0, 255, 255], [4, 0, 1], [9, 9, 9], [0, 1, 0]], dtype=np.uint8)
    # declarations with no rows at the start, in the middle and at the end
    row_ptr = np.array([0, 0, 2, 2, 3, 5, 5, 5], dtype=np.int64)
    expected = [float(tf[a:b, 1].sum() + tf[a:b, 2].sum()) for a, b in pairwise(row_ptr)]
    lengths = unit_lengths(row_ptr, tf)
    assert lengths.dtype == np.float32 and lengths.tolist() == expected == [0, 515, 0, 1, 19, 0, 0]
    assert unit_lengths(np.zeros(3, dtype=np.int64), np.zeros((0, 3), np.uint8)).tolist() == [0, 0]


@pytest.mark.parametrize("block", [1, 2, 3, 5])
def test_unit_lengths_summed_a_block_of_declarations_at_a_time_are_the_same(
    monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """The sums are made a block of declarations at a time (no int64 copy of every row);
    a block may start or end on declarations with no rows, or hold only such."""
    monkeypatch.setattr("engine.units.UNIT_SUM_BLOCK", block)
    tf = np.array([[1, 2, 3], [0, 255, 255], [4, 0, 1], [9, 9, 9], [0, 1, 0]], dtype=np.uint8)
    row_ptr = np.array([0, 0, 2, 2, 3, 5, 5, 5], dtype=np.int64)
    assert unit_lengths(row_ptr, tf).tolist() == [0, 515, 0, 1, 19, 0, 0]
    rows = np.array([0, 0, 0, 1, 1, 4, 4, 5], dtype=np.int64)  # empty ones, then the rest
    expected = [float(tf[a:b, 1].sum() + tf[a:b, 2].sum()) for a, b in pairwise(rows)]
    assert unit_lengths(rows, tf).tolist() == expected == [0, 0, 5, 0, 529, 0, 1]


def test_unit_lengths_make_no_int64_copy_of_every_row() -> None:
    """On the 5x scale tree's 17.6 M rows such a copy was 140 MB, the top of its index stage."""
    rows = 2_000_000
    tf = np.ones((rows, 3), dtype=np.uint8)
    row_ptr = np.arange(0, rows + 1, 4, dtype=np.int64)  # 500,000 declarations of 4 rows
    tracemalloc.start()
    try:
        lengths = unit_lengths(row_ptr, tf)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lengths.tolist() == [8.0] * (rows // 4)
    # the uint16 words (4 MB), the sums (4 MB) and their float32 copy (2 MB), a block of
    # rows at a time: less than one int64 a row (16 MB; 24 MB at the top before)
    assert peak < rows * 8


def test_the_heap_is_handed_back_while_many_parts_are_packed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import engine.index

    rows = random_rows(seed=7, n_docs=20, n_terms=90, rows=1500, repeats=False)
    whole, _ = build_postings(rows, n_docs=20, n_terms=90)
    handed_back: list[int] = []
    monkeypatch.setattr(engine.index, "GIVE_BACK_EVERY", 4)
    monkeypatch.setattr(engine.index, "give_back_memory", lambda: handed_back.append(1))
    parts = [
        (rows.docs[a : a + 100], rows.terms[a : a + 100], rows.fields[a : a + 100],
         rows.counts[a : a + 100])
        for a in range(0, 1500, 100)
    ]  # fmt: skip
    split = postings_of_packed(pack_rows(parts, n_docs=20, total=1500), n_docs=20, n_terms=90)
    assert len(handed_back) == 15 // 4  # every 4 parts of 15
    assert np.array_equal(split.ptr, whole.ptr) and np.array_equal(split.docs, whole.docs)
    assert np.array_equal(split.tf, whole.tf)
