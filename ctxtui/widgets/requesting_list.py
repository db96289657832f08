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

    class QuestionMovedOn(Message):
        """Level or pin keys waited for the rows of a question edited before they came
        (`tab p escape` and more letters, typed before the first list): not applied, and
        said (they were dropped without a word when the list lost focus, session 33)."""

    class RequestsSent(Message):
        """Sent through the list by `after_requests`: reaches the screen after the level and
        pin requests sent before it."""

        def __init__(self, then: Callable[[], None]) -> None:
            super().__init__()
            self.then = then
            """What to run once the requests before it are handled."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._waiting: list[tuple[str, Callable[[str], Message]]] = []
        """Requests of keys pressed while the list had no rows, each with the question then
        typed, for the first row of that question's rows once they come (review, session
        29: they were dropped, so `tab p` typed right after the question pinned nothing)."""
        self.question: Callable[[], str] = str
        """The question as typed now (the screen's box): a key that waits for rows waits
        for this question's."""

    @property
    def highlighted_path(self) -> str | None:
        """The path under the cursor, or None."""
        option = self.highlighted_option
        return option.id if option is not None else None

    def act_on_waiting(self, question: str) -> None:
        """The rows of `question` came: send the requests of keys pressed for it before
        them, for the row under the cursor (rank 1), in the order pressed, also when the
        keys went back to the question since (`tab p escape`: the pin, then the question,
        as once the rows are there)."""
        path = self.highlighted_path
        for request in self._due(question):
            if path is not None:
                self.post_message(request(path))

    def drop_waiting(self, question: str) -> None:
        """The answer to `question` came with no file: the keys pressed for it before it
        have nothing to act on."""
        if self._due(question):
            self.post_message(self.NothingToActOn())

    def _due(self, question: str) -> list[Callable[[str], Message]]:
        """Take the requests waiting for the rows of `question`; drop, and say, those whose
        question was edited since (its rows will never come); keep the others (the rows of
        an older question came first: theirs are on their way)."""
        now = self.question()
        due = [request for asked, request in self._waiting if asked == question]
        moved_on = any(asked not in (question, now) for asked, _request in self._waiting)
        self._waiting = [(a, r) for a, r in self._waiting if a != question and a == now]
        if moved_on:
            self.post_message(self.QuestionMovedOn())
        return due

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
            self._waiting.append((self.question(), request))
