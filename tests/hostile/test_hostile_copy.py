"""A file edited after the ranking is copied (and saved) as it is now, not as it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.support import FakeClipboard, settle, wait_until
from conftest import make_repo

from ctxtui.app import CtxtuiApp


async def test_copy_after_an_edit_sends_the_fresh_text(
    tmp_path: Path, app_factory: Callable[..., CtxtuiApp]
) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {"cart.py": "def cart_total(items):\n    return sum(items)\n", "other.py": "x = 1\n"},
    )
    app = app_factory(repo)
    clipboard = app.services.backend
    assert isinstance(clipboard, FakeClipboard)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"cart total")
        await settle(pilot, "cart total")
        assert "return sum(items)\n" in app.main_screen.packed[2].text  # type: ignore[index]
        (repo / "cart.py").write_text(
            "def cart_total(items):\n    return round(sum(items), 2)  # edited\n"
        )
        await pilot.press("tab", "c")
        await wait_until(pilot, lambda: clipboard.copies == 1)
        assert "return round(sum(items), 2)  # edited" in clipboard.text
        assert "return sum(items)\n" not in clipboard.text
