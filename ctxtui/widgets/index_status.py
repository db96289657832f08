"""Index progress while the workspace opens: a line saying the stage and a bar.

Fed by `IndexProgressed` messages, whose bursts collapse into the newest, so a fast first index
does not queue thousands of repaints. The screen hides it once the workspace is open. Its bar,
while it has no total, stays still until the screen says the repository is being indexed
(`move_bar`): a warm start shows its saved index first, and each frame of the animation is a
repaint competing with the threads that open the index and rank.
"""

from __future__ import annotations

from time import monotonic

from textual.app import ComposeResult, RenderResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Label, ProgressBar
from textual.widgets._progress_bar import (  # ProgressBar's parts (no public names)
    Bar,
    PercentageStatus,
)

from ctxtui.time_left import Pace
from engine.model import Progress

ANIMATION_PERIOD = 1 / 15
"""Seconds between two frames of the bar with no total once it moves (Textual's own rate; from
the first frame, on a warm start of the 16,000-file tree that was 7 to 9 repaints before the
first ranked list, a few ms of the interpreter each)."""

_STAGES = {
    "scan": "Listing files",
    "load cache": "Loading the saved index",
    "parse": "Parsing and counting tokens",
    "resolve imports": "Resolving imports",
    "git": "Reading git history",
    "index": "Building the word index",
    "save cache": "Saving the index",
    "open": "Opening the index",
}


class CountedPercentage(PercentageStatus):
    """The bar's percentage, blank while the stage has no count: Textual's "--%" read as a
    broken figure beside "Listing files…" or "Reading git history…" (review, session 33);
    the line above says what is being done, and the bar moves."""

    def render(self) -> RenderResult:
        return "" if self.percentage is None else f"{self.percentage}%"


class IndexBar(ProgressBar):
    """Textual's progress bar with a `CountedPercentage`."""

    def compose(self) -> ComposeResult:
        for part in super().compose():
            if isinstance(part, PercentageStatus):
                part = CountedPercentage(id="percentage").data_bind(ProgressBar.percentage)
            yield part


class IndexStatus(Vertical):
    """What the first index is doing."""

    progress: reactive[Progress | None] = reactive(None)
    """The newest report; None before the first."""
    message: reactive[str] = reactive("Opening the repository…")
    """A line shown when there is no report (or a failure to open)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._pace = Pace()

    def compose(self) -> ComposeResult:
        yield Label(self.message, id="index-status-label")
        yield IndexBar(total=None, show_eta=False, id="index-status-bar")

    def on_mount(self) -> None:
        self._bar().auto_refresh = None  # still until `move_bar`

    def move_bar(self) -> None:
        """Move the bar while it has no total (with one, Textual keeps it still itself)."""
        bar = self._bar()
        if bar.percentage is None:
            bar.auto_refresh = ANIMATION_PERIOD

    def _bar(self) -> Bar:
        return self.query_one("#index-status-bar", ProgressBar).query_one(Bar)

    def watch_message(self, message: str) -> None:
        if self.is_mounted:
            self.query_one("#index-status-label", Label).update(message)

    def watch_progress(self, progress: Progress | None) -> None:
        if progress is None or not self.is_mounted:
            return
        stage = _STAGES.get(progress.stage, progress.stage.capitalize())
        counts = f" {progress.done:,} / {progress.total:,}" if progress.total else ""
        left = self._pace.said(progress.stage, progress.done, progress.total, monotonic())
        estimate = f" · {left}" if left else ""
        self.query_one("#index-status-label", Label).update(f"{stage}…{counts}{estimate}")
        bar = self.query_one("#index-status-bar", ProgressBar)
        bar.update(total=progress.total or None, progress=progress.done)
