"""Choose a level of detail for each ranked file so the pack makes the most of the budget.

Passes over the ranked candidates, all on cached token estimates (no tokenizer, no file
reads), so it follows every keystroke:
1. the user's choices are fixed: overridden levels, pinned and --focus files always count,
   even over budget (the plan then says so);
2. breadth first: each of the best files (PlanLimits.breadth_files, fewer on a small budget:
   PlanLimits.breadth_tokens) gets its code at its smallest: the first lines of its
   best-matching declaration (PlanLimits.breadth_lines), or the whole file when that costs
   little more; the weak ones among them (scoring under PlanLimits.code_score_share of the
   best) too, since the ranking put them there and an outline does not show the answer
   when one of them holds it (PlanLimits.weak_first);
3. depth: leftover budget deepens the strong ones in ranked order: the best declaration to
   engine.focus.MATCH_LINES, then whole, then every matching declaration, then the whole
   file;
4. further strong files get their smallest code view, then their depth, while budget lasts;
5. (PlanLimits.weak_first off) what is left gives the weak files among the best their
   smallest code view;
6. what is still left gives the next files (PlanLimits.tail_files) the first lines of their
   best declaration (PlanLimits.tail_lines); PlanLimits.tail_after moves this step in
   between the depth steps of 3;
7. what is still left adds outlines of further files, for orientation.
A less detailed level is never used where it would cost more than a richer one (an outline of
a hundred signatures can cost more than a focused view): the richer, cheaper one is used.
A plain greedy planner (whole files in ranked order) leaves the answer out whenever a large
file comes first; showing the question-relevant part of many files is what wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.focus import MATCH_LINES, WHOLE_LINES
from engine.levels import level_tokens
from engine.memo import ArrayMemo
from engine.model import Index, Level, Plan, PlanEntry, PlanLimits, RankedFile, Ranking, Session
from engine.tables import declaration_spans

FILE_OVERHEAD = 19
"""Tokens of a file's heading, level line and fences in a Markdown pack (session 27: median
18.5, p10-p90 16-20; see engine.pack.FORMAT_FILE_OVERHEAD); engine.pack passes each format's
own."""
PACK_REASONS = 3
"""Reasons each pack entry carries (the strongest: the user's choices, then the matching
declarations, then words): 20 of them per file, as JSON objects of ~30 tokens, spent a quarter
of an 8,000-token pack on evidence rather than code (DEV, issue 11); as short strings
(session 27) three cost ~22 tokens a file."""
PACK_OVERHEAD = 60
"""Tokens of the pack's own header."""
RICHER: dict[Level, tuple[Level, ...]] = {
    Level.OUTLINE: (Level.FOCUSED, Level.FULL),
    Level.FOCUSED: (Level.FULL,),
    Level.FULL: (),
    Level.OFF: (),
}
"""The levels showing more than each level, in order."""


@dataclass(slots=True)
class _Candidate:
    ranked: RankedFile
    rank: int
    level: Level = Level.OFF
    kept: int = 0
    """How many of the file's matched declarations its focused view keeps whole."""
    best_lines: int = MATCH_LINES
    """Lines of the best one kept before the cut (see engine.levels)."""
    tokens: int = 0
    automatic: bool = True
    reasons: int = PACK_REASONS
    """Reasons its pack entry carries."""

    @property
    def matched(self) -> tuple[int, ...]:
        # none kept: the ranking need not work the file's matches out (engine.explain)
        return tuple(self.ranked.matched_declarations[: self.kept]) if self.kept else ()


def plan(
    ranking: Ranking,
    index: Index,
    budget: int,
    session: Session = Session(),
    limits: PlanLimits = PlanLimits(),
    *,
    line_numbers: bool = False,
    cost_factor: float = 1.0,
    file_overhead: int = FILE_OVERHEAD,
    reserved: int = 0,
    reason_tokens: int = 0,
) -> Plan:
    """Pick a level per ranked file to fit `budget` tokens (an estimate; see engine.pack).

    Args:
        cost_factor: multiplies every estimated content cost; engine.pack sets it from the
            measured cost of the output format (JSON escaping makes content ~20 % dearer).
        file_overhead: tokens of each file's own wrapping in the output format.
        reserved: tokens the pack's own sections (instructions, the diff) take before any
            file; they count like the user's own choices.
        reason_tokens: tokens each reason an entry carries costs in the output format
            (file_overhead counts PACK_REASONS of them); tail files carry fewer.
    """
    costs = _Costs(index, line_numbers, cost_factor, file_overhead, reason_tokens)
    candidates = [
        _Candidate(r, i + 1) for i, r in enumerate(ranking.files[: limits.max_candidates])
    ]
    fixed_total = reserved
    fixed_total += sum(_fix_choice(costs, c, session, limits, budget) for c in candidates)
    left = budget - PACK_OVERHEAD - fixed_total
    notes: list[str] = []
    if left < 0 and fixed_total > 0:
        what = "pinned and chosen files" + (" with the diff and instructions" if reserved else "")
        notes.append(f"your {what} exceed the budget by {-left:,} tokens")
    auto = [c for c in candidates if c.automatic]
    best_score = max((c.ranked.score for c in candidates if c.ranked.score > 0), default=0.0)
    strong = [
        c for c in auto if best_score > 0 and c.ranked.score >= limits.code_score_share * best_score
    ]
    cap = int(limits.auto_cap * budget)
    fill = _Filler(costs, limits, cap, left)
    breadth = limits.breadth_files
    if limits.breadth_tokens:
        breadth = min(breadth, max(1, budget // limits.breadth_tokens))
    weak = [c for c in auto[:breadth] if c.ranked.score > 0]
    tail = [c for c in auto[breadth : breadth + limits.tail_files] if c.ranked.score > 0]
    depth = (fill.keep_best_longer, fill.keep_best_whole, fill.keep_every_match,
             fill.keep_whole_file)  # fmt: skip
    for number, group in enumerate((strong[:breadth], strong[breadth:])):
        for c in group:  # 2 and 4: the smallest code view of each
            fill.smallest_code(c)
        if number == 0 and limits.weak_first:  # 2: the weak among them too
            for c in weak:
                if c.level is Level.OFF:
                    fill.smallest_code(c)
        # 3: the best declaration to MATCH_LINES, whole, then every matching one, the file
        for step, deepen in enumerate(depth):
            if number == 0 and step == limits.tail_after:
                fill.tail(tail)  # 6, earlier: between the best files' depth steps
            for c in group:
                if c.level is Level.FOCUSED:
                    deepen(c)
    for c in weak:  # 5: the weak among the best files, their code (if not given in 2)
        if c.level is Level.OFF:
            fill.smallest_code(c)
    fill.tail(tail)  # 6: the next files, the first lines of their code
    for c in auto:  # 7: outlines of the rest, for orientation
        if c.level is Level.OFF and c.ranked.score > 0:
            fill.outline(c)
    entries = tuple(
        PlanEntry(
            path=c.ranked.path,
            file_id=c.ranked.file_id,
            level=c.level,
            tokens=c.tokens - costs.overhead_of(c),
            rank=c.rank,
            score=c.ranked.score,
            automatic=c.automatic,
            pinned=c.ranked.pinned or c.ranked.focused,
            matched_declarations=c.matched,
            reasons=tuple(c.ranked.reasons[: c.reasons]),
            best_lines=c.best_lines,
        )
        for c in candidates
        if c.level is not Level.OFF
    )
    return Plan(
        query=ranking.query,
        budget=budget,
        entries=entries,
        total_tokens=budget - fill.left,
        exact=False,
        over_budget=fixed_total > 0 and fixed_total + PACK_OVERHEAD > budget,
        notes=tuple(notes),
    )


def _fix_choice(
    costs: _Costs, c: _Candidate, session: Session, limits: PlanLimits, budget: int
) -> int:
    """Fix the level of a file the user chose (override, pin, focus); return its tokens."""
    chosen = session.overrides.get(c.ranked.path)
    if chosen is None and not (c.ranked.pinned or c.ranked.focused):
        return 0
    c.automatic = False
    c.kept = len(c.ranked.matched_declarations)
    c.best_lines = WHOLE_LINES
    if chosen is not None:
        c.level = costs.cheapest(c, chosen)
    else:
        chosen_cap = int(limits.chosen_cap * budget)
        full = costs.of(c, Level.FULL)
        if costs.raw(c, Level.FULL) <= chosen_cap and (
            full <= limits.small_file or full <= limits.full_if_within * costs.of(c, Level.FOCUSED)
        ):
            c.level = Level.FULL
        elif costs.raw(c, Level.FOCUSED) <= chosen_cap:
            c.level = costs.cheapest(c, Level.FOCUSED)
        else:  # chosen files always count, at their smallest
            c.level = costs.cheapest(c, Level.OUTLINE if costs.has_outline(c) else Level.FOCUSED)
    if c.level is Level.OFF:
        return 0
    c.tokens = costs.of(c, c.level) + costs.overhead_of(c)
    return c.tokens


class _Filler:
    """Spends the budget left on automatic files, one view at a time."""

    __slots__ = ("cap", "costs", "left", "limits")

    def __init__(self, costs: _Costs, limits: PlanLimits, cap: int, left: int) -> None:
        self.costs = costs
        self.limits = limits
        self.cap = cap
        self.left = left
        """Tokens still free (with each file's overhead and the format's cost)."""

    def _take(self, c: _Candidate, level: Level, kept: int, best_lines: int) -> bool:
        """Move `c` to a view if it is within the cap and the tokens left; True if moved."""
        before = (c.level, c.kept, c.best_lines)
        c.level, c.kept, c.best_lines = level, kept, best_lines
        raw = self.costs.raw(c, level)
        tokens = self.costs.of(c, level) + self.costs.overhead_of(c)
        extra = tokens - (c.tokens if before[0] is not Level.OFF else 0)
        if raw > self.cap or extra > self.left:
            c.level, c.kept, c.best_lines = before
            return False
        self.left -= extra
        c.tokens = tokens
        return True

    def smallest_code(self, c: _Candidate, lines: int = 0) -> None:
        """The cheapest view with code: the best declaration (cut after `lines`, or
        PlanLimits.breadth_lines), or the whole file if that costs little more (or less)."""
        if self.costs.overhead_of(c) > self.left:
            return  # the budget is spent: no view fits, and the file's matches need no work
        c.kept = min(1, len(c.ranked.matched_declarations))
        c.best_lines = lines or self.limits.breadth_lines
        floor = min(self.costs.of_best_lines(c), self.costs.of(c, Level.FULL))
        if floor + self.costs.overhead_of(c) > self.left:
            return  # neither view fits: the focused one shows the best declaration's lines
        focused = self.costs.of(c, Level.FOCUSED)
        full = self.costs.of(c, Level.FULL)
        small = full <= self.limits.small_file or full <= self.limits.full_if_within * focused
        if small and self._take(c, Level.FULL, c.kept, c.best_lines):
            return
        if focused < full:
            self._take(c, Level.FOCUSED, c.kept, c.best_lines)

    def tail(self, tail: list[_Candidate]) -> None:
        """The first PlanLimits.tail_lines lines of each tail file's best declaration, with
        PlanLimits.tail_reasons reasons (files given a view already are passed over)."""
        for c in tail:
            if c.level is Level.OFF:
                c.reasons = self.limits.tail_reasons
                self.smallest_code(c, self.limits.tail_lines)
                if c.level is Level.OFF:
                    c.reasons = PACK_REASONS

    def keep_best_longer(self, c: _Candidate) -> None:
        """Deepen a focused file: its best declaration up to MATCH_LINES (a no-op unless
        the breadth step cut it shorter)."""
        if c.best_lines < MATCH_LINES:
            self._richer_focus(c, c.kept, MATCH_LINES)

    def keep_best_whole(self, c: _Candidate) -> None:
        """Deepen a focused file: its best declaration whole (up to WHOLE_LINES)."""
        self._richer_focus(c, c.kept, WHOLE_LINES)

    def keep_every_match(self, c: _Candidate) -> None:
        """Deepen a focused file: every matching declaration."""
        self._richer_focus(c, len(c.ranked.matched_declarations), c.best_lines)

    def keep_whole_file(self, c: _Candidate) -> None:
        """Deepen a focused file: the whole file."""
        self._take(c, Level.FULL, c.kept, c.best_lines)

    def _richer_focus(self, c: _Candidate, kept: int, best_lines: int) -> None:
        """Move to a richer focused view; skipped when it adds nothing, the whole file
        instead when that costs no more."""
        before = self.costs.raw(c, Level.FOCUSED)
        c_kept, c_lines = c.kept, c.best_lines
        c.kept, c.best_lines = kept, best_lines
        after = self.costs.raw(c, Level.FOCUSED)
        full = self.costs.raw(c, Level.FULL)
        c.kept, c.best_lines = c_kept, c_lines
        if after <= before:
            return  # nothing more to show this way
        if after >= full:
            self._take(c, Level.FULL, kept, best_lines)
        else:
            self._take(c, Level.FOCUSED, kept, best_lines)

    def outline(self, c: _Candidate) -> None:
        """An outline for orientation; the smallest code view instead where that is no
        dearer."""
        if self.costs.overhead_of(c) > self.left or not self.costs.has_outline(c):
            return  # the budget is spent (no view fits), or there is no outline
        c.kept, c.best_lines = 0, MATCH_LINES
        level = self.costs.cheapest(c, Level.OUTLINE)
        self._take(c, level, 0, MATCH_LINES)


class _Costs:
    """Level costs of candidate files, each computed once per plan."""

    __slots__ = ("factor", "index", "line_numbers", "memo", "overhead", "reason_tokens")

    def __init__(
        self, index: Index, line_numbers: bool, factor: float, overhead: int, reason_tokens: int
    ) -> None:
        self.index = index
        self.line_numbers = line_numbers
        self.factor = factor
        self.overhead = overhead
        """Tokens of a file's wrapping in the output format (with PACK_REASONS reasons)."""
        self.reason_tokens = reason_tokens
        """Tokens of each reason in that wrapping."""
        self.memo = _LEVEL_COSTS.get(index.line_tokens, line_numbers, dict)
        """Costs by (file, level, kept declarations, best lines): they do not depend on the
        question, so the plans of the next keystrokes reuse them."""
        if len(self.memo) > LEVEL_COSTS_KEPT:
            self.memo.clear()

    def overhead_of(self, c: _Candidate) -> int:
        """Tokens of a file's wrapping with the reasons it carries."""
        return self.overhead - self.reason_tokens * (PACK_REASONS - c.reasons)

    def raw(self, c: _Candidate, level: Level) -> int:
        """Estimated content tokens of a file at a level (its current `kept` declarations)."""
        focused = level is Level.FOCUSED
        matched = tuple(c.ranked.matched_declarations[: c.kept]) if focused and c.kept else ()
        key = (c.ranked.file_id, level, matched, c.best_lines if focused else 0)
        cost = self.memo.get(key)
        if cost is None:
            cost = level_tokens(
                self.index,
                c.ranked.file_id,
                level,
                matched,
                line_numbers=self.line_numbers,
                best_lines=c.best_lines,
            )
            self.memo[key] = cost
        return cost

    def of(self, c: _Candidate, level: Level) -> int:
        """Estimated tokens of a file at a level in the output format."""
        return int(self.raw(c, level) * self.factor + 0.5)

    def of_best_lines(self, c: _Candidate) -> int:
        """A floor under a file's cost at FOCUSED (with its best declaration) and at FULL:
        the tokens of the best declaration's lines that the focused view keeps. Computed
        from two cached prefix sums, so that files that cannot fit are passed over without
        working out their focused view (most of a plan's candidates, once the budget is
        spent)."""
        if not c.kept:
            return 0
        decls = declaration_spans(self.index.files, c.ranked.file_id)
        position = c.ranked.matched_declarations[0]
        if not 0 <= position < len(decls):
            return 0
        decl = decls[position]
        last = min(decl.end_line, decl.start_line + c.best_lines - 1)
        raw = self.index.tokens_of_lines(c.ranked.file_id, decl.start_line, last)
        return int(raw * self.factor + 0.5)

    def has_outline(self, c: _Candidate) -> bool:
        return bool(self.index.files[c.ranked.file_id].declarations)

    def cheapest(self, c: _Candidate, level: Level) -> Level:
        """`level`, or a richer level where that costs no more (ties go to the richer)."""
        best, best_cost = level, self.raw(c, level) if level is not Level.OFF else 0
        for richer in RICHER[level]:
            cost = self.raw(c, richer)
            if cost <= best_cost:
                best, best_cost = richer, cost
        return best


_LEVEL_COSTS: ArrayMemo[dict[tuple[int, Level, tuple[int, ...], int], int]] = ArrayMemo()
"""Level costs per index (by its line token counts) and line numbering."""
LEVEL_COSTS_KEPT = 200_000
"""Level costs kept per index before they are forgotten (a few hundred a keystroke)."""


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
                    reasons=tuple(ranked.reasons[:PACK_REASONS]),
                )
            )
    return Plan(ranking.query, budget, tuple(entries), budget - left, False, False)
