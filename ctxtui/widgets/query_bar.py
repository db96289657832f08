"""The question bar at the top: every keystroke is a new question.

An `Input` that keeps the question safe while it is refined, the app's main loop: focus puts
the cursor at the end and selects nothing (so the next key never erases the question), ctrl+z
undoes edits a word at a time, and `recall` steps through the repository's earlier questions
(the screen calls it for ↑/↓). While it has focus, letters are text: the list's keys act only
when the list has focus.
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from textual import events
from textual.binding import Binding, BindingType
from textual.reactive import var

from ctxtui.widgets.ordered_input import TERMINAL_CODES, OrderedInput
from ctxtui.widgets.repaint_only import RepaintOnly

UNDO_LIMIT = 200
"""Edits ctrl+z can take back."""

EditKind = Literal["type", "delete", "other"]


def edit_kind(old: str, new: str) -> EditKind:
    """Classify a change of the text: one letter typed, one deleted, or anything else.

    Typing or deleting a run of letters is one step of undo; a space, a paste, a recalled
    question or a cut is a step of its own.
    """
    if len(new) == len(old) + 1:
        at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), len(old))
        if new[:at] + new[at + 1 :] == old and not new[at].isspace():
            return "type"
    if len(new) == len(old) - 1:
        at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), len(new))
        if old[:at] + old[at + 1 :] == new and not old[at].isspace():
            return "delete"
    return "other"


LINE_BREAKS = re.compile(r"[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
"""What a question shows as a space: a tab and every line break `str.splitlines` knows."""


def printable_question(text: str) -> str:
    """A question as the bar shows it and the files are ranked for it: one line (a tab or a
    line break is a space), without terminal codes or other control characters. Every text
    the bar takes goes through it (`QueryBar.validate_value`: typed, pasted, restored,
    recalled, picked), and the screen's question restored from the saved state; the saved
    history keeps what was typed."""
    return TERMINAL_CODES.sub("", LINE_BREAKS.sub(" ", text))


def pasted_line(text: str) -> str:
    """A pasted text as the question takes it: every line kept (a stack trace's file and
    error are on its later lines), joined by spaces, without terminal codes."""
    lines = (TERMINAL_CODES.sub("", line).strip() for line in text.splitlines())
    return " ".join(line for line in lines if line)


class QueryBar(RepaintOnly, OrderedInput):
    """Where the question is typed."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "tab", "screen.focus_list", "Files", tooltip="Go to the ranked files", id="focus-list"
        ),
        Binding(
            "ctrl+z",
            "undo",
            "Undo",
            show=False,
            tooltip="Undo the last edit of the question (a word at a time)",
            id="question-undo",
        ),
        Binding(
            "ctrl+r",
            "screen.pick_question",
            "Earlier",
            tooltip="Pick one of this repository's earlier questions",
            id="pick-question",
        ),
    ]

    history: var[tuple[str, ...]] = var(tuple)
    """Earlier questions of the repository, newest first (given by the screen)."""

    def __init__(self, value: str = "", *, id: str | None = None) -> None:
        self._undo: list[str] = []
        self._last_kind: EditKind | None = None
        self._quiet = False
        self._recall = -1
        self._draft = ""
        super().__init__(
            value=value,
            placeholder="Ask about the code: where is the session refreshed?",
            select_on_focus=False,
            id=id,
        )

    def validate_value(self, value: str) -> str:
        """The bar holds printable text only (`printable_question`): an earlier or a saved
        question with an escape, a bell or a carriage return was drawn raw and ranked so."""
        return printable_question(value)

    def pasted_text(self, text: str) -> str:
        """Input keeps a paste's first line only: keep them all (`pasted_line`)."""
        return pasted_line(text)

    def _watch_value(self, value: str) -> None:
        """Input's own watcher, without the layout of the whole screen it asks for: Input
        answers every key with a new virtual width, and the bar scrolls its text itself."""
        with self.content_changing():
            super()._watch_value(value)

    @property
    def recalling(self) -> bool:
        """True while an earlier question is shown (↓ goes back towards the draft)."""
        return self._recall >= 0

    def on_focus(self, _event: events.Focus) -> None:
        """Coming back to the question: cursor at the end, nothing selected."""
        self.cursor_position = len(self.value)

    def watch_value(self, old: str, new: str) -> None:
        if self._quiet or old == new:
            return
        self._recall = -1  # any edit of a recalled question makes it the draft
        kind = edit_kind(old, new)
        if kind == "other" or kind != self._last_kind:
            self._undo.append(old)
            del self._undo[:-UNDO_LIMIT]
        self._last_kind = kind

    def replace_text(self, text: str) -> None:
        """Show another question, as one undoable step, with the cursor at the end."""
        self._undo.append(self.value)
        self._last_kind = None
        self._set_quietly(text)

    def action_undo(self) -> None:
        """Take back the last edit (a run of letters, a word's space, a recall, a paste)."""
        if self._undo:
            self._last_kind = None
            self._recall = -1
            self._set_quietly(self._undo.pop())

    def recall(self, step: int) -> bool:
        """Show an earlier (step 1) or later (step -1) question; False when there is none.

        Questions equal to the text on show are skipped; stepping past the newest brings
        back what was being typed (the draft).
        """
        target = self._recall + step
        history = [printable_question(question) for question in self.history]
        while 0 <= target < len(history) and history[target] == self.value:
            target += step
        if target < -1 or target >= len(history) or (target == -1 and self._recall == -1):
            return False
        if self._recall == -1:
            self._draft = self.value
        text = self._draft if target == -1 else history[target]
        self._undo.append(self.value)
        self._last_kind = None
        self._set_quietly(text)
        self._recall = target
        return True

    def _set_quietly(self, text: str) -> None:
        self._quiet = True
        try:
            self.value = text
        finally:
            self._quiet = False
        self.cursor_position = len(self.value)
