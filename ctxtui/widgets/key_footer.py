"""Textual's footer, rebuilt once for a burst of binding changes instead of once for each.

Textual's `Footer` recomposes (a dozen key widgets, each styled anew) after every
`refresh_bindings`, and a start-up publishes several in a row: the first focus, the first
resize, the loading state ending, the first list. On the 16,000-file tree six rebuilds took
the interpreter for a good part of the time between the first frame and the first ranked
list, from the threads that open the index and rank. Here a change only marks the footer
stale; the rebuild after the next refresh shows the bindings as they are by then.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeyFooter(Footer):
    """The footer, recomposed at most once per refresh however many changes came."""

    _rebuild_pending = False

    def bindings_changed(self, screen: Screen[object]) -> None:
        if self._rebuild_pending:
            self._bindings_ready = True  # what Footer.bindings_changed records first
            return  # the rebuild already asked for reads the bindings when it runs
        super().bindings_changed(screen)
        if self.is_attached and screen is self.screen and screen.app.app_focus:
            self._rebuild_pending = True

    async def recompose(self) -> None:
        self._rebuild_pending = False
        await super().recompose()
