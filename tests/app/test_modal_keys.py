"""Keys that pile up on a modal (a prompt, the finder, a command list) as it closes.

A second enter typed before the first one's answer has closed the modal (a key repeat, an
impatient double press, keys sent while a frame was busy) reaches the modal after it left
the stack: it must be dropped, never answered a second time.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.screen import Screen

from app.support import burst, settle, wait_until
from ctxtui.app import CtxtuiApp
from ctxtui.screens.finder import FinderScreen
from ctxtui.screens.main import MainScreen

AppFactory = Callable[..., CtxtuiApp]


def is_ready(modal: Screen[object], typed: str) -> bool:
    """The modal has taken in what was typed: an enter now picks it."""
    if isinstance(modal, FinderScreen):
        return bool(modal.matches) and modal._query == typed
    if isinstance(modal, CommandPalette):
        return modal._list_visible
    return True  # the prompt: its input has the keys


# session 31: each of these took the app down ("Can't pop screen"): the second enter's
# answer dismissed the modal again once the main screen was alone on the stack; the finder's
# also unpinned the file the first one pinned (a pin toggles), the palette's ran twice
CASES: dict[str, tuple[tuple[str, ...], str, Callable[[MainScreen], bool]]] = {
    "budget prompt": (("b",), "12k", lambda screen: screen.budget == 12_000),
    "finder": (("ctrl+f",), "strings", lambda screen: screen.pinned == {"utils/strings.py"}),
    "earlier question": (("ctrl+r",), "sess", lambda screen: screen.query_text == "session"),
    "palette": (("ctrl+p",), "raise the token budget", lambda screen: screen.budget == 10_000),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_double_enter_on_a_closing_modal_is_answered_once(
    small_repo: Path, app_factory: AppFactory, case: str
) -> None:
    keys, typed, done = CASES[case]
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"session", "tab")  # an earlier question, then another one
        await settle(pilot)
        await pilot.press("tab", "ctrl+u", *"orders", "tab")
        await settle(pilot, "orders")
        screen = app.main_screen
        await pilot.press(*keys)
        await wait_until(pilot, lambda: app.screen is not screen)
        modal = app.screen
        await pilot.press(*typed)
        await wait_until(pilot, lambda: is_ready(modal, typed))
        burst(app, "enter", "enter")
        await wait_until(pilot, lambda: app.screen is screen and done(screen))
        await settle(pilot)
        assert app.is_running and app._exception is None
        assert app.screen is screen and done(screen)
