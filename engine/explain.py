"""Reasons: the evidence behind each ranked file, as data the app and the CLI show.

Computed only for the files a ranking returns (at most a few hundred), with one vectorised
lookup per query word, so it fits in the keystroke budget. A reason says which words matched
in which fields, which declarations match, which top hit a file imports or is imported by,
and the user's own signals (pin, focus).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.model import FIELDS, Declaration, Index, Reason, ReasonKind
from engine.query import QueryAnalysis

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MAX_MATCHED = 6
"""Declarations kept whole by the focused level, at most, per file."""
MATCH_SHARE = 0.4
"""A declaration matches when its name scores at least this share of the file's best one."""
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


def explain(
    index: Index,
    order: list[int],
    analysis: QueryAnalysis,
    hits: dict[int, TermHits],
    top_hits: list[int],
    chosen: tuple[set[int], set[int]],
) -> list[tuple[tuple[Reason, ...], tuple[int, ...]]]:
    """Return (reasons, matched declarations) for each file id in `order`."""
    import numpy as np  # deliberate: numpy loads with the index

    wanted = np.asarray(order, dtype=np.int64)
    words_of: dict[int, list[tuple[float, Reason]]] = defaultdict(list)
    for term in analysis.terms:
        hit = hits.get(term.term_id)
        if hit is None or len(hit.docs) == 0:
            continue
        pos = np.searchsorted(hit.docs, wanted)
        pos[pos >= len(hit.docs)] = 0
        present = hit.docs[pos] == wanted
        for file_id, p in zip(wanted[present].tolist(), pos[present].tolist(), strict=True):
            fields = tuple(FIELDS[f] for f in np.flatnonzero(hit.tf[p]).tolist())
            words_of[file_id].append(
                (float(hit.contribution[p]), Reason(ReasonKind.WORD, term.shown, fields))
            )
    declarations = matching_declarations(index, analysis, set(order))
    top = set(top_hits)
    pinned, focused = chosen
    out = []
    for file_id in order:
        reasons: list[Reason] = []
        if file_id in focused:
            reasons.append(Reason(ReasonKind.FOCUS, "named with --focus"))
        if file_id in pinned:
            reasons.append(Reason(ReasonKind.PIN, "pinned"))
        if file_id in analysis.mentioned:
            reasons.append(Reason(ReasonKind.PATH, "named in the question"))
        matched = declarations.get(file_id, ())
        decls = index.files[file_id].declarations
        reasons.extend(Reason(ReasonKind.DECLARATION, decls[d].qualified_name) for d in matched[:3])
        reasons.extend(_word_reasons(words_of.get(file_id, [])))
        reasons.extend(_neighbours(index, file_id, top))
        recent = _recency(index, file_id)
        if recent is not None:
            reasons.append(recent)
        out.append((tuple(reasons), matched))
    return out


def _word_reasons(found: list[tuple[float, Reason]]) -> list[Reason]:
    """One reason per word as the question spells it (getUserSession gives the index words
    get, user, sess and getusersession: one reason, their fields merged), strongest first."""
    merged: dict[str, tuple[float, set[str]]] = {}
    for contribution, reason in found:
        total, fields = merged.get(reason.detail, (0.0, set()))
        merged[reason.detail] = (total + contribution, fields | set(reason.fields))
    grand = sum(c for c, _ in merged.values()) or 1.0
    ordered = sorted(merged.items(), key=lambda item: (-item[1][0], item[0]))
    return [
        Reason(
            ReasonKind.WORD,
            shown,
            tuple(f for f in FIELDS if f in fields),
            round(contribution / grand, 3),
        )
        for shown, (contribution, fields) in ordered
    ]


def matching_declarations(
    index: Index, analysis: QueryAnalysis, files: set[int]
) -> dict[int, tuple[int, ...]]:
    """Declarations whose names share words with the question, best first, per file."""
    from engine.index import idf  # deliberate: numpy-backed helper

    scores: dict[tuple[int, int], float] = defaultdict(float)
    n = len(index.files)
    ptr = index.postings.ptr
    for term in analysis.terms:
        pairs = index.declaration_postings.get(term.term_id, ())
        if not pairs:
            continue
        weight = term.weight * float(idf(float(ptr[term.term_id + 1] - ptr[term.term_id]), n))
        for file_id, position in pairs:
            if file_id in files:
                scores[(file_id, position)] += weight
    per_file: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for (file_id, position), score in scores.items():
        per_file[file_id].append((score, position))
    matched: dict[int, tuple[int, ...]] = {}
    for file_id, found in per_file.items():
        decls = index.files[file_id].declarations
        found = _innermost(found, decls)
        # a longer name that matches as much is less specific: prefer the tighter match
        found.sort(key=lambda x: (-x[0], decls[x[1]].end_line - decls[x[1]].start_line, x[1]))
        best = found[0][0]
        matched[file_id] = tuple(p for s, p in found if s >= MATCH_SHARE * best)[:MAX_MATCHED]
    return matched


def _innermost(
    found: list[tuple[float, int]], decls: tuple[Declaration, ...]
) -> list[tuple[float, int]]:
    """Drop a matching class (or function) that holds another match: the focused view keeps
    its header around the inner match anyway, and keeping it whole would keep everything."""
    spans = [(decls[p].start_line, decls[p].end_line, p) for _, p in found]
    holders = {
        p
        for start, end, p in spans
        for inner_start, inner_end, q in spans
        if q != p
        and start <= inner_start <= inner_end <= end
        and (start, end) != (inner_start, inner_end)
    }
    return [(score, p) for score, p in found if p not in holders]


def _neighbours(index: Index, file_id: int, top: set[int]) -> list[Reason]:
    """The first top hit this file imports, and the first that imports it."""
    reasons = []
    for target in index.imports[file_id]:
        if target in top and target != file_id:
            reasons.append(Reason(ReasonKind.IMPORTS, index.files[target].path))
            break
    for source in index.importers[file_id]:
        if source in top and source != file_id:
            reasons.append(Reason(ReasonKind.IMPORTED_BY, index.files[source].path))
            break
    return reasons


def _recency(index: Index, file_id: int) -> Reason | None:
    signal = index.git[file_id]
    if signal is None:
        return None
    days = int((time.time() - signal.last_change) // 86400)
    if days > RECENT_DAYS:
        return None
    when = "today" if days <= 0 else f"{days} day{'s' if days != 1 else ''} ago"
    return Reason(ReasonKind.GIT, f"changed {when}, {signal.changes} commits")
