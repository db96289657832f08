"""An Input whose bound keys run in the order they were typed.

Textual runs a widget's binding (backspace, the arrows, home, ctrl+w...) once its key has gone
up to the app and back, while a letter goes in at once: keys that piled up while a frame was
busy (a ranking, a repaint) were applied out of order, "backspace backspace x y" on
"option list" giving "option list" (review, session 29; Textual #6605, open for the pinned
8.2.8). Every text box of the app (the question, the finder, the prompts) is one of these, and
none of them takes a pasted text's terminal codes or control characters.
"""

from __future__ import annotations

import re

from textual import events
from textual.widgets import Input

TERMINAL_CODES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)
"""What a paste loses: terminal escape sequences (colours of a copied log) and the other
control characters, which a box would send to the terminal as they are."""


class OrderedInput(Input):
    """An Input that runs its own bound keys as they come."""

    async def _on_key(self, event: events.Key) -> None:
        """The box's own bindings run here, as the app would run them (priority bindings,
        the screen's tab and escape, ran before the key got here); letters as Input does."""
        if await self.run_own_binding(event.key):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    async def run_own_binding(self, key: str) -> bool:
        """Run the box's own (not priority) binding of `key` now; whether there was one."""
        for binding in self._bindings.key_to_bindings.get(key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                return True
        return False

    def pasted_text(self, text: str) -> str:
        """What a paste puts in the box: Input's first line, without terminal codes or control
        characters (a path copied from coloured output kept its codes and bells in the finder,
        which then matched nothing, and in the file name a pack was saved to: session 32)."""
        return TERMINAL_CODES.sub("", text.splitlines()[0])

    def _on_paste(self, event: events.Paste) -> None:
        if event.text:
            text = self.pasted_text(event.text)
            selection = self.selection
            if selection.is_empty:
                self.insert_text_at_cursor(text)
            else:
                self.replace(text, *selection)
        event.stop()
        event.prevent_default()  # Input's own handler would paste the raw first line again
