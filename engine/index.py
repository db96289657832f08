"""The array-backed inverted index and the BM25F arithmetic over it.

Term frequencies arrive as a flat list of (file, term, field, count) rows, the form the cache
keeps and the incremental refresh edits. `build_postings` turns them into compressed columns
(one run of postings per term, a column per field) with a sort and a few vectorised passes, so
scoring a query is a handful of numpy operations per query word, never a loop over files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.model import FIELDS, Postings

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

BODY = FIELDS.index("body")


@dataclass(slots=True)
class TermRows:
    """Term frequencies as flat rows: row i says file docs[i] has term terms[i] counts[i]
    times in field fields[i]. The cache stores exactly these arrays."""

    docs: npt.NDArray[np.int32]
    """File id of each row."""
    terms: npt.NDArray[np.int32]
    """Term id of each row."""
    fields: npt.NDArray[np.int8]
    """Field column (position in FIELDS) of each row."""
    counts: npt.NDArray[np.int32]
    """Occurrences."""

    @classmethod
    def empty(cls) -> TermRows:
        """Return rows for an empty repository."""
        import numpy as np  # deliberate: numpy loads only when an index is built

        return cls(
            np.zeros(0, np.int32),
            np.zeros(0, np.int32),
            np.zeros(0, np.int8),
            np.zeros(0, np.int32),
        )


@dataclass(slots=True)
class Vocabulary:
    """Words and their term ids, growing as analysed files arrive (the index's own ids are
    given later, in sorted order, by engine.assemble)."""

    words: list[str]
    """Term id -> word."""
    ids: dict[str, int]
    """Word -> term id."""

    @classmethod
    def of(cls, words: list[str]) -> Vocabulary:
        """Start from an existing word list (the cached vocabulary), ids unchanged."""
        return cls(list(words), {w: i for i, w in enumerate(words)})

    def add(self, word: str) -> int:
        """The term id of `word`, numbering it if it is new."""
        term = self.ids.get(word)
        if term is None:
            term = self.ids[word] = len(self.words)
            self.words.append(word)
        return term


def build_postings(
    rows: TermRows, n_docs: int, n_terms: int
) -> tuple[Postings, npt.NDArray[np.float32]]:
    """Turn term rows into per-term postings and per-file body lengths.

    Returns the postings (sorted by term, then file) and the number of body words per file.
    """
    import numpy as np  # deliberate: see TermRows.empty

    width = max(n_docs, 1)
    ceiling = np.iinfo(np.uint16).max  # counts past 65,535 saturate BM25 long before
    if max(n_terms, 1) * width * (8 << 16) >= 1 << 62:
        return _build_postings_wide(rows, n_docs, n_terms)
    # One sort of one array: each row packed as (term, file, field, count) in an int64, so
    # the rows end up grouped by posting with no index arrays beside them (the largest
    # transient of an index build). A count is clamped before it is summed; rows repeating a
    # (file, term, field) saturate the same either way.
    packed = rows.terms.astype(np.int64)
    packed *= width
    packed += rows.docs
    packed <<= 3
    packed += rows.fields
    packed <<= 16
    packed += np.minimum(rows.counts, ceiling)
    packed.sort()
    pair = packed >> 19  # term * width + file
    starts = np.ones(len(pair), dtype=bool)
    np.not_equal(pair[1:], pair[:-1], out=starts[1:])
    unique_keys = pair[starts]
    del pair
    slot = np.cumsum(starts, dtype=np.int64) - 1
    del starts
    tf = np.zeros((len(unique_keys), len(FIELDS)), dtype=np.uint16)
    fields = ((packed >> 16) & 7).astype(np.int8)
    counts = (packed & ceiling).astype(np.float64)
    del packed
    for column in range(len(FIELDS)):
        in_field = fields == column
        if in_field.any():
            summed = np.bincount(slot[in_field], weights=counts[in_field], minlength=len(tf))
            tf[:, column] = np.minimum(summed, ceiling)
    del slot, fields, counts
    posting_terms = unique_keys // width
    docs = (unique_keys % width).astype(np.int32)
    del unique_keys
    ptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(posting_terms, minlength=n_terms), out=ptr[1:])
    return Postings(ptr=ptr, docs=docs, tf=tf), body_lengths(rows, n_docs)


def body_lengths(rows: TermRows, n_docs: int) -> npt.NDArray[np.float32]:
    """Words in each file's body field."""
    import numpy as np  # deliberate: see TermRows.empty

    body_rows = rows.fields == BODY
    return np.bincount(
        rows.docs[body_rows], weights=rows.counts[body_rows], minlength=n_docs
    ).astype(np.float32)


def _build_postings_wide(
    rows: TermRows, n_docs: int, n_terms: int
) -> tuple[Postings, npt.NDArray[np.float32]]:
    """build_postings for tables too large to pack a row in 64 bits (past ~10^12 file-term
    pairs): a sort of (term, file) keys and one bincount per field."""
    import numpy as np  # deliberate: see TermRows.empty

    keys = rows.terms.astype(np.int64) * max(n_docs, 1) + rows.docs.astype(np.int64)
    unique_keys, slot = np.unique(keys, return_inverse=True)
    tf = np.zeros((len(unique_keys), len(FIELDS)), dtype=np.uint16)
    ceiling = np.iinfo(np.uint16).max
    for column in range(len(FIELDS)):
        in_field = rows.fields == column
        if in_field.any():
            counts = np.bincount(
                slot[in_field], weights=rows.counts[in_field], minlength=len(unique_keys)
            )
            tf[:, column] = np.minimum(counts, ceiling)
    ptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(unique_keys // max(n_docs, 1), minlength=n_terms), out=ptr[1:])
    docs = (unique_keys % max(n_docs, 1)).astype(np.int32)
    return Postings(ptr=ptr, docs=docs, tf=tf), body_lengths(rows, n_docs)


def idf(
    document_frequency: npt.NDArray[np.float64] | float, n_docs: int
) -> npt.NDArray[np.float64]:
    """Okapi idf with the +1 inside the log, so it never goes negative (as in ContextCode)."""
    import numpy as np  # deliberate: see TermRows.empty

    df = np.asarray(document_frequency, dtype=np.float64)
    return np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def bm25f_term(
    postings: Postings,
    term_id: int,
    field_weights: npt.NDArray[np.float32],
    body_norm: npt.NDArray[np.float32],
    k1: float,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Return (files, saturated score without idf, field-weighted tf) for one term.

    tf' = sum over fields of weight * tf, the body's tf divided by its length norm;
    the saturated score is tf' (k1 + 1) / (tf' + k1).
    """
    import numpy as np  # deliberate: see TermRows.empty

    start, end = int(postings.ptr[term_id]), int(postings.ptr[term_id + 1])
    docs = postings.docs[start:end]
    tf = postings.tf[start:end].astype(np.float32)
    weighted = tf @ field_weights
    weighted += tf[:, BODY] * (1.0 / body_norm[docs] - 1.0) * field_weights[BODY]
    saturated = weighted * (k1 + 1.0) / (weighted + k1)
    return docs, saturated, tf
