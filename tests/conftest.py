"""Shared fixtures: small repositories built in tmp_path, and an isolated cache folder."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest
from semantic_support import FakeEmbedder

import engine
import engine.tokens
from engine.tokens import Tokenizer


def make_repo(root: Path, files: Mapping[str, str | bytes], *, git: bool = False) -> Path:
    """Write `files` (relative path -> text or bytes) under root; optionally commit them to git."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    if git:
        run = lambda *a: subprocess.run(  # noqa: E731
            ["git", *a], cwd=root, check=True, capture_output=True
        )
        run("init", "-q", "-b", "main")
        run("config", "user.email", "test@example.com")
        run("config", "user.name", "Test")
        run("add", "-A")
        run("commit", "-q", "-m", "initial", "--allow-empty")
    return root


@pytest.fixture(autouse=True)
def isolated_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Point every platformdirs folder (cache, config, state) at a fresh temporary folder."""
    home = tmp_path_factory.mktemp("home")
    for var in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(var, str(home / var.lower()))
    # The semantic extra is installed by the README's test command; every test ranks by words
    # only unless it turns the stage on itself (tests/engine/test_semantic*.py, ...).
    monkeypatch.setenv("CTXTUI_SEMANTIC", "off")
    return home


_REAL_LOAD = engine.tokens.load_tokenizer
_LOADED: dict[str, Tokenizer] = {}


def load_tokenizer_once(name: str = "o200k_base", data_dir: Path | None = None) -> Tokenizer:
    """`engine.load_tokenizer`, loading each encoding's tables once per test run."""
    if data_dir is not None:
        return _REAL_LOAD(name, data_dir)
    if name not in _LOADED:
        _LOADED[name] = _REAL_LOAD(name)
    return _LOADED[name]


@pytest.fixture
def tokenizer_loaded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Load the tokenizer tables once per run (the loader is memoised, nothing else replaced)."""
    monkeypatch.setattr(engine, "load_tokenizer", load_tokenizer_once)
    monkeypatch.setattr(engine.tokens, "load_tokenizer", load_tokenizer_once)


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch) -> list[FakeEmbedder]:
    """Turn the semantic stage on with the fake model; the list holds every model loaded."""
    from ctxtui.workspace import semantic
    from engine.semantic.embedder import MODEL_ID

    loaded: list[FakeEmbedder] = []

    def load() -> FakeEmbedder:
        loaded.append(FakeEmbedder(dim=384, model_id=MODEL_ID))
        return loaded[-1]

    monkeypatch.setenv("CTXTUI_SEMANTIC", "on")
    monkeypatch.setattr(semantic, "extra_installed", lambda: True)
    monkeypatch.setattr(semantic, "load_embedder", load)
    # the plumbing under test, not the DEV-chosen numbers: every file re-ranked, a strong mix
    plumbing = replace(semantic.DEFAULT_SEMANTIC, rerank=50, mix=0.6, scaled=True)
    monkeypatch.setattr(semantic, "DEFAULT_SEMANTIC", plumbing)
    return loaded
