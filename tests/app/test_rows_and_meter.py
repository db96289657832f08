"""How a ranked file and a plan are drawn: score bar, reasons line, path fitting, meter segments."""

from __future__ import annotations

from ctxtui.widgets.budget_meter import layout_segments
from ctxtui.widgets.ranked_row import describe_reasons, fit_path, score_bar
from engine.model import Level, Plan, PlanEntry, Reason, ReasonKind


def entry(path: str, tokens: int, level: Level = Level.FULL, pinned: bool = False) -> PlanEntry:
    return PlanEntry(path, 0, level, tokens, 1, 1.0, automatic=not pinned, pinned=pinned)


def test_score_bar_fills_eighths_of_cells() -> None:
    assert score_bar(1.0) == "██████"
    assert score_bar(0.0) == "      "
    assert score_bar(0.5) == "███   "
    assert score_bar(1 / 48) == "▏     "


def test_reasons_line_puts_pins_and_declarations_first() -> None:
    reasons = (
        Reason(ReasonKind.WORD, "session", ("body",)),
        Reason(ReasonKind.DECLARATION, "Session.refresh"),
        Reason(ReasonKind.IMPORTED_BY, "auth/login.py"),
        Reason(ReasonKind.PIN, "pinned"),
    )
    assert describe_reasons(reasons) == (
        "pinned · defines Session.refresh · words session · imported by auth/login.py"
    )
    words = tuple(Reason(ReasonKind.WORD, w) for w in "a b c d e".split())
    assert describe_reasons(words) == "words a, b, c +2"
    assert describe_reasons(()) == "no direct evidence"


def test_long_paths_lose_the_start_of_their_folder() -> None:
    assert fit_path("auth/session.py", 40) == ("auth/", "session.py")
    assert fit_path("ctxtui/widgets/file_list.py", 20) == ("…idgets/", "file_list.py")
    assert fit_path("deep/very_long_file_name.py", 10) == ("", "very_long_file_name.py")


def test_meter_segments_are_proportional_to_tokens() -> None:
    plan = Plan("q", 1_000, (entry("a", 500), entry("b", 250, Level.FOCUSED)), 750, True, False)
    segments, budget_cell = layout_segments(plan, 1_000, 40)
    assert [(s.start, s.end, s.level) for s in segments] == [
        (0, 20, Level.FULL),
        (20, 30, Level.FOCUSED),
    ]
    assert budget_cell == 40


def test_meter_scale_covers_the_excess_when_over_budget() -> None:
    plan = Plan("q", 1_000, (entry("big", 2_000, pinned=True),), 2_100, True, True)
    segments, budget_cell = layout_segments(plan, 1_000, 42)
    assert budget_cell == 20  # the budget mark sits inside the bar; the rest is drawn as over
    assert segments[0].pinned and segments[0].end == 40
    assert segments[-1].level is None and segments[-1].end == 42  # headers and fences


def test_every_file_gets_at_least_one_cell() -> None:
    entries = tuple(entry(f"f{i}", 1) for i in range(5))
    plan = Plan("q", 100_000, entries, 5, True, False)
    segments, _ = layout_segments(plan, 100_000, 30)
    assert [s.end - s.start for s in segments] == [1, 1, 1, 1, 1]
