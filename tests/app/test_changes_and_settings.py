"""The `d` key packs the work tree's changes; settings files set the app's defaults."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import make_repo
from textual.pilot import Pilot

from app.support import REPO_FILES, FakeClipboard, keep_notices, notices, settle, wait_until
from ctxtui.app import CtxtuiApp
from ctxtui.screens.main import MainScreen
from ctxtui.widgets.budget_meter import BudgetMeter, layout_segments
from ctxtui.widgets.file_list import FileList
from engine.model import Level, Plan, PlanEntry


def test_the_diff_is_the_first_segment_of_the_meter() -> None:
    entry = PlanEntry("a.py", 0, Level.FULL, 300, 1, 1.0, automatic=True)
    plan = Plan("q", 1000, (entry,), 700, True, False, changes_tokens=300)
    segments, _budget_cell = layout_segments(plan, 1000, 100)
    assert segments[0].changes and (segments[0].start, segments[0].end) == (0, 30)
    assert segments[1].level is Level.FULL and (segments[1].start, segments[1].end) == (30, 60)


def shop_with_an_order(tmp_path: Path) -> Path:
    """A git repository with one untracked file, db/orders.py."""
    root = make_repo(tmp_path / "shop", REPO_FILES, git=True)
    (root / "db" / "orders.py").write_text("def refund_order(order):\n    return None\n")
    return root


async def packing_the_changes(pilot: Pilot[Any], app: CtxtuiApp, question: str) -> MainScreen:
    """Type the question, press `d` in the list, and wait for the pack with the changes."""
    await pilot.press(*question)
    await settle(pilot)
    await pilot.press("tab", "d")
    screen = app.main_screen
    await wait_until(pilot, lambda: screen.changes is not None)
    await settle(pilot)
    return screen


async def test_pressing_d_pins_the_changed_files_and_packs_their_diff(
    tmp_path: Path, app_factory: Callable[..., CtxtuiApp]
) -> None:
    app = app_factory(shop_with_an_order(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await packing_the_changes(pilot, app, "session")
        assert screen.packed is not None
        _generation, plan, rendered = screen.packed
        assert plan.changes_tokens > 0
        assert "## Changes" in rendered.text and "+def refund_order(order):" in rendered.text
        file_list = screen.query_one(FileList)
        assert file_list.changed == {"db/orders.py": "untracked"}
        assert screen.answer is not None
        ranked = {f.path: f for f in screen.answer.ranking.files}
        assert ranked["db/orders.py"].pinned
        assert "db/orders.py" not in screen.pinned  # the person's own pins stay theirs
        assert any("Packing 1 changed file and its diff against" in n for n in notices(app))
        await pilot.press("X")  # the changed file's ◆ is d's, not a pin X could clear
        await wait_until(pilot, lambda: any("d pins the changed files" in n for n in notices(app)))
        meter = screen.query_one(BudgetMeter)
        assert meter.plan is not None and meter.plan.changes_tokens == plan.changes_tokens
        app.main_screen.save_state()
        assert json.loads(app.main_screen.services.store.path.read_text())["changed"] is True

        await pilot.press("d")
        await settle(pilot)
        assert screen.changes is None and file_list.changed == {}
        assert screen.packed is not None and "## Changes" not in screen.packed[2].text


async def test_a_copy_after_an_edit_packs_the_edit_in_the_diff_too_and_the_screen_follows(
    tmp_path: Path,
    app_factory: Callable[..., CtxtuiApp],
    fake_clipboard: FakeClipboard,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file edited beside the idle app, then `c` (review: the copy packed the new file
    under the old diff, without the edit, and the list and meter kept the old figures, the
    meter 1,307 tokens for a copy of 1,367, until the next key)."""
    monkeypatch.setattr("ctxtui.screens.host.REFRESH_IDLE", 3600.0)  # the copy finds the edit
    orders = shop_with_an_order(tmp_path) / "db" / "orders.py"
    app = app_factory(orders.parent.parent)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await packing_the_changes(pilot, app, "refund order")
        orders.write_text(orders.read_text() + "\n\ndef refund_all(orders):\n    return orders\n")
        await pilot.press("c")
        await wait_until(pilot, lambda: fake_clipboard.copies == 1)
        copied = fake_clipboard.text
        assert "+def refund_all(orders):" in copied  # the diff as the work tree is now
        # and the screen shows what was copied: the list, the meter, the pack
        await wait_until(
            pilot, lambda: screen.packed is not None and screen.packed[2].text == copied
        )
        await settle(pilot)
        meter, packed = screen.query_one(BudgetMeter), screen.packed
        assert meter.plan is not None and packed is not None
        assert meter.plan.total_tokens == packed[2].tokens == packed[1].total_tokens


async def test_pressing_d_outside_git_says_there_is_nothing_to_pack(
    small_repo: Path, app_factory: Callable[..., CtxtuiApp]
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"session")
        await settle(pilot)
        await pilot.press("tab", "d")
        await wait_until(pilot, lambda: any("not in a git work tree" in n for n in notices(app)))
        await settle(pilot)
        assert app.main_screen.packed is not None
        assert "## Changes" not in app.main_screen.packed[2].text
        assert app.main_screen.changed is False  # nothing to pack: the setting went back off
        app.main_screen.save_state()
        assert json.loads(app.main_screen.services.store.path.read_text())["changed"] is False


async def test_settings_give_a_new_repository_its_budget_and_format(
    small_repo: Path, app_factory: Callable[..., CtxtuiApp]
) -> None:
    (small_repo / ".ctxtui.toml").write_text(
        'budget = 3000\nformat = "xml"\ninstructions = "Be brief."\nexclude = ["billing/"]\n'
    )
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*"session")
        await settle(pilot)
        screen = app.main_screen
        assert screen.budget == 3000 and screen.fmt.value == "xml"
        assert screen.packed is not None
        text = screen.packed[2].text
        assert "<instructions>\nBe brief.\n</instructions>" in text
        assert "billing/" not in text


async def test_a_broken_settings_file_is_a_notification_not_a_crash(
    small_repo: Path, app_factory: Callable[..., CtxtuiApp]
) -> None:
    (small_repo / ".ctxtui.toml").write_text("budget = [\n")
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(
            pilot, lambda: any(".ctxtui.toml:1: not valid TOML" in n for n in notices(app))
        )
        await pilot.press(*"session")
        await settle(pilot)
        assert app.main_screen.budget == 8000


async def test_a_git_that_fails_to_read_the_changes_is_said_in_a_notification(
    tmp_path: Path,
    app_factory: Callable[..., CtxtuiApp],
    fake_clipboard: FakeClipboard,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Session 33: with a damaged git index `d` packed no diff and said nothing was changed,
    and a copy dropped the diff on show. git's reason is now said, once, in a notification:
    for `d`, and for a copy while the changes are packed (nothing reaches the clipboard)."""
    monkeypatch.setattr("ctxtui.screens.host.REFRESH_IDLE", 3600.0)
    root = shop_with_an_order(tmp_path)
    app = app_factory(root)
    reason = "git diff failed, so the changes are unknown: .git/index: index file smaller"
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await packing_the_changes(pilot, app, "refund order")
        (root / ".git" / "index").write_bytes(b"garbage")
        await pilot.press("c")
        await wait_until(pilot, lambda: any(reason in n for n in notices(app)))
        assert fake_clipboard.copies == 0 and not screen.changed  # off, as a failed d
        await pilot.press("d")  # on again: git is asked again
        await wait_until(pilot, lambda: sum(reason in n for n in notices(app)) == 2)
        assert not any("no changes against" in n for n in notices(app))
        assert screen.is_attached


async def test_a_copy_that_git_fails_says_what_failed_and_why_in_one_notice(
    tmp_path: Path,
    app_factory: Callable[..., CtxtuiApp],
    fake_clipboard: FakeClipboard,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Session 33: ctrl+y with `d` on and git failing said "Could not copy: <git's reason>"
    and left `d` on; the next check, which re-indexed the file edited meanwhile, asked git
    again and said the same reason in a second notice ("Could not read the changes")."""
    said = keep_notices(monkeypatch)
    root = shop_with_an_order(tmp_path)
    app = app_factory(root)
    reason = "git diff failed, so the changes are unknown: .git/index: index file smaller"
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await packing_the_changes(pilot, app, "refund order")
        said.clear()
        (root / ".git" / "index").write_bytes(b"garbage")
        (root / "db" / "orders.py").write_text("def refund_order(order):\n    return 1\n")
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: any(reason in n for _t, n in said))
        await pilot.press("r")  # the check that re-indexes the edited file
        await wait_until(pilot, lambda: any("Re-indexed" in n for _t, n in said))
        await settle(pilot)
        failures = [(title, n) for title, n in said if reason in n]
        assert len(failures) == 1 and fake_clipboard.copies == 0
        title, text = failures[0]
        assert title == "Could not copy"
        assert text.endswith("Changes no longer packed; press d to try again.")
        assert not screen.changed and screen.changes is None
        assert screen.packed is not None and "## Changes" not in screen.packed[2].text


async def test_d_goes_back_off_when_git_fails_to_read_the_changes(
    tmp_path: Path, app_factory: Callable[..., CtxtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review, session 33: with a damaged git index, `d` showed git's reason but stayed on,
    saved on, so every later open packed "the changes" without them. It goes back off, at a
    press and at an open alike, and the reason is said once."""
    monkeypatch.setattr("ctxtui.screens.host.REFRESH_IDLE", 3600.0)
    root = shop_with_an_order(tmp_path)
    reason = "git diff failed, so the changes are unknown: .git/index: index file smaller"

    def saved_changed(app: CtxtuiApp) -> bool:
        app.main_screen.save_state()
        return bool(json.loads(app.main_screen.services.store.path.read_text())["changed"])

    app = app_factory(root, state_dir=tmp_path / "state")
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await packing_the_changes(pilot, app, "refund order")
        assert screen.changed and saved_changed(app)  # saved on: the next open reads them
    (root / ".git" / "index").write_bytes(b"garbage")
    app = app_factory(root, state_dir=tmp_path / "state")
    async with app.run_test(size=(120, 36)) as pilot:  # at an open
        await wait_until(pilot, lambda: any(reason in n for n in notices(app)))
        await settle(pilot)
        screen = app.main_screen
        assert not screen.changed and screen.changes is None and not saved_changed(app)
        assert sum(reason in n for n in notices(app)) == 1
        await pilot.press(*"refund order")
        await settle(pilot)
        await pilot.press("tab", "d")  # at a press
        await wait_until(pilot, lambda: sum(reason in n for n in notices(app)) == 2)
        await settle(pilot)
        assert not screen.changed and screen.changes is None and not saved_changed(app)
        assert screen.query_one(FileList).changed == {}
        assert screen.packed is not None and "## Changes" not in screen.packed[2].text
        assert sum(reason in n for n in notices(app)) == 2  # once a press
