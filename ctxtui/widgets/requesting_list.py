"""The level and pin requests of a list of files: what its keys ask for, and when.

A key (`FileList`'s f s o x a p) asks for the highlighted file with a message
(`LevelRequested`, `PinRequested`); the screen does the changing, the list never does. A key
pressed before the list's first rows arrive (tab and a key typed in one breath after the
question) waits for them and acts on rank 1, or says there is nothing to act on when the
answer has no file; `after_requests` runs a screen's action (undo, copy, save) after the
requests sent before it. Kept apart from the ranked list's keys, rows and cursor (`FileList`,
which builds on it): one concern a module.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.message import Message

from ctxtui.widgets.row_list import RowList
from engine.model import Level


class RequestingList(RowList):
    """A list of files whose level and pin actions ask for the highlighted file."""

    class LevelRequested(Message):
        """The user asked for a level for a file; None means back to automatic."""

        def __init__(self, path: str, level: Level | None) -> None:
            super().__init__()
            self.path = path
            """The file."""
            self.level = level
            """The level asked for; None for automatic."""

    class PinRequested(Message):
        """The user asked to pin or unpin a file."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path
            """The file."""

    class NothingToActOn(Message):
        """Level or pin keys pressed before the first rows came found none: the answer has
        no file (they were dropped without a word before session 33)."""

    class RequestsSent(Message):
        """Sent through the list by `after_requests`: reaches the screen after the level and
        pin requests sent before it."""

        def __init__(self, then: Callable[[], None]) -> None:
            super().__init__()
            self.then = then
            """What to run once the requests before it are handled."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._waiting: list[Callable[[str], Message]] = []
        """Requests of keys pressed while the list had no rows, for its first row once the
        rows come (review, session 29: they were dropped, so `tab p` typed right after the
        question pinned nothing)."""

    @property
    def highlighted_path(self) -> str | None:
        """The path under the cursor, or None."""
        option = self.highlighted_option
        return option.id if option is not None else None

    def on_blur(self) -> None:
        self._waiting.clear()  # back to the question: a key left waiting is not for its rows

    def act_on_waiting(self) -> None:
        """The rows came: send the requests of keys pressed before them, for the row under
        the cursor (rank 1), in the order pressed."""
        if not self._waiting:
            return
        waiting, self._waiting = self._waiting, []
        path = self.highlighted_path
        if path is not None and self.has_focus:
            for request in waiting:
                self.post_message(request(path))

    def drop_waiting(self) -> None:
        """The answer came with no file: the keys pressed before it have nothing to act on."""
        if self._waiting:
            self._waiting.clear()
            self.post_message(self.NothingToActOn())

    def action_request_level(self, level: str) -> None:
        """Ask for a level for the highlighted file ('auto' for automatic)."""
        chosen = None if level == "auto" else Level(level)
        self._request(lambda path: self.LevelRequested(path, chosen))

    def action_request_pin(self) -> None:
        """Ask to pin or unpin the highlighted file."""
        self._request(self.PinRequested)

    def after_requests(self, then: Callable[[], None]) -> None:
        """Run `then` (by the screen) once the level and pin requests sent so far are handled.
        A key's action runs as soon as the key reaches the app, but a request travels up from
        the list as a message: in a burst of keys (typed ahead while the app was busy), `x u`
        ran the undo before the x's request arrived ("Nothing to undo.", then the file left
        out), and `p ctrl+y` copied the pack without the pin."""
        self.post_message(self.RequestsSent(then))

    def _request(self, request: Callable[[str], Message]) -> None:
        """Send a request for the highlighted file; with no rows yet, once they come."""
        if (path := self.highlighted_path) is not None:
            self.post_message(request(path))
        else:
            self._waiting.append(request)
