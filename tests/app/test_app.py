"""The app driven through Pilot on the real Workspace: ranking, levels, pins, budget, format.

Each test types or presses keys as a person would and asserts on widget state (the first file,
its level, the meter's totals) against what the engine itself answers for the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import make_repo
from rich.cells import cell_len
from textual import events
from textual.pilot import Pilot

from app.support import REPO_FILES, keep_notices, notices, settle, wait_until
from ctxtui.app import CtxtuiApp
from ctxtui.screens.ranking import NO_MATCH_PAUSE
from ctxtui.widgets.budget_meter import BudgetMeter
from ctxtui.widgets.file_list import FileList
from ctxtui.widgets.preview import Preview, fit_title
from ctxtui.widgets.query_bar import QueryBar
from ctxtui.widgets.row_list import RowOption
from engine.levels import level_tokens
from engine.model import Format, Level
from engine.plan import RICHER

AppFactory = Callable[..., CtxtuiApp]
QUESTION = "session refresh"


async def type_question(pilot: Pilot[Any], app: CtxtuiApp, text: str) -> None:
    """Type into the question bar key by key and wait for the exact pack."""
    await pilot.press(*text)
    await settle(pilot, text)


def kept_state(app_factory: AppFactory, repo: Path, tmp_path: Path) -> CtxtuiApp:
    """The app on `repo` with its state in tmp_path: each call is the next start."""
    return app_factory(repo, state_dir=tmp_path / "state")


async def test_typed_question_ranks_the_defining_file_first(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, QUESTION)
        file_list = app.main_screen.query_one(FileList)
        assert file_list.ranking is not None
        assert file_list.ranking.files[0].path == "auth/session.py"
        assert file_list.highlighted_path == "auth/session.py"
        reasons_line = str(file_list.get_option_at_index(0).prompt).splitlines()[1]
        assert "Session.refresh" in reasons_line


async def test_a_pasted_stack_trace_keeps_all_its_lines_on_one_line(
    small_repo: Path, app_factory: AppFactory
) -> None:
    # review: Input keeps a paste's first line only, so a pasted traceback asked for
    # "Traceback (most recent call last):" and matched nothing; its path and error were lost
    trace = (
        "Traceback (most recent call last):\n"
        '  File "auth/tokens.py", line 3, in issue_token\n'
        "\x1b[31mKeyError\x1b[0m: refresh\r\n"
    )
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        bar = app.main_screen.query_one(QueryBar)
        await pilot.pause()
        bar.post_message(events.Paste(trace))
        expected = (
            'Traceback (most recent call last): File "auth/tokens.py", line 3, in issue_token '
            "KeyError: refresh"
        )
        await wait_until(pilot, lambda: bar.value == expected)
        await settle(pilot, expected)
        file_list = app.main_screen.query_one(FileList)
        assert file_list.ranking is not None
        assert file_list.ranking.files[0].path == "auth/tokens.py"


async def test_a_half_typed_word_already_finds_the_file_it_starts(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, "refre")  # "refresh", still being typed
        file_list = app.main_screen.query_one(FileList)
        assert file_list.ranking is not None
        assert file_list.ranking.files[0].path == "auth/session.py"


async def test_each_level_key_sets_the_level_and_the_meter_matches_the_plan(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, QUESTION)
        screen = app.main_screen
        meter = screen.query_one(BudgetMeter)
        await pilot.press("tab")
        assert screen.query_one(FileList).has_focus
        for key, level in (
            ("o", Level.OUTLINE),
            ("s", Level.FOCUSED),
            ("f", Level.FULL),
            ("x", Level.OFF),
        ):
            await pilot.press(key)
            await settle(pilot)
            assert screen.overrides == {"auth/session.py": level}
            packed_plan = screen.packed[1] if screen.packed else None
            assert packed_plan is not None and packed_plan.exact
            entry = next((e for e in packed_plan.entries if e.path == "auth/session.py"), None)
            if level is Level.OFF:
                assert entry is None
            else:
                assert entry is not None and not entry.automatic
                # the level asked for, or a richer one where that costs no more (issue 7)
                assert entry.level is level or entry.level in RICHER[level]
            assert meter.plan is packed_plan
            expected = f"{packed_plan.total_tokens:,} / {screen.budget:,} tokens"
            assert meter.totals_text.startswith(expected)
            assert meter.totals_text.endswith(f"{len(packed_plan.entries)} files")
        await pilot.press("a")
        await settle(pilot)
        assert screen.overrides == {}


async def test_an_outline_dearer_than_the_focused_view_shows_focused_on_the_badge(
    tmp_path: Path, app_factory: AppFactory
) -> None:
    """Issue 7, item 10: the outline of sixty documented functions costs more than the
    focused view of the one asked about; `o` packs (and the row shows) the cheaper view."""
    rules = "".join(
        f"def adjust_invoice_rule_{i}(invoice, order, *, rounding=None):\n"
        f'    """Adjust the invoice for pricing rule number {i} of the yearly contract."""\n'
        "    return invoice\n\n\n"
        for i in range(60)
    )
    root = make_repo(tmp_path / "repo", {"billing/rules.py": rules, "README.md": "# Billing\n"})
    app = app_factory(root)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, "adjust_invoice_rule_7")
        screen = app.main_screen
        file_list = screen.query_one(FileList)
        await pilot.press("tab")
        assert file_list.highlighted_path == "billing/rules.py"
        await pilot.press("o")
        await settle(pilot)
        assert screen.overrides == {"billing/rules.py": Level.OUTLINE}
        packed_plan = screen.packed[1] if screen.packed else None
        assert packed_plan is not None and packed_plan.exact
        entry = next(e for e in packed_plan.entries if e.path == "billing/rules.py")
        assert entry.level is Level.FOCUSED and not entry.automatic
        workspace = app.workspace
        assert workspace is not None
        outline = level_tokens(workspace.index, entry.file_id, Level.OUTLINE)
        assert entry.tokens < outline
        row = str(file_list.get_option_at_index(0).prompt).splitlines()[0]
        assert "focused*" in row and "outline" not in row


async def test_meter_totals_equal_the_workspace_pack(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, QUESTION)
        screen = app.main_screen
        workspace = app.workspace
        assert workspace is not None and screen.answer is not None
        session = screen._choices().session(workspace.index)
        plan, rendered = workspace.pack(
            screen.answer.ranking, screen.budget, session, Format.MARKDOWN
        )
        meter = screen.query_one(BudgetMeter)
        assert meter.plan == plan
        assert meter.totals_text == f"{plan.total_tokens:,} / 8,000 tokens · o200k · " + (
            f"Markdown · {len(plan.entries)} files"
        )
        assert rendered.tokens == plan.total_tokens


async def test_pin_survives_a_restart(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path
) -> None:
    app = kept_state(app_factory, small_repo, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, QUESTION)
        screen = app.main_screen
        file_list = screen.query_one(FileList)
        await pilot.press("tab", "down")
        second = file_list.highlighted_path
        assert second is not None and second != "auth/session.py"
        await pilot.press("p", "o")
        await settle(pilot)
        assert screen.pinned == {second}
        assert file_list.highlighted_path == second
        first = file_list.ranking
        assert first is not None and first.files[0].path == second
        assert first.files[0].pinned
        await pilot.press("ctrl+q")
    restarted = kept_state(app_factory, small_repo, tmp_path)
    async with restarted.run_test(size=(120, 36)) as pilot:
        await settle(pilot, QUESTION)
        screen = restarted.main_screen
        assert screen.pinned == {second}
        assert screen.overrides == {second: Level.OUTLINE}
        assert screen.query_one(QueryBar).value == QUESTION
        ranking = screen.query_one(FileList).ranking
        assert ranking is not None and ranking.files[0].path == second


async def test_a_reopen_puts_back_the_highlighted_file_and_the_focus(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path
) -> None:
    # session 32: the question, pins, levels and budget came back, but the cursor went back to
    # rank 1 and the keys to the question
    first = kept_state(app_factory, small_repo, tmp_path)
    async with first.run_test(size=(120, 36)) as pilot:
        await pilot.press(*QUESTION, "tab", "down", "down", "down")
        await settle(pilot, QUESTION)
        third = first.main_screen.query_one(FileList).highlighted_path
        assert third is not None and first.main_screen.query_one(FileList).highlighted == 3
        await pilot.press("ctrl+q")
    new_first = 'def refresh_session(session):\n    """Session refresh."""\n'
    (small_repo / "auth" / "refresh.py").write_text(new_first, encoding="utf-8")
    restarted = kept_state(app_factory, small_repo, tmp_path)
    async with restarted.run_test(size=(120, 36)) as pilot:
        await settle(pilot, QUESTION)
        screen = restarted.main_screen
        file_list = screen.query_one(FileList)
        assert file_list.highlighted_path == third  # the file, not the row: the rows moved
        assert file_list.highlighted != 3
        assert screen.focused is file_list
        await pilot.press("p")  # the keys act on the restored file
        await settle(pilot)
        assert screen.pinned == {third}
        await pilot.press("tab", "ctrl+q")  # back in the question, on the pinned rank 1
    (small_repo / third).unlink()
    again = kept_state(app_factory, small_repo, tmp_path)
    async with again.run_test(size=(120, 36)) as pilot:
        await settle(pilot, QUESTION)
        screen = again.main_screen
        file_list = screen.query_one(FileList)
        assert isinstance(screen.focused, QueryBar)
        assert file_list.highlighted == 0  # the file is gone: the usual rank 1


async def test_a_planner_note_already_shown_is_not_shown_again_at_a_reopen(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path
) -> None:
    # session 32: "outline would cost no less than full, so it is packed full" came back at
    # every reopen of the same saved state, saying nothing new
    from ctxtui.state import RepoState, StateStore

    for name in ("session_flag.py", "refresh_flag.py"):  # one line: no outline is cheaper
        (small_repo / "auth" / name).write_text("X = 1\n", encoding="utf-8")
    tiny = {"auth/session_flag.py": Level.OUTLINE}
    StateStore(small_repo, tmp_path / "state").save(RepoState(overrides=tiny, query=QUESTION))

    def told(app: CtxtuiApp, path: str) -> list[str]:
        return [n for n in notices(app) if path in n and "would cost no less" in n]

    app = kept_state(app_factory, small_repo, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, QUESTION)
        assert len(told(app, "auth/session_flag.py")) == 1
        await pilot.press("ctrl+q")
    reopened = kept_state(app_factory, small_repo, tmp_path)
    async with reopened.run_test(size=(120, 36)) as pilot:
        await settle(pilot, QUESTION)
        assert reopened.main_screen.packed is not None
        assert reopened.main_screen.packed[1].notes  # the note holds, and is not said again
        assert told(reopened, "auth/session_flag.py") == []
        file_list = reopened.main_screen.query_one(FileList)
        await pilot.press("tab")
        assert file_list.ranking is not None
        paths = [f.path for f in file_list.ranking.files]
        assert "auth/refresh_flag.py" in paths
        file_list.highlighted = paths.index("auth/refresh_flag.py")
        await pilot.press("o")  # a note that says something new is shown
        await settle(pilot)
        await wait_until(pilot, lambda: any("2 files you set" in n for n in notices(reopened)))


async def test_plus_minus_and_typed_budget_change_the_budget(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, QUESTION)
        screen = app.main_screen
        meter = screen.query_one(BudgetMeter)
        await pilot.press("tab", "plus")
        await settle(pilot)
        assert screen.budget == 10_000 and meter.budget == 10_000
        assert screen.packed is not None and screen.packed[1].budget == 10_000
        await pilot.press("minus", "minus")
        await settle(pilot)
        assert screen.budget == 7_000
        await pilot.press("b")
        await wait_until(pilot, lambda: app.screen is not screen)
        await pilot.press(*"12k", "enter")  # the old value is selected: typing replaces it
        await settle(pilot)
        assert screen.budget == 12_000
        assert "/ 12,000 tokens" in meter.totals_text


async def test_typed_budget_rejects_nonsense_and_escape_keeps_the_old_one(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, QUESTION)
        screen = app.main_screen
        await pilot.press("tab", "b")
        await wait_until(pilot, lambda: app.screen is not screen)
        await pilot.press(*"lots", "enter")
        assert app.screen is not screen  # still asking
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)
        assert screen.budget == 8_000


async def test_format_key_cycles_markdown_xml_json(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, QUESTION)
        screen = app.main_screen
        await pilot.press("tab")
        seen = []
        for _ in range(3):
            await pilot.press("F")
            await settle(pilot)
            assert screen.packed is not None
            seen.append((screen.fmt, screen.packed[2].fmt))
        assert seen == [
            (Format.XML, Format.XML),
            (Format.JSON, Format.JSON),
            (Format.MARKDOWN, Format.MARKDOWN),
        ]


async def test_letters_typed_in_the_question_are_text_not_keys(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, "fix spx")
        screen = app.main_screen
        assert screen.query_one(QueryBar).value == "fix spx"
        assert screen.overrides == {} and screen.pinned == frozenset()


async def test_stale_answers_are_dropped(small_repo: Path, app_factory: AppFactory) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, QUESTION)
        screen = app.main_screen
        assert screen.answer is not None
        from dataclasses import replace

        from ctxtui.messages import RankingReady

        current = screen.answer
        stale = replace(current, generation=current.generation - 1, query="sess")
        screen.post_message(RankingReady(stale))
        await pilot.pause()
        assert screen.answer is current


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_preview_shows_the_file_as_the_pack_carries_it(
    small_repo: Path, app_factory: AppFactory, size: tuple[int, int]
) -> None:
    # review, session 33: at 80 columns the level took the folder's room in the title, and
    # "auth/session.py" was titled "session.py · focused" (flask's helpers.py alike)
    app = app_factory(small_repo)
    async with app.run_test(size=size) as pilot:
        await type_question(pilot, app, QUESTION)
        screen = app.main_screen
        preview = screen.query_one(Preview)
        workspace = app.workspace
        assert workspace is not None and screen.packed is not None
        entry = next(e for e in screen.packed[1].entries if e.path == "auth/session.py")
        expected = workspace.render_file(entry).expandtabs(4)
        await wait_until(pilot, lambda: preview.shown_text == expected.rstrip("\n"))
        assert str(preview.border_title) == "auth/session.py"
        assert str(preview.border_subtitle) == f"{entry.level.value} · {entry.tokens:,} tokens"


async def test_preview_title_keeps_the_file_name_level_and_tokens_of_a_long_path(
    tmp_path: Path, app_factory: AppFactory
) -> None:
    # session 31: Textual cut the title "path · level · tokens" at its end, so a deep path
    # lost its level and tokens in a 120-column terminal, and its file name too in 80 columns;
    # session 33: the path's folders go from the left, whole, and the details have the
    # bottom edge to themselves
    deep = "services/payments/internal/adapters/outbound/session_refresh_handler.py"
    repo = make_repo(tmp_path / "deep", {deep: "def refresh_session():\n    return 1\n"})
    app = app_factory(repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, "refresh session")
        preview = app.main_screen.query_one(Preview)
        entry = app.main_screen.answer.plan.entries[0]  # type: ignore[union-attr]
        details = f"{entry.level.value} · {entry.tokens:,} tokens"
        await wait_until(pilot, lambda: str(preview.border_subtitle) == details)
        title = str(preview.border_title)
        assert title == "…/adapters/outbound/session_refresh_handler.py"
        assert len(title) <= preview.outer_size.width - 6
        await pilot.resize_terminal(100, 30)
        await wait_until(pilot, lambda: "outbound" not in str(preview.border_title))
        assert str(preview.border_title) == "…/session_refresh_handler.py"
        assert str(preview.border_subtitle) == details
        await pilot.resize_terminal(200, 40)
        await wait_until(pilot, lambda: str(preview.border_title).startswith("services/"))
        assert str(preview.border_title) == deep and str(preview.border_subtitle) == details


async def test_the_preview_note_wraps_to_the_pane_and_again_on_a_resize(
    small_repo: Path, app_factory: AppFactory
) -> None:
    # review, session 33: at 80 columns the note instead of a left-out file was cut at the
    # pane's edge, "Left out of the pack. Press f, s o", with no "…" and no second line
    note = "Left out of the pack. Press f, s or o to include it."
    app = app_factory(small_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await type_question(pilot, app, QUESTION)
        preview = app.main_screen.query_one(Preview)
        await pilot.press("tab", "x")
        await settle(pilot)

        def fits() -> bool:
            lines = preview.shown_text.split("\n")
            width = preview.scrollable_content_region.width
            return max(cell_len(line) for line in lines) <= width

        await wait_until(pilot, lambda: " ".join(preview.shown_text.split()) == note)
        assert len(preview.shown_text.split("\n")) > 1 and fits()
        assert preview.virtual_size.width <= preview.scrollable_content_region.width
        await pilot.resize_terminal(200, 40)
        await wait_until(pilot, lambda: preview.shown_text == note)
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: "\n" in preview.shown_text)
        assert fits() and " ".join(preview.shown_text.split()) == note


def test_the_preview_title_cuts_the_path_from_the_left_at_a_folder() -> None:
    for path, room, shown in [
        ("src/flask/helpers.py", 20, "src/flask/helpers.py"),
        ("src/flask/helpers.py", 19, "…/flask/helpers.py"),
        ("src/flask/helpers.py", 12, "…/helpers.py"),
        ("src/flask/helpers.py", 11, "helpers.py"),
        ("文書/説明書/目次.md", 16, "…/説明書/目次.md"),  # cells: two a character
    ]:
        assert fit_title(path, room) == shown


async def test_refresh_key_picks_up_a_changed_file(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, "invoice")
        (small_repo / "utils" / "strings.py").write_text(
            "def invoice_number(text: str) -> str:\n    '''Invoice invoice invoice.'''\n"
            "    return text\n",
            encoding="utf-8",
        )
        await pilot.press("tab", "r")
        await wait_until(pilot, lambda: any("Re-indexed" in n for n in notices(app)))
        await settle(pilot)
        ranking = app.main_screen.answer
        assert ranking is not None
        assert "utils/strings.py" in [f.path for f in ranking.ranking.files]


async def test_question_without_a_match_says_so(small_repo: Path, app_factory: AppFactory) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, "zebracorn")
        file_list = app.main_screen.query_one(FileList)
        assert "No file matches" in file_list.empty_text
        await wait_until(pilot, lambda: any("No file matches" in n for n in notices(app)))


async def test_what_an_empty_list_says_is_wrapped_to_its_width(
    small_repo: Path, app_factory: AppFactory
) -> None:
    """The list does not wrap its rows: a sentence longer than the list was cut with "…"."""
    app = app_factory(small_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await type_question(pilot, app, "zebracorn unicornfish")
        file_list = app.main_screen.query_one(FileList)
        width = file_list.scrollable_content_region.width - 2
        option = file_list.get_option_at_index(0)
        lines = str(option.prompt).split("\n")
        assert len(lines) > 1 and all(len(line) <= width for line in lines)
        assert " ".join(lines) == "No file matches “zebracorn unicornfish”. Try other words."
        await pilot.resize_terminal(200, 36)
        await settle(pilot)
        wider = str(file_list.get_option_at_index(0).prompt).split("\n")
        assert len(wider) < len(lines)


async def test_an_empty_lists_text_in_wide_characters_is_wrapped_to_its_cells(
    small_repo: Path, app_factory: AppFactory
) -> None:
    # session 32: a question in Chinese matched nothing; the sentence was wrapped by
    # characters, and its second line, 49 cells wide in a list of 44, ran past the edge
    app = app_factory(small_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        question = "没有匹配的文件名称测试 没有匹配的文件名称测试没有匹配"
        await type_question(pilot, app, question)
        file_list = app.main_screen.query_one(FileList)
        width = file_list.scrollable_content_region.width - 2
        lines = str(file_list.get_option_at_index(0).prompt).split("\n")
        assert all(cell_len(line) <= width for line in lines)
        assert " ".join(lines) == f"No file matches “{question}”. Try other words."


async def test_empty_repository_is_reported_not_fatal(
    tmp_path: Path, app_factory: AppFactory
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = app_factory(empty)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: any("No files to index" in n for n in notices(app)))
        await pilot.press(*"anything")
        await settle(pilot)
        assert app.is_running
        screen = app.main_screen
        await wait_until(pilot, lambda: screen.answer is not None and screen.answer.query != "")
        # other words would not help: the folder has no file (it said "No file matches")
        assert screen.query_one(FileList).empty_text == "No files to index in this folder."
        await pilot.pause(NO_MATCH_PAUSE + 0.3)
        assert not any("No file matches" in n for n in notices(app))


async def test_missing_folder_is_reported_not_fatal(
    tmp_path: Path, app_factory: AppFactory
) -> None:
    app = app_factory(tmp_path / "does-not-exist")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: bool(notices(app)))
        await pilot.press(*"hello", "tab", "c")
        assert app.is_running and app.workspace is None
        assert any("Nothing to copy" in n for n in notices(app))


async def test_corrupt_state_file_is_set_aside_with_a_notice(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path
) -> None:
    state_dir = tmp_path / "state"
    app = app_factory(small_repo, state_dir=state_dir)
    app.services.store.path.parent.mkdir(parents=True)
    app.services.store.path.write_text("{not json", encoding="utf-8")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: any("unreadable" in n for n in notices(app)))
        await type_question(pilot, app, QUESTION)
        aside = list(app.services.store.path.parent.glob("*.corrupt-*"))
        assert len(aside) == 1 and aside[0].read_text(encoding="utf-8") == "{not json"


async def test_pins_and_levels_of_vanished_files_are_dropped_and_said_once(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # review, session 33: a pinned file deleted from disk stayed pinned, saved and told of at
    # every open, until X cleared every pin with it
    from ctxtui.state import RepoState, StateStore

    kept = keep_notices(monkeypatch)

    def told() -> list[str]:
        return [n for _title, n in kept if "no longer in the repository's index" in n]

    state_dir = tmp_path / "state"
    store = StateStore(small_repo, state_dir)
    store.save(
        RepoState(
            pinned=frozenset({"gone.py", "db/models.py"}),
            overrides={"old/notes.md": Level.FULL, "auth/tokens.py": Level.OUTLINE},
            query=QUESTION,
        )
    )
    app = app_factory(small_repo, state_dir=state_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        await wait_until(pilot, lambda: screen.pinned == {"db/models.py"})
        await settle(pilot, QUESTION)
        assert screen.overrides == {"auth/tokens.py": Level.OUTLINE}
        assert told() == [
            "Unpinned 1 file and dropped the level of 1 file no longer in the repository's "
            "index (deleted, renamed or skipped): gone.py, old/notes.md."
        ]
        saved, _notice = store.load()  # not kept for the next open
        assert saved.pinned == {"db/models.py"} and "old/notes.md" not in saved.overrides

        models = small_repo / "db" / "models.py"
        text = models.read_text(encoding="utf-8")
        models.unlink()  # a pinned file goes while the app is open
        await pilot.press("tab", "r")
        await wait_until(pilot, lambda: not screen.pinned)
        await settle(pilot)
        assert screen.answer is not None and screen.packed is not None
        assert "db/models.py" not in {f.path for f in screen.answer.ranking.files}
        assert "db/models.py" not in {e.path for e in screen.packed[1].entries}
        assert len(told()) == 2 and told()[1].startswith("Unpinned 1 file no longer")
        assert told()[1].endswith(": db/models.py.")
        assert store.load()[0].pinned == frozenset()

        models.write_text(text, encoding="utf-8")  # it comes back: pinned again by hand
        await pilot.press("r")
        await wait_until(pilot, lambda: "db/models.py" in screen.workspace.index.path_ids)
        await settle(pilot)
        assert screen.pinned == frozenset()
        assert len(told()) == 2  # each said once


async def test_vanished_files_pins_and_levels_go_in_one_save_and_one_ranking(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # session 33: dropping a vanished file's pin and its level set each reactive in turn, and
    # each one's watcher saved the state and ranked: two saves, two rankings, and a refresh
    # that found the file gone ranked a third time
    from ctxtui.screens.ranking import RankingScreen
    from ctxtui.state import RepoState, StateStore

    rankings: list[str] = []
    saves: list[RepoState] = []
    run_rank, save = RankingScreen.run_rank, StateStore.save

    def counting_rank(self: RankingScreen, *args: Any) -> Any:
        rankings.append(args[2])  # the question
        return run_rank(self, *args)

    def counting_save(self: StateStore, state: RepoState) -> None:
        saves.append(state)
        save(self, state)

    monkeypatch.setattr(RankingScreen, "run_rank", counting_rank)
    monkeypatch.setattr(StateStore, "save", counting_save)
    state_dir = tmp_path / "state"
    kept = "db/models.py"
    StateStore(small_repo, state_dir).save(
        RepoState(
            pinned=frozenset({"gone.py", kept}),
            overrides={"old/notes.md": Level.FULL, kept: Level.OUTLINE},
            query=QUESTION,
        )
    )
    saves.clear()
    app = app_factory(small_repo, state_dir=state_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        await wait_until(pilot, lambda: screen.pinned == {kept})
        await settle(pilot, QUESTION)
        assert dict(screen.overrides) == {kept: Level.OUTLINE}
        assert rankings == [QUESTION] and len(saves) == 1  # at the open
        await pilot.press("tab")  # the question joins the history (a save of its own)
        await settle(pilot, QUESTION)
        rankings.clear()
        saves.clear()
        (small_repo / kept).unlink()
        await pilot.press("r")
        await wait_until(pilot, lambda: not screen.pinned)
        await settle(pilot, QUESTION)
        assert screen.overrides == {}
        assert rankings == [QUESTION] and len(saves) == 1  # at a refresh
        assert saves[0].pinned == frozenset() and saves[0].overrides == {}


async def test_undo_brings_back_no_choice_about_a_file_gone_from_the_index(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # session 33: `u` pinned again a file deleted since it was unpinned; the next check found
    # it gone and dropped the pin again, with a second notice
    kept = keep_notices(monkeypatch)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        await pilot.press(*"session", "tab")
        await settle(pilot, "session")
        top = screen.query_one(FileList).highlighted_path
        assert top is not None and screen.query_one(FileList).has_focus
        await pilot.press("o", "p", "p")  # a level, a pin, the pin taken back
        await wait_until(pilot, lambda: len(screen._undo_choices) == 3)
        await settle(pilot, "session")
        assert screen.pinned == frozenset() and dict(screen.overrides) == {top: Level.OUTLINE}
        (small_repo / top).unlink()
        await pilot.press("r")
        await wait_until(pilot, lambda: not screen.overrides)  # its level dropped
        await settle(pilot, "session")
        kept.clear()
        await pilot.press("u")  # would pin it again
        await wait_until(pilot, lambda: bool(kept))
        await settle(pilot, "session")
        assert screen.pinned == frozenset() and screen.overrides == {}
        assert [n for _title, n in kept] == [
            f"Back to nothing; not brought back, 1 file no longer in the repository's index: {top}."
        ]
        (small_repo / "README.md").write_text("# Shop\n\nEdited.\n", encoding="utf-8")
        await pilot.press("r")  # the next check: nothing to drop, nothing said of it
        await wait_until(pilot, lambda: any("Re-indexed" in n for _title, n in kept))
        await settle(pilot, "session")
        assert not any("no longer in the repository's index" in n for _title, n in kept[1:])


async def test_encoding_key_switches_the_tokenizer(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, QUESTION)
        await pilot.press("tab", "e")
        screen = app.main_screen
        await wait_until(
            pilot, lambda: app.workspace is not None and app.workspace.encoding == "cl100k_base"
        )
        await settle(pilot)
        assert screen.encoding == "cl100k_base"
        assert "· cl100k ·" in screen.query_one(BudgetMeter).totals_text


async def test_small_terminal_hides_the_preview(small_repo: Path, app_factory: AppFactory) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(70, 20)) as pilot:
        await type_question(pilot, app, QUESTION)
        assert not app.main_screen.query_one(Preview).display
        assert app.main_screen.query_one(FileList).display
    app = app_factory(small_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await type_question(pilot, app, QUESTION)
        assert app.main_screen.query_one(Preview).display


@pytest.mark.parametrize("size", [(20, 8), (30, 10), (40, 12)])
async def test_a_tiny_terminal_still_shows_ranked_rows_and_moves_between_them(
    small_repo: Path, app_factory: AppFactory, size: tuple[int, int]
) -> None:
    # review: at 20x8 the question bar (3 lines), the list's border, the meter (2) and the
    # footer took every line: the list had no room for a single row
    app = app_factory(small_repo)
    async with app.run_test(size=size) as pilot:
        await type_question(pilot, app, QUESTION)
        await pilot.press("tab")
        screen = app.main_screen
        file_list = screen.query_one(FileList)
        assert screen.query_one(QueryBar).region.height >= 1  # the question always stays

        def rows_in_view() -> set[int]:  # rows whose lines are all on show
            top, height = file_list.scroll_offset.y, file_list.scrollable_content_region.height
            lines = RowOption.LINES
            return {row for row in range(10) if top <= row * lines <= top + height - lines}

        assert file_list.scrollable_content_region.height >= RowOption.LINES
        assert file_list.highlighted == 0 and 0 in rows_in_view()
        await pilot.press("down")
        await pilot.pause()
        assert file_list.highlighted == 1 and 1 in rows_in_view()
        await pilot.press("up")
        await pilot.pause()
        assert file_list.highlighted == 0 and 0 in rows_in_view()


async def test_at_40_columns_the_row_gives_its_path_the_room_of_the_other_columns(
    tmp_path: Path, app_factory: AppFactory
) -> None:
    # review: the row's columns before the path (rank, score bar, level, tokens: 28 cells)
    # left a 40-column list 6 cells of path, "sessi…"; the path is what a file is picked by
    path = "services/billing/invoice_tx.py"
    assert len(path) == 30
    code = "def invoice_tax(total: float) -> float:\n    return total * 0.2\n"
    repo = make_repo(tmp_path / "shop", {path: code, "README.md": "# Shop\n"})
    app = app_factory(repo)
    async with app.run_test(size=(40, 12)) as pilot:
        await type_question(pilot, app, "invoice tax")
        file_list = app.main_screen.query_one(FileList)
        first, second = str(file_list.get_option_at_index(0).prompt).split("\n")
        shown = first.split(maxsplit=2)[2].rstrip()
        head, _, tail = shown.partition("…")
        assert shown == path or (
            path.startswith(head) and path.endswith(tail) and tail.endswith("/invoice_tx.py")
        )
        assert len(shown) >= 24  # at most its middle elided, never cut to a few cells
        assert "defines invoice_tax" in second  # the tokens lead the reasons line


async def test_at_80_columns_every_shortened_path_shows_an_ellipsis_where_it_was_cut(
    tmp_path: Path, app_factory: AppFactory
) -> None:
    # review, session 33: at 80 columns flask's "tests/test_blueprints.py" showed as
    # "test_blueprints.py", its folder gone without a mark, beside "…ask/blueprints.py"; a
    # name longer than the room was cut at its end ("test_session_toke…"), losing ".py"
    code = "from auth.session import Session\n\ndef test_session():\n    assert Session\n"
    folder_dropped, name_cut = "tests/test_session_x.py", "tests/test_session_tokens.py"
    files = {**REPO_FILES, folder_dropped: code, name_cut: code}
    app = app_factory(make_repo(tmp_path / "shop", files))
    async with app.run_test(size=(80, 24)) as pilot:
        await type_question(pilot, app, "session")
        file_list = app.main_screen.query_one(FileList)
        lines = [file_list.render_line(y).text for y in range(file_list.size.height)]
        rows = lines[: file_list.option_count * RowOption.LINES : RowOption.LINES]
        paths = [file_list.get_option_at_index(n).id or "" for n in range(len(rows))]
        assert {folder_dropped, name_cut} <= set(paths)
        shown = dict(zip(paths, (row.split()[-1] for row in rows), strict=True))
        for path, text in shown.items():  # whole, or "…" and the path's end: the same rule
            assert text == path or (text.startswith("…") and path.endswith(text[1:])), text
        assert shown[folder_dropped] == "…test_session_x.py"  # was "test_session_x.py"
        assert shown[name_cut].startswith("…") and shown[name_cut].endswith("_tokens.py")


async def test_files_changed_on_disk_are_picked_up_by_the_next_ranking(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ctxtui.screens.host.REFRESH_INTERVAL", 0.0)  # check at every pause
    monkeypatch.setattr("ctxtui.screens.host.REFRESH_COST_FACTOR", 0.0)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, "invoice")
        (small_repo / "db" / "models.py").write_text(
            "class Invoice:\n    '''An invoice row.'''\n    invoice_total: float\n",
            encoding="utf-8",
        )
        await pilot.press("s")
        await wait_until(pilot, lambda: any("changed on disk" in n for n in notices(app)))
        await settle(pilot, "invoices")
        answer = app.main_screen.answer
        assert answer is not None
        assert "db/models.py" in [f.path for f in answer.ranking.files]


async def test_the_cursor_row_stays_in_view_when_the_terminal_shrinks(
    tmp_path: Path, app_factory: AppFactory
) -> None:
    # session 32: with the cursor on rank 11 of a 120x36 list, a resize to 40x12 kept the
    # list's scroll at the top: four lines high, it showed ranks 1 and 2, the cursor nowhere
    files = {f"pkg/session_{n}.py": f"def session_{n}():\n    return {n}\n" for n in range(20)}
    app = app_factory(make_repo(tmp_path / "many", files))
    async with app.run_test(size=(120, 36)) as pilot:
        await type_question(pilot, app, "session")
        file_list = app.main_screen.query_one(FileList)
        await pilot.press("tab", *["down"] * 10)
        await wait_until(pilot, lambda: file_list.highlighted == 10)

        def cursor_in_view() -> bool:
            top = int(file_list.scroll_y)
            first = (file_list.highlighted or 0) * RowOption.LINES
            bottom = top + file_list.scrollable_content_region.height
            return top <= first and first + RowOption.LINES <= bottom

        for size in ((40, 12), (20, 8)):
            height = file_list.scrollable_content_region.height
            await pilot.resize_terminal(*size)
            await wait_until(pilot, lambda h=height: file_list.scrollable_content_region.height < h)
            await wait_until(pilot, cursor_in_view, timeout=5)
            assert file_list.highlighted == 10
