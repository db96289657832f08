"""The declarations' words inverted (engine.declaration_words) give the declaration share the
same numbers, bit for bit, as reading every row of the files: on a repository with odd
declarations (none, unicode names, one huge file), whole questions and typed prefixes, the
re-rank's candidates and every file; and a workspace inverts them once typing starts."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import make_repo
from index_support import index_repo
from test_rerank_speed import ODD, QUESTIONS, typed

from ctxtui.workspace import Workspace, keystrokes
from engine import Session
from engine.declaration_words import invert_declaration_words, rows_holding
from engine.index import idf
from engine.model import Index, UnitIndex
from engine.query import analyse_query
from engine.rank import DEFAULT_WEIGHTS, _score_vector
from engine.relevance import best_declaration_share, match_declarations, score_declarations
from engine.rerank import candidates


def question_weights(index: Index, text: str, complete: bool) -> tuple[np.ndarray, np.ndarray]:
    """(weight x idf per term id, the question's term ids), as the re-rank builds them."""
    analysis = analyse_query(index, text, DEFAULT_WEIGHTS.query_weights(), complete=complete)
    ptr = index.postings.ptr
    ids = np.array([t.term_id for t in analysis.terms], dtype=np.int64)
    value = np.array([t.weight for t in analysis.terms]) * idf(
        (ptr[ids + 1] - ptr[ids]).astype(np.float64), len(index.files)
    )
    by_term = np.zeros(len(ptr))
    np.add.at(by_term, ids, value)
    return by_term, ids


def shares_both_ways(index: Index, by_term: np.ndarray, files: np.ndarray, ids: np.ndarray):
    units = index.units
    assert units is not None
    words = units.words or invert_declaration_words(units)
    units.words = None
    by_rows = best_declaration_share(index, by_term, files)
    units.words = words
    try:
        return by_rows, [
            best_declaration_share(index, by_term, files, ids),
            best_declaration_share(index, by_term, files),  # the words looked up from weights
        ]
    finally:
        units.words = None


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return index_repo(make_repo(tmp_path_factory.mktemp("odd"), ODD))[0]


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_share_read_by_word_is_the_share_read_row_by_row(odd: Index, question: str) -> None:
    every_file = np.arange(len(odd.files), dtype=np.int64)
    for text, complete in typed(question):
        by_term, ids = question_weights(odd, text, complete)
        analysis = analyse_query(odd, text, DEFAULT_WEIGHTS.query_weights(), complete=complete)
        scores, _ = _score_vector(odd, analysis, DEFAULT_WEIGHTS, reranked=True)
        for files in (np.sort(candidates(scores, 30)), every_file, every_file[:1]):
            by_rows, by_words = shares_both_ways(odd, by_term, files, ids)
            for got in by_words:
                assert got.tobytes() == by_rows.tobytes(), (text, files.tolist())


def test_the_huge_file_holds_a_share_the_comparison_can_miss(odd: Index) -> None:
    by_term, ids = question_weights(odd, "handler_42 render request", True)
    huge = np.array([odd.path_ids["server/huge_views.py"]], dtype=np.int64)
    by_rows, by_words = shares_both_ways(odd, by_term, huge, ids)
    assert by_rows[0] > 0 and by_words[0].tobytes() == by_rows.tobytes()


def test_rows_holding_takes_each_word_once_and_skips_unknown_words() -> None:
    terms = np.array([3, 1, 3, 0, 1, 3], dtype=np.int32)
    ptr = np.arange(len(terms) + 1, dtype=np.int64)  # one row a declaration, one a file
    tf = np.ones((len(terms), 3), dtype=np.uint8)
    words = invert_declaration_words(UnitIndex(ptr, ptr, terms, tf, np.ones(len(terms))))
    assert words.rows.tolist() == [3, 1, 4, 0, 2, 5]
    starts, ends = np.array([0, 4], dtype=np.int64), np.array([3, 6], dtype=np.int64)
    got = rows_holding(words, np.array([3, 3, 99, -1, 2], dtype=np.int64), starts, ends)
    assert got.tolist() == [0, 2, 5]  # rows 0..2 and 4..5 holding word 3, each once
    assert rows_holding(words, np.zeros(0, dtype=np.int64), starts, ends).tolist() == []


def test_no_declaration_at_all_inverts_to_nothing(tmp_path: Path) -> None:
    index = index_repo(make_repo(tmp_path / "plain", {"notes.txt": "just text\n"}))[0]
    assert index.units is not None
    words = invert_declaration_words(index.units)
    assert len(words.rows) == 0
    by_term, ids = question_weights(index, "just text", True)
    files = np.arange(len(index.files), dtype=np.int64)
    by_rows, by_words = shares_both_ways(index, by_term, files, ids)
    assert by_rows.tolist() == [0.0] and by_words[0].tolist() == [0.0]


def test_a_workspace_inverts_the_words_once_typing_starts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "odd", ODD)
    workspace = Workspace.open(repo, semantic=False)
    units = workspace.index.units
    assert units is not None
    workspace.rank("render the page", Session(), complete=True)
    assert units.words is None  # a whole question (a command) builds nothing
    workspace.rank("render the p", Session(), complete=False)
    assert units.words is None  # the first keystroke ranking: the app's opening list
    workspace.rank("render the pa", Session(), complete=False)
    deadline = time.monotonic() + 30
    while units.words is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert units.words is not None
    typed_after = workspace.rank("session cookie ren", Session(), complete=False)
    fresh = Workspace.open(repo, semantic=False)  # the same index reopened: nothing inverted
    assert fresh.index.units is not None and fresh.index.units.words is None
    by_rows = fresh.rank("session cookie ren", Session(), complete=True)
    assert fresh.index.units.words is None
    again = workspace.rank("session cookie ren", Session(), complete=True)
    assert [(f.path, f.score) for f in again.files] == [(f.path, f.score) for f in by_rows.files]
    assert typed_after.files


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a nice value per thread")
def test_the_words_are_inverted_in_a_thread_that_gives_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, int]] = []

    def record(units: UnitIndex) -> None:
        own = threading.get_native_id()
        seen.append((own, os.getpriority(os.PRIO_PROCESS, own)))

    monkeypatch.setattr(keystrokes, "_invert", record)
    workspace = Workspace.open(make_repo(tmp_path / "odd", ODD), semantic=False)
    here = threading.get_native_id()
    before = os.getpriority(os.PRIO_PROCESS, here)
    workspace.rank("render the p", Session(), complete=False)
    workspace.rank("render the pa", Session(), complete=False)
    deadline = time.monotonic() + 30
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    assert seen and seen[0][0] != here
    assert seen[0][1] == max(before, keystrokes.BACKGROUND_NICE)
    # only that thread: the one that types (and the process's others) keep their priority
    assert os.getpriority(os.PRIO_PROCESS, here) == before


def test_bench_inverts_before_it_times_keystrokes(tmp_path: Path) -> None:
    workspace = Workspace.open(make_repo(tmp_path / "odd", ODD), semantic=False)
    workspace.prepare_typing()
    assert workspace.index.units is not None and workspace.index.units.words is not None


@pytest.mark.parametrize("question", QUESTIONS)
def test_declarations_score_the_same_read_by_word(odd: Index, question: str) -> None:
    units = odd.units
    assert units is not None
    words = invert_declaration_words(units)
    every_file = list(range(len(odd.files)))
    for text, complete in typed(question):
        analysis = analyse_query(odd, text, DEFAULT_WEIGHTS.query_weights(), complete=complete)
        terms = [(t.term_id, t.weight) for t in analysis.terms]
        answers = []
        for inverted in (None, words):
            units.words = inverted
            try:
                answers.append(
                    (
                        score_declarations(odd, terms, every_file),
                        match_declarations(odd, terms, every_file),
                    )
                )
            finally:
                units.words = None
        assert answers[0] == answers[1], text  # floats compared exactly
    if question == QUESTIONS[0]:
        assert len(answers[0][0]) >= 2  # not vacuous: several files' declarations score
