"""An option list of fixed-height rows, drawn straight from their parts.

Textual's OptionList measures (wraps) every option when options are set and draws each
through Content's general renderer. For the ranked list, rebuilt on every keystroke, that was
most of the frame (issue 7: under load, 7.5 ms a rebuild and 15.6 ms a repaint; now 1.7 and
9.6, the rest being Textual's own border and style pass). Rows here are RowOption.LINES high
without measuring, and drawn by ranked_row.row_strips with the same styles, so they look the
same. Textual is pinned to an exact release, so the two private hooks overridden here
(`_update_lines`, `_get_option_render`) are stable.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.style import Style as RichStyle
from textual.content import Content
from textual.geometry import Size
from textual.strip import Strip
from textual.style import Style
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ctxtui.widgets.ranked_row import RowKey, row_content, row_parts, row_strips
from ctxtui.widgets.repaint_only import RepaintOnly


class RowOption(Option):
    """A ranked file's row: drawn straight from its parts, two lines high without measuring.

    Textual's options are measured (wrapped) one by one when set and drawn through Content's
    general renderer; for a list rebuilt on every keystroke that was most of the frame
    (issue 7). The prompt, as Content, is made only when asked for."""

    LINES = 2
    """Lines of every row."""

    def __init__(self, row: RowKey, path: str, style: Callable[[str], Style]) -> None:
        super().__init__("", id=path)
        self.row = row
        """What the row shows besides its path."""
        self._style = style

    @property
    def prompt(self) -> Content:
        """The row as Content (for readers of the option; drawing does not use it)."""
        return row_content(self.row, self.id or "", self._style)

    def strips(self, width: int, base: Style, looks: dict[str, RichStyle]) -> list[Strip]:
        """The row's two lines, `width` cells wide on the base style (`looks`: see
        row_strips)."""
        return row_strips(row_parts(self.row, self.id or ""), width, base, self._style, looks)


class RowList(RepaintOnly, OptionList):
    """An OptionList whose RowOption rows are drawn fast; other options as OptionList does."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._looks: dict[Style, dict[str, RichStyle]] = {}

    def forget_looks(self) -> None:
        """Drop the parts' terminal styles kept per base style (read anew when drawn)."""
        self._looks = {}

    def _update_lines(self) -> None:
        """OptionList's line table, without measuring rows: each is RowOption.LINES high.
        (Textual is pinned to an exact release, so this private hook is stable.) A new row
        count only repaints the list: its size never depends on its rows (RepaintOnly)."""
        with self.content_changing():
            self._count_lines()

    def _count_lines(self) -> None:
        cache = self._line_cache
        if not self.scrollable_content_region or not self.options:
            super()._update_lines()
            return
        lines = cache.lines
        start = lines[-1][0] + 1 if lines else 0
        if start == len(self.options):
            return  # every row has its lines (a resize or new rows clear them)
        for index, option in enumerate(self.options[start:], start):
            if not isinstance(option, RowOption):
                super()._update_lines()  # the one-line note of an empty list
                return
            cache.index_to_line[index] = len(lines)
            cache.heights[index] = RowOption.LINES
            lines.extend((index, line) for line in range(RowOption.LINES))
        width = self.scrollable_content_region.width - self._get_left_gutter_width()
        virtual_size = Size(width, len(lines))
        if virtual_size != self.virtual_size:
            self.virtual_size = virtual_size
            self._scroll_update(virtual_size)

    def _get_option_render(self, option: Option, style: Style) -> list[Strip]:
        """A row's strips, drawn from its parts (see RowOption), cached like OptionList's."""
        if not isinstance(option, RowOption):
            return super()._get_option_render(option, style)
        padding = self.get_component_styles("option-list--option").padding
        key = (option, style, padding)
        if (strips := self._option_render_cache.get(key)) is None:
            width = self.scrollable_content_region.width - self._get_left_gutter_width()
            inner = max(0, width - padding.left - padding.right)
            rich_style = style.rich_style
            meta = {"option": self._option_to_index[option]}
            strips = [
                strip.crop_pad(inner, padding.left, padding.right, rich_style)
                .extend_cell_length(width, rich_style)
                .apply_meta(meta)
                for strip in option.strips(inner, style, self._looks.setdefault(style, {}))
            ]
            self._option_render_cache[key] = strips
        return strips
