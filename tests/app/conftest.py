"""Fixtures for the app tests: a small repository, a fake clipboard, Xvfb for real copies.

Every test drives the real app (`make_app`, the factory the CLI calls) on the real Workspace
over a repository written into tmp_path.
"""

from __future__ import annotations

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


def _free_display() -> int:
    for number in range(90, 200):
        if (
            not Path(f"/tmp/.X11-unix/X{number}").exists()
            and not Path(f"/tmp/.X{number}-lock").exists()
        ):
            return number
    raise RuntimeError("no free X display number")


@pytest.fixture(scope="session")
def xvfb_display() -> Iterator[str]:
    """Start Xvfb on a free display for the session; skip when Xvfb or xclip is missing."""
    if shutil.which("Xvfb") is None or shutil.which("xclip") is None:
        pytest.skip("Xvfb and xclip are not installed (apt-get install xvfb xclip xsel)")
    number = _free_display()
    process = subprocess.Popen(
        ["Xvfb", f":{number}", "-screen", "0", "640x480x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    socket = Path(f"/tmp/.X11-unix/X{number}")
    deadline = time.monotonic() + 10
    while not socket.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.skip(f"Xvfb :{number} did not start")
        time.sleep(0.02)  # waiting for an external process, not for the app
    try:
        yield f":{number}"
    finally:
        process.terminate()
        process.wait(timeout=5)


@pytest.fixture
def x_display(xvfb_display: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """DISPLAY pointing at the session's Xvfb, for one test."""
    monkeypatch.setenv("DISPLAY", xvfb_display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    return xvfb_display
