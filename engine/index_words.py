"""A worker's word numbering, and the words of a whole batch of files numbered at once.

Each index worker numbers the index words it meets (`TermNumbering`) and remembers how it
split every identifier, as rows of a table held in two arrays. A batch's files hand over
their identifiers by field and by declaration (`FileWords`); `number_words` turns all of
them into term rows, declaration postings and declaration documents in a few array
operations for the batch, where a loop in Python over each file's words cost a fifth of a
worker's time. The rows come out sorted (by file, field and term id): the index sorts them
again, so the cache is the same bytes as when each file was counted in the order of its text.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from engine.words import identifier_words, identifiers, normalise_part

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


PART_CACHE_LIMIT = 200_000
"""Identifier parts whose normalised word a process remembers."""
UNIT_TF_CEILING = 255
"""A declaration's occurrences of a word per field saturate here (they are stored as uint8)."""


class TermNumbering:
    """One process's numbering of index words, and its memory of identifiers already split.

    Ids are given in the order words are first met; `new_words` hands over the words
    numbered since it was last called, so a reader that applies them in order knows every id.
    The identifiers already split are rows of a table held in two arrays (each row's word
    ids, one row after another), so a batch's identifiers become words in a few array
    operations (`number_words`), not a loop over each word in Python.
    """

    def __init__(self) -> None:
        import numpy as np  # deliberate: numpy loads with the analysis

        self.key = secrets.token_hex(8)
        """Tells this numbering from another process's."""
        self.words: list[str] = []
        """Id -> word."""
        self.ids: dict[str, int] = {}
        """Word -> id."""
        self.rows: dict[str, int] = {}
        """Identifier -> its row of the identifier table (the ids of its index words)."""
        self.normalise: Callable[[str], str | None] = _Parts().__getitem__
        """normalise_part, remembering (stemming is the costly step; parts repeat a lot)."""
        self._ptr = np.zeros(1 << 12, dtype=np.int64)
        """Where each row's word ids start in `_terms` (row r: _ptr[r] to _ptr[r + 1])."""
        self._terms = np.zeros(1 << 14, dtype=np.int32)
        """The rows' word ids, one row after another."""
        self._sent = 0

    def new_words(self) -> list[str]:
        """Words numbered since the last call, in id order."""
        fresh = self.words[self._sent :]
        self._sent = len(self.words)
        return fresh

    def count(self, texts: Iterable[str]) -> Counter[int]:
        """Count the index words of texts (ids), in order of first occurrence."""
        return self.count_identifiers(list(chain.from_iterable(map(identifiers, texts))))

    def count_identifiers(self, found: list[str]) -> Counter[int]:
        """Count the index words of identifiers already found (ids), in order of first
        occurrence (as `engine.words.count_words` counts their words)."""
        self.learn(found)
        counts: Counter[int] = Counter()
        for identifier in found:
            counts.update(self.words_of(identifier))
        return counts

    def words_of(self, identifier: str) -> tuple[int, ...]:
        """The ids of a learned identifier's index words."""
        row = self.rows[identifier]
        return tuple(self._terms[self._ptr[row] : self._ptr[row + 1]].tolist())

    def learn(self, found: Iterable[str]) -> None:
        """Split and number the identifiers of `found` not met before (`identifiers`)."""
        import numpy as np  # deliberate: see __init__

        rows = self.rows
        new = set(found).difference(rows)  # in C: the set against the dict
        if not new:
            return
        split = [identifier_words(i, self.normalise) for i in new]
        first, added = len(rows), len(split)
        rows.update(zip(new, range(first, first + added), strict=True))  # one order both times
        lengths = np.fromiter(map(len, split), np.int64, added)
        start = int(self._ptr[first])
        end = start + int(lengths.sum())
        self._ptr = _room(self._ptr, first + added + 1)
        np.cumsum(lengths, out=self._ptr[first + 1 : first + added + 1])
        self._ptr[first + 1 : first + added + 1] += start
        self._terms = _room(self._terms, end)
        self._terms[start:end] = self._number(list(chain.from_iterable(split)))

    def _number(self, words: list[str]) -> npt.NDArray[np.int32]:
        """The ids of `words`, numbering the new ones in the order they first come (the
        order a loop over them would give), with the loops in C: a loop in Python over
        every word of every new identifier was a twentieth of a worker's time."""
        import numpy as np  # deliberate: see __init__

        ids = self.ids
        fresh = list(dict.fromkeys([word for word in words if word not in ids]))
        ids.update(zip(fresh, range(len(self.words), len(self.words) + len(fresh)), strict=True))
        self.words += fresh
        return np.fromiter(map(ids.__getitem__, words), np.int32, len(words))

    def forget(self) -> None:
        """Let go of the identifiers split so far (the word ids stay): bounds memory."""
        self.rows.clear()

    def expand(self, found: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The word ids of learned identifiers, one identifier after another, and how many
        each identifier has."""
        import numpy as np  # deliberate: see __init__

        rows = np.fromiter(map(self.rows.__getitem__, found), np.int64, len(found))
        starts = self._ptr[rows]
        lengths = self._ptr[rows + 1] - starts
        total = int(lengths.sum())
        # each word's place in _terms: its identifier's start plus its place in the row
        offsets = np.cumsum(lengths) - lengths
        at = np.arange(total, dtype=np.int64) + np.repeat(starts - offsets, lengths)
        return self._terms[at].astype(np.int64), lengths


class _Parts(dict[str, "str | None"]):
    """Identifier part -> normalise_part(part), filled as parts are met and emptied when it
    holds PART_CACHE_LIMIT of them. A remembered part is one lookup in C, as with
    functools.lru_cache, without its list of every entry in order of use (~60 bytes a part:
    12 MB of each index worker's memory on the 16k tree)."""

    def __missing__(self, part: str) -> str | None:
        if len(self) >= PART_CACHE_LIMIT:
            self.clear()
        word = self[part] = normalise_part(part)
        return word


def _room(array: npt.NDArray[Any], size: int) -> npt.NDArray[Any]:
    """`array`, or a copy twice as long or more, so that it holds `size` items."""
    import numpy as np  # deliberate: numpy loads with the analysis

    if size <= len(array):
        return array
    grown = np.zeros(max(size, 2 * len(array)), dtype=array.dtype)
    grown[: len(array)] = array
    return grown


@dataclass(frozen=True, slots=True)
class FileWords:
    """The identifiers of one analysed file, as `number_words` counts them."""

    fields: tuple[list[str], ...]
    """Identifiers of each index field but the body (FIELDS without "body", in order)."""
    body: Counter[str]
    """Every identifier of the text, with its count."""
    declarations: list[tuple[list[str], list[str], list[str]]]
    """Per declaration: the identifiers of its name, of its own header lines and doc
    sentence, and of its own body lines (engine.units.file_identifiers)."""


@dataclass(frozen=True, slots=True)
class BatchWords:
    """A batch's words as term ids, each array the batch's files one after another."""

    term_rows: list[int]
    """Term rows of each file."""
    terms: npt.NDArray[np.int32]
    """Term id of each row (a file's rows by field, then term id)."""
    fields: npt.NDArray[np.int8]
    """Field column (position in FIELDS) of each row."""
    counts: npt.NDArray[np.int32]
    """Occurrences of each row's term in its field."""
    body_length: list[float]
    """Body words of each file."""
    declaration_rows: list[int]
    """Declaration postings of each file."""
    declaration_positions: npt.NDArray[np.int32]
    """The declaration (position in its file) of each posting ..."""
    declaration_terms: npt.NDArray[np.int32]
    """... and a word of its name (term id), each pair once."""
    unit_words: list[int]
    """Rows of `unit_terms` of each file."""
    unit_declarations: list[int]
    """Declarations of each file (items of `unit_rows`)."""
    unit_terms: npt.NDArray[np.int32]
    """Each declaration's distinct words, in order of first occurrence (name, header, body)."""
    unit_tf: npt.NDArray[np.uint8]
    """Their occurrences per field (name, header, body), shape (len(unit_terms), 3)."""
    unit_rows: npt.NDArray[np.int32]
    """How many of unit_terms belong to each declaration."""


def number_words(files: list[FileWords], numbering: TermNumbering, limit: int) -> BatchWords:
    """Number the words of a batch's files in `numbering`, all at once.

    Args:
        files: the batch's analysed files, in order.
        numbering: the process's numbering; it learns the identifiers it has not met.
        limit: identifiers the numbering may remember before it forgets them all (the
            batch's own stay until it is done).
    """
    import numpy as np  # deliberate: numpy loads with the analysis

    from engine.model import FIELDS

    if len(numbering.rows) > limit:
        numbering.forget()
    numbering.learn(chain.from_iterable(chain(f.body, *f.fields) for f in files))
    terms, fields, counts, term_rows = _term_rows(files, numbering)
    body = counts * (fields == FIELDS.index("body"))
    body_length = np.bincount(
        np.repeat(np.arange(len(files)), term_rows), weights=body, minlength=len(files)
    )
    positions, named, declaration_rows = _declaration_postings(files, numbering)
    unit_terms, unit_tf, unit_rows, unit_words = _units(files, numbering)
    return BatchWords(
        term_rows=term_rows,
        terms=terms,
        fields=fields,
        counts=counts,
        body_length=body_length.tolist(),
        declaration_rows=declaration_rows,
        declaration_positions=positions,
        declaration_terms=named,
        unit_words=unit_words,
        unit_declarations=[len(f.declarations) for f in files],
        unit_terms=unit_terms,
        unit_tf=unit_tf,
        unit_rows=unit_rows,
    )


def _distinct(
    key: npt.NDArray[np.int64], weights: npt.NDArray[np.int64] | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct values of `key`, ascending, and the summed weight (or count) of each."""
    import numpy as np  # deliberate: numpy loads with the analysis

    if not len(key):
        return key, np.zeros(0, dtype=np.int64)
    order = np.argsort(key)
    ordered = key[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    if weights is None:
        sums = np.diff(np.append(starts, len(ordered)))
    else:
        sums = np.add.reduceat(weights[order], starts)
    return ordered[starts], sums


def _term_rows(
    files: list[FileWords], numbering: TermNumbering
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int8], npt.NDArray[np.int32], list[int]]:
    """Each file's (term, field, count) rows: a field's words counted as
    `TermNumbering.count` counts them, the body's from its identifiers' counts."""
    import numpy as np  # deliberate: numpy loads with the analysis

    from engine.model import FIELDS

    body = FIELDS.index("body")
    found: list[str] = []
    weights: list[int] = []
    sizes: list[int] = []  # identifiers of each (file, field), files in order
    for file in files:
        others = iter(file.fields)
        for field in range(len(FIELDS)):
            if field == body:
                found += file.body
                weights += file.body.values()
                sizes.append(len(file.body))
            else:
                said = next(others)
                found += said
                weights += [1] * len(said)
                sizes.append(len(said))
    words, lengths = numbering.expand(found)
    group = np.repeat(np.repeat(np.arange(len(sizes), dtype=np.int64), sizes), lengths)
    span = len(numbering.words) + 1
    key, counts = _distinct(group * span + words, np.repeat(np.array(weights, np.int64), lengths))
    group, terms = np.divmod(key, span)
    file_of, fields = np.divmod(group, len(FIELDS))
    term_rows = np.bincount(file_of, minlength=len(files)).tolist()
    return terms.astype(np.int32), fields.astype(np.int8), counts.astype(np.int32), term_rows


def _declaration_postings(
    files: list[FileWords], numbering: TermNumbering
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], list[int]]:
    """(declaration position, term) pairs of the words of each declaration's name, each pair
    once, and how many pairs each file has."""
    import numpy as np  # deliberate: numpy loads with the analysis

    names: list[str] = []
    sizes: list[int] = []
    for file in files:
        for name, _, _ in file.declarations:
            names += name
            sizes.append(len(name))
    words, lengths = numbering.expand(names)
    declaration = np.repeat(np.repeat(np.arange(len(sizes), dtype=np.int64), sizes), lengths)
    span = len(numbering.words) + 1
    key, _ = _distinct(declaration * span + words)
    declaration, terms = np.divmod(key, span)
    # each file's first declaration in the batch's numbering of declarations
    per_file = np.array([len(f.declarations) for f in files], dtype=np.int64)
    first = np.cumsum(per_file) - per_file
    file_of = np.repeat(np.arange(len(files)), per_file)[declaration]
    positions = declaration - first[file_of]
    rows = np.bincount(file_of, minlength=len(files)).tolist()
    return positions.astype(np.int32), terms.astype(np.int32), rows


def _units(
    files: list[FileWords], numbering: TermNumbering
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint8], npt.NDArray[np.int32], list[int]]:
    """Each declaration's distinct words (by first occurrence in its name, header, body)
    with their counts per field, as engine.units.analyse_units lists them; and how many
    words each file's declarations have."""
    import numpy as np  # deliberate: numpy loads with the analysis

    every: list[str] = []
    sizes: list[int] = []
    for file in files:
        for name, header, body in file.declarations:
            every += name
            every += header
            every += body
            sizes += (len(name), len(header), len(body))
    declarations = len(sizes) // 3
    per_file = [len(f.declarations) for f in files]
    word, lengths = numbering.expand(every)
    total = len(word)
    if not total:
        empty = np.zeros(0, dtype=np.int32)
        no_words = np.zeros(declarations, dtype=np.int32)
        return empty, np.zeros((0, 3), dtype=np.uint8), no_words, [0] * len(files)
    # the field (declaration x 3 + field) of every word, in the order analyse_units meets them
    segment = np.repeat(np.repeat(np.arange(3 * declarations, dtype=np.int64), sizes), lengths)
    owner = segment // 3
    key = owner * (int(word.max()) + 1) + word
    order = np.argsort(key, kind="stable")
    ordered = key[order]
    starts = np.ones(total, dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    pair = np.empty(total, dtype=np.int64)
    pair[order] = np.cumsum(starts) - 1
    first = order[starts]  # each pair's first occurrence (the sort is stable)
    tf = np.bincount(pair * 3 + segment % 3, minlength=3 * len(first)).reshape(-1, 3)
    by_first = np.argsort(first)  # pairs by first occurrence: declarations stay in order
    rows = np.bincount(owner[first], minlength=declarations)
    file_of = np.repeat(np.arange(len(files)), per_file)
    unit_words = np.bincount(file_of, weights=rows, minlength=len(files)).astype(np.int64)
    return (
        word[first[by_first]].astype(np.int32),
        np.minimum(tf[by_first], UNIT_TF_CEILING).astype(np.uint8),
        rows.astype(np.int32),
        unit_words.tolist(),
    )
