"""Reasons: the evidence behind each ranked file, as data the app and the CLI show.

Computed only for the files a ranking returns, and of those only for the ones read (the rows
on show, the files the planner focuses), with one vectorised lookup per query word per block
of files, so it fits in the keystroke budget. A reason says which words matched
in which fields, which declarations match, which top hit a file imports or is imported by,
and the user's own signals (pin, focus).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.model import FIELDS, Index, Reason, ReasonKind
from engine.query import QueryAnalysis
from engine.relevance import DEFAULT_DECLARATION_WEIGHTS, DeclarationWeights, match_declarations
from engine.tables import declaration_outline

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RECENT_DAYS = 30
"""A git change younger than this is worth mentioning."""


@dataclass(frozen=True, slots=True)
class TermHits:
    """One query word's postings with their score contributions."""

    docs: npt.NDArray[np.int32]
    """Files that have the word, sorted."""
    contribution: npt.NDArray[np.float64]
    """Score each of those files gets from the word (before coverage and priors)."""
    tf: npt.NDArray[np.float32]
    """Term frequency per field for each of those files."""


class Explanations:
    """The reasons and matched declarations of a ranking's files, worked out on first use.

    A keystroke's ranking returns up to 200 files, but the app shows 50 rows and the planner
    needs the matched declarations of its strong files only; scoring every file's
    declarations on every key took 60 % of the ranking's time (issue 7). So each file's
    evidence is computed when first read, for the block of BLOCK ranked files around it
    (readers go down the ranking), and kept for the life of the ranking. A file's evidence
    never depends on which other files are computed with it, so the answers are the same
    as computing them all at once. Two threads may compute the same block; both get equal
    answers.
    """

    BLOCK = 25
    """Ranked files explained together (a screen of rows is 10-30)."""

    __slots__ = ("_analysis", "_chosen", "_hits", "_index", "_matched", "_order", "_position",
                 "_reasons", "_top")  # fmt: skip

    def __init__(
        self,
        index: Index,
        order: list[int],
        analysis: QueryAnalysis,
        hits: dict[int, TermHits],
        top_hits: list[int],
        chosen: tuple[set[int], set[int]],
        matched: dict[int, tuple[int, ...]] | None = None,
    ) -> None:
        """`matched` keeps the matched declarations: the store of an earlier ranking whose
        question has the same index words and weights may be passed (a file's are its own)."""
        self._index = index
        self._order = order
        self._position = {file_id: number for number, file_id in enumerate(order)}
        self._analysis = analysis
        self._hits = hits
        self._top = set(top_hits)
        self._chosen = chosen
        self._matched = {} if matched is None else matched
        self._reasons: dict[int, tuple[Reason, ...]] = {}

    def _block(self, file_id: int) -> list[int]:
        start = self._position[file_id] // self.BLOCK * self.BLOCK
        return self._order[start : start + self.BLOCK]

    def matched(self, file_id: int) -> tuple[int, ...]:
        """The file's declarations that answer the question, best first."""
        found = self._matched.get(file_id)
        if found is None:
            block = self._block(file_id)
            declarations = matching_declarations(self._index, self._analysis, set(block))
            for other in block:
                self._matched[other] = declarations.get(other, ())
            found = self._matched[file_id]
        return found

    def reasons(self, file_id: int) -> tuple[Reason, ...]:
        """The file's evidence, strongest first."""
        found = self._reasons.get(file_id)
        if found is None:
            block = self._block(file_id)
            self._reasons.update(zip(block, self._explain(block), strict=True))
            found = self._reasons[file_id]
        return found

    def _explain(self, order: list[int]) -> list[tuple[Reason, ...]]:
        index, analysis = self._index, self._analysis
        words_of = _words_of(order, analysis, self._hits)
        neighbours = _neighbour_reasons(index, order, self._top)
        pinned, focused = self._chosen
        out = []
        for file_id in order:
            reasons: list[Reason] = []
            if file_id in focused:
                reasons.append(Reason(ReasonKind.FOCUS, "named with --focus"))
            if file_id in pinned:
                reasons.append(Reason(ReasonKind.PIN, "pinned"))
            if file_id in analysis.mentioned:
                reasons.append(Reason(ReasonKind.PATH, "named in the question"))
            matched = self.matched(file_id)
            if matched:  # names from the outline the matching decoded: no whole declaration
                names = declaration_outline(index.files, file_id).names
                reasons.extend(Reason(ReasonKind.DECLARATION, names[d]) for d in matched[:3])
            reasons.extend(_word_reasons(words_of.get(file_id, {})))
            reasons.extend(neighbours.get(file_id, ()))
            recent = _recency(index, file_id)
            if recent is not None:
                reasons.append(recent)
            out.append(tuple(reasons))
        return out


def _words_of(
    order: list[int], analysis: QueryAnalysis, hits: dict[int, TermHits]
) -> dict[int, dict[str, list[float]]]:
    """Per file: shown word -> [contribution, fields bit mask], merged across index words."""
    import numpy as np  # deliberate: numpy loads with the index

    wanted = np.asarray(order, dtype=np.int64)
    bits = np.array([1 << f for f in range(len(FIELDS))], dtype=np.int64)
    words_of: dict[int, dict[str, list[float]]] = defaultdict(dict)
    for term in analysis.terms:
        hit = hits.get(term.term_id)
        if hit is None or len(hit.docs) == 0:
            continue
        pos = np.searchsorted(hit.docs, wanted)
        pos[pos >= len(hit.docs)] = 0
        present = hit.docs[pos] == wanted
        rows = pos[present]
        masks = ((hit.tf[rows] > 0) @ bits).tolist()
        contributions = hit.contribution[rows].tolist()
        for file_id, mask, contribution in zip(
            wanted[present].tolist(), masks, contributions, strict=True
        ):
            entry = words_of[file_id].setdefault(term.shown, [0.0, 0])
            entry[0] += contribution
            entry[1] = int(entry[1]) | mask
    return words_of


def _word_reasons(merged: dict[str, list[float]]) -> list[Reason]:
    """One reason per word as the question spells it (getUserSession gives the index words
    get, user, sess and getusersession: one reason, their fields merged), strongest first."""
    grand = sum(c for c, _ in merged.values()) or 1.0
    ordered = sorted(merged.items(), key=lambda item: (-item[1][0], item[0]))
    return [
        Reason(ReasonKind.WORD, shown, _FIELDS_OF_MASK[int(mask)], round(contribution / grand, 3))
        for shown, (contribution, mask) in ordered
    ]


_FIELDS_OF_MASK: tuple[tuple[str, ...], ...] = tuple(
    tuple(f for bit, f in enumerate(FIELDS) if mask >> bit & 1) for mask in range(1 << len(FIELDS))
)
"""Field names of each bit mask of fields, so reasons need no per-file loop over fields."""


def matching_declarations(
    index: Index,
    analysis: QueryAnalysis,
    files: set[int],
    weights: DeclarationWeights = DEFAULT_DECLARATION_WEIGHTS,
) -> dict[int, tuple[int, ...]]:
    """Declarations that answer the question, best first, per file (engine.relevance)."""
    terms = [(t.term_id, t.weight) for t in analysis.terms]
    return match_declarations(index, terms, sorted(files), weights)


def _neighbour_reasons(index: Index, order: list[int], top: set[int]) -> dict[int, list[Reason]]:
    """For each ranked file next to a top hit: the first top hit it imports, then the first
    that imports it (by file id, as the sorted import lists give them). Walks only import
    lists, which are short, never importer lists: a hub's has hundreds (663 in textual), and
    walking them cost 3-4 ms a keystroke on 1,449 files against 1 ms."""
    imported_by_top: dict[int, int] = {}
    for hit in sorted(top, reverse=True):  # the lowest id is written last
        for target in index.imports[hit]:
            if target != hit:
                imported_by_top[target] = hit
    files = index.files
    out: dict[int, list[Reason]] = {}
    for file_id in order:
        reasons = []
        imported = next((t for t in index.imports[file_id] if t in top and t != file_id), None)
        if imported is not None:
            reasons.append(Reason(ReasonKind.IMPORTS, files[imported].path))
        source = imported_by_top.get(file_id)
        if source is not None:
            reasons.append(Reason(ReasonKind.IMPORTED_BY, files[source].path))
        if reasons:
            out[file_id] = reasons
    return out


def _recency(index: Index, file_id: int) -> Reason | None:
    signal = index.git[file_id]
    if signal is None:
        return None
    days = int((time.time() - signal.last_change) // 86400)
    if days > RECENT_DAYS:
        return None
    when = "today" if days <= 0 else f"{days} day{'s' if days != 1 else ''} ago"
    commits = "commit" if signal.changes == 1 else "commits"
    return Reason(ReasonKind.GIT, f"changed {when}, {signal.changes} {commits}")
