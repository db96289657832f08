"""An Input whose bound keys run in the order they were typed.

Textual runs a widget's binding (backspace, the arrows, home, ctrl+w...) once its key has gone
up to the app and back, while a letter goes in at once: keys that piled up while a frame was
busy (a ranking, a repaint) were applied out of order, "backspace backspace x y" on
"option list" giving "option list" (review, session 29; Textual #6605, open for the pinned
8.2.8). Every text box of the app (the question, the finder, the prompts) is one of these.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input


class OrderedInput(Input):
    """An Input that runs its own bound keys as they come."""

    async def _on_key(self, event: events.Key) -> None:
        """The box's own bindings run here, as the app would run them (priority bindings,
        the screen's tab and escape, ran before the key got here); letters as Input does."""
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()
                return
        await super()._on_key(event)
