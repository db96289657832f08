"""A warm start (issue 10): the first list comes from the saved index, before the tree is checked.

The full open (listing and comparing every file) follows the first list's frame and replaces
the saved index; what it finds (a file added since, the notices of files left out) shows then.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.support import notices, settle, wait_until
from ctxtui.app import CtxtuiApp
from ctxtui.widgets.file_list import FileList
from ctxtui.workspace import Workspace

AppFactory = Callable[..., CtxtuiApp]


async def test_a_warm_start_lists_the_saved_index_then_the_checked_tree(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    Workspace.open(small_repo)  # the index an earlier session saved
    (small_repo / "auth" / "session_store.py").write_text("def session_store(): ...\n")
    (small_repo / ".env").write_text("SESSION_KEY=abc\n")  # a secret file: left out, said once
    checking = threading.Event()
    release = threading.Event()
    full_open = Workspace.open.__func__  # type: ignore[attr-defined]

    def slow_open(cls: type[Workspace], root: Path, **options: Any) -> Workspace:
        checking.set()
        release.wait(30)  # the tree of a large repository takes a while to list
        return full_open(cls, root, **options)  # type: ignore[no-any-return]

    monkeypatch.setattr(Workspace, "open", classmethod(slow_open))
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        file_list = screen.query_one(FileList)
        await pilot.press(*"session")
        await wait_until(pilot, checking.is_set)  # only once the first list is on screen
        shown = file_list.shown_ranking
        assert shown is not None and shown.query == "session" and not screen.checked
        assert "auth/session_store.py" not in [f.path for f in shown.files]
        assert not any("secret" in text for text in notices(app))
        release.set()
        await settle(pilot, "session")
        shown = file_list.shown_ranking
        assert shown is not None and screen.checked
        assert "auth/session_store.py" in [f.path for f in shown.files]
        assert any("Left out 1 secret file (.env)" in text for text in notices(app))


async def test_a_warm_start_on_an_unchanged_tree_keeps_the_first_answer(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    Workspace.open(small_repo)  # the index an earlier session saved; the tree stays as it was
    opened: list[Workspace] = []
    ranked: list[tuple[int, str]] = []
    release = threading.Event()
    full_open = Workspace.open.__func__  # type: ignore[attr-defined]
    real_rank = Workspace.rank

    def slow_open(cls: type[Workspace], root: Path, **options: Any) -> Workspace:
        release.wait(30)
        opened.append(full_open(cls, root, **options))
        return opened[-1]

    def counted_rank(self: Workspace, query: str, *args: Any, **kwargs: Any) -> Any:
        ranked.append((id(self), query))
        return real_rank(self, query, *args, **kwargs)

    monkeypatch.setattr(Workspace, "open", classmethod(slow_open))
    monkeypatch.setattr(Workspace, "rank", counted_rank)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        file_list = screen.query_one(FileList)
        await pilot.press(*"session")

        def first_list_shown() -> bool:
            shown = file_list.shown_ranking
            return shown is not None and shown.query == "session"

        await wait_until(pilot, first_list_shown)
        first = file_list.shown_ranking
        release.set()
        await settle(pilot, "session")
        full = opened[0]
        assert screen.workspace is full  # what comes next ranks on the checked tree
        assert (id(full), "session") not in ranked  # the saved index's answer stood
        assert file_list.shown_ranking is first
        await pilot.press("backspace")
        await settle(pilot, "sessio")
        assert (id(full), "sessio") in ranked
