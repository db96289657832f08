"""The first index's status line: its stage, counts and, for the parse, the time left."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Label

from ctxtui.time_left import Pace, said_time_left, time_left
from ctxtui.widgets import index_status
from ctxtui.widgets.index_status import IndexStatus
from engine.model import Progress


def test_time_left_waits_for_enough_of_the_stage() -> None:
    assert time_left(10.0, 40, 1_000) is None  # under 5 % done
    assert time_left(1.0, 500, 1_000) is None  # under 2 s of pace
    assert time_left(10.0, 1_000, 1_000) is None  # done
    assert time_left(10.0, 0, 0) is None  # no total
    assert time_left(10.0, 250, 1_000) == pytest.approx(30.0)
    assert time_left(10.0, 250, 1_000, counted_from=50) == pytest.approx(37.5)


def test_the_pace_starts_at_the_first_item_done() -> None:
    """The workers' start finishes nothing: counted, it tripled the first estimate."""
    pace = Pace()
    assert pace.said("parse", 0, 16_000, 100.0) == ""
    assert pace.said("parse", 400, 16_000, 103.0) == ""  # the first done: the pace starts
    assert pace.said("parse", 4_400, 16_000, 111.0) == "about 25 s left"  # 8 s for 4,000
    assert pace.said("index", 0, 0, 112.0) == ""  # not estimated
    assert pace.said("parse", 5_000, 16_000, 113.0) == ""  # a stage again: measured anew


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
        clock[0] = 132.0  # the workers' start: nothing done for 2 s, not counted
        status.progress = Progress("parse", 400, 16_000)
        await pilot.pause()
        assert str(label.render()) == "Parsing and counting tokens… 400 / 16,000"
        clock[0] = 140.0
        status.progress = Progress("parse", 4_400, 16_000)
        await pilot.pause()
        assert str(label.render()) == (
            "Parsing and counting tokens… 4,400 / 16,000 · about 25 s left"
        )
        status.progress = Progress("index", 0, 0)
        await pilot.pause()
        assert str(label.render()) == "Building the word index…"


async def test_the_bar_shows_no_percentage_until_its_stage_has_a_count() -> None:
    # review, session 33: "--%" stood beside "Listing files…" and every stage's first report
    app = _Host()
    async with app.run_test() as pilot:
        status = app.query_one(IndexStatus)
        percentage = app.query_one("#index-status-bar #percentage", Label)
        await pilot.pause()
        assert str(percentage.render()) == ""  # opening: no report yet
        status.progress = Progress("scan", 0, 0)
        await pilot.pause()
        assert str(percentage.render()) == ""
        status.progress = Progress("parse", 400, 1_600)
        await pilot.pause()
        assert str(percentage.render()) == "25%"
        status.progress = Progress("git", 0, 0)
        await pilot.pause()
        assert str(percentage.render()) == ""
