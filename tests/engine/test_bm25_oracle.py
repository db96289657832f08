"""Plain BM25 from the index's arrays equals rank_bm25's BM25Okapi (the oracle).

One field only: every field weight is 0 except the body's, which is 1, so BM25F reduces to
Okapi BM25 with k1 = 1.5 and b = 0.75. rank_bm25 uses idf = ln((N - df + 0.5) / (df + 0.5)),
with negative values replaced by epsilon x the mean idf of its vocabulary; the test computes
that idf from the index's own postings, so only the term-frequency arithmetic is compared.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import rank_bm25
from conftest import make_repo
from index_support import index_repo

from engine.index import BODY, TermRows, bm25f_term, build_postings
from engine.model import FIELDS, Index, Postings
from engine.words import words

K1 = 1.5
B = 0.75
EPSILON = 0.25
BODY_ONLY = np.array([1.0 if f == "body" else 0.0 for f in FIELDS], dtype=np.float32)

DOCUMENTS: dict[str, str] = {
    "doc01.txt": "session session cookie expires user login",
    "doc02.txt": "user login form password hashing salt user",
    "doc03.txt": "database connection pool user timeout retry retry retry",
    "doc04.txt": "cache eviction policy lru user",
    "doc05.txt": "session store redis user cookie cookie",
    "doc06.txt": "router path params middleware user",
    "doc07.txt": "logging handler formatter level user",
    "doc08.txt": "template render context escape",
    "doc09.txt": "invoice total discount coupon tax tax tax tax tax tax tax tax tax",
    "doc10.txt": "queue worker retry backoff jitter user",
    "doc11.txt": "session",
    "doc12.txt": (
        "a much longer document about everything: session user cookie cache database router "
        "template invoice queue worker logging password middleware redis eviction connection "
        "render context escape backoff jitter formatter level params"
    ),
}
"""Twelve documents of different lengths; `user` is in more than half (negative idf)."""

QUERIES = [
    ["session"],
    ["session", "cookie"],
    ["user"],  # in 9 of 12 documents: rank_bm25 floors its idf with epsilon
    ["user", "login", "password"],
    ["retry", "tax"],  # repeated words saturate
    ["session", "session", "cookie"],  # a repeated query word counts twice
    ["nothing", "here"],  # words no document has
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Index, list[list[str]]]:
    root = make_repo(tmp_path_factory.mktemp("bm25") / "repo", DOCUMENTS)
    index, _ = index_repo(root)
    tokens = [words((root / f.path).read_text(encoding="utf-8")) for f in index.files]
    return index, tokens


def oracle_idf(postings: Postings, n_docs: int) -> dict[int, float]:
    """rank_bm25's idf for every term that occurs in a body, from the postings' body column."""
    idf: dict[int, float] = {}
    for term in range(len(postings.ptr) - 1):
        start, end = int(postings.ptr[term]), int(postings.ptr[term + 1])
        df = int(np.count_nonzero(postings.tf[start:end, BODY]))
        if df:
            idf[term] = math.log(n_docs - df + 0.5) - math.log(df + 0.5)
    floor = EPSILON * (sum(idf.values()) / len(idf))
    return {t: (floor if v < 0 else v) for t, v in idf.items()}


def plain_bm25(
    postings: Postings, body_length: np.ndarray, vocab: dict[str, int], query: list[str]
) -> np.ndarray:
    """Okapi BM25 of every document from the index arrays, with bm25f_term doing the tf part."""
    n = len(body_length)
    body_norm = (1.0 - B + B * body_length / body_length.mean()).astype(np.float32)
    idf = oracle_idf(postings, n)
    scores = np.zeros(n, dtype=np.float64)
    for word in query:
        term = vocab.get(word)
        if term is None or term not in idf:
            continue
        docs, saturated, _ = bm25f_term(postings, term, BODY_ONLY, body_norm, K1)
        scores[docs] += idf[term] * saturated.astype(np.float64)
    return scores


def test_documents_tokens_are_exactly_the_index_body_words(
    corpus: tuple[Index, list[list[str]]],
) -> None:
    index, tokens = corpus
    assert index.body_length.tolist() == [len(t) for t in tokens]


def test_some_query_word_has_a_negative_okapi_idf(corpus: tuple[Index, list[list[str]]]) -> None:
    _, tokens = corpus
    df = sum("user" in t for t in tokens)
    assert df > len(tokens) / 2  # so the epsilon floor is exercised


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: "+".join(q))
def test_index_bm25_equals_rank_bm25(
    corpus: tuple[Index, list[list[str]]], query: list[str]
) -> None:
    index, tokens = corpus
    query_words = [w for q in query for w in words(q)]
    expected = rank_bm25.BM25Okapi(tokens, k1=K1, b=B, epsilon=EPSILON).get_scores(query_words)
    actual = plain_bm25(index.postings, index.body_length, index.vocab, query_words)
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def test_the_oracle_is_not_trivially_zero(corpus: tuple[Index, list[list[str]]]) -> None:
    _, tokens = corpus
    scores = rank_bm25.BM25Okapi(tokens, k1=K1, b=B).get_scores(words("session cookie"))
    assert np.count_nonzero(scores) >= 4
    assert len(set(np.round(scores[scores > 0], 6).tolist())) >= 3


def one_field_rows(tokens: list[list[str]]) -> tuple[TermRows, dict[str, int]]:
    """Term rows with the body field only, as the indexer would store them."""
    vocab: dict[str, int] = {}
    docs, terms, fields, counts = [], [], [], []
    for doc, toks in enumerate(tokens):
        for word in sorted(set(toks)):
            docs.append(doc)
            terms.append(vocab.setdefault(word, len(vocab)))
            fields.append(BODY)
            counts.append(toks.count(word))
    rows = TermRows(
        np.array(docs, np.int32), np.array(terms, np.int32), np.array(fields, np.int8),
        np.array(counts, np.int32),
    )  # fmt: skip
    return rows, vocab


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: "+".join(q))
def test_build_postings_of_one_field_rows_equals_rank_bm25(query: list[str]) -> None:
    tokens = [words(text) for _, text in sorted(DOCUMENTS.items())]
    rows, vocab = one_field_rows(tokens)
    postings, body_length = build_postings(rows, len(tokens), len(vocab))
    assert body_length.tolist() == [len(t) for t in tokens]
    query_words = [w for q in query for w in words(q)]
    expected = rank_bm25.BM25Okapi(tokens, k1=K1, b=B, epsilon=EPSILON).get_scores(query_words)
    actual = plain_bm25(postings, body_length, vocab, query_words)
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def test_build_postings_sums_rows_of_the_same_file_term_and_field() -> None:
    rows = TermRows(
        np.array([0, 0, 1, 0], np.int32), np.array([1, 1, 1, 0], np.int32),
        np.array([BODY, BODY, BODY, 0], np.int8), np.array([2, 3, 4, 7], np.int32),
    )  # fmt: skip
    postings, body_length = build_postings(rows, n_docs=2, n_terms=2)
    assert postings.ptr.tolist() == [0, 1, 3]
    assert postings.docs.tolist() == [0, 0, 1]
    assert postings.tf[:, BODY].tolist() == [0.0, 5.0, 4.0]
    assert postings.tf[0, 0] == 7.0
    assert body_length.tolist() == [5.0, 4.0]


def test_build_postings_of_no_rows_is_empty() -> None:
    postings, body_length = build_postings(TermRows.empty(), n_docs=0, n_terms=0)
    assert postings.ptr.tolist() == [0]
    assert len(postings.docs) == 0 and postings.tf.shape == (0, len(FIELDS))
    assert len(body_length) == 0
