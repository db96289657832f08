"""A corrupt state file never stops the app: it is moved aside with a notice."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxtui.state import RepoState, StateStore


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'{"version": 1, "query": "caf\xe9"}', "not UTF-8"),
        (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
        (b'{"version": 1, "overrides": {"a.py": 7}}', "not a valid Level"),
        (b'{"version": 1, "pinned": "a.py"}', "pinned must be a list"),
    ],
)
def test_unreadable_state_is_moved_aside_and_defaults_are_used(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    store = StateStore(tmp_path / "repo", tmp_path / "state")
    store.path.parent.mkdir(parents=True)
    store.path.write_bytes(content)
    state, notice = store.load()
    assert state == RepoState()
    assert problem in notice and "moved it to" in notice
    aside = list(store.path.parent.glob("*.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == content
    assert not store.path.exists()
