"""The ranked file list: two lines a file (rank, score bar, level, tokens, path; then its reasons).

It draws the ranking and the plan it is given and asks for changes with messages; it never
ranks or plans. A new ranking with the same files updates the rows in place, so the cursor and
the scroll position survive every keystroke; otherwise the highlighted path is found again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive, var
from textual.style import Style
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ctxtui.widgets.ranked_row import RowKey, describe_reasons, fit_path, score_bar
from engine.model import Level, Plan, PlanEntry, RankedFile, Ranking, one_line

LISTED_FILES = 200
"""Ranked files shown; the planner considers no more by default either."""
ROW_PREFIX = 27
"""Cells before the path: rank 4, score bar 6, level and star 9, tokens 8."""
_BADGES = {Level.FULL: "full", Level.FOCUSED: "focused", Level.OUTLINE: "outline", Level.OFF: "off"}


class FileList(OptionList):
    """The ranked files of the current question, with their levels and reasons."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False, id="cursor-down"),
        Binding("k", "cursor_up", "Up", show=False, id="cursor-up"),
        Binding(
            "f", "request_level('full')", "Full", tooltip="Pack the whole file", id="set-level-full"
        ),
        Binding(
            "s",
            "request_level('focused')",
            "Focused",
            tooltip="Matching declarations in full, the rest as signatures",
            id="set-level-focused",
        ),
        Binding(
            "o",
            "request_level('outline')",
            "Outline",
            tooltip="Signatures and doc sentences only",
            id="set-level-outline",
        ),
        Binding(
            "x", "request_level('off')", "Off", tooltip="Leave the file out", id="set-level-off"
        ),
        Binding(
            "a",
            "request_level('auto')",
            "Auto",
            tooltip="Let the planner choose the level",
            id="set-level-auto",
        ),
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

    class Highlighted(Message):
        """The cursor moved to a file."""

        def __init__(self, path: str | None) -> None:
            super().__init__()
            self.path = path
            """The highlighted path; None when the list is empty."""

    class LevelRequested(Message):
        """The user asked for a level for a file; None means back to automatic."""

        def __init__(self, path: str, level: Level | None) -> None:
            super().__init__()
            self.path = path
            """The file."""
            self.level = level
            """The level asked for; None for automatic."""

    class PinRequested(Message):
        """The user asked to pin or unpin a file."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path
            """The file."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rebuild_pending = False
        self._paths: list[str] = []
        self._rows: list[RowKey] = []
        self.shown_ranking: Ranking | None = None
        """The ranking the rows were last built from (what is on screen once painted)."""

    @property
    def highlighted_path(self) -> str | None:
        """The path under the cursor, or None."""
        option = self.highlighted_option
        return option.id if option is not None else None

    def on_resize(self) -> None:
        self._schedule_rebuild()  # the rows' paths are shortened to the width

    def watch_ranking(self) -> None:
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
        files = self.ranking.files[:LISTED_FILES] if self.ranking is not None else ()
        entries = {entry.path: entry for entry in self.plan.entries} if self.plan else {}
        top = max((ranked.score for ranked in files), default=0.0) or 1.0
        rows = [
            self._row_key(number, ranked, entries.get(ranked.path), ranked.score / top)
            for number, ranked in enumerate(files, 1)
        ]
        self.shown_ranking = self.ranking
        paths = [ranked.path for ranked in files]
        if paths and paths == self._paths:  # same files: redraw changed rows in place
            for index, (row, old) in enumerate(zip(rows, self._rows, strict=True)):
                if row != old:
                    self.replace_option_prompt_at_index(index, self._row(row, files[index]))
            self._rows = rows
            return
        keep = self.highlighted_path
        self._paths, self._rows = paths, rows
        if not paths:
            empty = Content.styled(self.empty_text, self._style("empty"))
            self.set_options([Option(empty, disabled=True)])
            self.post_message(self.Highlighted(None))
            return
        self.set_options(
            Option(self._row(row, ranked), id=ranked.path)
            for row, ranked in zip(rows, files, strict=True)
        )
        self.highlighted = paths.index(keep) if keep in paths else 0

    def _row_key(
        self, number: int, ranked: RankedFile, entry: PlanEntry | None, fraction: float
    ) -> RowKey:
        level = entry.level if entry is not None else Level.OFF
        chosen = ranked.path in self.overrides or (entry is not None and not entry.automatic)
        full = self.full_tokens.get(ranked.path)
        if entry is not None:
            tokens = f"{entry.tokens:>7,} "
        else:
            tokens = f"{'' if full is None else f'({full:,})':>7} "
        eighths = round(fraction * 48)
        packed = entry is not None
        width = self.scrollable_content_region.width
        return RowKey(
            number,
            level,
            chosen,
            packed,
            tokens,
            eighths,
            ranked.pinned,
            ranked.reasons,
            width,
            ranked.path in self.changed,
            self.secrets.get(ranked.path, ""),
        )

    def _style(self, name: str) -> Style:
        return self.get_visual_style(f"file-list--{name}", partial=True)

    def _row(self, key: RowKey, ranked: RankedFile) -> Content:
        room = key.width - ROW_PREFIX - (2 if key.pinned or key.changed else 0)
        room -= 2 if key.secret else 0
        folder, name = fit_path(one_line(ranked.path), room)
        level = key.level
        # Content, not rich Text: assembling 200 rows must stay well under a frame
        return Content.assemble(
            (f"{key.number:>3} ", self._style("rank")),
            (score_bar(key.eighths / 48), self._style("score")),
            (f" {_BADGES[level]}", self._style(f"level-{level.value}")),
            ("*" if key.chosen else " ", self._style("user-choice")),
            " " * (7 - len(_BADGES[level])),
            (key.tokens, self._style("tokens" if key.packed else "tokens-off")),
            (folder, self._style("folder")),
            (name, self._style("name")),
            (" ±" if key.changed else " ◆" if key.pinned else "", self._style("pin")),
            (" ⚠" if key.secret else "", self._style("secret")),
            "\n     ",
            (f"{key.secret} · " if key.secret else "", self._style("secret")),
            (describe_reasons(key.reasons), self._style("reasons")),
            strip_control_codes=False,
        )

    @on(OptionList.OptionHighlighted)
    def announce_highlight(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(self.Highlighted(event.option.id))

    @on(OptionList.OptionSelected)
    def ignore_selection(self, event: OptionList.OptionSelected) -> None:
        event.stop()

    def action_request_level(self, level: str) -> None:
        """Ask for a level for the highlighted file ('auto' for automatic)."""
        if (path := self.highlighted_path) is not None:
            self.post_message(self.LevelRequested(path, None if level == "auto" else Level(level)))

    def action_request_pin(self) -> None:
        """Ask to pin or unpin the highlighted file."""
        if (path := self.highlighted_path) is not None:
            self.post_message(self.PinRequested(path))
