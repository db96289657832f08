"""Index progress while the workspace opens: a line saying the stage and a bar.

Fed by `IndexProgressed` messages, whose bursts collapse into the newest, so a fast first index
does not queue thousands of repaints. The screen hides it once the workspace is open.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Label, ProgressBar

from engine.model import Progress

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


class IndexStatus(Vertical):
    """What the first index is doing."""

    progress: reactive[Progress | None] = reactive(None)
    """The newest report; None before the first."""
    message: reactive[str] = reactive("Opening the repository…")
    """A line shown when there is no report (or a failure to open)."""

    def compose(self) -> ComposeResult:
        yield Label(self.message, id="index-status-label")
        yield ProgressBar(total=None, show_eta=False, id="index-status-bar")

    def watch_message(self, message: str) -> None:
        if self.is_mounted:
            self.query_one("#index-status-label", Label).update(message)

    def watch_progress(self, progress: Progress | None) -> None:
        if progress is None or not self.is_mounted:
            return
        stage = _STAGES.get(progress.stage, progress.stage.capitalize())
        counts = f" {progress.done:,} / {progress.total:,}" if progress.total else ""
        self.query_one("#index-status-label", Label).update(f"{stage}…{counts}")
        bar = self.query_one("#index-status-bar", ProgressBar)
        bar.update(total=progress.total or None, progress=progress.done)
