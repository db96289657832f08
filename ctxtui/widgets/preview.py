"""The preview pane: the highlighted file exactly as the pack will carry it, syntax-highlighted.

The text is rendered and highlighted in a worker (`highlight` below is called from there); the
widget keeps the lines and draws only the visible ones (the line API), so a 5,000-line file
scrolls as cheaply as a short one. The question's words are marked with the `preview--match`
component style.
"""

from __future__ import annotations

import re
from typing import ClassVar

from rich.segment import Segment
from textual.content import Content
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style

from engine.words import STOP_WORDS

HIGHLIGHT_LIMIT = 200_000
"""Characters above which the preview shows plain text: syntax highlighting would take seconds."""
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")
_WORD_START = r"(?:(?<![^\W_])|(?-i:(?<=[a-z])(?=[A-Z])))"
"""Where a marked word may begin: after a non-letter, an underscore, or at a camelCase hump
(so "session" marks getUserSession's Session, never the "an" inside "sansio")."""


def language_of(path: str) -> str:
    """Return the Pygments lexer name for a path, by its name only ("text" when unknown)."""
    from pygments.lexers import get_lexer_for_filename  # deliberate: only previews need it
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(path)
    except ClassNotFound:
        return "text"
    return str(lexer.aliases[0] if lexer.aliases else lexer.name)


def words_to_mark(query: str, terms: tuple[str, ...]) -> tuple[str, ...]:
    """Pick the words of the question (and the index words it became) worth marking."""
    words = [w.lower() for w in _WORD.findall(query) if len(w) >= 3 and w.lower() not in STOP_WORDS]
    words += [t for t in terms if len(t) >= 3 and t.isalnum()]
    return tuple(sorted(set(words), key=lambda w: (-len(w), w)))


def highlight(text: str, path: str, words: tuple[str, ...], match_style: Style) -> Content:
    """Highlight a file's text by its language and mark the words, case-insensitively."""
    from textual.highlight import highlight as highlight_code  # deliberate: loads Pygments

    text = text.expandtabs(4)
    if len(text) > HIGHLIGHT_LIMIT:
        content = Content(text)
    else:
        content = highlight_code(text, language=language_of(path))
    if words:
        alternatives = "|".join(re.escape(w) for w in words)
        pattern = re.compile(f"{_WORD_START}(?:{alternatives})", re.IGNORECASE)
        content = content.highlight_regex(pattern, style=match_style)
    return content


class Preview(ScrollView, can_focus=True):
    """Shows one file's content at its level; the screen fills it from a worker."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"preview--match", "preview--note"}

    content: reactive[Content] = reactive(Content, always_update=True, init=False)
    """What the pane shows (already highlighted)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[Content] = []

    @property
    def match_style(self) -> Style:
        """The style of the question's words, for the worker that highlights."""
        return self.get_visual_style("preview--match", partial=True)

    @property
    def shown_text(self) -> str:
        """The plain text on show (what the copy carries for this file)."""
        return "\n".join(line.plain for line in self._lines)

    def show_note(self, note: str) -> None:
        """Show a short explanation instead of a file (nothing highlighted, nothing to copy)."""
        self.content = Content.styled(note, self.get_visual_style("preview--note", partial=True))

    def watch_content(self, content: Content) -> None:
        self._lines = content.split("\n", allow_blank=True) if content.plain else []
        width = max((line.cell_length for line in self._lines), default=0)
        self.virtual_size = Size(width, len(self._lines))
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.visual_style
        number = scroll_y + y
        if number >= len(self._lines):
            return Strip.blank(width, base.rich_style)
        segments: list[Segment] = self._lines[number].render_segments(base)
        strip = Strip(segments)
        return strip.crop_extend(scroll_x, scroll_x + width, base.rich_style)
