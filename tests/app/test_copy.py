"""Copy and save from the app: the exact rendered pack reaches the clipboard, terminal or file.

The fake clipboard checks the text byte for byte; the OSC 52 path is read from the driver's
output; a real round trip goes through xclip on an Xvfb display when those are installed.
"""

from __future__ import annotations

import base64
import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input

from app.support import FakeClipboard, notices, prompt_up, settle, wait_until
from ctxtui.app import CtxtuiApp
from ctxtui.clipboard import PyperclipBackend
from engine.model import Format, Rendered

AppFactory = Callable[..., CtxtuiApp]
QUESTION = "session refresh"


def expected_pack(app: CtxtuiApp, fmt: Format = Format.MARKDOWN) -> Rendered:
    """What the workspace itself renders for the app's current question and choices."""
    screen = app.main_screen
    workspace = app.workspace
    assert workspace is not None and screen.answer is not None
    session = screen._choices().session(workspace.index)
    return workspace.pack(screen.answer.ranking, screen.budget, session, fmt)[1]


async def test_copy_puts_the_exact_pack_on_the_clipboard(
    small_repo: Path, app_factory: AppFactory, fake_clipboard: FakeClipboard, tmp_path: Path
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*QUESTION)
        await settle(pilot, QUESTION)
        await pilot.press("tab", "c")
        await wait_until(pilot, lambda: any(n.startswith("Copied") for n in notices(app)))
        rendered = expected_pack(app)
        assert fake_clipboard.text == rendered.text
        files = "file" if rendered.files == 1 else "files"
        assert (
            f"Copied {rendered.tokens:,} tokens, {rendered.files} {files} — clipboard via fake-clip"
            in notices(app)
        )
        assert (tmp_path / "cache" / "packs" / "last.md").read_text("utf-8") == rendered.text


async def test_ctrl_y_copies_while_typing_the_question(
    small_repo: Path, app_factory: AppFactory, fake_clipboard: FakeClipboard
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*QUESTION)
        await settle(pilot, QUESTION)
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: fake_clipboard.copies == 1)
        assert fake_clipboard.text == expected_pack(app).text


async def test_copy_in_another_format_copies_that_format(
    small_repo: Path, app_factory: AppFactory, fake_clipboard: FakeClipboard, tmp_path: Path
) -> None:
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*QUESTION)
        await settle(pilot, QUESTION)
        await pilot.press("tab", "F", "c")
        await wait_until(pilot, lambda: fake_clipboard.copies == 1)
        assert fake_clipboard.text == expected_pack(app, Format.XML).text
        assert fake_clipboard.text.lstrip().startswith("<")
        assert (tmp_path / "cache" / "packs" / "last.xml").exists()


async def test_without_a_clipboard_the_pack_goes_through_osc52(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_factory(small_repo, clipboard=FakeClipboard(fail=True))
    async with app.run_test(size=(120, 36)) as pilot:
        written: list[str] = []
        assert app._driver is not None
        monkeypatch.setattr(app._driver, "write", written.append)
        await pilot.press(*QUESTION)
        await settle(pilot, QUESTION)
        await pilot.press("tab", "c")
        await wait_until(pilot, lambda: any("OSC 52" in n for n in notices(app)))
        text = expected_pack(app).text
        sequence = "\x1b]52;c;" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "\a"
        assert sequence in written
        assert app.clipboard == text
        last = tmp_path / "cache" / "packs" / "last.md"
        why = "(no clipboard tool (fake))"  # the notification says why it fell back
        assert any(f"via terminal (OSC 52) {why}; also saved to {last}" in n for n in notices(app))


async def test_headless_session_skips_pyperclip_and_uses_osc52(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = app_factory(small_repo, clipboard=PyperclipBackend())
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*QUESTION)
        await settle(pilot, QUESTION)
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: any("OSC 52" in n for n in notices(app)))
        assert app.clipboard == expected_pack(app).text


async def test_real_clipboard_round_trip_through_xclip(
    small_repo: Path, app_factory: AppFactory, x_display: str
) -> None:
    app = app_factory(small_repo, clipboard=PyperclipBackend())
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*QUESTION)
        await settle(pilot, QUESTION)
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: any(n.startswith("Copied") for n in notices(app)))
        assert any(n.endswith("— clipboard via xclip") for n in notices(app))
        text = expected_pack(app).text
    pasted = subprocess.run(
        ["xclip", "-selection", "clipboard", "-o"],
        capture_output=True,
        check=True,
        env={"DISPLAY": x_display, "PATH": "/usr/bin:/bin"},
    ).stdout.decode("utf-8")
    assert pasted == text


async def test_dead_display_falls_through_to_osc52(
    small_repo: Path, app_factory: AppFactory, monkeypatch: pytest.MonkeyPatch, x_display: str
) -> None:
    monkeypatch.setenv("DISPLAY", ":249")  # no server there: xclip fails, pyperclip stays quiet
    app = app_factory(small_repo, clipboard=PyperclipBackend())
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*QUESTION)
        await settle(pilot, QUESTION)
        await pilot.press("ctrl+y")
        await wait_until(pilot, lambda: any("OSC 52" in n for n in notices(app)))


async def test_ctrl_s_saves_the_pack_to_the_named_file(
    small_repo: Path,
    app_factory: AppFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*QUESTION)
        await settle(pilot, QUESTION)
        screen = app.main_screen
        await pilot.press("ctrl+s")  # review: a name of spaces saved to a file named "   "
        await wait_until(pilot, lambda: prompt_up(app, screen))
        app.screen.query_one(Input).value = "   "
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: prompt_up(app, screen))
        assert app.screen.query_one(Input).value == "./ctxtui-pack.md"
        await pilot.press("enter")
        target = work / "ctxtui-pack.md"
        await wait_until(pilot, lambda: any(n.startswith("Saved") for n in notices(app)))
        rendered = expected_pack(app)
        assert target.read_text("utf-8") == rendered.text
        assert list(work.iterdir()) == [target]  # and nothing else
        files = "file" if rendered.files == 1 else "files"
        saved = f"Saved {rendered.tokens:,} tokens, {rendered.files} {files} to {target}"
        assert saved in notices(app)


async def test_ctrl_s_writes_as_pack_o_does_through_a_link_and_names_a_folder_it_cannot(
    small_repo: Path, app_factory: AppFactory, tmp_path: Path
) -> None:
    # review: the app saved by renaming a temporary file over the target, so a link to the
    # pack was replaced by a file (and, for root, a device such as /dev/full by a file), a
    # new pack was readable by its owner only, and a folder's error named the temporary file
    kept = tmp_path / "notes" / "pack.md"
    kept.parent.mkdir()
    kept.write_text("old\n")
    link = tmp_path / "latest.md"
    link.symlink_to(kept)
    folder = tmp_path / "a folder"
    folder.mkdir()
    new = tmp_path / "new" / "pack.md"
    app = app_factory(small_repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press(*QUESTION)
        await settle(pilot, QUESTION)
        screen = app.main_screen
        for target in (link, folder, new):
            await pilot.press("ctrl+s")
            await wait_until(pilot, lambda: prompt_up(app, screen))
            app.screen.query_one("#prompt-input", Input).value = str(target)
            count = len(notices(app))
            await pilot.press("enter")
            await wait_until(pilot, lambda count=count: len(notices(app)) > count)
        rendered = expected_pack(app)
        assert link.is_symlink() and kept.read_text("utf-8") == rendered.text
        assert f"Is a directory: {folder}" in notices(app)
        umask = os.umask(0o022)
        os.umask(umask)
        assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~umask
