"""Choose a level of detail for each ranked file so the pack makes the most of the budget.

Four passes over the ranked candidates, all on cached token estimates (no tokenizer, no file
reads), so it follows every keystroke:
1. the user's choices are fixed: overridden levels, pinned and --focus files always count,
   even over budget (the plan then says so);
2. breadth first, in ranked order, every file strong enough to matter gets its code in: the
   whole file when that costs little more than its focused view, else the focused view,
   else (too big for its cap, or not strong enough) an outline;
3. leftover budget upgrades the best files, focused to full, in ranked order;
4. what is still left adds outlines of further files, for orientation.
A plain greedy planner (whole files in ranked order) leaves the answer out whenever a large
file comes first; showing the question-relevant part of many files is what wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.levels import level_tokens
from engine.model import Index, Level, Plan, PlanEntry, PlanLimits, RankedFile, Ranking, Session

FILE_OVERHEAD = 24
"""Tokens of a file's heading, level line and fences in the rendered pack (measured: 14-22)."""
PACK_OVERHEAD = 60
"""Tokens of the pack's own header."""
FULL_IF_WITHIN = 1.25
"""Take the whole file when it costs at most this many times its focused view."""
SMALL_FILE = 400
"""A file this small goes in whole whenever it fits: focusing it saves nothing worth the cut."""
CODE_SCORE_SHARE = 0.12
"""Files scoring under this share of the best score get an outline, not their code."""


@dataclass(slots=True)
class _Candidate:
    ranked: RankedFile
    rank: int
    level: Level = Level.OFF
    tokens: int = 0
    automatic: bool = True


def plan(
    ranking: Ranking,
    index: Index,
    budget: int,
    session: Session = Session(),
    limits: PlanLimits = PlanLimits(),
    *,
    line_numbers: bool = False,
    cost_factor: float = 1.0,
    reserved: int = 0,
) -> Plan:
    """Pick a level per ranked file to fit `budget` tokens (an estimate; see engine.pack).

    Args:
        cost_factor: multiplies every estimated content cost; engine.pack sets it from the
            measured cost of the output format (JSON escaping makes content ~20 % dearer).
        reserved: tokens the pack's own sections (instructions, the diff) take before any
            file; they count like the user's own choices.
    """
    costs = _Costs(index, line_numbers, cost_factor)
    candidates = [
        _Candidate(r, i + 1) for i, r in enumerate(ranking.files[: limits.max_candidates])
    ]
    left = budget - PACK_OVERHEAD
    fixed_total = reserved
    notes: list[str] = []
    best_score = max((c.ranked.score for c in candidates if c.ranked.score > 0), default=0.0)
    # 1. the user's choices
    for c in candidates:
        chosen = session.overrides.get(c.ranked.path)
        if chosen is not None:
            c.automatic = False
            c.level = chosen
        elif c.ranked.pinned or c.ranked.focused:
            c.automatic = False
            chosen_cap = int(limits.chosen_cap * budget)
            c.level = _best_within(costs, c, chosen_cap, chosen_cap, code=True)
            if c.level is Level.OFF:  # chosen files always count, at their smallest
                c.level = Level.OUTLINE if costs.has_outline(c) else Level.FOCUSED
        if not c.automatic and c.level is not Level.OFF:
            c.tokens = costs.of(c, c.level) + FILE_OVERHEAD
            fixed_total += c.tokens
    left -= fixed_total
    if left < 0 and fixed_total > 0:
        what = "pinned and chosen files" + (" with the diff and instructions" if reserved else "")
        notes.append(f"your {what} exceed the budget by {-left:,} tokens")
    auto = [c for c in candidates if c.automatic]
    cap = int(limits.auto_cap * budget)
    # 2. breadth first: the code of every strong file
    for c in auto:
        strong = best_score > 0 and c.ranked.score >= CODE_SCORE_SHARE * best_score
        level = _best_within(costs, c, cap, left, code=strong)
        if level is not Level.OFF and level is not Level.OUTLINE:
            c.level, c.tokens = level, costs.of(c, level) + FILE_OVERHEAD
            left -= c.tokens
    # 3. upgrades, best first
    for c in auto:
        if c.level is Level.FOCUSED:
            full = costs.of(c, Level.FULL) + FILE_OVERHEAD
            if costs.raw(c, Level.FULL) <= cap and full - c.tokens <= left:
                left -= full - c.tokens
                c.level, c.tokens = Level.FULL, full
    # 4. outlines of the rest, for orientation
    for c in auto:
        if c.level is Level.OFF and c.ranked.score > 0:
            outline = costs.of(c, Level.OUTLINE) + FILE_OVERHEAD
            if costs.has_outline(c) and costs.raw(c, Level.OUTLINE) <= cap and outline <= left:
                c.level, c.tokens = Level.OUTLINE, outline
                left -= outline
    entries = tuple(
        PlanEntry(
            path=c.ranked.path,
            file_id=c.ranked.file_id,
            level=c.level,
            tokens=c.tokens - FILE_OVERHEAD,
            rank=c.rank,
            score=c.ranked.score,
            automatic=c.automatic,
            pinned=c.ranked.pinned or c.ranked.focused,
            matched_declarations=c.ranked.matched_declarations,
            reasons=c.ranked.reasons,
        )
        for c in candidates
        if c.level is not Level.OFF
    )
    total = budget - left
    return Plan(
        query=ranking.query,
        budget=budget,
        entries=entries,
        total_tokens=total,
        exact=False,
        over_budget=fixed_total > 0 and fixed_total + PACK_OVERHEAD > budget,
        notes=tuple(notes),
    )


class _Costs:
    """Level costs of candidate files, each computed once per plan."""

    __slots__ = ("factor", "index", "line_numbers", "memo")

    def __init__(self, index: Index, line_numbers: bool, factor: float) -> None:
        self.index = index
        self.line_numbers = line_numbers
        self.factor = factor
        self.memo: dict[tuple[int, Level], int] = {}

    def raw(self, c: _Candidate, level: Level) -> int:
        """Estimated content tokens of a file at a level."""
        key = (c.ranked.file_id, level)
        cost = self.memo.get(key)
        if cost is None:
            cost = level_tokens(
                self.index,
                c.ranked.file_id,
                level,
                c.ranked.matched_declarations,
                line_numbers=self.line_numbers,
            )
            self.memo[key] = cost
        return cost

    def of(self, c: _Candidate, level: Level) -> int:
        """Estimated tokens of a file at a level in the output format."""
        return int(self.raw(c, level) * self.factor + 0.5)

    def has_outline(self, c: _Candidate) -> bool:
        return bool(self.index.files[c.ranked.file_id].declarations)


def _best_within(costs: _Costs, c: _Candidate, cap: int, left: int, *, code: bool) -> Level:
    """The richest sensible level within the file's cap (content tokens, before the format's
    cost) and the tokens left (with the format's cost and the file's overhead)."""

    def fits(level: Level) -> bool:
        return costs.raw(c, level) <= cap and costs.of(c, level) + FILE_OVERHEAD <= left

    full = costs.of(c, Level.FULL)
    if code:
        focused = costs.of(c, Level.FOCUSED)
        if fits(Level.FULL) and (full <= SMALL_FILE or full <= FULL_IF_WITHIN * focused):
            return Level.FULL
        if focused < full and fits(Level.FOCUSED):
            return Level.FOCUSED
        if focused >= full and fits(Level.FULL):
            return Level.FULL
    if costs.has_outline(c) and fits(Level.OUTLINE):
        return Level.OUTLINE
    return Level.OFF


def greedy_plan(ranking: Ranking, index: Index, budget: int) -> Plan:
    """The baseline the planner must beat: whole files in ranked order while they fit."""
    left = budget - PACK_OVERHEAD
    entries = []
    for rank, ranked in enumerate(ranking.files, 1):
        cost = index.files[ranked.file_id].tokens + FILE_OVERHEAD
        if cost <= left:
            left -= cost
            entries.append(
                PlanEntry(
                    path=ranked.path,
                    file_id=ranked.file_id,
                    level=Level.FULL,
                    tokens=cost - FILE_OVERHEAD,
                    rank=rank,
                    score=ranked.score,
                    automatic=True,
                    reasons=ranked.reasons,
                )
            )
    return Plan(ranking.query, budget, tuple(entries), budget - left, False, False)
