"""A second stage over a ranking: blend the lexical scores of the top files with other scores.

The lexical ranking (`engine.rank`) is the first stage and stays the whole answer when no
other signal exists. A later stage that scores files another way (for instance the cosine
similarity of each file's best chunk to the question, computed off the keystroke path) gives
a score in 0..1 for some of the top `depth` files; `rerank` re-orders those by a weighted mix
and leaves everything else as it was: the user's chosen files first, files below `depth` after.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from engine.model import RankedFile, Ranking


def rerank(ranking: Ranking, extra: Mapping[str, float], *, mix: float, depth: int = 50) -> Ranking:
    """Re-order the top automatic files by (1 - mix) x lexical + mix x extra score.

    Args:
        ranking: the first-stage ranking.
        extra: path -> score in 0..1 from another stage; a file it leaves out scores 0.
        mix: weight of the extra score, 0 (the ranking as it is) to 1 (the extra score only).
        depth: how many automatic files (after pinned and --focus ones) are re-ordered.

    Returns:
        The same files with new order and scores (on the scale of the lexical scores, so the
        app's score bars keep their meaning); reasons are kept as they were.
    """
    if not 0.0 <= mix <= 1.0:
        raise ValueError(f"mix must be within 0..1, not {mix}")
    files = ranking.files
    chosen = 0
    while chosen < len(files) and (files[chosen].pinned or files[chosen].focused):
        chosen += 1
    head = files[chosen : chosen + depth]
    if not head or mix == 0.0:
        return ranking
    top = max(f.score for f in head) or 1.0
    blended = [
        ((1.0 - mix) * f.score / top + mix * min(max(extra.get(f.path, 0.0), 0.0), 1.0), f)
        for f in head
    ]
    blended.sort(key=lambda item: (-item[0], item[1].path))
    rest = files[chosen + depth :]
    floor = rest[0].score if rest else 0.0  # re-ordered files stay above the ones below
    reordered: list[RankedFile] = [
        replace(f, score=max(value * top, floor)) for value, f in blended
    ]
    return replace(ranking, files=(*files[:chosen], *reordered, *rest))
