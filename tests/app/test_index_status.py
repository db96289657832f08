"""The first index's status line: its stage, counts and, for the parse, the time left."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Label

from ctxtui.widgets import index_status
from ctxtui.widgets.index_status import IndexStatus, said_time_left, time_left
from engine.model import Progress


def test_time_left_waits_for_enough_of_the_stage() -> None:
    assert time_left(10.0, 40, 1_000) is None  # under 5 % done: the workers are starting
    assert time_left(1.0, 500, 1_000) is None  # under 2 s in
    assert time_left(10.0, 1_000, 1_000) is None  # done
    assert time_left(10.0, 0, 0) is None  # no total
    assert time_left(10.0, 250, 1_000) == pytest.approx(30.0)


def test_the_time_left_is_said_roundly() -> None:
    assert said_time_left(1.2) == "about 5 s left"
    assert said_time_left(17.0) == "about 15 s left"
    assert said_time_left(58.0) == "about 60 s left"
    assert said_time_left(150.0) == "about 2 min left"


class _Host(App[None]):
    def compose(self) -> ComposeResult:
        yield IndexStatus(id="index-status")


async def test_the_parse_says_its_time_left_from_its_own_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(index_status, "monotonic", lambda: clock[0])
    app = _Host()
    async with app.run_test() as pilot:
        status = app.query_one(IndexStatus)
        label = app.query_one("#index-status-label", Label)
        status.progress = Progress("scan", 0, 0)
        clock[0] = 130.0  # a slow scan: not counted in the parse's pace
        status.progress = Progress("parse", 0, 16_000)
        await pilot.pause()
        assert str(label.render()) == "Parsing and counting tokens… 0 / 16,000"
        clock[0] = 138.0
        status.progress = Progress("parse", 4_000, 16_000)
        await pilot.pause()
        assert str(label.render()) == (
            "Parsing and counting tokens… 4,000 / 16,000 · about 25 s left"
        )
        status.progress = Progress("index", 0, 0)
        await pilot.pause()
        assert str(label.render()) == "Building the word index…"
