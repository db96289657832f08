"""Plan, render and measure: the pack that really fits the budget.

The planner works on cached estimates; this module renders its plan, counts the real text
(headers, fences and escaping included) with the real tokenizer, and corrects: when over, the
lowest-ranked automatic files step down a level until it fits; when well under (estimates are
pessimistic), the planner runs again with the slack added, and the better fitting plan wins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine.analyse import read_text as read_file_text
from engine.levels import level_tokens
from engine.model import Format, Index, Level, Plan, PlanEntry, PlanLimits, Ranking, Rendered, Session
from engine.plan import plan
from engine.render import TokenCounter, render

STEP_DOWN: dict[Level, Level] = {
    Level.FULL: Level.FOCUSED,
    Level.FOCUSED: Level.OUTLINE,
    Level.OUTLINE: Level.OFF,
}
"""The next smaller level of each level."""
RETRY_SLACK = 0.08
"""Re-plan when the measured pack uses less than (1 - this) of the budget."""
MAX_ROUNDS = 24
"""Render-and-measure rounds at most; each steps several files down."""


def pack(
    ranking: Ranking,
    index: Index,
    budget: int,
    fmt: Format,
    *,
    counter: TokenCounter,
    session: Session = Session(),
    read_text: Callable[[str], str] | None = None,
    line_numbers: bool = False,
    limits: PlanLimits = PlanLimits(),
) -> tuple[Plan, Rendered]:
    """Return the plan and its rendering, fitted so that the rendered text fits `budget`.

    Files the user fixed (overrides, pins, focus) are never stepped down; if they alone
    exceed the budget the plan says so (Plan.over_budget) and the pack holds them anyway.
    """
    texts: dict[str, str] = {}

    def cached_read(path: str) -> str:
        text = texts.get(path)
        if text is None:
            text = read_text(path) if read_text is not None else read_file_text(index.root, path)
            texts[path] = text
        return text

    def fitted(target: int) -> tuple[Plan, Rendered]:
        draft = plan(ranking, index, target, session, limits, line_numbers=line_numbers)
        draft = replace(draft, budget=budget)
        return fit(draft, index, budget, fmt, counter, cached_read, line_numbers)

    best_plan, best = fitted(budget)
    target = budget
    for _ in range(2):
        if best.tokens >= budget * (1 - RETRY_SLACK) or best_plan.over_budget:
            break
        target += budget - best.tokens
        candidate_plan, candidate = fitted(target)
        if candidate.tokens <= budget and candidate.tokens > best.tokens:
            best_plan, best = candidate_plan, candidate
        else:
            break
    return best_plan, best


def fit(
    draft: Plan,
    index: Index,
    budget: int,
    fmt: Format,
    counter: TokenCounter,
    read_text: Callable[[str], str],
    line_numbers: bool,
) -> tuple[Plan, Rendered]:
    """Render `draft`; while over budget, step the lowest-ranked automatic files down."""
    current = draft
    rendered = render(current, index, fmt, counter=counter, read_text=read_text, line_numbers=line_numbers)
    for _ in range(MAX_ROUNDS):
        if rendered.tokens <= budget:
            break
        stepped = _step_down(current, index, rendered.tokens - budget, line_numbers)
        if stepped is None:
            break  # only the user's own choices are left
        current = stepped
        rendered = render(current, index, fmt, counter=counter, read_text=read_text, line_numbers=line_numbers)
    exact = replace(
        current,
        total_tokens=rendered.tokens,
        exact=True,
        entries=tuple(
            replace(e, tokens=t) for e, t in zip(current.entries, rendered.file_tokens, strict=True)
        )
        if len(rendered.file_tokens) == len(current.entries)
        else current.entries,
    )
    return exact, rendered


def _step_down(current: Plan, index: Index, excess: int, line_numbers: bool) -> Plan | None:
    """Step automatic entries down, lowest rank first, until the estimated saving covers
    `excess`; None when no automatic entry is left to step down."""
    entries = list(current.entries)
    saved = 0
    changed = False
    for position in range(len(entries) - 1, -1, -1):
        entry = entries[position]
        if not entry.automatic:
            continue
        lower = STEP_DOWN[entry.level]
        new_tokens = level_tokens(
            index, entry.file_id, lower, entry.matched_declarations, line_numbers=line_numbers
        )
        if lower is Level.OUTLINE and not index.files[entry.file_id].declarations:
            lower, new_tokens = Level.OFF, 0
        saved += max(entry.tokens - new_tokens, 1)
        entries[position] = replace(entry, level=lower, tokens=new_tokens)
        changed = True
        if saved >= excess:
            break
    if not changed:
        return None
    kept = tuple(e for e in entries if e.level is not Level.OFF)
    return replace(current, entries=kept, total_tokens=current.total_tokens - saved)


__all__ = ["PlanEntry", "pack"]
