"""How a ranked file and a plan are drawn: score bar, reasons line, path fitting, meter segments."""

from __future__ import annotations

from rich.cells import cell_len
from textual.color import Color
from textual.style import Style

from ctxtui.widgets.budget_meter import layout_segments
from ctxtui.widgets.cells import fit_path
from ctxtui.widgets.ranked_row import (
    TOKENS_CELLS,
    RowKey,
    describe_reasons,
    format_tokens,
    row_content,
    row_parts,
    row_strips,
    score_bar,
)
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
    assert describe_reasons(()) == "no direct evidence"


def test_reasons_line_lists_as_many_details_as_its_width_holds() -> None:
    words = tuple(Reason(ReasonKind.WORD, w) for w in "alpha beta gamma delta epsilon".split())
    decls = tuple(Reason(ReasonKind.DECLARATION, f"Session.method_{n}") for n in range(6))
    everything = describe_reasons(decls + words)
    assert everything.endswith("words alpha, beta, gamma, delta, epsilon")
    assert describe_reasons(decls + words, width=len(everything)) == everything
    narrow = describe_reasons(decls + words, width=60)
    assert narrow == "defines Session.method_0 +5 · words alpha +4"
    wide = describe_reasons(decls + words, width=110)
    assert len(narrow) < len(wide) <= 110 and "+" in wide


def test_tokens_column_never_exceeds_its_cells() -> None:
    assert format_tokens(968, packed=True) == "968"
    assert format_tokens(11_430, packed=False) == "(11,430)"
    assert format_tokens(250_000, packed=False) == "(250k)"
    assert format_tokens(1_234_567, packed=True) == "1,234k"
    assert format_tokens(None, packed=False) == ""
    assert all(len(format_tokens(10**n - 1, packed=False)) <= TOKENS_CELLS for n in range(1, 8))


def test_long_paths_lose_the_start_of_their_folder() -> None:
    assert fit_path("auth/session.py", 40) == ("auth/", "session.py")
    assert fit_path("ctxtui/widgets/file_list.py", 20) == ("…idgets/", "file_list.py")
    # no room for the folder: "…" says it went; none for the whole name: it loses its start
    assert fit_path("tests/test_blueprints.py", 19) == ("…", "test_blueprints.py")
    assert fit_path("tests/test_blueprints.py", 18) == ("…", "est_blueprints.py")
    assert fit_path("deep/very_long_file_name.py", 10) == ("…", "e_name.py")
    assert fit_path("very_long_file_name.py", 10) == ("…", "e_name.py")


def test_a_path_of_wide_characters_is_fitted_by_cells_and_keeps_its_name() -> None:
    path = "データ/モジュール/設定.py"  # 25 cells, 15 characters
    folder, name = fit_path(path, 14)
    assert (folder, name) == ("…ール/", "設定.py")
    assert cell_len(folder + name) <= 14
    assert fit_path(path, 14, middle=True) == ("デ…ル/", "設定.py")
    assert fit_path(path, 25) == ("データ/モジュール/", "設定.py")
    key = RowKey(
        number=3, level=Level.FOCUSED, chosen=False, packed=True, tokens="     174 ",
        eighths=30, pinned=False, reasons=(), width=34,
    )  # fmt: skip
    first = row_content(key, path, lambda _part: Style()).plain.split("\n")[0]
    assert first.endswith("設定.py") and cell_len(first) <= 34


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


def test_a_five_digit_token_count_never_cuts_the_file_name() -> None:
    key = RowKey(
        number=14, level=Level.OFF, chosen=False, packed=False,
        tokens=format_tokens(11_430, packed=False).rjust(TOKENS_CELLS) + " ",
        eighths=30, pinned=True, reasons=(), width=58,
    )  # fmt: skip
    path = "src/textual/screen.py"
    first, second = row_content(key, path, lambda _part: Style()).plain.split("\n")
    assert len(first) <= 58 and first.endswith(" src/textual/screen.py ◆")
    narrow = row_content(key._replace(width=46), path, lambda _part: Style()).plain
    assert narrow.split("\n")[0].endswith(" …xtual/screen.py ◆")  # the folder gives way first
    assert second.strip() == "no direct evidence"
    # narrower still, the columns give way before the path: the tokens join the reasons line
    first, second = row_content(key._replace(width=45), path, lambda _part: Style()).plain.split(
        "\n"
    )
    assert first == " 14 x  src/textual/screen.py ◆"
    assert second.strip() == "(11,430) · no direct evidence"


def test_a_narrow_row_elides_the_middle_of_its_path_and_keeps_the_name() -> None:
    key = RowKey(
        number=3, level=Level.FOCUSED, chosen=True, packed=True, tokens="     174 ",
        eighths=30, pinned=False, reasons=(), width=34,
    )  # fmt: skip
    path = "packages/server/src/handlers/user_profile.py"
    first = row_content(key, path, lambda _part: Style()).plain.split("\n")[0]
    assert first == "  3 s* packa…dlers/user_profile.py"
    assert len(first) == 34
    assert fit_path(path, 16, middle=True) == ("…", "user_profile.py")  # the name, whole


def test_a_row_draws_as_its_content_would_cut_with_an_ellipsis() -> None:
    # the list draws rows straight from their parts (row_strips); cell by cell, text and look
    # must be what Textual's Content rendering of row_content gives
    base = Style(background=Color.parse("#0178d4"), foreground=Color.parse("#ddedf9"), bold=True)
    looks = {
        "rank": Style(foreground=Color(160, 160, 160, 0.6)),
        "name": Style(bold=True, italic=True),
        "reasons": Style(foreground=Color.parse("#99c9ed")),
        "pin": Style(foreground=Color.parse("#ffa62b")),
    }

    def style(part: str) -> Style:
        return looks.get(part, Style(underline=True))

    reasons = tuple(Reason(ReasonKind.WORD, f"word{n}", ("body",)) for n in range(9))
    key = RowKey(
        number=7, level=Level.FOCUSED, chosen=True, packed=True, tokens="   1,234 ",
        eighths=21, pinned=True, reasons=reasons, width=58, secret="secret redacted, line 3",
    )  # fmt: skip
    for path, width in (("src/日本/名前の長いファイル.py", 40), ("a/b.py", 58), ("a/b.py", 70)):
        row = key._replace(width=width)
        drawn = row_strips(row_parts(row, path), width, base, style)
        content = row_content(row, path, style)
        for strip, line in zip(drawn, content.split("\n", allow_blank=True), strict=True):
            expected = [
                (char, (base + look).rich_style)
                for text, look in line.truncate(width, ellipsis=True).render(base, end="")
                for char in text
            ]
            expected += [(" ", (base + base).rich_style)] * (width - line.cell_length)
            cells = [(char, seg.style) for seg in strip for char in seg.text]
            assert strip.cell_length == width
            assert cells == expected
