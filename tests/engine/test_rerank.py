"""The second-stage blend: other scores re-order the top files, and nothing else."""

from __future__ import annotations

import pytest

from engine.model import Intent, RankedFile, Ranking
from engine.rerank import rerank


def ranking_of(*scores: float, pinned: tuple[str, ...] = ()) -> Ranking:
    files = tuple(
        RankedFile(path=f"f{i}.py", file_id=i, score=s, reasons=(), pinned=f"f{i}.py" in pinned)
        for i, s in enumerate(scores)
    )
    return Ranking(query="q", terms=("q",), intent=Intent.GENERAL, files=files)


def paths(ranking: Ranking) -> list[str]:
    return [f.path for f in ranking.files]


def test_no_mix_or_no_extra_scores_leave_the_ranking_as_it_is() -> None:
    first = ranking_of(4.0, 3.0, 2.0, 1.0)
    assert rerank(first, {"f3.py": 1.0}, mix=0.0) == first
    assert paths(rerank(first, {}, mix=0.5)) == paths(first)


def test_an_extra_score_lifts_a_file_within_the_depth() -> None:
    first = ranking_of(4.0, 3.9, 2.0, 1.0)
    second = rerank(first, {"f2.py": 1.0}, mix=0.5)
    assert paths(second) == ["f2.py", "f0.py", "f1.py", "f3.py"]
    scores = [f.score for f in second.files]
    assert scores == sorted(scores, reverse=True)


def test_files_below_the_depth_keep_their_place_and_stay_below() -> None:
    first = ranking_of(4.0, 3.0, 2.0, 1.0)
    second = rerank(first, {"f3.py": 1.0, "f1.py": 1.0}, mix=0.9, depth=2)
    assert paths(second) == ["f1.py", "f0.py", "f2.py", "f3.py"]
    assert min(f.score for f in second.files[:2]) >= second.files[2].score


def test_pinned_files_stay_first_and_are_not_counted_in_the_depth() -> None:
    first = ranking_of(1.0, 4.0, 3.0, pinned=("f0.py",))
    second = rerank(first, {"f2.py": 1.0}, mix=0.8, depth=2)
    assert paths(second) == ["f0.py", "f2.py", "f1.py"]


def test_a_mix_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match="mix"):
        rerank(ranking_of(1.0), {}, mix=1.5)
