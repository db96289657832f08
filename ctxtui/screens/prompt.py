"""A small modal that asks for one line (a budget, a file name) and checks it before closing.

It returns the accepted text, or None when the user presses escape. The check is a plain
function that answers with an error line (shown under the input) or an empty string.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from ctxtui.widgets.ordered_input import OrderedInput


def accept_anything(_text: str) -> str:
    """A check that accepts every answer."""
    return ""


class PromptScreen(ModalScreen[str | None]):
    """Ask one question; dismiss with the answer, or None on escape."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="prompt-cancel"),
    ]

    def __init__(
        self,
        title: str,
        value: str = "",
        *,
        hint: str = "",
        check: Callable[[str], str] = accept_anything,
    ) -> None:
        super().__init__()
        self._title = title
        self._value = value
        self._hint = hint
        self._check = check

    def compose(self) -> ComposeResult:
        with Vertical(id="prompt-dialog"):
            yield Label(self._title, id="prompt-title")
            yield OrderedInput(self._value, id="prompt-input", select_on_focus=True)
            yield Label(self._hint, id="prompt-hint")
            yield Label("", id="prompt-error")

    @on(Input.Submitted, "#prompt-input")
    def accept_answer(self, event: Input.Submitted) -> None:
        event.stop()
        if not self.is_active:
            return  # a second enter, typed before the first one's answer closed the prompt
        error = self._check(event.value)
        if error:
            self.query_one("#prompt-error", Label).update(error)
            self.query_one("#prompt-dialog").add_class("-invalid")
            return
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        """Close without an answer."""
        self.dismiss(None)
