"""The file finder (ctrl+f): any indexed file by name or glob, pinned or leveled from there."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import make_repo
from textual import events
from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Input

from app.support import REPO_FILES, notices, settle, wait_until
from ctxtui.app import CtxtuiApp
from ctxtui.path_search import is_glob, search_paths
from ctxtui.screens.finder import NARROW_WIDTH, FinderList, FinderScreen
from ctxtui.screens.main import MainScreen
from ctxtui.screens.prompt import PromptScreen
from engine.model import Level

AppFactory = Callable[..., CtxtuiApp]
PATHS = (
    "README.md",
    "docs/input.md",
    "src/app.py",
    "src/widgets/_input.py",
    "src/widgets/input_box.ts",
    "tests/test_app.py",
    "web/app.ts",
    "web/deep/util.ts",
)


def test_a_file_name_is_found_from_a_few_of_its_letters() -> None:
    assert search_paths("app.py", PATHS)[0].path == "src/app.py"  # the exact name wins
    assert search_paths("_inpt", PATHS)[0].path == "src/widgets/_input.py"
    assert search_paths("", PATHS) == []
    assert search_paths("zzzzqqq", PATHS) == []
    marked = search_paths("input", PATHS)[0]
    assert marked.path[marked.marked[0] : marked.marked[1]] == "input"


def test_ties_go_to_the_file_ranked_higher_for_the_question() -> None:
    plain = [m.path for m in search_paths("input", PATHS)]
    ranked = [m.path for m in search_paths("input", PATHS, {"src/widgets/_input.py": 0})]
    assert plain[0] == "docs/input.md" and ranked[0] == "src/widgets/_input.py"


def test_a_glob_matches_as_gitignore_does_and_returns_every_match() -> None:
    assert is_glob("src/**/*.ts") and not is_glob("src/app")
    assert [m.path for m in search_paths("web/**/*.ts", PATHS)] == [
        "web/app.ts",
        "web/deep/util.ts",
    ]
    assert [m.path for m in search_paths("*.ts", PATHS)] == [
        "src/widgets/input_box.ts",
        "web/app.ts",
        "web/deep/util.ts",
    ]
    assert [m.path for m in search_paths("src/*.py", PATHS)] == ["src/app.py"]


async def open_finder(pilot: Pilot[None], typed: str) -> FinderScreen:
    """Open the finder (ctrl+f), type into its box, and wait for its first matches."""
    await pilot.press("ctrl+f")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, FinderScreen))
    finder = pilot.app.screen
    assert isinstance(finder, FinderScreen)
    await pilot.press(*typed)
    await wait_until(pilot, lambda: bool(finder.matches))
    return finder


def first_row(finder_list: FinderList) -> Content:
    """The first match's row as drawn."""
    row = finder_list.get_option_at_index(0).prompt
    assert isinstance(row, Content)
    return row


async def test_enter_pins_a_file_the_ranking_does_not_show(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"session")
        await settle(pilot, "session")
        screen = app.main_screen
        assert screen.answer is not None
        assert "utils/strings.py" not in {f.path for f in screen.answer.ranking.files}
        finder = await open_finder(pilot, "strngs")
        assert finder.matches[0].path == "utils/strings.py"
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert screen.pinned == {"utils/strings.py"}
        await settle(pilot)
        assert screen.answer.ranking.files[0].path == "utils/strings.py"
        # enter pins, never unpins (app review, session 31: a second find-and-enter of the
        # same file quietly took its pin off, under a hint saying "enter pins")
        await open_finder(pilot, "strngs")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert screen.pinned == {"utils/strings.py"}
        assert any("Already pinned" in n for n in notices(app))


async def test_a_glob_sets_the_level_of_every_match_from_the_finders_list(
    small_repo: Path, app_factory: AppFactory
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, "")
        screen = app.main_screen
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FinderScreen))
        finder = app.screen
        assert isinstance(finder, FinderScreen)
        await pilot.press(*"auth/*.py")
        await wait_until(pilot, lambda: len(finder.matches) == 3)
        await pilot.press("tab", "o")
        assert finder.query_one(FinderList).has_focus
        auth = {"auth/login.py", "auth/session.py", "auth/tokens.py"}
        assert screen.overrides == dict.fromkeys(auth, Level.OUTLINE)
        await pilot.press("p")
        assert screen.pinned == auth
        await pilot.press("p", "escape")  # all pinned: p unpins them all
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert screen.pinned == frozenset()
        await pilot.press("tab", "u")  # one undo per change, the finder's too
        assert screen.pinned == auth


async def test_at_40_columns_each_match_keeps_one_line_and_its_file_name(
    tmp_path: Path, app_factory: AppFactory
) -> None:
    deep = "services/billing/internal/adapters/payments/provider_gateway.py"
    root = make_repo(
        tmp_path / "deep", {deep: "def charge():\n    return 1\n", "app.py": "x = 1\n"}
    )
    app = app_factory(root)
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.press(*"charge")
        await settle(pilot, "charge")
        finder = await open_finder(pilot, "gateway")
        finder_list = finder.query_one(FinderList)
        width = finder_list.scrollable_content_region.width
        row = first_row(finder_list)
        assert row.cell_length <= width  # one line: it used to wrap onto two
        assert row.plain == "   …/payments/provider_gateway.py #1"  # the name whole, its rank
        # the match mark moved with the cut: it still covers the letters typed
        marked = [span for span in row.spans if "gateway" in row.plain[span.start : span.end]]
        assert marked
        await pilot.press("tab", "p")  # pinned from the finder: its mark fits too
        await wait_until(pilot, lambda: "◆" in first_row(finder_list).plain)
        assert first_row(finder_list).cell_length <= width


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (40, 16)])
async def test_every_match_of_a_list_has_the_same_form_its_path_shortened_to_fit(
    tmp_path: Path, app_factory: AppFactory, size: tuple[int, int]
) -> None:
    # review, session 33: from 60 columns the rows that fit read `path  rank 2` and a longer
    # one in the same list `   …/path.py #1`, another indent and another rank
    deep = "services/billing/internal/adapters/payments/outbound/provider_gateway.py"
    files = {deep: "def charge():\n    return 1\n", "gateway.py": "def charge():\n    return 2\n"}
    app = app_factory(make_repo(tmp_path / "deep", files))
    async with app.run_test(size=size) as pilot:
        await pilot.press(*"charge")
        await settle(pilot, "charge")
        finder = await open_finder(pilot, "gateway")
        await pilot.pause()
        finder_list = finder.query_one(FinderList)
        width = finder_list.scrollable_content_region.width
        assert len(finder.matches) == 2
        wide = size[0] >= NARROW_WIDTH
        for n, match in enumerate(finder.matches):
            row = finder_list.get_option_at_index(n).prompt
            assert isinstance(row, Content)
            text = row.plain
            assert row.cell_length <= width, text
            rank = finder.host.ranked[match.path] + 1
            marks, tail = (" " * 10, f"  rank {rank}") if wide else (" " * 3, f" #{rank}")
            assert text.startswith(marks) and text[len(marks)] != " ", text
            assert text.endswith(tail), text
            shown = text[len(marks) : -len(tail)]
            assert shown == match.path or (
                shown.startswith("…") and match.path.endswith(shown.lstrip("…"))
            ), text
            assert shown.endswith("gateway.py")
            if match.path == deep:  # too long at these widths: shortened, in the same form
                assert shown.startswith("…"), text


@pytest.mark.parametrize("size", [(24, 16), (30, 16)])
async def test_a_narrow_match_keeps_its_name_s_end_and_its_rank_beside_the_scrollbar(
    small_repo: Path, app_factory: AppFactory, size: tuple[int, int]
) -> None:
    # review, session 33: matches too many for the list were fitted to its width before
    # their scrollbar took 2 cells of it, so the row's end was cut: the rank, and with it
    # ("test_blueprint…" in flask) the name's end and extension
    code = "from auth.session import Session\n\ndef test_session():\n    assert Session\n"
    files = {**REPO_FILES, **{f"tests/unit/test_session_case_{n}.py": code for n in range(12)}}
    app = app_factory(make_repo(small_repo.parent / "many", files))
    async with app.run_test(size=size) as pilot:
        await pilot.press(*"session")
        await settle(pilot, "session")
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FinderScreen))
        finder = app.screen
        assert isinstance(finder, FinderScreen)
        app.post_message(events.Paste("session"))  # the whole query at once: one first redraw
        await wait_until(pilot, lambda: bool(finder.matches))
        await pilot.pause()
        finder_list = finder.query_one(FinderList)
        assert finder_list.show_vertical_scrollbar  # more matches than lines
        rows = [finder_list.render_line(y).text for y in range(finder_list.size.height)]
        paths = [finder_list.get_option_at_index(n).id or "" for n in range(len(rows))]
        for path, row in zip(paths, rows, strict=True):
            shown, _, rank = row.strip().rpartition(" ")
            assert rank == f"#{finder.host.ranked[path] + 1}", row  # was cut to "…"
            assert shown == path or (shown.startswith("…") and path.endswith(shown[1:])), row


async def test_a_paste_into_the_finder_or_a_prompt_drops_terminal_codes_and_control_characters(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path
) -> None:
    # session 32: only the question dropped them; the finder kept a copied name's colour codes
    # and bell (and matched nothing), the save prompt put them in the pack's file name
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, "")
        await pilot.press("ctrl+f")
        await wait_until(pilot, lambda: isinstance(app.screen, FinderScreen))
        finder = app.screen
        assert isinstance(finder, FinderScreen)
        box = finder.query_one("#finder-input", Input)
        app.post_message(events.Paste("\x1b[01;32mstrings\x1b[0m.py\x07\nsecond line"))
        await wait_until(pilot, lambda: box.value != "")
        assert box.value == "strings.py"
        await wait_until(pilot, lambda: bool(finder.matches))
        assert finder.matches[0].path == "utils/strings.py"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen))
        target = tmp_path / "pack.md"
        app.post_message(events.Paste(f"{tmp_path}/pack\x1b[0m.md\x08\r\n"))  # replaces the name
        prompt_box = app.screen.query_one("#prompt-input", Input)
        await wait_until(pilot, lambda: prompt_box.value == str(target))
        await pilot.press("enter")
        await wait_until(pilot, target.exists)
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith("pack")] == ["pack.md"]


@pytest.mark.parametrize("size", [(20, 8), (30, 10), (40, 5), (20, 12)])
async def test_the_finder_in_a_tiny_terminal_still_shows_its_matches(
    small_repo: Path, app_factory: AppFactory, size: tuple[int, int]
) -> None:
    # review, session 33: at 20x8 the dialog (80 % high, a thick border), its title, the
    # box (3 lines) and the hint took every line: no match was shown, an empty box
    app = app_factory(small_repo)
    async with app.run_test(size=size) as pilot:
        await pilot.press(*"session")
        await settle(pilot, "session")
        finder = await open_finder(pilot, "sess")
        finder_list = finder.query_one(FinderList)
        await pilot.pause()
        dialog = finder.query_one("#finder-dialog").content_region
        assert finder_list.scrollable_content_region.height >= 1  # a row at least...
        assert dialog.contains_region(finder_list.region)  # ...inside the dialog, on screen
        assert finder_list.highlighted_option is not None
        assert finder_list.highlighted_option.id == "auth/session.py"
        box = finder.query_one("#finder-input", Input)
        assert box.region.height >= 1 and box.has_focus  # where the letters go stays
        await pilot.press("enter")  # and it works as at any size
        await wait_until(pilot, lambda: app.main_screen.pinned == {"auth/session.py"})
