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

import engine
import engine.tokens
from engine.tokens import Tokenizer

if TYPE_CHECKING:
    from ctxtui.app import CtxtuiApp

_REAL_LOAD = engine.tokens.load_tokenizer
_LOADED: dict[str, Tokenizer] = {}


def _load_once(name: str = "o200k_base", data_dir: Path | None = None) -> Tokenizer:
    if data_dir is not None:
        return _REAL_LOAD(name, data_dir)
    if name not in _LOADED:
        _LOADED[name] = _REAL_LOAD(name)
    return _LOADED[name]


@pytest.fixture(autouse=True)
def tokenizer_loaded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "load_tokenizer", _load_once)
    monkeypatch.setattr(engine.tokens, "load_tokenizer", _load_once)


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
