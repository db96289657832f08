"""The re-rank's features computed the fast way are the slow way's numbers bit for bit: the
words' shares of every candidate in one table (engine.rerank._shares) against the word-by-word
loop it replaced, on a repository with odd declarations (none, unicode names, one huge file),
for whole questions and the prefixes a user types."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_repo
from index_support import index_repo

from engine.index import idf
from engine.model import FIELDS, Index
from engine.query import QueryAnalysis, analyse_query
from engine.rank import DEFAULT_WEIGHTS, _score_vector
from engine.rerank import Signals, _shares, candidates

HUGE = "".join(
    f"def handler_{i}(request, session):\n    return render(request, 'page_{i % 7}', {i})\n\n"
    for i in range(1500)
)
ODD: dict[str, str | bytes] = {
    "server/huge_views.py": HUGE,
    "server/session.py": (
        "class Session:\n"
        '    """A login session: its cookie and its user."""\n'
        "    def cookie(self, request):\n        return request.cookies['session']\n"
    ),
    "ünïcode/café.py": "def café_session(ünï):\n    return ünï\n\nclass Naïve:\n    pass\n",
    "data/request_log.txt": "request session request render page\n" * 40,
    "README.md": "# Server\n\nRender a page for a request; sessions live in a cookie.\n",
    "empty.py": "",
    "config/settings.toml": "session = 'cookie'\nrender = true\n",
}
QUESTIONS = (
    "render the page for a request",
    "fix(server): session cookie is lost on render",
    "session session cookie café",
    "Naïve ünï",
    "handler_42 render request page session cookie user login",
    "nothing here matches",
    "",
)


def word_by_word(
    index: Index, analysis: QueryAnalysis, signals: Signals, top: np.ndarray
) -> tuple[np.ndarray, ...]:
    """The loop engine.rerank.features ran before (session 23), word by word, in `top` order."""
    k, n, ptr = len(top), len(index.files), index.postings.ptr
    order = np.argsort(top, kind="stable")
    sorted_top = top[order]
    weight_only, weighted, scope_path, rarest = np.zeros(k), np.zeros(k), np.zeros(k), np.zeros(k)
    by_field = np.zeros((k, len(FIELDS)))
    rarest_question = total_weight = total_idf = total_scope = 0.0
    by_term = np.zeros(len(ptr), dtype=np.float64)
    for term in analysis.terms:
        df = float(ptr[term.term_id + 1] - ptr[term.term_id])
        term_idf = float(idf(np.array([df]), n)[0])
        value = term.weight * term_idf
        rarest_question = max(rarest_question, term_idf)
        by_term[term.term_id] += value
        total_weight += term.weight
        total_idf += value
        total_scope += value if term.scope else 0.0
        hits = signals.per_term.get(term.term_id)
        if hits is None or len(hits.docs) == 0:
            continue
        at = np.searchsorted(hits.docs, sorted_top)
        found = at < len(hits.docs)
        found[found] = hits.docs[at[found]] == sorted_top[found]
        rows = order[found]
        tf = hits.tf[at[found]]
        weight_only[rows] += term.weight
        weighted[rows] += value
        rarest[rows] = np.maximum(rarest[rows], term_idf)
        by_field[rows] += (tf > 0) * value
        if term.scope:
            scope_path[rows] += ((tf[:, 0] > 0) | (tf[:, 1] > 0)) * value
    totals = np.array([total_weight, total_idf, total_scope, rarest_question])
    return weight_only, weighted, by_field, scope_path, rarest, by_term, totals


def typed(question: str) -> list[tuple[str, bool]]:
    """The question as typed, a few characters at a time, then whole."""
    return [(question[:end], False) for end in range(1, len(question), 4)] + [(question, True)]


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return index_repo(make_repo(tmp_path_factory.mktemp("odd"), ODD))[0]


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_shares_of_all_words_at_once_are_the_word_by_word_loops(
    odd: Index, question: str
) -> None:
    weights = DEFAULT_WEIGHTS.query_weights()
    for text, complete in typed(question):
        analysis = analyse_query(odd, text, weights, complete=complete)
        scores, signals = _score_vector(odd, analysis, DEFAULT_WEIGHTS, reranked=True)
        for depth in (2, 30, 50):
            top = candidates(scores, depth)
            share = _shares(odd, signals, top, analysis.terms)
            fast = (
                share.weight_only,
                share.weighted,
                share.by_field,
                share.scope_path,
                share.rarest,
                share.by_term,
                np.array(
                    [share.total_weight, share.total_idf, share.total_scope, share.rarest_question]
                ),
            )
            for got, want in zip(fast, word_by_word(odd, analysis, signals, top), strict=True):
                assert got.shape == want.shape and got.dtype == want.dtype
                assert got.tobytes() == want.tobytes(), (text, depth)


def test_the_odd_repository_gives_the_loops_something_to_add(odd: Index) -> None:
    """The comparison above is not vacuous: scope words, several fields, the huge file."""
    analysis = analyse_query(odd, QUESTIONS[1], DEFAULT_WEIGHTS.query_weights())
    scores, signals = _score_vector(odd, analysis, DEFAULT_WEIGHTS, reranked=True)
    top = candidates(scores, 30)
    share = _shares(odd, signals, top, analysis.terms)
    assert share.total_scope > 0 and share.scope_path.any()
    assert (share.by_field > 0).sum(axis=1).max() >= 2
    huge = odd.path_ids["server/huge_views.py"]
    assert huge in top.tolist()
