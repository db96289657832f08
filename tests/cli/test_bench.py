"""`ctxtui bench`'s typing figures: every keystroke timed, with the app's collector."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from app.support import REPO_FILES
from conftest import make_repo

from ctxtui import collector
from ctxtui.cli.bench import typing_figures
from ctxtui.workspace import Workspace
from engine import Ranking, Session


def test_typing_figures_time_every_key_with_full_collections_held_as_the_app_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = Workspace.open(make_repo(tmp_path / "shop", REPO_FILES), semantic=False)
    held: list[int] = []
    rank = workspace.rank

    def rank_noting_the_collector(query: str, session: Session, *, complete: bool) -> Ranking:
        held.append(gc.get_threshold()[2])
        return rank(query, session, complete=complete)

    monkeypatch.setattr(workspace, "rank", rank_noting_the_collector)
    before = gc.get_threshold()
    try:
        figures = typing_figures(workspace, ["cart total", "tax"], 1000)
    finally:
        gc.unfreeze()  # typing_figures froze what was alive (as the app does): the rest of
        # the suite's objects go back to the collector (review of session 24)
    assert [len(figures[name]) for name in ("rank", "plan", "pack")] == [13, 13, 13]
    assert held == [collector.FULL_EVERY] * 13  # as ctxtui.screens.host holds them
    assert gc.get_threshold() == before  # given back
