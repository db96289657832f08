"""Shared fixtures: small repositories built in tmp_path, and an isolated cache folder."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest


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
    return home
