"""Textual's footer, rebuilt once for a burst of binding changes, and only when what it shows
changed.

Textual's `Footer` recomposes (a dozen key widgets, each styled anew) after every
`refresh_bindings`, and a start-up publishes several in a row: the first focus, the first
resize, the loading state ending, the first list. On the 16,000-file tree six rebuilds took
the interpreter for a good part of the time between the first frame and the first ranked
list, from the threads that open the index and rank. Here a change only marks the footer
stale; the rebuild after the next refresh reads the bindings as they are by then, and is
skipped when they would show the very keys already on show (most changes only re-check
actions whose answer stays the same: one rebuild of two before the first list on 16,000
files, 40-80 ms of the interpreter). On a warm start the screen also holds the first build
back until the first ranked list is on screen (`hold`): the frames before it show an empty
footer row either way, and that build (seven key widgets and a layout of the screen) took the
interpreter from the threads that open the saved index and rank, just after the first frame.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

Shown = tuple[object, ...]
"""What a footer shows: each listed binding with its key's label, whether it is enabled and
its tooltip, then the command palette's entry."""


class KeyFooter(Footer):
    """The footer, recomposed at most once per refresh however many changes came, and not at
    all when its keys stay the same."""

    _rebuild_pending = False
    _held = False
    """The screen holds every rebuild back until `release` (see the module's docstring)."""
    _composed: Shown | None = None
    """What the last compose showed (None: nothing yet, the bindings were not ready)."""

    def hold(self) -> None:
        """Build nothing until `release`: what the bindings say by then is built once."""
        self._held = True

    def release(self) -> None:
        """Build what was held back (the bindings as they are now), if anything was."""
        if self._held:
            self._held = False
            if self._bindings_ready and self.is_attached:
                self.bindings_changed(self.screen)

    def bindings_changed(self, screen: Screen[object]) -> None:
        if self._held:
            self._bindings_ready = True  # as Footer.bindings_changed records; built at release
            return
        if self._rebuild_pending:
            self._bindings_ready = True  # what Footer.bindings_changed records first
            return  # the rebuild already asked for reads the bindings when it runs
        super().bindings_changed(screen)
        if self.is_attached and screen is self.screen and screen.app.app_focus:
            self._rebuild_pending = True

    def compose(self) -> ComposeResult:
        self._composed = self._shown()
        yield from super().compose()

    async def recompose(self) -> None:
        self._rebuild_pending = False
        if self.is_attached and self._composed is not None and self._shown() == self._composed:
            return  # the same keys, labels, states and tooltips: rebuilding shows nothing new
        await super().recompose()

    def _shown(self) -> Shown | None:
        """What `Footer.compose` would show now (every input it reads); None while the
        bindings are not ready (it shows nothing)."""
        if not self._bindings_ready:
            return None
        app = self.app
        active = self.screen.active_bindings
        keys = tuple(
            (binding, app.get_key_display(binding), enabled, tooltip)
            for _, binding, enabled, tooltip in active.values()
            if binding.show
        )
        palette = None
        if self.show_command_palette and app.ENABLE_COMMAND_PALETTE:
            entry = active.get(app.COMMAND_PALETTE_BINDING)
            palette = entry[1:] if entry is not None else None
        return (*keys, palette)
