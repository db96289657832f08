"""The keys are discoverable: the help screen and the command palette list every binding."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.binding import Binding
from textual.dom import DOMNode
from textual.widgets._footer import FooterKey

from app.support import pick_in_palette, settle, wait_until
from ctxtui.app import CtxtuiApp
from ctxtui.commands import key_rows
from ctxtui.screens.help import HelpScreen
from ctxtui.screens.main import MainScreen
from ctxtui.widgets.file_list import FileList
from ctxtui.widgets.key_footer import KeyFooter
from ctxtui.widgets.query_bar import QueryBar
from engine.model import Level

AppFactory = Callable[..., CtxtuiApp]


def binding_ids(*classes: type[DOMNode]) -> set[str]:
    """Ids of the bindings declared on classes."""
    return {
        binding.id
        for cls in classes
        for binding in cls.BINDINGS
        if isinstance(binding, Binding) and binding.id is not None
    }


async def test_help_lists_every_key_with_an_id(small_repo: Path, app_factory: AppFactory) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        rows = key_rows(app, app.main_screen)
        titles = {row.title for row in rows}
        assert {"Full", "Focused", "Outline", "Off", "Auto", "Pin", "Copy", "Format"} <= titles
        copy = next(row for row in rows if row.title == "Copy")
        assert copy.keys == "c, ^y"
        keys = {row.title: row.keys for row in rows}  # session 31: "+/-  Budget — Raise ..."
        assert (keys["Budget"], keys["Budget down"]) == ("+, =", "-")
        layers = [
            cls
            for cls in MainScreen.__mro__
            if cls.__module__.startswith("ctxtui.") and issubclass(cls, DOMNode)  # not mixins
        ]
        expected = binding_ids(*layers, QueryBar, FileList, CtxtuiApp)
        found = {binding.id for _scope, node in [(0, app)] for _k, binding in node._bindings}
        found |= {
            binding.id
            for node in (
                app.main_screen,
                app.main_screen.query_one(QueryBar),
                app.main_screen.query_one(FileList),
            )
            for _k, binding in node._bindings
        }
        assert expected <= found
        assert len(rows) == len(expected)  # one row a key, whatever its bindings
        assert {"Clear", "Find", "Earlier", "Preview down", "Undo"} <= titles
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))


async def test_question_mark_opens_help_from_the_list_but_types_in_the_question(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"why?")
        await settle(pilot, "why?")
        assert isinstance(app.screen, MainScreen)
        await pilot.press("tab", "question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))


async def test_palette_runs_the_same_action_as_the_key(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"session refresh")
        await settle(pilot, "session refresh")
        await pilot.press("tab")
        await pick_in_palette(pilot, "ctrl+p", "outline")
        screen = app.main_screen
        await wait_until(pilot, lambda: screen.overrides == {"auth/session.py": Level.OUTLINE})


def footer_entries(app: CtxtuiApp) -> dict[str, tuple[str, int]]:
    """Key -> (action, right edge) of every entry the footer shows now."""
    return {
        key.key: (key.action, key.region.right)
        for key in app.main_screen.query(FooterKey)
        if key.region.width
    }


QUESTION_KEYS = {"tab", "ctrl+r", "ctrl+f", "ctrl+y", "ctrl+q", "f1"}
LIST_KEYS = {"f", "s", "o", "x", "a", "p", "plus", "tab", "ctrl+f", "ctrl+y", "ctrl+q", "f1"}


@pytest.mark.parametrize(("width", "height"), [(80, 24), (60, 20)])
async def test_the_footer_lists_whole_keys_that_work_where_they_are_shown(
    small_repo: Path, app_factory: AppFactory, width: int, height: int
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(width, height)) as pilot:
        await pilot.press(*"session")
        await settle(pilot, "session")
        question = footer_entries(app)
        await pilot.press("tab")
        await pilot.pause()
        in_list = footer_entries(app)
    for shown in (question, in_list):
        assert all(right <= width for _action, right in shown.values())  # none cut off
    essential = {"tab", "ctrl+y", "ctrl+q", "f1"}
    assert (QUESTION_KEYS if width >= 80 else essential) <= set(question)
    assert (LIST_KEYS if width >= 80 else essential | set("fsoxap")) <= set(in_list)
    # in the question a letter (or + and -) is text: none is listed there
    assert not [key for key in question if len(key) == 1 or key in ("plus", "minus")]
    assert question["tab"][0].endswith("focus_list") and in_list["tab"][0] == "focus_query"


async def test_a_burst_of_binding_changes_rebuilds_the_footer_once(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    rebuilds: list[int] = []
    recompose = KeyFooter.recompose

    async def counted(self: KeyFooter) -> None:
        rebuilds.append(len(rebuilds))
        await recompose(self)

    monkeypatch.setattr(KeyFooter, "recompose", counted)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"session")
        await settle(pilot, "session")
        screen = app.screen
        before = len(rebuilds)
        for _ in range(4):  # a focus, a resize, the loading state, a list: in one breath
            screen.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert len(rebuilds) == before + 1
        await pilot.press("tab")  # the footer still follows the bindings
        await wait_until(pilot, lambda: footer_entries(app).get("tab", ("",))[0] == "focus_query")


async def test_the_footer_is_rebuilt_only_when_its_keys_change(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"session")
        await settle(pilot, "session")
        footer = app.screen.query_one(KeyFooter)
        keys = list(footer.query(FooterKey))
        assert keys
        app.screen.refresh_bindings()  # nothing it lists changes: the same key widgets stay
        await pilot.pause()
        await pilot.pause()
        assert list(footer.query(FooterKey)) == keys
        await pilot.resize_terminal(60, 36)  # fewer keys fit: rebuilt
        await wait_until(pilot, lambda: list(footer.query(FooterKey)) != keys)
        assert "find_file" not in " ".join(key.action for key in footer.query(FooterKey))
        keys = list(footer.query(FooterKey))
        await pilot.press("tab")  # other keys in the list: rebuilt
        await wait_until(pilot, lambda: footer_entries(app).get("tab", ("",))[0] == "focus_query")
        assert list(footer.query(FooterKey)) != keys
