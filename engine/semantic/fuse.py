"""Fuse the lexical ranking with the files' semantic similarity to the question.

A pure function over a finished `Ranking`: the lexical `engine.rank` is untouched and runs
alone whenever there are no vectors. The best `weights.rerank` files that the user did not
choose are re-ordered by a mix of their lexical score (divided by the best) and their best
chunk's cosine (min-max scaled over those files); pinned and focus files keep their places
first, the files past the re-ranked ones keep theirs after. Embeddings alone rank worse than
lexical (issue 11's side study, and DEV), so they only re-order what the words found.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from engine.model import RankedFile, Ranking, Reason, ReasonKind
from engine.semantic.vectors import ChunkMatch, SemanticWeights


def rerank_ids(ranking: Ranking, weights: SemanticWeights) -> list[int]:
    """The file ids the fusion re-orders: the best `rerank` files the user did not choose."""
    free = [f for f in ranking.files if not (f.pinned or f.focused)]
    return [f.file_id for f in free[: weights.rerank]]


def fuse(ranking: Ranking, matches: Mapping[int, ChunkMatch], weights: SemanticWeights) -> Ranking:
    """Re-order the ranking's best files by lexical score mixed with semantic similarity.

    Args:
        ranking: the lexical ranking.
        matches: file id -> its best chunk, for the files of `rerank_ids` (a file missing
            here, e.g. a blank one, counts as the least similar).
        weights: the mix and how many files are re-ranked.

    Returns:
        The same ranking re-ordered; each re-ranked file's score is moved into the span of
        the re-ranked scores (so the order and the score column agree), and a file whose
        meaning added to its place carries a SEMANTIC reason naming its best chunk.
    """
    ids = set(rerank_ids(ranking, weights))
    head = [f for f in ranking.files if f.pinned or f.focused]
    moved = [f for f in ranking.files if f.file_id in ids]
    tail = [f for f in ranking.files if f.file_id not in ids and not (f.pinned or f.focused)]
    if not moved:
        return ranking
    top = max(f.score for f in moved) or 1.0
    low = min(f.score for f in moved)
    similarities = [m.similarity for m in matches.values()]
    least = min(similarities, default=0.0) if weights.scaled else 0.0
    span = (max(similarities, default=0.0) - least) or 1.0 if weights.scaled else 1.0
    by_meaning = sorted(
        moved, key=lambda f: -matches[f.file_id].similarity if f.file_id in matches else 2.0
    )
    semantic_rank = {f.file_id: number for number, f in enumerate(by_meaning, 1)}
    mixed: list[tuple[float, RankedFile]] = []
    for number, f in enumerate(moved, 1):
        match = matches.get(f.file_id)
        semantic = max(0.0, (match.similarity - least) / span) if match is not None else 0.0
        if weights.rrf > 0:  # scaled so the best possible file scores 1
            best = (1.0 + weights.rrf) / 61.0
            rrf = 1.0 / (60 + number) + weights.rrf / (60 + semantic_rank[f.file_id])
            value = rrf / best
        else:
            value = (1.0 - weights.mix) * f.score / top + weights.mix * semantic
        reasons = f.reasons
        # a reason says why a file is where it is: a best chunk no nearer the question than
        # unrelated text ("meaning lines 1-5 (-0.02)") added nothing, so it is not one
        if match is not None and (semantic > 0 or weights.rrf > 0):
            detail = f"lines {match.start_line}-{match.end_line} ({match.similarity:.2f})"
            share = weights.mix * semantic / value if value > 0 else 0.0
            reasons = (*reasons, Reason(ReasonKind.SEMANTIC, detail, share=round(share, 3)))
        mixed.append((value, replace(f, reasons=reasons)))
    mixed.sort(key=lambda pair: (-pair[0], pair[1].path))
    # new scores within [low, top]: the tail (all <= low) stays below, the head above
    scored = [replace(f, score=low + value * (top - low)) for value, f in mixed]
    return replace(ranking, files=(*head, *scored, *tail))
