"""Plan, render and measure: the pack that really fits the budget.

The planner works on cached estimates; this module renders its plan, counts the real text
(headers, fences and escaping included) with the real tokenizer, and corrects: when over, the
lowest-ranked automatic files step down a level until it fits; when well under (estimates are
pessimistic), the planner runs again with the slack added, and the better fitting plan wins.
Last, where the estimates were too close to call, the exact counts settle that no file is
shown at a level that costs more than a richer one (`_richer_where_no_dearer`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import replace
from typing import TYPE_CHECKING

from engine.analyse import read_text as read_file_text
from engine.diff_section import SECTION_OVERHEAD, ChangesSection
from engine.focus import MATCH_LINES
from engine.levels import level_tokens, render_level, shown_level
from engine.model import (
    Format,
    Index,
    Level,
    Plan,
    PlanEntry,
    PlanLimits,
    Ranking,
    Rendered,
    Session,
)
from engine.plan import RICHER, plan
from engine.render import TokenCounter, file_cost, render
from engine.shown_path import shown_path

if TYPE_CHECKING:
    from engine.redact import SecretPolicy

STEP_DOWN: dict[Level, tuple[Level, ...]] = {
    Level.FULL: (Level.FOCUSED, Level.OUTLINE, Level.OFF),
    Level.FOCUSED: (Level.OUTLINE, Level.OFF),
    Level.OUTLINE: (Level.OFF,),
}
"""The smaller levels of each level, next first."""
CLOSE_CALL = 1.25
"""A richer level whose estimate is within this factor of a level's exact count is counted
exactly, in case it costs no more."""
SURE_DEARER = 2.0
"""A richer level estimated at more than this many times a chosen level's exact count is
not counted: the estimates run at most ~1.3 times the exact count (markers at 12 tokens)."""
RETRY_SLACK = 0.06
"""Re-plan when the measured pack uses less than (1 - this) of the budget."""
FORMAT_COST: dict[Format, float] = {Format.MARKDOWN: 1.0, Format.XML: 1.03, Format.JSON: 1.2}
"""First guess of each format's cost per content token; corrected by measurement."""
FORMAT_FILE_OVERHEAD: dict[Format, int] = {Format.MARKDOWN: 19, Format.XML: 21, Format.JSON: 62}
"""Tokens of each file's wrapping apart from its content: heading, level line and fence
(Markdown), the <file> element (XML), the one-line object with its keys and
engine.plan.PACK_REASONS reasons (JSON). Measured in session 27 (/tmp/pack/measure3.py: 57
DEV questions, every 4th, 8,000-token packs, o200k; a pack's tokens less its header's and its
contents' as the format escapes them, per file): median 18.5 / 21.1 / 62.0, p10-p90 16-20 /
18-23 / 55-66. The JSON object cost 142 (131-148) before its reasons became strings and it
went on one line (engine.render.to_json); the planner then counted 150."""
FORMAT_REASON_TOKENS: dict[Format, int] = {Format.JSON: 7}
"""Tokens of each reason in a format's file wrapping (JSON: a short string, median 7.3 in the
same run; 28.9 as an object before session 27); the others show no reasons."""
MAX_REPLANS = 4
"""Plan-render-measure rounds when rescaling the planning target."""
MAX_ROUNDS = 24
"""Render-and-measure rounds at most; each steps several files down."""
QUESTION_SHARE = 0.25
"""Share of the budget the question quoted at the top of a pack may take; a longer one (a
pasted log, a whole bug report) is cut in the middle, its start and end kept, so that the
pack still has room for code and never silently exceeds its budget."""
NOTE_FILES = 3
"""Files a note about levels shown richer than set names before it counts the rest."""
QUESTION_ALLOWANCE = 64
"""Question tokens the planner's header estimate already covers."""


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
    instructions: str = "",
    changes: ChangesSection | None = None,
    secrets: SecretPolicy | None = None,
    views: MutableMapping[tuple[object, ...], str] | None = None,
) -> tuple[Plan, Rendered]:
    """Return the plan and its rendering, fitted so that the rendered text fits `budget`.

    With `secrets`, every rendering is scanned (and redacted) before it is counted, so the
    fitting measures the text that leaves.

    Files the user fixed (overrides, pins, focus) are never stepped down; if they alone
    exceed the budget the plan says so (Plan.over_budget) and the pack holds them anyway.
    The instructions and the diff section (already fitted, see engine.diff_section) are
    placed first and counted before any file. `views` keeps files' views between packs
    (engine.render); each call keeps its own without it.
    """
    texts: dict[str, str] = {}
    views = {} if views is None else views
    instructions_tokens = counter.count(instructions) if instructions.strip() else 0
    changes_tokens = changes.tokens if changes is not None else 0
    reserved = section_tokens(instructions_tokens, changes)
    question, question_note = fit_question(ranking.query, budget, counter)
    if question_note:
        ranking = replace(ranking, query=question)  # the words it ranked by stay in `terms`
    reserved += max(0, counter.count(question) - QUESTION_ALLOWANCE)

    def cached_read(path: str) -> str:
        text = texts.get(path)
        if text is None:
            text = read_text(path) if read_text is not None else read_file_text(index.root, path)
            texts[path] = text
        return text

    def attempt(factor: float) -> tuple[Plan, Rendered]:
        draft = plan(
            ranking,
            index,
            budget,
            session,
            limits,
            line_numbers=line_numbers,
            cost_factor=factor,
            file_overhead=FORMAT_FILE_OVERHEAD[fmt],
            reason_tokens=FORMAT_REASON_TOKENS.get(fmt, 0),
            reserved=reserved,
        )
        draft = replace(
            draft, changes_tokens=changes_tokens, instructions_tokens=instructions_tokens
        )
        return draft, draw(draft)

    drawn: dict[tuple[object, ...], Rendered] = {}

    def draw(draft: Plan) -> Rendered:
        # the re-plans often land on a plan already rendered (84 of 264 rounds over the
        # bench's 160 keystrokes on flask at 8k): what the text shows of it is the same, so
        # is its rendering (the entries' token counts are estimates the text does not show)
        key = (draft.query, draft.budget, *(replace(e, tokens=0) for e in draft.entries))
        done = drawn.get(key)
        if done is None:
            done = drawn[key] = _draw(draft)
        return done

    def _draw(draft: Plan) -> Rendered:
        return render(
            draft,
            index,
            fmt,
            counter=counter,
            read_text=cached_read,
            line_numbers=line_numbers,
            instructions=instructions,
            changes=changes,
            secrets=secrets,
            views=views,
        )

    # The planner's estimates cover file contents, not the format's own cost (JSON escapes
    # every newline and quote, XML every angle bracket): measure, correct the cost factor,
    # plan again, and keep the fullest pack that fits. Stepping files down is the last resort.
    factor = FORMAT_COST[fmt]
    best: tuple[Plan, Rendered] | None = None
    for _ in range(MAX_REPLANS):
        draft, rendered = attempt(factor)
        if rendered.tokens <= budget and (best is None or _worth(draft, rendered) > _worth(*best)):
            best = (draft, rendered)
        if draft.over_budget or budget * (1 - RETRY_SLACK) <= rendered.tokens <= budget:
            break
        if draft.total_tokens <= 0 or rendered.tokens <= 0:
            break
        factor *= rendered.tokens / draft.total_tokens
        if rendered.tokens > budget:
            factor *= 1.02  # aim a little under, so the next round lands inside
    if best is None:
        best = fit(draft, rendered, index, budget, draw, line_numbers)
    fitted, rendered = _exact(*best)
    richer = _richer_where_no_dearer(
        fitted, index, counter, cached_read, line_numbers, session.overrides, fmt
    )
    if richer is not fitted:
        # a richer level's text costs no more, but JSON escapes its newlines and quotes and
        # XML its brackets: it is kept only if the pack still fits (or did not before)
        moved, moved_rendered = _exact(richer, draw(richer))
        if moved_rendered.tokens <= budget or rendered.tokens > budget:
            fitted, rendered = moved, moved_rendered
    notes: tuple[str, ...] = (question_note,) if question_note else ()
    notes += choice_notes(fitted, session, redact=secrets is None or secrets.redact)
    if rendered.tokens > budget and not fitted.over_budget:
        over = rendered.tokens - budget
        notes += (f"the pack takes {rendered.tokens:,} tokens, {over:,} over the budget",)
    return replace(fitted, notes=(*fitted.notes, *notes)), rendered


def fit_question(query: str, budget: int, counter: TokenCounter) -> tuple[str, str]:
    """The question as the pack quotes it, and a note when it had to be cut.

    A question over QUESTION_SHARE of the budget keeps its start and its end (where a stack
    trace's cause and a report's ask usually are) around a marker saying how much was left out.
    """
    limit = max(1, int(budget * QUESTION_SHARE))
    tokens = counter.count(query)
    if tokens <= limit:
        return query, ""
    keep = int(len(query) * limit / tokens)
    trimmed = ""
    for _ in range(8):
        half = max(0, keep // 2)
        head, tail = query[:half], query[len(query) - half :] if half else ""
        left_out = tokens - counter.count(head + tail)
        trimmed = f"{head}\n[… {left_out:,} tokens of the question left out …]\n{tail}"
        if counter.count(trimmed) <= limit:
            break
        keep = int(keep * 0.8)
    note = (
        f"the question takes {tokens:,} tokens, over a quarter of the budget: the pack quotes"
        f" its start and end ({counter.count(trimmed):,} tokens); all of it was used to rank"
    )
    return trimmed, note


def section_tokens(instructions_tokens: int, changes: ChangesSection | None) -> int:
    """Tokens the pack's own sections take before any file (their headings included)."""
    reserved = instructions_tokens + (8 if instructions_tokens else 0)
    if changes is not None:
        reserved += changes.tokens + SECTION_OVERHEAD
    return reserved


def fit(
    draft: Plan,
    rendered: Rendered,
    index: Index,
    budget: int,
    draw: Callable[[Plan], Rendered],
    line_numbers: bool,
) -> tuple[Plan, Rendered]:
    """While the rendering of `draft` is over budget, step the lowest-ranked automatic
    files down a level and render again."""
    current = draft
    for _ in range(MAX_ROUNDS):
        if rendered.tokens <= budget:
            break
        stepped = _step_down(current, index, rendered.tokens - budget, line_numbers)
        if stepped is None:
            break  # only the user's own choices are left
        current = stepped
        rendered = draw(current)
    return current, rendered


def _worth(draft: Plan, rendered: Rendered) -> tuple[float, int]:
    """How good a fitted pack is: code of the best-ranked files first, then tokens used."""
    code = sum(1.0 / e.rank for e in draft.entries if e.level in (Level.FULL, Level.FOCUSED))
    return round(code, 9), rendered.tokens


def _exact(current: Plan, rendered: Rendered) -> tuple[Plan, Rendered]:
    """The plan with the measured totals and per-file token counts of its rendering."""
    entries = current.entries
    if len(rendered.file_tokens) == len(entries):
        entries = tuple(
            replace(e, tokens=t) for e, t in zip(entries, rendered.file_tokens, strict=True)
        )
    return replace(current, entries=entries, total_tokens=rendered.tokens, exact=True), rendered


def _step_down(current: Plan, index: Index, excess: int, line_numbers: bool) -> Plan | None:
    """Step automatic entries down, lowest rank first, until the estimated saving covers
    `excess`; None when no automatic entry is left to step down.

    A focused view keeping several declarations first keeps only its best one; a level is
    skipped where it would not cost less (an outline dearer than the focused view).
    """
    entries = list(current.entries)
    saved = 0
    changed = False
    for position in range(len(entries) - 1, -1, -1):
        entry = entries[position]
        if not entry.automatic:
            continue
        lower = _smaller(entry, index, line_numbers)
        saved += max(entry.tokens - lower.tokens, 1)
        entries[position] = lower
        changed = True
        if saved >= excess:
            break
    if not changed:
        return None
    kept = tuple(e for e in entries if e.level is not Level.OFF)
    return replace(current, entries=kept, total_tokens=current.total_tokens - saved)


def _smaller(entry: PlanEntry, index: Index, line_numbers: bool) -> PlanEntry:
    """The entry one step smaller: its focused view reduced to the best declaration cut
    after MATCH_LINES, or the next cheaper level."""
    best_only = entry.matched_declarations[:1]
    if entry.level is Level.FOCUSED and (
        len(entry.matched_declarations) > 1 or entry.best_lines > MATCH_LINES
    ):
        tokens = level_tokens(
            index, entry.file_id, Level.FOCUSED, best_only, line_numbers=line_numbers
        )
        if tokens < entry.tokens:
            return replace(
                entry, matched_declarations=best_only, best_lines=MATCH_LINES, tokens=tokens
            )
    has_outline = bool(index.files[entry.file_id].declarations)
    for lower in STEP_DOWN[entry.level]:
        if lower is Level.OFF:
            break
        if lower is Level.OUTLINE and not has_outline:
            continue
        tokens = level_tokens(index, entry.file_id, lower, best_only, line_numbers=line_numbers)
        if tokens < entry.tokens:
            return replace(
                entry, level=lower, matched_declarations=best_only, best_lines=MATCH_LINES,
                tokens=tokens,
            )  # fmt: skip
    return replace(entry, level=Level.OFF, tokens=0)


def _richer_where_no_dearer(
    current: Plan,
    index: Index,
    counter: TokenCounter,
    read_text: Callable[[str], str],
    line_numbers: bool,
    chosen: Mapping[str, Level] | None = None,
    fmt: Format = Format.MARKDOWN,
) -> Plan:
    """Move each entry whose richer level costs no more, counted exactly, to that level (an
    outline of a hundred signatures can cost more than a focused view, a focused view of a
    small file more than the file). Returns `current` itself when nothing moves.

    Entries carry exact counts here (see _exact); for the planner's picks a richer level is
    counted only when its estimate is a close call, so this rarely reads or counts anything.
    A level the user chose (`chosen`) is settled exactly from that level up
    (engine.levels.shown_level), whatever the estimates said, so that a level set by hand
    never costs more than a richer one either, counted as the pack's format `fmt` carries
    each level.
    """
    entries = list(current.entries)
    changed = False
    for position, entry in enumerate(entries):
        own = chosen.get(entry.path) if chosen else None
        if own is not None and own is not Level.OFF:
            moved = _settle_choice(entry, own, index, counter, read_text, line_numbers, fmt)
            changed = changed or moved is not entry
            entries[position] = moved
            continue
        if entry.level not in (Level.OUTLINE, Level.FOCUSED):
            continue
        file = index.files[entry.file_id]
        matched, best_lines = entry.matched_declarations, entry.best_lines
        for richer in RICHER[entry.level]:
            if richer is Level.FULL and not line_numbers:
                exact = file.tokens  # counted exactly at index time
            else:
                estimate = level_tokens(
                    index, entry.file_id, richer, matched, line_numbers=line_numbers,
                    best_lines=best_lines,
                )  # fmt: skip
                if estimate > CLOSE_CALL * entries[position].tokens:
                    continue
                try:
                    text = read_text(entry.path)
                except OSError:
                    break  # vanished since indexing: the pack says so at its level
                shown = render_level(
                    file, text, richer, matched, line_numbers=line_numbers, best_lines=best_lines
                )
                exact = counter.count(shown)
            if exact <= entries[position].tokens:
                entries[position] = replace(entries[position], level=richer, tokens=exact)
                changed = True
    return replace(current, entries=tuple(entries)) if changed else current


def _settle_choice(
    entry: PlanEntry,
    own: Level,
    index: Index,
    counter: TokenCounter,
    read_text: Callable[[str], str],
    line_numbers: bool,
    fmt: Format,
) -> PlanEntry:
    """The entry of a file whose level the user chose, at the level shown_level gives that
    choice (counted exactly, each level as `fmt` carries it, wrapping included: escaping can
    make a richer level's content dearer in JSON than bare); `entry` itself when that is its
    level already. Nothing is
    read or counted when every richer level is estimated at more than SURE_DEARER times
    the chosen one's count (a finder glob may set hundreds of files to outline)."""
    if entry.level is own and all(
        level_tokens(
            index, entry.file_id, richer, entry.matched_declarations,
            line_numbers=line_numbers, best_lines=entry.best_lines,
        ) > SURE_DEARER * entry.tokens
        for richer in RICHER[own]
    ):  # fmt: skip
        return entry
    try:
        text = read_text(entry.path)
    except OSError:
        return entry  # vanished since indexing: the pack says so at its level
    file = index.files[entry.file_id]

    def cost(level: Level, content: str) -> int:
        return file_cost(fmt, entry.path, file.language, level, content, counter)

    level, _, tokens = shown_level(
        file, text, own, entry.matched_declarations, counter.count,
        line_numbers=line_numbers, best_lines=entry.best_lines, cost=cost,
    )  # fmt: skip
    if level is entry.level:
        return entry
    return replace(entry, level=level, tokens=tokens)


def choice_notes(current: Plan, session: Session, *, redact: bool = True) -> tuple[str, ...]:
    """One short note, when files the user set to a level are shown at a richer one because
    that costs no more (the app notifies it; MCP's pack of the app's selection lists it).

    It names the first NOTE_FILES such files by path and counts the rest, and carries no token
    count: the app notifies again only when a note changes, and a count changes with every
    question (review of stop 22: 40 files gave 40 notes, 3,389 characters, on each question).
    """
    moved = []
    for entry in current.entries:
        own = session.overrides.get(entry.path)
        if own is None or own is entry.level or own is Level.OFF:
            continue
        moved.append((entry.path, own, entry.level))
    if not moved:
        return ()
    moved.sort(key=lambda m: m[0])  # by path: the order of the ranking changes per question
    if len(moved) == 1:
        path, own, level = moved[0]
        return (
            f"{shown_path(path, redact=redact)}: {own.value} would cost no less than "
            f"{level.value}, so it is packed {level.value}",
        )
    named = ", ".join(
        f"{shown_path(path, redact=redact)} {level.value}" for path, _, level in moved[:NOTE_FILES]
    )
    more = f" and {len(moved) - NOTE_FILES} more" if len(moved) > NOTE_FILES else ""
    return (f"{len(moved)} files you set are packed richer, as that costs no more: {named}{more}",)
