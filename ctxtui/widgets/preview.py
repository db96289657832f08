"""The preview pane: the highlighted file exactly as the pack will carry it, syntax-highlighted.

The text is rendered and highlighted in a worker (`highlight` below is called from there); the
widget keeps the lines and draws only the visible ones (the line API), so a 5,000-line file
scrolls as cheaply as a short one. The question's words are marked with the `preview--match`
component style.

Only the head of a file is highlighted at first (the lines on screen and a margin: lexing a
prefix from the file's start is exact for its lines); the rest is shown as plain text until the
view comes near it, when the widget asks for the whole file (`WholeWanted`). Highlighting a
whole large file held the interpreter for 100-800 ms, time taken from the keys typed meanwhile.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style

from ctxtui.widgets.cells import wrap_cells
from ctxtui.widgets.repaint_only import RepaintOnly
from engine.words import STOP_WORDS

HEAD_MARGIN = 60
"""Lines highlighted past the preview's height at first; the rest when the view nears them."""
NOTE_LINES = 12
"""Lines at most of a note shown instead of a file (they are a sentence or two)."""
TITLE_FRAME = 6
"""Cells of the pane's top edge the title cannot use: two corners, a line and a space each side."""
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


def fit_title(path: str, room: int) -> str:
    """The path in `room` terminal cells, whole if it fits, else cut from the left at a folder
    ("…/src/flask/helpers.py", "…/flask/helpers.py", "…/helpers.py"); the file's name is never
    cut here (Textual cuts a title too long for its border at its end)."""
    if cell_len(path) <= room:
        return path
    parts = path.split("/")
    for start in range(1, len(parts)):
        shown = "…/" + "/".join(parts[start:])
        if cell_len(shown) <= room:
            return shown
    return parts[-1]


def fit_details(details: Sequence[str], room: int) -> str:
    """The first of `details` (fullest first) that fits in `room` cells, else the last."""
    return next((d for d in details if cell_len(d) <= room), details[-1] if details else "")


def highlight(
    text: str, path: str, words: tuple[str, ...], match_style: Style, lines: int | None = None
) -> tuple[Content, tuple[str, ...]]:
    """Highlight a file's text by its language and mark the words, case-insensitively.

    With `lines`, only the first `lines` lines are highlighted (a prefix lexes exactly as in
    the whole file); the others are returned as plain lines, to be highlighted when wanted.
    Returns the highlighted head and the plain rest.
    """
    from textual.highlight import highlight as highlight_code  # deliberate: loads Pygments

    text = text.expandtabs(4)
    rest: tuple[str, ...] = ()
    if lines is not None:
        cut = -1
        for _line in range(lines):
            cut = text.find("\n", cut + 1)
            if cut < 0:
                break
        if cut >= 0 and cut + 1 < len(text):
            # less one final newline, as the highlighter drops it from a whole file
            tail = text[cut + 1 : -1 if text.endswith("\n") else None]
            # the head keeps its last newline: the highlighter drops one, never a blank line
            text, rest = text[: cut + 1], tuple(tail.split("\n"))
    if len(text) > HIGHLIGHT_LIMIT:
        content = Content(text)
    else:
        content = highlight_code(text, language=language_of(path))
    if words:
        alternatives = "|".join(re.escape(w) for w in words)
        pattern = re.compile(f"{_WORD_START}(?:{alternatives})", re.IGNORECASE)
        content = content.highlight_regex(pattern, style=match_style)
    return content, rest


class Preview(RepaintOnly, ScrollView, can_focus=True):
    """Shows one file's content at its level; the screen fills it from a worker."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"preview--match", "preview--note"}

    class WholeWanted(Message):
        """The view nears the plain (not yet highlighted) rest of the file on show."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: list[Content] = []
        self._plain_from: int | None = None
        """First line not highlighted yet (None: every line is)."""
        self._asked = False
        """The whole file was asked for (once a file)."""
        self._title: tuple[str, tuple[str, ...]] = ("Preview", ())
        """The path on show and its details, fullest first, fitted to the width on a resize."""
        self._note: str | None = None
        """The note on show instead of a file, wrapped to the width anew on a resize."""

    @property
    def match_style(self) -> Style:
        """The style of the question's words, for the worker that highlights."""
        return self.get_visual_style("preview--match", partial=True)

    @property
    def head_lines(self) -> int:
        """Lines to highlight at first: the view's height and a margin."""
        return max(self.size.height, 24) + HEAD_MARGIN

    @property
    def whole(self) -> bool:
        """Every line on show is highlighted."""
        return self._plain_from is None

    @property
    def shown_text(self) -> str:
        """The plain text on show (what the copy carries for this file)."""
        return "\n".join(line.plain for line in self._lines)

    def show_title(self, path: str, *details: str) -> None:
        """Title the pane with a path (as shown) on its top edge, as much of it as fits, and
        its details ("focused · 1,204 tokens", then shorter ones) on its bottom edge, the
        fullest that fits. Sharing the top edge, the details took the folder's room: at 80
        columns `src/flask/helpers.py` was titled `helpers.py · focused` (review, session 33)."""
        self._title = (path, details)
        self._fit_title()

    def _fit_title(self) -> None:
        path, details = self._title
        room = self.outer_size.width - TITLE_FRAME
        title = fit_title(path, room) if room > 0 else path
        # plain text: a name like `x[/y].py` is no markup
        self.border_title = Content(title)
        self.border_subtitle = Content(fit_details(details, room)) if details else None

    def show_note(self, note: str) -> None:
        """Show a short explanation instead of a file (nothing highlighted, nothing to copy),
        wrapped to the pane's width: the pane does not wrap a file's lines, and "Left out of
        the pack. Press f, s or o to include it." was cut at "Press f, s o" at 80 columns."""
        width = max(self.scrollable_content_region.width, 12)
        text = "\n".join(wrap_cells(note, width, NOTE_LINES))
        self.show(Content.styled(text, self.get_visual_style("preview--note", partial=True)))
        self._note = note

    def show(self, head: Content, rest: Sequence[str] = (), *, keep_place: bool = False) -> None:
        """Show a highlighted head and a plain rest (`keep_place`: the same file at the same
        level, highlighted whole or changed: the view stays where it is)."""
        lines = head.split("\n", allow_blank=True) if head.plain or rest else []
        self._plain_from = len(lines) if rest else None
        self._asked = False
        self._note = None
        lines.extend(Content(line) for line in rest)
        self._lines = lines
        width = max((line.cell_length for line in lines), default=0)
        with self.content_changing():  # the pane's size never depends on its text
            self.virtual_size = Size(width, len(lines))
        self._scroll_update(self.virtual_size)  # a scrollbar that appears or goes lays out
        if keep_place:  # where it was, or the new end if the text got shorter
            self.scroll_to(y=min(self.scroll_y, self.max_scroll_y), animate=False, immediate=True)
        else:
            self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh()
        self._want_whole()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._want_whole()

    def on_resize(self) -> None:
        self._want_whole()
        self._fit_title()
        if self._note is not None:
            self.show_note(self._note)

    def _want_whole(self) -> None:
        plain_from = self._plain_from
        near = self.scroll_y + self.size.height + HEAD_MARGIN // 2
        if plain_from is not None and not self._asked and near > plain_from:
            self._asked = True  # once: the whole file replaces these lines
            self.post_message(self.WholeWanted())

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
