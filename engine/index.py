"""The array-backed inverted index and the BM25F arithmetic over it.

Term frequencies arrive as a flat list of (file, term, field, count) rows, the form the cache
keeps and the incremental refresh edits. `build_postings` turns them into compressed columns
(one run of postings per term, a column per field) with a sort and a few vectorised passes, so
scoring a query is a handful of numpy operations per query word, never a loop over files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.heap import give_back_memory
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

    def add_all(self, words: list[str]) -> list[int]:
        """The term ids of `words`, numbering the new ones after the known ones in the
        order they come, with the loops in C."""
        ids = self.ids
        new = list(dict.fromkeys(word for word in words if word not in ids))
        ids.update(zip(new, range(len(self.words), len(self.words) + len(new)), strict=True))
        self.words += new
        return list(map(ids.__getitem__, words))


def build_postings(
    rows: TermRows, n_docs: int, n_terms: int
) -> tuple[Postings, npt.NDArray[np.float32]]:
    """Turn term rows into per-term postings and per-file body lengths.

    Returns the postings (sorted by term, then file) and the number of body words per file.
    """
    if not packable(n_docs, n_terms):
        return _build_postings_wide(rows, n_docs, n_terms)
    packed = pack_rows([(rows.docs, rows.terms, rows.fields, rows.counts)], n_docs, len(rows.docs))
    return postings_of_packed(packed, n_docs, n_terms), body_lengths(rows, n_docs)


PACK_SHIFT = 19
"""Bits below the (term, file) pair in a packed row: 3 for the field, 16 for the count."""
COUNT_CEILING = (1 << 16) - 1
"""Counts past 65,535 saturate BM25 long before; a row's count is clamped to this."""


GIVE_BACK_EVERY = 128
"""Parts packed between two hand-backs of the heap (a few ms each): about 2,000 files'."""


def packable(n_docs: int, n_terms: int) -> bool:
    """Whether a row (term, file, field, count) of such a table fits in an int64."""
    return max(n_terms, 1) * max(n_docs, 1) * (8 << 16) < 1 << 62


def pack_rows(
    parts: list[tuple[Any, Any, Any, Any]], n_docs: int, total: int
) -> npt.NDArray[np.int64]:
    """Pack term rows, given as (docs, terms, fields, counts) parts, one int64 a row.

    Each part is taken off `parts` once packed, and the heap they held is handed back as
    `packed` fills (thousands of small arrays, 40 MB on the 16k tree), so the rows never
    wait in memory twice.
    """
    import numpy as np  # deliberate: see TermRows.empty

    width = max(n_docs, 1)
    packed = np.empty(total, dtype=np.int64)
    start = taken = 0
    while parts:
        docs, terms, fields, counts = parts.pop(0)
        out = packed[start : start + len(docs)]
        np.multiply(terms, width, out=out, dtype=np.int64)
        out += docs
        out <<= 3
        out += fields
        out <<= 16
        out += np.minimum(counts, COUNT_CEILING)
        start += len(docs)
        del docs, terms, fields, counts
        taken += 1
        if taken % GIVE_BACK_EVERY == 0:
            give_back_memory()
    assert start == total, "the parts hold `total` rows"
    return packed


def postings_of_packed(packed: npt.NDArray[np.int64], n_docs: int, n_terms: int) -> Postings:
    """The postings of packed term rows (`pack_rows`); sorts and consumes `packed`.

    One sort of one array: the rows end up grouped by posting with no index arrays beside
    them (the largest transient of an index build). A count is clamped before it is summed;
    rows repeating a (file, term, field) saturate the same either way. Every temporary is
    made in place or let go as soon as it is used: this is the peak of a first index.
    """
    import numpy as np  # deliberate: see TermRows.empty

    width = max(n_docs, 1)
    packed.sort()
    # the small columns are cut straight into their own dtype (a ufunc casting into `out`
    # works in small buffers): no int64 temporary of every row
    counts = np.empty(len(packed), dtype=np.uint16)
    np.bitwise_and(packed, COUNT_CEILING, out=counts, casting="unsafe")
    packed >>= 16  # term, file, field
    repeats = bool(len(packed)) and bool(np.equal(packed[1:], packed[:-1]).any())
    fields = np.empty(len(packed), dtype=np.int8)
    np.bitwise_and(packed, 7, out=fields, casting="unsafe")
    packed >>= 3  # term * width + file
    starts = np.empty(len(packed), dtype=bool)
    starts[:1] = True
    np.not_equal(packed[1:], packed[:-1], out=starts[1:])
    unique_keys = packed[starts]
    del packed
    # the postings' pointers and files before their counts, so the int64 keys are gone
    # when the counts table is filled (the peak of a first index): each term's postings
    # start where the sorted keys reach term * width
    ptr = np.searchsorted(unique_keys, np.arange(n_terms + 1, dtype=np.int64) * width)
    docs = np.empty(len(unique_keys), dtype=np.int32)
    np.remainder(unique_keys, width, out=docs, casting="unsafe")
    del unique_keys
    slot = np.cumsum(starts, dtype=np.int32 if len(starts) < 1 << 31 else np.int64)
    del starts
    np.subtract(slot, 1, out=slot)
    tf = np.zeros((len(docs), len(FIELDS)), dtype=np.uint16)
    if not repeats:  # one row per (posting, field): its count is the sum
        tf[slot, fields] = counts
    else:
        for column in range(len(FIELDS)):
            in_field = fields == column
            if in_field.any():
                summed = np.bincount(slot[in_field], weights=counts[in_field], minlength=len(tf))
                tf[:, column] = np.minimum(summed, COUNT_CEILING)
    del slot, fields, counts
    return Postings(ptr=ptr.astype(np.int64, copy=False), docs=docs, tf=tf)


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
