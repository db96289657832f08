"""The picking loop, key by key: type, look, adjust, clear, refine, without losing one's place.

Each test drives the real app through Pilot as a person would (issue 7): the list follows rank 1
while the question is typed and holds still while levels are set, the question survives going
back to it (undo, earlier questions), pins and levels clear with an undo, keys typed before the
first frame and during the first index are kept, and the tokenizer switches without a lost key.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import make_repo
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input

from app.support import (
    REPO_FILES,
    FakeClipboard,
    burst,
    count_tokenizer_loads,
    held_open,
    notices,
    pick_in_palette,
    prompt_up,
    settle,
    wait_until,
)
from ctxtui.app import CtxtuiApp
from ctxtui.commands import key_rows
from ctxtui.screens import ranking as ranking_module
from ctxtui.screens.finder import FinderScreen
from ctxtui.state import RepoState, StateStore
from ctxtui.widgets import file_list as file_list_module
from ctxtui.widgets import preview as preview_module
from ctxtui.widgets.budget_meter import BudgetMeter
from ctxtui.widgets.file_list import FileList
from ctxtui.widgets.index_status import IndexStatus
from ctxtui.widgets.preview import Preview
from ctxtui.widgets.query_bar import QueryBar
from ctxtui.widgets.ranked_row import describe_reasons
from ctxtui.workspace import Workspace
from engine.explain import Explanations
from engine.model import Level, Progress
from engine.rank import rank

AppFactory = Callable[..., CtxtuiApp]


def count_layouts(app: CtxtuiApp) -> list[bool]:
    """From now on, note each layout of the main screen in the returned list."""
    layouts: list[bool] = []
    refresh_layout = app.main_screen._refresh_layout

    def counting(*args: Any, **kwargs: Any) -> Any:
        layouts.append(True)
        return refresh_layout(*args, **kwargs)

    app.main_screen._refresh_layout = counting  # type: ignore[method-assign]
    return layouts


def session_module(number: int) -> str:
    """A module that mentions sessions more the lower its number, so the ranking is long."""
    lines = [f'"""Session helper {number}."""\n']
    lines += [
        f"def session_step_{n}(session):\n    return session\n" for n in range(20 - number // 2)
    ]
    return "\n".join(lines)


@pytest.fixture
def long_repo(tmp_path: Path) -> Path:
    """The shop repository plus 30 session modules: a ranking longer than the screen."""
    files = dict(REPO_FILES)
    files.update({f"helpers/session_{n:02}.py": session_module(n) for n in range(30)})
    return make_repo(tmp_path / "long", files)


def set_question(app: CtxtuiApp, text: str) -> None:
    """Put a question in the box at once (typing it key by key is tested elsewhere)."""
    app.main_screen.query_one(QueryBar).value = text


async def test_a_new_ranking_while_typing_shows_rank_1_at_the_top(
    long_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(long_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        set_question(app, "session")
        await settle(pilot, "session")
        screen = app.main_screen
        file_list = screen.query_one(FileList)
        file_list.highlighted = 20  # picked up while the cursor moved over an earlier prefix
        await pilot.pause()
        assert file_list.scroll_y > 0
        await pilot.press("s")  # the question still has focus: a new ranking
        await settle(pilot, "sessions")
        ranking = file_list.shown_ranking
        assert ranking is not None and ranking.query == "sessions"
        assert file_list.highlighted == 0 and file_list.scroll_y == 0
        top = ranking.files[0].path
        assert file_list.highlighted_path == top
        preview = screen.query_one(Preview)
        await wait_until(pilot, lambda: str(preview.border_title).startswith(top))


async def test_every_row_shows_its_reasons_on_show_and_scrolled_into_view(
    long_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the ranking works out reasons when a row first reads them, a few files at a time
    monkeypatch.setattr(Explanations, "BLOCK", 4)
    app = app_factory(long_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        set_question(app, "session step")
        await settle(pilot, "session step")
        file_list = app.main_screen.query_one(FileList)
        await pilot.press("tab", "end")  # into the list, down to the last row
        ranking = file_list.shown_ranking
        assert ranking is not None
        await wait_until(pilot, lambda: file_list.option_count == len(ranking.files) > 30)
        assert file_list.highlighted == file_list.option_count - 1
        fresh = {f.path: tuple(f.reasons) for f in rank(app.workspace.index, "session step").files}
        for number, ranked in enumerate(ranking.files):
            line = str(file_list.get_option_at_index(number).prompt).splitlines()[1]
            assert line.strip() == describe_reasons(fresh[ranked.path], len(line.strip()))
            if ranked.path.startswith("helpers/session_"):
                assert "session_step_0" in line or "words session" in line


async def test_while_typing_the_first_rows_are_built_and_the_rest_at_a_pause(
    long_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_list_module, "ROWS_WHILE_TYPING", 10)
    monkeypatch.setattr(ranking_module, "PACK_PAUSE", 30.0)  # the typing never pauses
    app = app_factory(long_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        file_list = app.main_screen.query_one(FileList)
        await pilot.press(*"session")
        await wait_until(pilot, lambda: getattr(file_list.shown_ranking, "query", "") == "session")
        ranked = len(file_list.shown_ranking.files)  # type: ignore[union-attr]
        assert ranked > 30 and file_list.option_count == 10
        await pilot.press("tab")  # into the list: every row, the cursor where it was
        await wait_until(pilot, lambda: file_list.option_count == ranked)
        assert file_list.highlighted == 0
        monkeypatch.setattr(ranking_module, "PACK_PAUSE", 0.15)
        await pilot.press("tab", "s")  # a new question: its first rows, then all at the pause
        await settle(pilot, "sessions")
        await wait_until(pilot, lambda: file_list.option_count > 10)
        assert file_list.option_count == len(file_list.shown_ranking.files)  # type: ignore[union-attr]
        assert file_list.highlighted == 0 and file_list.scroll_y == 0


async def test_a_level_is_packed_at_once_while_typed_keys_wait_for_a_pause(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ranking_module, "PACK_PAUSE", 30.0)  # the typing never pauses
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        meter = screen.query_one(BudgetMeter)
        await settle(pilot, "")  # opened: its first ranking is packed at once
        await pilot.press(*"session")
        await wait_until(
            pilot, lambda: screen.answer is not None and screen.answer.query == "session"
        )
        assert screen.packed is not None and screen.packed[1].query == ""  # not the typed one
        assert meter.totals_text.startswith("≈")  # an estimate
        await pilot.press("tab", "f")  # one key in the list: its exact pack follows at once
        await settle(pilot, "session")
        assert not meter.totals_text.startswith("≈")


async def test_a_typed_keys_pack_is_made_ahead_and_shown_only_when_the_typing_pauses(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    events_seen: list[str] = []
    pack_job = ranking_module.jobs.pack_job
    pause_reached = ranking_module.RankingScreen._pause_reached

    def watched_pack_job(*args: Any, **kwargs: Any) -> Any:
        events_seen.append("pack starts")
        return pack_job(*args, **kwargs)

    def watched_pause(self: Any, answer: Any) -> None:
        if answer.query == "session":
            events_seen.append("pause")
        pause_reached(self, answer)

    monkeypatch.setattr(ranking_module.jobs, "pack_job", watched_pack_job)
    monkeypatch.setattr(ranking_module.RankingScreen, "_pause_reached", watched_pause)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        meter = screen.query_one(BudgetMeter)
        await settle(pilot, "")
        monkeypatch.setattr(ranking_module, "PACK_PAUSE", 3.0)  # a long pause, for the test
        events_seen.clear()
        set_question(app, "session")
        await wait_until(pilot, lambda: screen._held is not None)  # made, and held back
        assert screen._held.generation == screen._generation
        assert events_seen == ["pack starts"]
        assert screen.packed is not None and screen.packed[1].query == ""  # not shown yet
        assert meter.totals_text.startswith("≈")
        await settle(pilot, "session")
        assert events_seen == ["pack starts", "pause"]  # shown at the pause, not packed again
        assert not meter.totals_text.startswith("≈")


async def test_rows_keep_their_places_while_pins_and_levels_are_set_in_the_list(
    long_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(long_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        set_question(app, "session step")
        await settle(pilot, "session step")
        screen = app.main_screen
        file_list = screen.query_one(FileList)
        await pilot.press("tab", "down", "down", "down")
        pinned = file_list.highlighted_path
        assert pinned is not None and file_list.highlighted == 3
        await pilot.press("p", "down", "f")
        leveled = file_list.get_option_at_index(4).id
        await settle(pilot)
        assert screen.pinned == {pinned} and screen.overrides == {leveled: Level.FULL}
        answer = screen.answer
        assert answer is not None and answer.ranking.files[0].path == pinned  # the engine's order
        assert file_list.get_option_at_index(3).id == pinned  # ... but the row stayed put
        assert file_list.highlighted == 4 and file_list.highlighted_path == leveled
        await pilot.press("tab", "s")  # back to the question, refine it: chosen files move up
        await settle(pilot, "session steps")
        assert file_list.get_option_at_index(0).id == pinned
        assert file_list.highlighted == 0


async def work_far_down_the_list(pilot: Pilot[Any], app: CtxtuiApp) -> FileList:
    """Ask about session steps and go down the list: the view scrolled, the cursor mid-view."""
    set_question(app, "session step")
    await settle(pilot, "session step")
    await pilot.press("tab", *["down"] * 24, *["up"] * 6)
    await pilot.pause()
    return app.main_screen.query_one(FileList)


async def test_the_list_keeps_its_view_and_row_when_files_come_and_go_on_disk(
    long_repo: Path, app_factory: AppFactory
) -> None:
    # session 31: working far down the list, a re-index that added a file put the cursor's
    # row at the bottom edge of the view (set_options scrolled home), and one that removed
    # the file under the cursor sent the cursor and the view back to rank 1
    new_file = long_repo / "helpers" / "session_new.py"
    app = app_factory(long_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        file_list = await work_far_down_the_list(pilot, app)
        at, view = file_list.highlighted, file_list.scroll_y
        here = file_list.highlighted_path
        assert at == 18 and view > 0 and here is not None
        new_file.write_text(session_module(0))
        await pilot.press("r")
        await wait_until(pilot, lambda: "helpers/session_new.py" in file_list._paths)
        await settle(pilot)
        assert file_list.highlighted_path == here and file_list.scroll_y == view
        at = file_list.highlighted
        below = file_list.get_option_at_index(at + 1).id
        (long_repo / here).unlink()
        await pilot.press("r")
        await wait_until(pilot, lambda: here not in file_list._paths)
        await settle(pilot)
        assert file_list.highlighted == at and file_list.highlighted_path == below
        assert file_list.scroll_y == view


async def test_going_back_to_the_question_keeps_it_and_ctrl_z_undoes_edits(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        query_bar = app.main_screen.query_one(QueryBar)
        await pilot.press(*"session")
        await settle(pilot, "session")
        for back in ("tab", "escape", "slash"):
            await pilot.press("tab", back)  # to the list and back
            assert query_bar.has_focus and query_bar.value == "session"
            assert query_bar.selection.is_empty and query_bar.cursor_position == len("session")
        await pilot.press(*" refresh")
        assert query_bar.value == "session refresh"
        await pilot.press("ctrl+z")
        assert query_bar.value == "session "  # a word at a time
        await pilot.press("ctrl+z", "ctrl+z")
        assert query_bar.value == ""
        await settle(pilot, "")


async def test_a_question_longer_than_the_bar_scrolls_to_the_cursor_without_a_layout(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(60, 20)) as pilot:
        query_bar = app.main_screen.query_one(QueryBar)
        await pilot.press(*"session")
        await settle(pilot, "session")
        layouts = count_layouts(app)
        tail = " refresh token expiry and the time to live of every user session"
        await pilot.press(*tail)
        await settle(pilot, "session" + tail)
        assert query_bar.scroll_x > 0  # the bar scrolled its text ...
        x, region = query_bar.cursor_screen_offset.x, query_bar.content_region
        assert region.x <= x <= region.right  # ... to the cursor
        line = "".join(segment.text for segment in query_bar.render_line(0))
        assert "every user session" in line
        assert len(layouts) < len(tail) // 4  # and a key does not lay the screen out again
        await pilot.press("home")
        assert query_bar.scroll_x == 0


async def test_earlier_questions_come_back_with_up_and_ctrl_r_and_are_kept(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path
) -> None:
    state_dir = tmp_path / "state"
    store = StateStore(small_repo, state_dir)
    store.save(RepoState(history=("session refresh", "invoice totals")))
    app = app_factory(small_repo, state_dir=state_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        query_bar = app.main_screen.query_one(QueryBar)
        await settle(pilot, "")
        await pilot.press(*"tok")
        await settle(pilot, "tok")
        await pilot.press("up")
        assert query_bar.value == "session refresh"
        await pilot.press("up", "up")
        assert query_bar.value == "invoice totals"
        await pilot.press("down")
        assert query_bar.value == "session refresh"
        await pilot.press("down")
        assert query_bar.value == "tok"  # what was being typed
        await pick_in_palette(pilot, "ctrl+r", "invoice")
        await wait_until(pilot, lambda: query_bar.value == "invoice totals")
        await pilot.press("ctrl+z")
        assert query_bar.value == "tok"
        await pilot.press("enter")  # asked: the question joins the history
        await settle(pilot, "tok")
    state, _notice = store.load()
    assert state.history == ("tok", "session refresh", "invoice totals")


async def test_a_restored_or_recalled_question_is_shown_and_ranked_printable(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path
) -> None:
    # review: a saved question or an earlier one holding ESC, BEL, CR or NUL (a paste from an
    # older version, a hand-edited state file) was drawn raw in the bar and ranked as it was
    state_dir = tmp_path / "state"
    store = StateStore(small_repo, state_dir)
    saved = "session\x1b[31m refresh\x07"
    earlier = ("invoice\rtotals\x00", "\x1b]0;title\x07tokens\x1bsigned")
    store.save(RepoState(query=saved, history=earlier))
    app = app_factory(small_repo, state_dir=state_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        query_bar = app.main_screen.query_one(QueryBar)
        await settle(pilot, "session refresh")
        assert query_bar.value == "session refresh"
        assert app.main_screen.answer is not None
        assert app.main_screen.answer.query == "session refresh"
        await pilot.press("up")
        assert query_bar.value == "invoice totals"
        await settle(pilot, "invoice totals")
        await pilot.press("up")
        assert query_bar.value == "tokenssigned"
        await pick_in_palette(pilot, "ctrl+r", "invoice")
        await wait_until(pilot, lambda: query_bar.value == "invoice totals")
    state, _notice = store.load()
    assert state.history[-2:] == earlier  # what was typed is kept; what is shown is printable


async def test_keys_typed_in_a_burst_edit_the_question_in_the_order_typed(
    small_repo: Path, app_factory: AppFactory
) -> None:
    # review: keys that pile up while a frame is busy (a ranking, a repaint) arrive together;
    # the bar's bound keys (backspace, arrows) went to the app and back before their action
    # ran, so the letters typed after them went in first: "backspace backspace x y" on
    # "option list" gave "option list" (Textual #6605)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"option list")
        await settle(pilot, "option list")
        query_bar = app.main_screen.query_one(QueryBar)
        burst(app, "backspace", "backspace", "x", "y")
        await settle(pilot, "option lixy")
        burst(app, "left", "left", "z", "home", "delete", "O")
        await settle(pilot, "Option lizxy")
        assert query_bar.cursor_position == 1
        await pilot.press("ctrl+f")  # the finder's box too
        await wait_until(pilot, lambda: isinstance(app.screen, FinderScreen))
        burst(app, *"strx", "backspace", *"ngs")
        box = app.screen.query_one("#finder-input", Input)
        await wait_until(pilot, lambda: len(box.value) >= 6)
        assert box.value == "strngs"


async def test_clearing_pins_and_levels_says_so_and_u_brings_them_back(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path
) -> None:
    state_dir = tmp_path / "state"
    overrides = {"auth/session.py": Level.OUTLINE, "README.md": Level.OFF}
    StateStore(small_repo, state_dir).save(
        RepoState(pinned=frozenset({"db/models.py"}), overrides=overrides, query="session")
    )
    app = app_factory(small_repo, state_dir=state_dir)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, "session")
        screen = app.main_screen
        await pilot.press("tab", "X")
        assert screen.pinned == frozenset() and screen.overrides == {}
        assert any(n.startswith("Cleared 1 pin and 2 levels.") for n in notices(app))
        await settle(pilot)
        assert screen.answer is not None and not screen.answer.ranking.files[0].pinned
        await pilot.press("u")
        assert screen.pinned == {"db/models.py"} and screen.overrides == overrides
        titles = {row.title for row in key_rows(app, screen)}
        assert {"Clear", "Undo choice"} <= titles  # the palette offers both


async def test_keys_typed_before_the_first_frame_land_in_the_question(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    typed = []

    def type_early(message: Any) -> None:
        # the terminal's input thread delivers keys typed while Python was starting the
        # moment the driver starts: before the screen is composed and anything has focus
        if isinstance(message, events.Mount) and message._sender is app and not typed:
            assert app._driver is not None
            for char in "why":
                typed.append(char)
                app._driver.send_message(events.Key(char, char))

    async with app.run_test(size=(120, 36), message_hook=type_early) as pilot:
        await settle(pilot, "why")
        query_bar = app.main_screen.query_one(QueryBar)
        assert typed == ["w", "h", "y"]
        assert query_bar.value == "why" and query_bar.has_focus


async def test_typing_while_the_first_index_runs_ranks_the_question_when_it_is_ready(
    small_repo: Path, app_factory: AppFactory
) -> None:
    release = threading.Event()

    def slow_open(root: Path, **options: Any) -> Workspace:
        release.wait(30)  # the first index of a large repository
        return Workspace.open(root, **options)

    app = app_factory(small_repo, workspace_factory=slow_open)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        file_list = screen.query_one(FileList)
        await pilot.press(*"refresh")
        assert screen.query_one(QueryBar).value == "refresh" and app.workspace is None
        assert "type your question now" in str(file_list.get_option_at_index(0).prompt)
        release.set()
        await wait_until(pilot, lambda: file_list.shown_ranking is not None)
        first = file_list.shown_ranking
        assert first is not None and first.query == "refresh"  # the very first list shown
        assert first.files[0].path == "auth/session.py" and file_list.highlighted == 0


async def test_quitting_during_the_first_index_stops_the_index(
    small_repo: Path, app_factory: AppFactory
) -> None:
    # session 31: ctrl+q during a first index left a blank terminal until the index was done
    # (81 s on the 16k tree): Python joins the worker's thread at exit, and nothing told it
    stopped, done = threading.Event(), threading.Event()

    def long_open(root: Path, **options: Any) -> Workspace:
        on_progress = options["on_progress"]
        try:
            for step in range(3_000):  # a minute of parsing, as the engine reports it
                if done.is_set():
                    break
                on_progress(Progress("parse", step, 3_000))
                time.sleep(0.02)
        except BaseException:
            stopped.set()
            raise
        raise AssertionError("the index ran to its end")

    app = app_factory(small_repo, workspace_factory=long_open)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            status = app.main_screen.query_one(IndexStatus)
            await wait_until(pilot, lambda: status.progress is not None)
            await pilot.press("ctrl+q")
        assert stopped.wait(10)  # at its next step, not after the whole index
    finally:
        done.set()


async def test_a_pin_and_a_level_pressed_before_the_first_rows_act_on_rank_1(
    small_repo: Path, app_factory: AppFactory
) -> None:
    release = threading.Event()

    def slow_open(root: Path, **options: Any) -> Workspace:
        release.wait(30)  # the first index: the list has no rows yet
        return Workspace.open(root, **options)

    app = app_factory(small_repo, workspace_factory=slow_open)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        file_list = screen.query_one(FileList)
        await pilot.press(*"refresh", "tab", "p", "o")  # in one breath after the question
        assert file_list.has_focus and file_list.highlighted_path is None
        assert screen.pinned == set() and screen.overrides == {}
        release.set()
        await wait_until(pilot, lambda: bool(screen.pinned))
        await settle(pilot)
        top = file_list.get_option_at_index(0).id
        assert top == "auth/session.py" and file_list.highlighted == 0
        assert screen.pinned == {top} and screen.overrides == {top: Level.OUTLINE}
        await pilot.press("tab", "s", "tab")  # back to the question and again: nothing waits
        await settle(pilot, "refreshs")
        assert screen.pinned == {top} and screen.overrides == {top: Level.OUTLINE}


def pins_at_each_copy(app: CtxtuiApp, clipboard: FakeClipboard) -> list[frozenset[str]]:
    """From now on, note the pins of the screen at every copy to the clipboard."""
    pins: list[frozenset[str]] = []
    copy = clipboard.copy

    def noting_copy(text: str) -> str:
        pins.append(frozenset(app.main_screen.pinned))
        return copy(text)

    clipboard.copy = noting_copy  # type: ignore[method-assign]
    return pins


async def test_tab_pin_and_copy_typed_before_the_first_frame_act_in_order(
    small_repo: Path, app_factory: AppFactory, fake_clipboard: FakeClipboard
) -> None:
    # review, session 33: `session tab p ctrl+y` typed while the app started gave the question
    # "psession" (the tab ran first, as a priority key, and focused the question), pinned
    # nothing and said "Nothing to copy yet."
    app = app_factory(small_repo)
    pins = pins_at_each_copy(app, fake_clipboard)
    typed: list[str] = []

    def type_early(message: Any) -> None:
        if isinstance(message, events.Mount) and message._sender is app and not typed:
            assert app._driver is not None
            for key in [*"session", "tab", "p", "ctrl+y"]:
                typed.append(key)
                app._driver.send_message(events.Key(key, key if len(key) == 1 else None))

    async with app.run_test(size=(120, 36), message_hook=type_early) as pilot:
        await wait_until(pilot, lambda: fake_clipboard.copies == 1)
        await settle(pilot, "session")
        screen = app.main_screen
        file_list = screen.query_one(FileList)
        assert len(typed) == 10
        assert screen.query_one(QueryBar).value == "session" and file_list.has_focus
        assert screen.pinned == {"auth/session.py"}  # rank 1, once the rows came
        assert file_list.get_option_at_index(0).id == "auth/session.py"
        assert pins == [{"auth/session.py"}]  # copied after the pin, with it
        assert "> session\n" in fake_clipboard.text
        assert any("copied once they are" in n for n in notices(app))
        assert not any("Nothing to copy" in n for n in notices(app))


@pytest.mark.parametrize(
    ("keys", "question", "pinned", "told"),
    [
        # the pin in its turn, then the question has the keys
        (["tab", "p", "escape"], "session", {"auth/session.py"}, False),
        # the letters after escape are the question's (x left rank 1 out)
        (["tab", "escape", "s", "space", "x"], "sessions x", set(), False),
        (["tab", "slash", "s"], "sessions", set(), False),  # / from the list: not typed
        # the question's editing keys in their turn too: the backspace before the tab
        (["x", "backspace", "tab", "p", "escape"], "session", {"auth/session.py"}, False),
        # a pin for "session" cannot be made on the rows of "sessions": said, not made
        (["tab", "p", "escape", "s"], "sessions", set(), True),
    ],
)
async def test_escape_typed_before_the_first_frame_goes_back_to_the_question_in_its_turn(
    small_repo: Path,
    app_factory: AppFactory,
    keys: list[str],
    question: str,
    pinned: set[str],
    told: bool,
) -> None:
    # session 33: an escape typed with the first keys was dropped (its priority binding found
    # nothing focused as it arrived, and nothing ran it in its turn): the keys after it
    # stayed in the list, `session tab escape x` left rank 1 out
    app = app_factory(small_repo)
    typed: list[str] = []

    def type_early(message: Any) -> None:
        if isinstance(message, events.Mount) and message._sender is app and not typed:
            assert app._driver is not None
            for key in [*"session", *keys]:
                typed.append(key)
                character = " " if key == "space" else key if len(key) == 1 else None
                app._driver.send_message(events.Key(key, character))

    async with app.run_test(size=(120, 36), message_hook=type_early) as pilot:
        screen = app.main_screen
        await wait_until(pilot, lambda: screen.pinned == pinned and screen.answer is not None)
        await settle(pilot, question)
        assert len(typed) == 7 + len(keys)
        assert screen.query_one(QueryBar).has_focus
        assert screen.query_one(QueryBar).value == question
        assert screen.pinned == pinned and screen.overrides == {}
        said = any("were not applied: the question changed" in n for n in notices(app))
        assert said is told


async def test_a_pin_pressed_before_the_first_rows_is_made_after_escape_too(
    small_repo: Path, app_factory: AppFactory
) -> None:
    # session 33: `tab p escape` during the first index dropped the pin waiting for the rows
    # (the list forgot it as it lost focus), where, once the rows are there, it pins rank 1
    release, held = held_open()  # the first index: the list has no rows yet
    app = app_factory(small_repo, workspace_factory=held)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        await pilot.press(*"refresh", "tab", "p", "escape")
        assert screen.query_one(QueryBar).has_focus and screen.pinned == set()
        release.set()
        await wait_until(pilot, lambda: bool(screen.pinned))
        await settle(pilot, "refresh")
        assert screen.pinned == {"auth/session.py"}
        assert screen.query_one(QueryBar).has_focus


async def test_a_copy_pressed_before_its_question_is_ranked_waits_for_its_list(
    small_repo: Path, app_factory: AppFactory, fake_clipboard: FakeClipboard
) -> None:
    release = threading.Event()

    def slow_open(root: Path, **options: Any) -> Workspace:
        release.wait(30)  # the first index: no ranked file yet
        return Workspace.open(root, **options)

    app = app_factory(small_repo, workspace_factory=slow_open)
    pins = pins_at_each_copy(app, fake_clipboard)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        await pilot.press(*"refresh", "tab", "p", "ctrl+y")
        assert fake_clipboard.copies == 0 and app.workspace is None
        assert any("copied once they are" in n for n in notices(app))
        release.set()
        await wait_until(pilot, lambda: fake_clipboard.copies == 1)
        await settle(pilot, "refresh")
        assert screen.pinned == {"auth/session.py"} and pins == [{"auth/session.py"}]
        assert "> refresh\n" in fake_clipboard.text
        # a copy right after a key: of that key's question, not of the list still on show
        await pilot.press("tab")
        burst(app, *" token", "ctrl+y")
        await wait_until(pilot, lambda: fake_clipboard.copies == 2)
        assert "> refresh token\n" in fake_clipboard.text


async def test_a_save_pressed_before_its_question_is_ranked_waits_for_its_list(
    small_repo: Path,
    app_factory: AppFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # review, session 33: ctrl+s pressed during the first index said "Nothing to save yet."
    # and saved nothing, where ctrl+y waited for the list and copied it
    monkeypatch.chdir(tmp_path)
    release = threading.Event()

    def slow_open(root: Path, **options: Any) -> Workspace:
        release.wait(30)  # the first index: no ranked file yet
        return Workspace.open(root, **options)

    app = app_factory(small_repo, workspace_factory=slow_open)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        await pilot.press(*"refresh", "tab", "p", "ctrl+s", "ctrl+s")
        assert app.screen is screen and app.workspace is None
        assert not any("Nothing to save" in n for n in notices(app))
        assert sum("still being ranked" in n for n in notices(app)) == 1
        release.set()
        await wait_until(pilot, lambda: prompt_up(app, screen))  # once the list is shown
        assert screen.pinned == {"auth/session.py"} and screen.query_text == "refresh"
        app.screen.query_one(Input).value = "waited.md"
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(n.startswith("Saved") for n in notices(app)))
        await settle(pilot, "refresh")
        assert app.screen is screen  # asked once for the two presses
        text = (tmp_path / "waited.md").read_text("utf-8")
        assert "> refresh\n" in text and "auth/session.py" in text


async def test_a_waiting_save_takes_no_key_typed_into_the_question_after_it(
    small_repo: Path, app_factory: AppFactory
) -> None:
    # session 33: ctrl+s pressed during the first index, then more of the question typed: the
    # prompt opened when the list came, mid-word, and the rest of the word went into it
    release, held = held_open()  # the first index: no ranked file yet
    app = app_factory(small_repo, workspace_factory=held)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        question = screen.query_one(QueryBar)
        await pilot.press(*"refresh", "ctrl+s", *" tok")
        release.set()
        await wait_until(pilot, lambda: screen.answer is not None)
        await settle(pilot, "refresh tok")
        await pilot.press(*"en")
        await settle(pilot, "refresh token")
        assert app.screen is screen and question.has_focus  # no prompt took the keys
        assert question.value == "refresh token"
        assert any(n.startswith("Not saved: the question changed") for n in notices(app))
        await pilot.press("ctrl+s")  # asked again: the prompt, for this question
        await wait_until(pilot, lambda: prompt_up(app, screen))


async def test_pin_and_level_keys_that_find_no_ranked_file_say_so(
    small_repo: Path, app_factory: AppFactory
) -> None:
    release = threading.Event()

    def slow_open(root: Path, **options: Any) -> Workspace:
        release.wait(30)
        return Workspace.open(root, **options)

    app = app_factory(small_repo, workspace_factory=slow_open)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        await pilot.press(*"qwzx", "tab", "p", "o")  # a question no file matches
        release.set()
        await wait_until(pilot, lambda: any("Nothing to pin" in n for n in notices(app)))
        assert screen.pinned == set() and screen.overrides == {}


async def test_the_encoding_switches_at_once_and_no_press_is_lost(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    full_index = threading.Event()
    with_encoding = Workspace.with_encoding

    def slow_with_encoding(self: Workspace, encoding: str) -> Workspace:
        full_index.wait(30)  # every file counted again: seconds on 2,000 files
        return with_encoding(self, encoding)

    monkeypatch.setattr(Workspace, "with_encoding", slow_with_encoding)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        set_question(app, "session")
        await settle(pilot, "session")
        screen = app.main_screen
        meter = screen.query_one(BudgetMeter)
        await pilot.press("tab", "e")
        assert screen.encoding == "cl100k_base"  # at once, while the switch runs
        await wait_until(pilot, lambda: app.workspace and app.workspace.encoding == "cl100k_base")
        await settle(pilot)
        assert "· cl100k · Markdown ·" in meter.totals_text
        assert not meter.totals_text.startswith("≈")  # the shown files were counted exactly
        await pilot.press("e", "e")  # back and forth during the full count: both count
        assert screen.encoding == "cl100k_base"
        full_index.set()
        await wait_until(pilot, lambda: any("now in cl100k_base" in n for n in notices(app)))
        await pilot.press("e")
        assert app.workspace is not None and app.workspace.encoding == "o200k_base"  # kept


async def test_the_full_count_waits_until_the_files_on_show_are_counted_on_screen(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[bool, str]] = []
    with_encoding = Workspace.with_encoding
    app = app_factory(small_repo)

    def watched_with_encoding(self: Workspace, encoding: str) -> Workspace:
        screen = app.main_screen  # what is on screen when the full count starts
        packed = screen.packed is not None and screen.packed[0] == screen._generation
        seen.append((packed, screen.workspace.encoding if screen.workspace else ""))
        return with_encoding(self, encoding)

    monkeypatch.setattr(Workspace, "with_encoding", watched_with_encoding)
    async with app.run_test(size=(120, 36)) as pilot:
        set_question(app, "session")
        await settle(pilot, "session")
        await pilot.press("tab", "e")
        await wait_until(pilot, lambda: any("now in cl100k_base" in n for n in notices(app)))
        assert seen == [(True, "cl100k_base")]  # the exact pack of the switched files shown


async def test_the_other_encoding_loads_once_the_typing_pauses_and_e_uses_it(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ranking_module, "TOKENIZER_PAUSE", 0.01)
    loaded = count_tokenizer_loads(monkeypatch)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        set_question(app, "session")
        await settle(pilot, "session")
        screen = app.main_screen
        await wait_until(pilot, lambda: "cl100k_base" in loaded)  # in the background
        tokenizer = screen._tokenizers["cl100k_base"]
        await wait_until(pilot, lambda: tokenizer.loaded)
        await pilot.press("tab", "e")
        await wait_until(pilot, lambda: app.workspace and app.workspace.encoding == "cl100k_base")
        await settle(pilot)
        assert "· cl100k ·" in screen.query_one(BudgetMeter).totals_text
        assert loaded.count("cl100k_base") == 1  # the switch loaded nothing again


async def show_invoice_whole(pilot: Pilot[Any], app: CtxtuiApp) -> Preview:
    """Ask about invoice lines and set billing/invoice.py to full: longer than the pane."""
    set_question(app, "invoice line")
    await settle(pilot, "invoice line")
    preview = app.main_screen.query_one(Preview)
    await pilot.press("tab", "f")
    await settle(pilot)
    await wait_until(pilot, lambda: preview.virtual_size.height > 3 * preview.size.height)
    return preview


async def test_the_preview_scrolls_from_the_list_with_ctrl_d_and_ctrl_u(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        preview = await show_invoice_whole(pilot, app)
        await pilot.press("ctrl+d")
        assert preview.scroll_y == preview.size.height // 2
        await pilot.press("ctrl+d", "ctrl+u")
        assert preview.scroll_y == preview.size.height // 2
        await pilot.press("ctrl+u")
        assert preview.scroll_y == 0


async def test_the_preview_stays_where_it_was_when_its_file_is_saved_again(
    small_repo: Path, app_factory: AppFactory
) -> None:
    # session 31: reading down a file while editing it beside the app, every save (seen by
    # the idle check, a focus-in or r) threw the preview back to the file's first line
    added = "\n\ndef invoice_total():\n    return 0\n"
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        preview = await show_invoice_whole(pilot, app)
        await pilot.press("ctrl+d", "ctrl+d")
        view = preview.scroll_y
        assert view == 2 * (preview.size.height // 2)
        with (small_repo / "billing" / "invoice.py").open("a", encoding="utf-8") as invoice:
            invoice.write(added)  # saved in the editor
        details = str(preview.border_subtitle)  # the level and the tokens
        await pilot.press("r")
        await wait_until(pilot, lambda: str(preview.border_subtitle) != details)
        await settle(pilot)
        assert "invoice_total" in preview.shown_text
        assert preview.scroll_y == view
        await pilot.press("down", "up")  # another file, then back: from its first line
        await settle(pilot)
        assert preview.scroll_y == 0


async def test_the_preview_highlights_the_lines_in_view_first_and_the_rest_when_scrolled_near(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preview_module, "HEAD_MARGIN", 4)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        set_question(app, "invoice line")
        await settle(pilot, "invoice line")
        screen = app.main_screen
        preview = screen.query_one(Preview)
        await pilot.press("tab", "f")  # billing/invoice.py, whole: ten screens long
        await settle(pilot)
        await wait_until(pilot, lambda: str(preview.border_title) == "billing/invoice.py")
        assert str(preview.border_subtitle).startswith("full ·")
        assert screen.packed is not None and app.workspace is not None
        entry = next(e for e in screen.packed[1].entries if e.path == "billing/invoice.py")
        expected = app.workspace.render_file(entry).expandtabs(4).rstrip("\n")
        assert preview.shown_text == expected  # every line is on show from the start...
        assert not preview.whole  # ...but only the head is highlighted
        await pilot.press("ctrl+d")  # half a page down: the plain rest comes near
        await wait_until(pilot, lambda: preview.whole)
        assert preview.shown_text == expected
        assert preview.scroll_y == preview.size.height // 2  # the view stayed where it was


async def test_an_encoding_switch_counts_the_plan_and_the_rows_in_view_first(
    long_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted: list[tuple[str, ...]] = []
    recounted = Workspace.recounted

    def watched_recount(self: Workspace, encoding: str, paths: Any, *args: Any) -> Workspace:
        counted.append(tuple(paths))
        return recounted(self, encoding, paths, *args)

    monkeypatch.setattr(Workspace, "recounted", watched_recount)
    app = app_factory(long_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        screen.budget = 1_000  # a plan of a few files
        set_question(app, "session")
        await settle(pilot, "session")
        file_list = screen.query_one(FileList)
        listed = file_list.shown_ranking.files if file_list.shown_ranking else ()
        rows = file_list.scrollable_content_region.height // 2
        assert len(listed) > rows + 10  # a list longer than the screen
        assert screen.answer is not None
        planned = {entry.path for entry in screen.answer.plan.entries}
        await pilot.press("tab", "e")
        await wait_until(pilot, lambda: bool(counted))
        assert {f.path for f in listed[:rows]} <= set(counted[0])  # the rows on screen
        assert planned <= set(counted[0])  # and the plan, for an exact meter
        below = [f.path for f in listed[rows + 6 :] if f.path not in planned]
        assert below and not set(below) & set(counted[0])  # not the files far below
        await wait_until(pilot, lambda: app.workspace and app.workspace.encoding == "cl100k_base")
        await settle(pilot)
        assert not screen.query_one(BudgetMeter).totals_text.startswith("≈")


class FakeClock:
    """A monotonic clock the test moves: the typing pause, without waiting for it."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


async def test_the_typing_pause_counts_from_the_key_so_a_slow_ranking_is_packed_at_once(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ranking_module, "PACK_PAUSE", 30.0)
    clock = FakeClock()
    monkeypatch.setattr(ranking_module, "time", clock)
    slow_rank = ranking_module.jobs.rank_job

    def rank_job(*args: Any, **kwargs: Any) -> Any:
        answer = slow_rank(*args, **kwargs)
        clock.now += 31.0  # this ranking took longer than the whole pause
        return answer

    monkeypatch.setattr(ranking_module.jobs, "rank_job", rank_job)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        await settle(pilot, "")
        await pilot.press("x")
        # Counted from the ranking, the pause would hold the pack back for 30 s more.
        await wait_until(pilot, lambda: screen.packed is not None and screen.packed[1].query == "x")
        assert not screen.query_one(BudgetMeter).totals_text.startswith("≈")


async def test_a_new_preview_text_repaints_the_pane_without_a_layout_of_the_screen(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.content import Content
    from textual.widget import Widget

    app = app_factory(small_repo)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press(*"session")
        await settle(pilot, "session")
        preview = app.main_screen.query_one(Preview)
        await wait_until(pilot, lambda: bool(preview.shown_text))  # the app's own preview
        await pilot.pause(0.3)
        preview.show(Content("short line\n" * 80))
        await pilot.pause()
        assert preview.shown_text.startswith("short line")
        asked: list[dict[str, Any]] = []
        refresh = Widget.refresh

        def spying(self: Widget, *regions: Any, **kwargs: Any) -> Any:
            if self is preview and kwargs.get("layout"):
                asked.append(kwargs)
            return refresh(self, *regions, **kwargs)

        monkeypatch.setattr(Widget, "refresh", spying)
        # Other lengths and widths (narrower than the pane: no scrollbar comes or goes).
        preview.show(Content("next file\n" * 300))
        await pilot.pause()
        preview.show(Content("\n".join(["x"] * 120)))
        await pilot.pause()
        assert preview.virtual_size.height == 120
        assert preview.shown_text.startswith("x\nx")
        assert asked == []  # the preview asked for no layout of the screen


async def test_a_key_sent_right_after_tab_is_the_lists_and_after_escape_the_questions(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"session")
        await settle(pilot, "session")
        screen = app.main_screen
        top = screen.query_one(FileList).highlighted_path
        # In one breath, as a fast typist's terminal sends them: the second key is queued
        # before the first is handled (Pilot.press would wait between the two).
        # Each key travels as messages (app -> focused widget -> its action -> a request to
        # the screen), so wait until one of the two outcomes shows, then check which: a
        # single pause was not enough on a loaded machine.
        question = screen.query_one(QueryBar)
        app.post_message(events.Key("tab", None))
        app.post_message(events.Key("o", "o"))
        await wait_until(pilot, lambda: question.value != "session" or top in screen.overrides)
        assert question.value == "session"  # no "o" added to the question
        assert screen.overrides.get(top) is Level.OUTLINE  # the list took it
        app.post_message(events.Key("escape", None))
        app.post_message(events.Key("s", "s"))
        await wait_until(
            pilot,
            lambda: question.value != "session" or screen.overrides.get(top) is not Level.OUTLINE,
        )
        assert question.value == "sessions"
        assert screen.overrides.get(top) is Level.OUTLINE  # not set to focused by the "s"
        app.post_message(events.Key("slash", "/"))  # in the question, a slash is typed
        await wait_until(pilot, lambda: question.value != "sessions")
        assert question.value == "sessions/"


async def test_the_ranking_screen_paints_at_its_own_frame_rate(
    small_repo: Path, app_factory: AppFactory
) -> None:
    # A key's list frame follows its echo by ~20 ms; at Textual's 60 frames a second it waited
    # for the next slot. The screen's frame timer runs at FRAME_PERIOD; this fails if a Textual
    # release stops reading the timer through the property the screen overrides.
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"session")
        await settle(pilot, "session")
        timer = app.main_screen._update_timer
        assert timer._interval == pytest.approx(ranking_module.FRAME_PERIOD)
        assert ranking_module.FRAME_PERIOD < 1 / 60
        assert [t for t in app.main_screen._timers if t.name == "screen_update"] == [timer]


async def test_an_undo_or_a_copy_in_a_burst_of_keys_comes_after_the_levels_and_pins_before_it(
    small_repo: Path, app_factory: AppFactory, fake_clipboard: FakeClipboard
) -> None:
    # session 32: keys sent in one burst (tmux send-keys on mono16k), as a terminal sends
    # keys typed while the app is busy. A key's action runs as the key reaches the app, but
    # a level or pin travels up from the list as a message: "f s o x a u u" said "Nothing to
    # undo." twice and then left every level applied; "p ctrl+y" copied no pin.
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        await pilot.press(*"session")
        await settle(pilot, "session")
        await pilot.press("tab")
        top = screen.query_one(FileList).highlighted_path
        burst(app, *"fsoxauu")
        await wait_until(pilot, lambda: len(notices(app)) >= 2)
        await settle(pilot)
        assert notices(app) == ["Back to 1 level.", "Back to 1 level."]
        assert dict(screen.overrides) == {top: Level.OUTLINE}
        burst(app, "down", "p", "ctrl+y")
        await wait_until(pilot, lambda: fake_clipboard.copies)
        pinned = screen.query_one(FileList).highlighted_path
        assert pinned != top and screen.pinned == {pinned}
        assert f"## {pinned}" in fake_clipboard.text
