"""SVG snapshots of the states that matter: empty question, ranked list, over budget, help, 80x24,
the work tree's changes packed.

Deterministic by construction: a fixture repository written by the test, a fixed terminal size,
the offline tokenizer, the input's cursor blink off, and every screenshot taken only once the
exact pack of the question on screen has arrived. Update with `pytest --snapshot-update` after
looking at the report.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from conftest import make_repo
from textual.pilot import Pilot
from textual.widgets import Input

from app.support import REPO_FILES, FakeClipboard, settle, wait_until
from ctxtui.app import CtxtuiApp, make_app
from ctxtui.screens.finder import FinderScreen
from ctxtui.state import RepoState, StateStore
from ctxtui.widgets.query_bar import QueryBar
from engine.model import Level

QUESTION = "session refresh"
SnapCompare = Callable[..., bool]


def build_app(repo: Path, tmp_path: Path, state: RepoState | None = None) -> CtxtuiApp:
    """The app as the CLI builds it, with a fake clipboard and (optionally) a saved state."""
    state_dir = tmp_path / "state"
    if state is not None:
        StateStore(repo, state_dir).save(state)
    return make_app(
        repo, clipboard=FakeClipboard(), state_dir=state_dir, cache_dir=tmp_path / "cache"
    )


def settled_on(question: str, *keys: str) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A run_before that stops the cursor blinking, presses keys and waits for the exact pack."""

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, CtxtuiApp)
        app.main_screen.query_one(QueryBar).cursor_blink = False
        await wait_until(pilot, lambda: app.workspace is not None)
        if keys:
            await pilot.press(*keys)
        await settle(pilot, question)
        if keys:
            # on a loaded machine a half-typed word can rest long enough for the "no file
            # matches" notice; what was said while typing is not the state pictured here
            app.clear_notifications()
            await pilot.pause()

    return run_before


def test_empty_question(snap_compare: SnapCompare, small_repo: Path, tmp_path: Path) -> None:
    app = build_app(small_repo, tmp_path)
    assert snap_compare(app, terminal_size=(120, 36), run_before=settled_on(""))


def test_ranked_list(snap_compare: SnapCompare, small_repo: Path, tmp_path: Path) -> None:
    app = build_app(small_repo, tmp_path)
    assert snap_compare(app, terminal_size=(120, 36), run_before=settled_on(QUESTION, *QUESTION))


def test_over_budget_with_a_pinned_full_file(
    snap_compare: SnapCompare, small_repo: Path, tmp_path: Path
) -> None:
    state = RepoState(
        pinned=frozenset({"billing/invoice.py"}),
        overrides={"billing/invoice.py": Level.FULL, "auth/session.py": Level.FOCUSED},
        budget=1_000,
        query=QUESTION,
    )
    app = build_app(small_repo, tmp_path, state)
    assert snap_compare(app, terminal_size=(120, 36), run_before=settled_on(QUESTION))


def test_help_screen(snap_compare: SnapCompare, small_repo: Path, tmp_path: Path) -> None:
    app = build_app(small_repo, tmp_path)
    assert snap_compare(
        app, terminal_size=(120, 36), run_before=settled_on(""), press=["tab", "question_mark"]
    )


def test_80x24_with_levels_mixed(
    snap_compare: SnapCompare, small_repo: Path, tmp_path: Path
) -> None:
    state = RepoState(
        pinned=frozenset({"db/models.py"}),
        overrides={"auth/session.py": Level.FOCUSED, "README.md": Level.OUTLINE},
        query=QUESTION,
    )
    app = build_app(small_repo, tmp_path, state)
    assert snap_compare(app, terminal_size=(80, 24), run_before=settled_on(QUESTION))


def test_tiny_terminal_hides_the_preview(
    snap_compare: SnapCompare, small_repo: Path, tmp_path: Path
) -> None:
    app = build_app(small_repo, tmp_path, RepoState(query=QUESTION))
    assert snap_compare(app, terminal_size=(64, 18), run_before=settled_on(QUESTION))


def test_changes_packed_with_the_diff_on_the_meter(
    snap_compare: SnapCompare, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "shop", REPO_FILES, git=True)
    session = repo / "auth" / "session.py"
    session.write_text(session.read_text() + "\n\ndef forget_session(user):\n    return None\n")
    (repo / "db" / "orders.py").write_text("def refund_order(order):\n    return None\n")
    app = build_app(repo, tmp_path, RepoState(query=QUESTION, changed=True))

    async def run_before(pilot: Pilot[Any]) -> None:
        app.main_screen.query_one(QueryBar).cursor_blink = False
        await wait_until(pilot, lambda: app.main_screen.changes is not None)
        await settle(pilot, QUESTION)

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_80x24_in_the_list_the_footer_lists_its_keys_whole(
    snap_compare: SnapCompare, small_repo: Path, tmp_path: Path
) -> None:
    app = build_app(small_repo, tmp_path, RepoState(query=QUESTION))
    assert snap_compare(app, terminal_size=(80, 24), run_before=settled_on(QUESTION), press=["tab"])


def test_60x20_keeps_the_keys_a_person_needs(
    snap_compare: SnapCompare, small_repo: Path, tmp_path: Path
) -> None:
    app = build_app(small_repo, tmp_path, RepoState(query=QUESTION))
    assert snap_compare(app, terminal_size=(60, 20), run_before=settled_on(QUESTION), press=["tab"])


def test_the_finder_lists_every_match_of_a_glob(
    snap_compare: SnapCompare, small_repo: Path, tmp_path: Path
) -> None:
    state = RepoState(pinned=frozenset({"auth/tokens.py"}), query=QUESTION)
    app = build_app(small_repo, tmp_path, state)

    async def run_before(pilot: Pilot[Any]) -> None:
        await settled_on(QUESTION)(pilot)
        await pilot.press("ctrl+f", *"auth/*.py")
        finder = pilot.app.screen
        assert isinstance(finder, FinderScreen)
        await wait_until(pilot, lambda: len(finder.matches) == 3)
        finder.query_one(Input).cursor_blink = False
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)
