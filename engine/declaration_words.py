"""Which declaration rows hold each word: the declarations' words inverted, for keystrokes.

The share of the question one declaration holds (engine.relevance.best_declaration_share)
runs on every keystroke for the re-rank's 30 candidates and the huge files of the scattered
damping. Read row by row it touches every declaration row of those files: 19,000 rows at the
median keystroke on the 16k tree, 28,000 on textual, where the big widget files sit on top.
Inverted, it reads only the rows that hold a word of the question: each word's rows are a
sorted run, and a file's rows a range, so two binary searches per (word, file) find them.

Building the inversion costs a sort of every row (0.3 s on the 16k tree's 3.5 M rows, 14 MB),
which a one-shot `ctxtui rank` would never earn back: a long session (the app, `bench`'s
typing) builds it off the keystroke path and sets `UnitIndex.words`; until then, and
everywhere else, the row-by-row reading gives the same numbers bit for bit.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engine.model import UnitIndex


@dataclass(frozen=True, slots=True)
class DeclarationWords:
    """The rows of `UnitIndex.terms` grouped by term: term t's rows, ascending, are
    rows[ptr[t] : ptr[t + 1]]."""

    ptr: npt.NDArray[np.int64]
    """First place in `rows` of each term id; length = the largest term id + 2."""
    rows: npt.NDArray[np.int32]
    """Row numbers, by term, then by row."""


def invert_declaration_words(units: UnitIndex) -> DeclarationWords:
    """Group the declaration rows by their word (see the module docstring for its cost)."""
    import numpy as np  # deliberate: numpy loads with the index

    terms = np.asarray(units.terms)
    words = int(terms.max()) + 1 if len(terms) else 0
    counts = np.bincount(terms, minlength=words)
    ptr = np.zeros(words + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    # Term ids fit in 32 bits: two stable 16-bit passes (numpy sorts 16-bit keys by radix)
    # give the stable order of the whole id at about 60 % of one 32-bit stable sort. The
    # halves are views of one 32-bit copy and the orders int32 as soon as made: on the 5x
    # tree's 17.5 M rows the 64-bit temporaries peaked at +284 MB (review of session 23).
    halves = terms.astype(np.uint32, copy=False).view(np.uint16).reshape(-1, 2)
    low_half, high_half = (0, 1) if sys.byteorder == "little" else (1, 0)
    by_low = np.argsort(halves[:, low_half], kind="stable").astype(np.int32)
    high = halves[:, high_half][by_low]
    rows = by_low[np.argsort(high, kind="stable")]
    return DeclarationWords(ptr, rows)


def rows_holding(
    words: DeclarationWords,
    terms: npt.NDArray[np.int64],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """The rows, ascending, within any range [starts[i], ends[i]) (ascending, disjoint) that
    hold one of `terms` (term ids)."""
    import numpy as np  # deliberate: see invert_declaration_words

    bounds = np.concatenate((starts, ends)).astype(words.rows.dtype)  # no copy of a run
    lows, highs = [], []
    for term in sorted(set(terms.tolist())):  # each once: a row holds one word
        if not 0 <= term < len(words.ptr) - 1:
            continue  # a word no declaration has
        first, last = int(words.ptr[term]), int(words.ptr[term + 1])
        if first == last:
            continue
        found = words.rows[first:last].searchsorted(bounds) + first
        lows.append(found[: len(starts)])
        highs.append(found[len(starts) :])
    if not lows:
        return np.zeros(0, dtype=np.int64)
    low, high = np.concatenate(lows), np.concatenate(highs)
    counts = high - low
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(low - (np.cumsum(counts) - counts), counts)
    return np.sort(words.rows[shift + np.arange(total, dtype=np.int64)].astype(np.int64))
