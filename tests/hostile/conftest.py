"""Fixtures for the hostile-input suite: the tokenizer tables load once per run.

Every test here is a probe that once broke ctxtui (a crash, a leak, a hang): each feeds one
hostile or broken input through the real engine, command line or app, and checks that it is
refused, contained or reported in one line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ctxtui.app import CtxtuiApp


@pytest.fixture(autouse=True)
def tokenizer_once(tokenizer_loaded_once: None) -> None:
    """Every probe shares one load of the tokenizer tables."""


@pytest.fixture
def app_factory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., CtxtuiApp]:
    """Build the app the way the CLI does, with a fake clipboard and tmp state and cache."""
    from app.support import FakeClipboard

    from ctxtui.app import make_app

    monkeypatch.setenv("DISPLAY", ":fake")

    def build(root: Path, **options: object) -> CtxtuiApp:
        options.setdefault("clipboard", FakeClipboard())
        options.setdefault("cache_dir", tmp_path / "packs")
        options.setdefault("state_dir", tmp_path / "state")
        return make_app(root, **options)  # type: ignore[arg-type]

    return build
