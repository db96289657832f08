"""The keys are discoverable: the help screen and the command palette list every binding."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.binding import Binding
from textual.command import CommandPalette
from textual.dom import DOMNode

from app.support import settle, wait_until
from ctxtui.app import CtxtuiApp
from ctxtui.commands import key_rows
from ctxtui.screens.help import HelpScreen
from ctxtui.screens.main import MainScreen
from ctxtui.widgets.file_list import FileList
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
        expected = binding_ids(MainScreen, FileList, CtxtuiApp)
        found = {binding.id for _scope, node in [(0, app)] for _k, binding in node._bindings}
        found |= {
            binding.id
            for node in (app.main_screen, app.main_screen.query_one(FileList))
            for _k, binding in node._bindings
        }
        assert expected <= found
        assert len(rows) == len(expected)
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
        await pilot.press("tab", "ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"outline")
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        await wait_until(pilot, lambda: palette._list_visible)
        await pilot.press("enter")
        screen = app.main_screen
        await wait_until(pilot, lambda: screen.overrides == {"auth/session.py": Level.OUTLINE})
