"""The command lists (ctrl+p's palette, ctrl+r's earlier questions): Textual's, answering once.

Textual's `CommandPalette` acts on every enter it is sent. A second enter typed before the
first one's choice has closed it (a key repeat, a double press, keys piled up behind a busy
frame) reaches it after it left the stack: it dismissed itself again, which took the app down
("Can't pop screen"), or ran the chosen command a second time. `Palette` drops what reaches
it once it is no longer the screen on top, before Textual's own handlers see it.
"""

from __future__ import annotations

from textual import on
from textual.command import CommandPalette
from textual.widgets import Button, Input, OptionList


class Palette(CommandPalette):
    """Textual's command palette, deaf once closed."""

    @on(Input.Submitted)
    @on(Button.Pressed)
    @on(OptionList.OptionSelected)
    def drop_once_closed(
        self, event: Input.Submitted | Button.Pressed | OptionList.OptionSelected
    ) -> None:
        if not self.is_active:
            event.stop()
            event.prevent_default()  # Textual's handlers (a base class) are not called
