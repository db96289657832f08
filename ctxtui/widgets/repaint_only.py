"""Widgets whose size CSS fixes: a change of their content repaints them, never the screen.

Textual treats a new virtual size as a layout reactive, so every new text of the question bar,
every new row count of the list and every file the preview shows laid out the whole screen
(tens of ms each, several a keystroke: issue 7). Their size never depends on their content
(the question bar is 100% wide and 3 high, the list and the preview take their share of the
screen), and their scrollbars follow the virtual size themselves (a scrollbar that appears or
goes still lays out), so inside `content_changing()` a layout is dropped for a repaint.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from textual.geometry import Region
from textual.widget import Widget

if TYPE_CHECKING:
    from typing_extensions import Self

    _Base = Widget
else:
    _Base = object


class RepaintOnly(_Base):
    """Mix in before the widget class: `class Preview(RepaintOnly, ScrollView)`."""

    _content_changing = False

    @contextmanager
    def content_changing(self) -> Iterator[None]:
        """Set the content (a new virtual size) without a layout of the screen."""
        self._content_changing = True
        try:
            yield
        finally:
            self._content_changing = False

    def refresh(
        self,
        *regions: Region,
        repaint: bool = True,
        layout: bool = False,
        recompose: bool = False,
    ) -> Self:
        if layout and self._content_changing and not self.styles.auto_dimensions:
            layout = False
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
