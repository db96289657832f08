"""The segmented budget meter: where the pack's tokens go, one segment per included file.

Segment width is proportional to the file's tokens (at least one cell), the glyph says the level
(solid full, hatched focused, light outline), a diamond marks a pinned file, neighbouring
segments alternate shades, and every cell past the budget is drawn in the over-budget style.
Below the bar: "6,912 / 8,000 tokens · o200k · Markdown · 9 files" ("≈" while the count is an
estimate), so the encoding and the format are always in view; given one line (a tiny
terminal), the meter shows the totals alone.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from engine.model import Format, Level, Plan

GLYPHS = {Level.FULL: "█", Level.FOCUSED: "▒", Level.OUTLINE: "░"}
"""Cell glyph per level."""
FORMAT_NAMES = {Format.MARKDOWN: "Markdown", Format.XML: "XML", Format.JSON: "JSON"}
"""How the totals line names each format."""
PIN_GLYPH = "◆"
FREE_GLYPH = "─"
CHANGES_GLYPH = "±"
"""Cells of the "Changes" diff (`d`), drawn first."""


class Segment(NamedTuple):
    """A run of meter cells."""

    start: int
    """First cell."""
    end: int
    """Cell after the last."""
    level: Level | None
    """Level of its file; None for the headers and fences around the files."""
    pinned: bool
    """The file is pinned."""
    changes: bool = False
    """The segment is the diff of the work tree's changes, not a file."""


def layout_segments(plan: Plan, budget: int, width: int) -> tuple[list[Segment], int]:
    """Place each entry's segment on a bar of `width` cells; return them and the budget's cell.

    The scale covers the budget or the total, whichever is larger, so an over-budget pack shows
    the budget mark inside the bar and the excess after it.
    """
    if width <= 0:
        return [], 0
    content = plan.changes_tokens + sum(entry.tokens for entry in plan.entries)
    total = max(plan.total_tokens, content)
    scale = width / max(budget, total, 1)
    segments: list[Segment] = []
    used = plan.changes_tokens
    cell = 0
    if used:
        cell = min(width, max(1, round(used * scale)))
        segments.append(Segment(0, cell, None, False, changes=True))
    for entry in plan.entries:
        used += entry.tokens
        end = max(cell + 1, round(used * scale))
        if cell >= width:
            break
        segments.append(Segment(cell, min(end, width), entry.level, entry.pinned))
        cell = min(end, width)
    overhead_end = min(width, max(cell, round(total * scale)))
    if overhead_end > cell:
        segments.append(Segment(cell, overhead_end, None, False))
    return segments, min(width, round(budget * scale))


class BudgetMeter(Widget):
    """Shows a plan against the budget; it draws and never measures."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "budget-meter--full",
        "budget-meter--focused",
        "budget-meter--outline",
        "budget-meter--alternate",
        "budget-meter--overhead",
        "budget-meter--changes",
        "budget-meter--pin",
        "budget-meter--over",
        "budget-meter--free",
        "budget-meter--totals",
        "budget-meter--estimate",
        "budget-meter--legend",
    }

    plan: reactive[Plan | None] = reactive(None, always_update=True)
    """The plan to show; None before the first ranking."""
    budget: reactive[int] = reactive(8_000)
    """The budget, which the plan may exceed."""
    encoding: reactive[str] = reactive("o200k_base")
    """Tokenizer encoding of the counts."""
    fmt: reactive[Format] = reactive(Format.MARKDOWN)
    """Format the pack is rendered in (its headers and fences are in the total)."""

    @property
    def totals_text(self) -> str:
        """The totals line as plain text."""
        plan = self.plan
        tokens = plan.total_tokens if plan is not None else 0
        files = len(plan.entries) if plan is not None else 0
        approx = "" if plan is None or plan.exact else "≈"
        name = self.encoding.removesuffix("_base")
        return (
            f"{approx}{tokens:,} / {self.budget:,} tokens · {name} · {FORMAT_NAMES[self.fmt]} · "
            f"{files} file{'' if files == 1 else 's'}"
        )

    def watch_plan(self, plan: Plan | None) -> None:
        over = plan is not None and (plan.over_budget or plan.total_tokens > self.budget)
        self.set_class(over, "-over-budget")

    def render(self) -> Text:
        width = self.content_region.width
        text = Text(no_wrap=True, overflow="crop", end="")
        if self.content_region.height >= 2:  # one line (a tiny terminal): the totals alone
            self._draw_bar(text, width)
            text.append("\n")
        plan = self.plan
        estimate = plan is not None and not plan.exact
        totals = self.totals_text
        text.append(totals, self._style("estimate" if estimate else "totals"))
        over = ""
        if plan is not None and plan.total_tokens > self.budget:
            over = f" · over by {plan.total_tokens - self.budget:,}"
            text.append(over, self._style("over"))
        legend = (
            f"{GLYPHS[Level.FULL]} full  {GLYPHS[Level.FOCUSED]} focused  "
            f"{GLYPHS[Level.OUTLINE]} outline  {PIN_GLYPH} pinned"
        )
        if plan is not None and plan.changes_tokens:
            legend += f"  {CHANGES_GLYPH} changes"
        gap = width - len(totals) - len(over) - len(legend)
        if gap >= 2:
            text.append(" " * gap + legend, self._style("legend"))
        return text

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"budget-meter--{name}", partial=True)

    def _draw_bar(self, text: Text, width: int) -> None:
        """Append the bar, one span a run of like cells (not one a cell: a 120-cell bar of
        single-cell spans took 10-20 ms to draw, in the frame that shows a new ranking)."""
        if self.plan is None:
            text.append(FREE_GLYPH * width, self._style("free"))
            return
        segments, budget_cell = layout_segments(self.plan, self.budget, width)
        over = self._style("over")
        for number, segment in enumerate(segments):
            if segment.changes:
                base, glyph = self._style("changes"), CHANGES_GLYPH
            elif segment.level is None:
                base, glyph = self._style("overhead"), "·"
            else:
                base, glyph = self._style(segment.level.value), GLYPHS.get(segment.level, "█")
                if number % 2:
                    base += self._style("alternate")
            start = segment.start
            if segment.pinned and start < segment.end:
                pin = base + self._style("pin")
                text.append(PIN_GLYPH, pin + over if start >= budget_cell else pin)
                start += 1
            split = min(max(start, budget_cell), segment.end)
            if split > start:
                text.append(glyph * (split - start), base)
            if segment.end > split:
                text.append(glyph * (segment.end - split), base + over)
        end = segments[-1].end if segments else 0
        if end < width:
            text.append(FREE_GLYPH * (width - end), self._style("free"))
