"""The semantic stage in the app, with the fake model: typing ranks by words, the pause brings
meaning in, the background run embeds the repository, and the list's border says which."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import make_repo
from semantic_support import SHOP, FakeEmbedder

from app.support import notices, settle, wait_until
from ctxtui.app import CtxtuiApp
from ctxtui.widgets.file_list import FileList
from ctxtui.workspace import semantic as semantic_module


async def test_the_pause_in_typing_brings_meaning_into_the_order(
    tmp_path: Path,
    app_factory: Callable[..., CtxtuiApp],
    fake_model: list[FakeEmbedder],
) -> None:
    app = app_factory(make_repo(tmp_path / "shop", SHOP))
    async with app.run_test(size=(120, 36)) as pilot:
        file_list = app.main_screen.query_one(FileList)
        await wait_until(pilot, lambda: app.main_screen.workspace is not None)
        await pilot.press(*"compute the money returned")
        await wait_until(pilot, lambda: file_list.border_subtitle == "words + meaning")
        await wait_until(pilot, lambda: file_list.shown_ranking is file_list.ranking)  # rows built
        assert file_list.ranking is not None
        assert file_list.ranking.files[0].path == "shop/refunds.py"
        assert "meaning lines 1-3" in str(file_list.get_option_at_index(0).prompt)
        workspace = app.main_screen.workspace
        stage = semantic_module.stage_of(workspace)
        assert stage is not None and workspace is not None
        await wait_until(pilot, lambda: stage.status(workspace.index).ready)


async def test_without_the_extra_the_list_says_nothing_about_meaning(
    tmp_path: Path, app_factory: Callable[..., CtxtuiApp]
) -> None:
    app = app_factory(make_repo(tmp_path / "shop", SHOP))
    async with app.run_test(size=(120, 36)) as pilot:
        file_list = app.main_screen.query_one(FileList)
        await wait_until(pilot, lambda: app.main_screen.workspace is not None)
        await pilot.press(*"compute")
        await settle(pilot, "compute")  # the exact pack: the typing pause has passed
        assert file_list.ranking is not None and not file_list.border_subtitle


async def test_the_encoding_switch_keeps_meaning_in_the_order_and_loads_no_second_model(
    tmp_path: Path,
    app_factory: Callable[..., CtxtuiApp],
    fake_model: list[FakeEmbedder],
) -> None:
    """`e` counts tokens in another encoding; what the files mean does not change with it
    (found in use on flask: after `e` the list went back to words alone under a border that
    still said 'words + meaning', and the full count loaded a second model, +240 MB)."""
    app = app_factory(make_repo(tmp_path / "shop", SHOP))
    question = "compute the money returned"
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.main_screen
        file_list = screen.query_one(FileList)
        await wait_until(pilot, lambda: screen.workspace is not None)
        await pilot.press(*question)
        await wait_until(pilot, lambda: file_list.border_subtitle == "words + meaning")
        workspace = screen.workspace
        stage = semantic_module.stage_of(workspace)
        assert stage is not None and workspace is not None
        await wait_until(pilot, lambda: stage.status(workspace.index).ready)

        def top() -> str | None:
            ranking = file_list.ranking
            return ranking.files[0].path if ranking is not None and ranking.files else None

        await pilot.press("tab", "e")
        # the files on show counted at once: ranked as before, meaning and all
        await wait_until(pilot, lambda: app.workspace and app.workspace.encoding == "cl100k_base")
        await settle(pilot, question)
        assert top() == "shop/refunds.py" and file_list.border_subtitle == "words + meaning"
        # then every file counted: the same stage, with its vectors and its one model
        await wait_until(pilot, lambda: any("now in cl100k_base" in n for n in notices(app)))
        await settle(pilot, question)
        assert semantic_module.stage_of(app.workspace) is stage
        assert top() == "shop/refunds.py" and len(fake_model) == 1
