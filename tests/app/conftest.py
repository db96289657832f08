"""Fixtures for the app tests: a small repository, a fake clipboard, Xvfb for real copies.

Every test drives the real app (`make_app`, the factory the CLI calls) on the real Workspace
over a repository written into tmp_path.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import make_repo

from app.support import REPO_FILES, FakeClipboard
from ctxtui.app import CtxtuiApp, make_app


@pytest.fixture
def small_repo(tmp_path: Path) -> Path:
    """A seven-file repository with sessions, tokens, orders and one long invoice module."""
    return make_repo(tmp_path / "shop", REPO_FILES)


@pytest.fixture
def fake_clipboard(monkeypatch: pytest.MonkeyPatch) -> FakeClipboard:
    """A working fake clipboard, with a display set so that the chain tries it."""
    monkeypatch.setenv("DISPLAY", ":fake")
    return FakeClipboard()


@pytest.fixture
def app_factory(fake_clipboard: FakeClipboard, tmp_path: Path) -> Callable[..., CtxtuiApp]:
    """Build the app the way the CLI does, with the fake clipboard and a tmp cache folder."""

    def build(root: Path, **options: object) -> CtxtuiApp:
        options.setdefault("clipboard", fake_clipboard)
        options.setdefault("cache_dir", tmp_path / "cache")
        return make_app(root, **options)  # type: ignore[arg-type]

    return build


@pytest.fixture(scope="session")
def xvfb_display() -> Iterator[str]:
    """Start Xvfb on a free display for the session; skip when Xvfb or xclip is missing.

    Xvfb chooses the display itself (-displayfd: the first number whose lock it can take,
    written to the pipe once it accepts clients), so test processes started side by side
    (pytest-xdist workers, another checkout's suite) never race for the same number."""
    if shutil.which("Xvfb") is None or shutil.which("xclip") is None:
        pytest.skip("Xvfb and xclip are not installed (apt-get install xvfb xclip xsel)")
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", "640x480x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(write_end,),
    )
    os.close(write_end)
    try:
        number = _read_display_number(read_end, deadline=time.monotonic() + 10)
    finally:
        os.close(read_end)
    if number is None:
        process.kill()
        process.wait(timeout=5)
        pytest.skip("Xvfb did not start")
    try:
        yield f":{number}"
    finally:
        process.terminate()
        process.wait(timeout=5)


def _read_display_number(fd: int, deadline: float) -> int | None:
    """The display number Xvfb writes to fd once it is ready (None if it exits or is late)."""
    text = b""
    while not text.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None  # waiting for an external process, not for the app
        chunk = os.read(fd, 16)
        if not chunk:
            return None
        text += chunk
    return int(text)


@pytest.fixture
def x_display(xvfb_display: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """DISPLAY pointing at the session's Xvfb, for one test."""
    monkeypatch.setenv("DISPLAY", xvfb_display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    return xvfb_display
