"""A warm start (issue 10): the first list comes from the saved index, before the tree is checked.

The full open (listing and comparing every file) follows the first list's frame and replaces
the saved index; what it finds (a file added since, the notices of files left out) shows then.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets._footer import FooterKey
from textual.widgets._progress_bar import Bar

from app.support import notices, settle, wait_until
from ctxtui import collector
from ctxtui.app import CtxtuiApp
from ctxtui.screens import host as host_module
from ctxtui.screens import ranking as ranking_module
from ctxtui.widgets import index_status as index_status_module
from ctxtui.widgets.file_list import FileList
from ctxtui.widgets.index_status import IndexStatus
from ctxtui.widgets.key_footer import KeyFooter
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
        # session 32: the notice said "--include-secret NAME or !NAME in .ctxtuiignore packs
        # it", a flag the app does not take (`ctxtui PATH --include-secret .env` fails)
        told = next(text for text in notices(app) if "secret file" in text)
        assert "!NAME in .ctxtuiignore packs it" in told and "--include-secret" not in told


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


async def test_the_status_bar_moves_while_indexing_and_stays_still_on_a_warm_start(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def slow_open(root: Path, **options: Any) -> Workspace:
        release.wait(30)  # a first index of a large repository
        return Workspace.open(root, **options)

    cold = app_factory(small_repo, workspace_factory=slow_open)
    async with cold.run_test(size=(120, 36)) as pilot:
        status = cold.main_screen.query_one(IndexStatus)
        bar = status.query_one(Bar)
        await wait_until(pilot, lambda: bar.auto_refresh == index_status_module.ANIMATION_PERIOD)
        release.set()
        await wait_until(pilot, lambda: not status.display)

    Workspace.open(small_repo)  # the index a session saved: a warm start shows it first
    checking = threading.Event()
    done = threading.Event()
    full_open = Workspace.open.__func__  # type: ignore[attr-defined]

    def slow_check(cls: type[Workspace], root: Path, **options: Any) -> Workspace:
        checking.set()
        done.wait(30)
        return full_open(cls, root, **options)  # type: ignore[no-any-return]

    monkeypatch.setattr(Workspace, "open", classmethod(slow_check))
    warm = app_factory(small_repo)
    async with warm.run_test(size=(120, 36)) as pilot:
        status = warm.main_screen.query_one(IndexStatus)
        bar = status.query_one(Bar)
        assert bar.auto_refresh is None  # still from the first frame
        await wait_until(pilot, checking.is_set)
        await wait_until(pilot, lambda: not status.display)
        assert bar.auto_refresh is None  # never moved: the saved index came first
        done.set()
        await wait_until(pilot, lambda: warm.main_screen.checked)


async def test_a_warm_start_builds_its_footer_and_hides_its_status_after_the_first_list(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    Workspace.open(small_repo)  # the index an earlier session saved
    built: list[bool] = []  # per footer build: was the first list on screen?
    recompose = KeyFooter.recompose

    async def counted(self: KeyFooter) -> None:
        built.append(app.main_screen.first_list_shown.is_set())
        await recompose(self)

    monkeypatch.setattr(KeyFooter, "recompose", counted)
    status_at_first_list: list[bool] = []
    painted = ranking_module.RankingScreen._first_list_painted

    def first_list_painted(self: ranking_module.RankingScreen, answer: Any) -> None:
        status_at_first_list.append(self.query_one(IndexStatus).display)
        painted(self, answer)

    monkeypatch.setattr(ranking_module.RankingScreen, "_first_list_painted", first_list_painted)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"session")
        await settle(pilot, "session")
        screen = app.main_screen
        await wait_until(pilot, lambda: screen.query_one(KeyFooter).query(FooterKey))
        await wait_until(pilot, lambda: not screen.query_one(IndexStatus).display)
        # nothing was built or laid out for them while the saved index opened and ranked
        assert built and all(built)
        assert status_at_first_list == [True]


async def test_a_warm_start_without_a_first_list_shows_its_footer_all_the_same(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    Workspace.open(small_repo)  # the index an earlier session saved
    monkeypatch.setattr(ranking_module, "FIRST_LIST_WAIT", 0.2)

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise OSError("the disk went away")

    monkeypatch.setattr(ranking_module.jobs, "rank_job", failing)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        await wait_until(pilot, lambda: screen.ready)
        await wait_until(pilot, lambda: screen.query_one(KeyFooter).query(FooterKey))
        await wait_until(pilot, lambda: not screen.query_one(IndexStatus).display)
        assert not screen.first_list_shown.is_set()


async def test_collections_paused_for_the_start_run_again_once_the_first_list_shows(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    Workspace.open(small_repo)  # the index an earlier session saved
    release = threading.Event()
    full_open = Workspace.open.__func__  # type: ignore[attr-defined]

    def slow_open(cls: type[Workspace], root: Path, **options: Any) -> Workspace:
        release.wait(30)
        return full_open(cls, root, **options)  # type: ignore[no-any-return]

    monkeypatch.setattr(Workspace, "open", classmethod(slow_open))
    app = app_factory(small_repo)
    collector.hold_until_started()  # as the entry point does, first thing
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            file_list = app.main_screen.query_one(FileList)
            assert not gc.isenabled()
            await pilot.press(*"session")
            await wait_until(pilot, lambda: file_list.shown_ranking is not None)
            await wait_until(pilot, gc.isenabled)  # the first list, not the full open
            assert not app.main_screen.checked
            release.set()
            await settle(pilot, "session")
    finally:
        release.set()
        gc.enable()


async def test_collections_run_again_when_no_first_list_comes_in_time(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(host_module, "FIRST_LIST_WAIT", 0.2)
    release = threading.Event()

    def slow_open(root: Path, **options: Any) -> Workspace:
        release.wait(30)  # a first index of a large repository
        return Workspace.open(root, **options)

    app = app_factory(small_repo, workspace_factory=slow_open)
    collector.hold_until_started()
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.press(*"session")
            await wait_until(pilot, gc.isenabled)
            assert app.main_screen.workspace is None  # no list yet: the index is being built
            release.set()
            await settle(pilot, "session")
    finally:
        release.set()
        gc.enable()
