"""The ranked file list: two lines a file (rank, score bar, level, tokens, path; then its reasons).

It draws the ranking and the plan it is given and asks for changes with messages; it never
ranks or plans. Where the cursor goes follows where the person is working: while the list has
no focus (the question is being typed), every new ranking shows rank 1 highlighted at the top;
while the list has focus, rows keep their places (a pin or a level moves nothing under the
cursor) until the question changes, and so does the view; a file that leaves the list (gone
from disk) leaves the cursor on its row; the file highlighted when the app last closed stands
where rank 1 would while its question is on show (`restore_cursor`). A plan alone redraws the
changed rows in place. What its level and pin keys ask for, and when (a key pressed
before the first rows waits for them and acts on rank 1), is `RequestingList`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive, var
from textual.style import Style
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ctxtui.widgets.cells import wrap_cells
from ctxtui.widgets.ranked_row import (
    TOKENS_CELLS,
    RowKey,
    format_tokens,
    keep_places,
    looks_alike,
)
from ctxtui.widgets.requesting_list import RequestingList
from ctxtui.widgets.row_list import RowOption
from engine.model import Level, Plan, PlanEntry, RankedFile, Ranking

LISTED_FILES = 200
"""Ranked files shown; the planner considers no more by default either."""
EMPTY_TEXT_LINES = 4
"""Lines at most of what an empty list says (a long question's "No file matches" is cut)."""
ROWS_WHILE_TYPING = 50
"""Rows built while the question is typed (a few screens' worth): building all 200 for every
keystroke would take most of a frame. The rest follow at a pause or when the list takes focus."""
REASONED_ROWS = 25
"""Rows whose reasons the ranking job works out with the ranking (a screen of rows at up to
50 lines, one block of engine.explain); a row further down works out its own when it is first
drawn (scrolled into view), a block at a time."""
LEVELS = Binding.Group("Level", compact=True)
"""The level keys share one footer entry: "fsoxa Level"."""


def level_key(key: str, level: str, description: str, tooltip: str) -> Binding:
    """The binding of one level key, grouped with the others in the footer."""
    action = f"request_level('{level}')"
    return Binding(key, action, description, tooltip=tooltip, id=f"set-level-{level}", group=LEVELS)


class FileList(RequestingList):
    """The ranked files of the current question, with their levels and reasons."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="cursor-down"),
        Binding("k", "cursor_up", "Up", show=False, id="cursor-up"),
        level_key("f", "full", "Full", "Pack the whole file"),
        level_key(
            "s", "focused", "Focused", "Matching declarations in full, the rest as signatures"
        ),
        level_key("o", "outline", "Outline", "Signatures and doc sentences only"),
        level_key("x", "off", "Off", "Leave the file out"),
        level_key("a", "auto", "Auto", "Let the planner choose the level"),
        Binding(
            "p",
            "request_pin",
            "Pin",
            tooltip="Pin or unpin: pinned files rank first and are always packed",
            id="toggle-pin",
        ),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "file-list--rank",
        "file-list--score",
        "file-list--level-full",
        "file-list--level-focused",
        "file-list--level-outline",
        "file-list--level-off",
        "file-list--user-choice",
        "file-list--tokens",
        "file-list--tokens-off",
        "file-list--folder",
        "file-list--name",
        "file-list--pin",
        "file-list--reasons",
        "file-list--secret",
        "file-list--empty",
    }

    ranking: reactive[Ranking | None] = reactive(None, init=False, always_update=True)
    """The ranking to show; None before the first answer."""
    plan: reactive[Plan | None] = reactive(None, init=False, always_update=True)
    """The plan giving each file its level and tokens."""
    overrides: var[Mapping[str, Level]] = var(dict)
    """Levels the user chose, marked with a star."""
    full_tokens: var[Mapping[str, int]] = var(dict)
    """Tokens at full level, shown for files left out of the plan."""
    secrets: var[Mapping[str, str]] = var(dict)
    """Files with secrets in the exact pack (path -> "secret redacted, line 12"): marked ⚠."""
    changed: var[Mapping[str, str]] = var(dict)
    """Files changed in the work tree (path -> how) while the changes are packed: marked ±."""
    empty_text: var[str] = var("Type a question to rank the files.")
    """What the list says when the ranking is empty."""
    redact_names: bool = True
    """Show a secret in a file's name redacted (the settings' `redact`; engine.shown_path)."""

    class Highlighted(Message):
        """The cursor moved to a file."""

        def __init__(self, path: str | None) -> None:
            super().__init__()
            self.path = path
            """The highlighted path; None when the list is empty."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rebuild_pending = False
        self._paths: list[str] = []
        self._rows: list[RowKey] = []
        self._all_rows = False
        self.shown_ranking: Ranking | None = None
        """The ranking the rows were last built from (what is on screen once painted)."""
        self._restore: tuple[str, str] | None = None
        """The file to highlight instead of rank 1, and the question it holds for (see
        restore_cursor)."""
        self._restored = False
        """The cursor has been put on the restored file once."""

    def restore_cursor(self, path: str, query: str) -> None:
        """Highlight `path` where rank 1 would be, once the rows of `query` hold it (the file
        highlighted when the app closed); a ranking of another question forgets it, and a
        list without it keeps the usual cursor."""
        self._restore, self._restored = (path, query), False

    def _restored_row(self, ranking: Ranking | None, paths: list[str]) -> int | None:
        """The row of the file to restore, when it is due in this build."""
        if self._restore is None or ranking is None:
            return None
        path, query = self._restore
        if ranking.query != query:
            self._restore = None  # a new question: its own rank 1
            return None
        return paths.index(path) if path in paths else None

    def paths_in_view(self, margin: int = 2) -> list[str]:
        """The paths of the rows on screen, and `margin` rows either side, in list order."""
        first = int(self.scroll_y) // RowOption.LINES
        rows = self.scrollable_content_region.height // RowOption.LINES + 1
        return self._paths[max(0, first - margin) : first + rows + margin]

    def _wrapped_empty_text(self) -> str:
        """`empty_text` in lines of the list's width: the list does not wrap its rows (the
        loading sentence was cut after "the files are ranke…" at 120 columns)."""
        width = max(self.scrollable_content_region.width - 2, 12)  # an option's padding
        return "\n".join(wrap_cells(self.empty_text, width, EMPTY_TEXT_LINES))

    def on_resize(self) -> None:
        self._schedule_rebuild()  # the rows' paths are shortened to the width
        # a shorter list keeps its scroll: the cursor's row, further down, went out of view
        self.call_after_refresh(self.scroll_to_highlight)

    def watch_ranking(self) -> None:
        if not self.has_focus:
            self._all_rows = False  # a new question: its first rows first
        self._schedule_rebuild()

    def on_focus(self) -> None:
        self.list_all()

    def list_all(self) -> None:
        """Build the rows past the first screens too (the typing has paused, or the list
        takes focus)."""
        if not self._all_rows:
            self._all_rows = True
            self._schedule_rebuild()

    def watch_plan(self) -> None:
        self._schedule_rebuild()

    def watch_changed(self) -> None:
        self._schedule_rebuild()

    def watch_secrets(self) -> None:
        self._schedule_rebuild()

    def _schedule_rebuild(self) -> None:
        """Rebuild once after the current message, however many attributes changed."""
        if not self._rebuild_pending:
            self._rebuild_pending = True
            self.call_later(self._rebuild)

    def _rebuild(self) -> None:
        self._rebuild_pending = False
        self.forget_looks()  # the component styles are read anew, as the rows are
        ranking = self.ranking
        limit = LISTED_FILES if self._all_rows or self.has_focus else ROWS_WHILE_TYPING
        files = list(ranking.files[:limit]) if ranking is not None else []
        shown, self.shown_ranking = self.shown_ranking, ranking
        new_ranking = ranking is not shown
        same_question = ranking is not None and shown is not None and ranking.query == shown.query
        if self.has_focus and same_question:  # working in the list: a pin or a level moves no row
            files = keep_places(files, self._paths)
        entries = {entry.path: entry for entry in self.plan.entries} if self.plan else {}
        listed = ranking.files[:LISTED_FILES] if ranking is not None else ()
        top = max((ranked.score for ranked in listed), default=0.0) or 1.0
        width = self._row_width(len(listed))  # as wide with the first rows as with all
        rows = [
            self._row_key(number, ranked, entries.get(ranked.path), ranked.score / top, width)
            for number, ranked in enumerate(files, 1)
        ]
        paths = [ranked.path for ranked in files]
        follow_top = new_ranking and not self.has_focus
        style = self._styles()
        shown_rows = len(self._paths)
        if self._paths and paths[:shown_rows] == self._paths:  # same files: redraw in place
            redrawn = False
            for index, (row, old) in enumerate(zip(rows, self._rows, strict=False)):
                if not looks_alike(row, old):
                    option = self.get_option_at_index(index)
                    assert isinstance(option, RowOption)
                    option.row, redrawn = row, True
            if redrawn:
                self._clear_caches()
            self.add_options(  # and the rows past the first screens, if they are due now
                RowOption(row, ranked.path, style)
                for row, ranked in zip(rows[shown_rows:], files[shown_rows:], strict=True)
            )
            self._paths, self._rows = paths, rows
            restored = self._restored_row(ranking, paths)
            if restored is not None and (follow_top or not self._restored):
                self._show_restored(restored)  # perhaps among the rows added now
            elif follow_top:
                self._show_top()
            return
        keep, place, view = self.highlighted_path, self.highlighted, self.scroll_y
        self._paths, self._rows = paths, rows
        if not paths:
            empty = Content.styled(self._wrapped_empty_text(), self._style("empty"))
            self.set_options([Option(empty, disabled=True)])
            self.post_message(self.Highlighted(None))
            if ranking is not None:
                self.drop_waiting(ranking.query)  # no file: nothing for the keys to act on
            return
        self.set_options(
            RowOption(row, ranked.path, style) for row, ranked in zip(rows, files, strict=True)
        )
        restored = self._restored_row(ranking, paths)
        if restored is not None and (follow_top or not self._restored):
            self._show_restored(restored)
        elif follow_top:
            self._show_top()
        elif keep in paths:
            self._return_to(paths.index(keep), view)
        elif self.has_focus and same_question and place is not None:
            # the file under the cursor left the list (deleted or renamed on disk): the cursor
            # stays on its row, now the next file's, rather than jump back to rank 1
            self._return_to(min(place, len(paths) - 1), view)
        else:
            self._show_top()
        if ranking is not None:
            self.act_on_waiting(ranking.query)

    def _return_to(self, index: int, scroll_y: float) -> None:
        """Highlight a row with the view where it was (`set_options` scrolled it home), moved
        only as far as the row needs to be seen."""
        self.scroll_to(y=scroll_y, animate=False, immediate=True)
        self.highlighted = index

    def _show_restored(self, index: int) -> None:
        """Highlight the restored file's row, from the top of the list (it stands in for rank
        1 while its question is on show: a new ranking of it, such as the meaning stage's,
        puts the cursor back there, as it would on rank 1)."""
        self._restored = True
        self._return_to(index, 0)

    def _show_top(self) -> None:
        """Highlight rank 1 with the view at the top of the list."""
        self.highlighted = 0
        self.scroll_home(animate=False, immediate=True)

    def _row_width(self, rows: int) -> int:
        """Cells a row may use, less the scrollbar a list this long shows (which appears only
        after the rows are set, too late for their layout)."""
        region = self.content_region
        shown = self.styles.overflow_y == "scroll" or rows * 2 > region.height
        scrollbar = self.styles.scrollbar_size_vertical if shown else 0
        return max(0, region.width - scrollbar)

    def _row_key(
        self, number: int, ranked: RankedFile, entry: PlanEntry | None, fraction: float, width: int
    ) -> RowKey:
        level = entry.level if entry is not None else Level.OFF
        chosen = ranked.path in self.overrides or (entry is not None and not entry.automatic)
        packed = entry is not None
        tokens = entry.tokens if entry is not None else self.full_tokens.get(ranked.path)
        column = format_tokens(tokens, packed).rjust(TOKENS_CELLS) + " "
        return RowKey(
            number, level, chosen, packed, column, round(fraction * 48), ranked.pinned,
            ranked.reasons, width, ranked.path in self.changed,
            self.secrets.get(ranked.path, ""), self.redact_names,
        )  # fmt: skip

    def _style(self, name: str) -> Style:
        return self.get_visual_style(f"file-list--{name}", partial=True)

    def _styles(self) -> Callable[[str], Style]:
        """The component styles, each looked up once a rebuild (not once a row)."""
        styles: dict[str, Style] = {}

        def style(name: str) -> Style:
            if name not in styles:
                styles[name] = self._style(name)
            return styles[name]

        return style

    @on(OptionList.OptionHighlighted)
    def announce_highlight(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(self.Highlighted(event.option.id))

    @on(OptionList.OptionSelected)
    def ignore_selection(self, event: OptionList.OptionSelected) -> None:
        event.stop()
