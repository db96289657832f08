"""The file finder: reach any indexed file by name, or a set of files by glob, and pin or level it.

A modal over the main screen. The box matches fuzzily (rapidfuzz, see `ctxtui.path_search`)
or as a glob (`src/**/*.ts`, `*.md`); enter pins the highlighted file (or every file the glob
matches) and closes; in the list of matches the level keys of the main list (f s o x a p) act
on the highlighted file, or on every match of a glob, and the finder stays open. The main
screen does the changing (`FinderHost.apply`); this screen only asks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.style import Style
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from ctxtui.path_search import PathMatch, is_glob, search_paths
from ctxtui.widgets.cells import fit_path
from ctxtui.widgets.file_list import level_key
from ctxtui.widgets.ordered_input import OrderedInput
from ctxtui.widgets.ranked_row import LEVEL_LETTERS
from engine.model import Level, one_line
from engine.shown_path import shown_line


@dataclass(frozen=True, slots=True)
class FinderHost:
    """What the finder needs from the main screen."""

    paths: Sequence[str]
    """Every indexed path."""
    ranked: Mapping[str, int]
    """Path -> 0-based place in the current ranking (ties go to the higher)."""
    state_of: Callable[[str], tuple[bool, Level | None]]
    """Whether a file is pinned, and the level the user chose for it (None: automatic)."""
    apply: Callable[[tuple[str, ...], str], None]
    """Pin ("pin") or set a level ("full", ..., "auto") for files."""


class Matched(Message):
    """The finder's worker matched a query."""

    def __init__(self, query: str, matches: list[PathMatch]) -> None:
        super().__init__()
        self.query = query
        """The query matched."""
        self.matches = matches
        """Best first."""


TINY_HEIGHT = 12
"""Below this many lines the dialog fills the screen without its border and title, and the
box takes one line: at 20x8 the dialog (80 % high, a thick border), its title, the box (3
lines) and the hint took every line and no match was shown (review, session 33). From 12
lines the usual dialog keeps two rows (the main screen's tiny layout starts there too)."""
NARROW_WIDTH = 60
"""Below this many columns the dialog takes the whole width, and the hint and each match keep
to one line (a match's path cut from its start to fit, the hint cut at its end): at 20
columns the hint wrapped onto four lines and took the rows of the matches, and a long name
wrapped its rank onto a line of its own."""


class FinderScreen(ModalScreen[None]):
    """Find files by name or glob; pin them or set their level."""

    VERTICAL_BREAKPOINTS = [(0, "-tiny"), (TINY_HEIGHT, "-tall")]  # noqa: RUF012 - a list
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_WIDTH, "-wide")]  # noqa: RUF012

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="finder-close"),
        Binding("tab", "switch_focus", "List/box", id="finder-switch"),
        Binding("down", "move(1)", "Down", show=False, id="finder-down"),
        Binding("up", "move(-1)", "Up", show=False, id="finder-up"),
    ]

    def __init__(self, host: FinderHost, query: str = "") -> None:
        super().__init__()
        self.host = host
        self._query = query
        self._matches: list[PathMatch] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="finder-dialog"):
            yield Label(f"Find a file · {len(self.host.paths):,} indexed", id="finder-title")
            yield OrderedInput(
                self._query,
                placeholder="a few letters of a name, or a glob: src/**/*.ts",
                id="finder-input",
                select_on_focus=False,
            )
            yield FinderList(id="finder-list")
            yield Label("", id="finder-hint")

    def on_mount(self) -> None:
        self.query_one("#finder-input", Input).focus()
        self.search(self._query)

    def on_resize(self) -> None:
        """Fit the rows to the new width, once the list has it."""
        if self._matches:
            self.call_after_refresh(self._redraw, keep_place=True)

    @property
    def matches(self) -> list[PathMatch]:
        """The matches on show, best first."""
        return self._matches

    @on(Input.Changed, "#finder-input")
    def match_again(self, event: Input.Changed) -> None:
        event.stop()
        self._query = event.value
        self.search(event.value)

    @on(Input.Submitted, "#finder-input")
    def submit(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_pin_and_close()

    @on(OptionList.OptionSelected, "#finder-list")
    def pick(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_pin_and_close()

    @work(thread=True, exclusive=True, group="finder", exit_on_error=False)
    def search(self, query: str) -> None:
        """Match in a thread: a fuzzy pass over 10,000 paths takes tens of milliseconds."""
        self.post_message(Matched(query, search_paths(query, self.host.paths, self.host.ranked)))

    @on(Matched)
    def show_matches(self, message: Matched) -> None:
        if message.query != self._query:
            return
        self._matches = message.matches
        self._redraw(keep_place=False)

    def _redraw(self, *, keep_place: bool) -> None:
        matches = self._matches
        finder_list = self.query_one(FinderList)
        place = finder_list.highlighted if keep_place else 0
        room = finder_list.row_room(len(matches))
        finder_list.set_options(Option(self._row(m, room), id=m.path) for m in matches)
        if matches:
            finder_list.highlighted = min(place or 0, len(matches) - 1)
        glob = is_glob(self._query)
        if not self._query.strip():
            hint = "Type a name or a glob."
        elif not matches:
            hint = "No indexed file matches."
        elif glob:
            hint = f"{len(matches):,} files match · enter pins them all · tab, then f s o x a p"
        else:
            hint = "enter pins · tab to the list, then f s o x a p · escape closes"
        self.query_one("#finder-hint", Label).update(hint)

    def _row(self, match: PathMatch, room: int) -> Content:
        """A match's row in `room` cells: marks, the path (its folder, then its name, cut
        from the start when it does not fit: fit_path) and its rank. Every row of the list
        has the same form, the screen's width decides which: at 60 columns and more a row
        that did not fit took the narrow form, a list of `path  rank 28` and
        `   …/path.py #46` (review, session 33)."""
        pinned, level = self.host.state_of(match.path)
        rank = self.host.ranked.get(match.path)
        start, end = match.marked
        path = shown_line(match.path)
        if path != one_line(match.path):  # the marks are offsets in the name as written
            start = end = 0
        finder_list = self.query_one(FinderList)
        if self.size.width < NARROW_WIDTH:
            # narrow (a 40-column terminal): a row a line, as the main list's narrow rows are:
            # the level's key letter, and the rank as "#3"
            marks = ("◆" if pinned else " ") + (LEVEL_LETTERS[level] if level else " ") + " "
            ranked = f" #{rank + 1}" if rank is not None else ""
        else:
            marks = ("◆ " if pinned else "  ") + (f"{level.value:<8}" if level else " " * 8)
            ranked = f"  rank {rank + 1}" if rank is not None else ""
        if room and cell_len(marks) + cell_len(path) + len(ranked) > room:
            # the path cut from its start (the folder, then the name) so that the name's end
            # and the rank stay
            folder, name = fit_path(path, room - len(marks) - len(ranked))
            start, end, path = _shifted(start, end, path, folder + name)
        style = finder_list.part_style
        return Content.assemble(
            (marks, style("marks")),
            path[:start],
            (path[start:end], style("match")),
            path[end:],
            (ranked, style("rank")),
        )

    def targets(self) -> tuple[str, ...]:
        """The files an action applies to: every match of a glob, else the highlighted one."""
        if is_glob(self._query):
            return tuple(m.path for m in self._matches)
        option = self.query_one(FinderList).highlighted_option
        return (option.id,) if option is not None and option.id is not None else ()

    def act(self, what: str) -> None:
        """Apply a pin or a level to the targets and redraw their marks."""
        targets = self.targets()
        if targets:
            self.host.apply(targets, what)
            self._redraw(keep_place=True)

    def action_pin_and_close(self) -> None:
        """Pin the targets (all matches of a glob) and close the finder."""
        if not self.is_active:
            # a second enter, typed before the first one closed the finder: a pin toggles,
            # so answering it would unpin what the first one pinned
            return
        targets = self.targets()
        if not targets:
            return
        if all(self.host.state_of(path)[0] for path in targets):
            # enter pins, as the hint says; a pin toggles, so it would unpin these (p does)
            self.notify("Already pinned (p in the list unpins).", timeout=3)
        else:
            self.act("pin")
        self.dismiss(None)

    def action_move(self, step: int) -> None:
        """Move the highlight in the matches while typing."""
        finder_list = self.query_one(FinderList)
        finder_list.action_cursor_down() if step > 0 else finder_list.action_cursor_up()

    def action_switch_focus(self) -> None:
        """Between the box and the matches."""
        box = self.query_one("#finder-input", Input)
        (self.query_one(FinderList) if box.has_focus else box).focus()

    def action_close(self) -> None:
        """Close the finder."""
        self.dismiss(None)


def _shifted(start: int, end: int, path: str, shown: str) -> tuple[int, int, str]:
    """The marked span of `path` moved into `shown`, the path with its start cut (and an
    ellipsis put there); what was cut loses its mark."""
    if shown == path:
        return start, end, path
    lead = 1 if shown.startswith("…") else 0
    cut = len(path) - (len(shown) - lead)
    start, end = max(start - cut, 0), max(end - cut, 0)
    return (start + lead, end + lead, shown) if end > start else (0, 0, shown)


class FinderList(OptionList):
    """The matches; the main list's level keys act on them."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "finder-list--marks",
        "finder-list--match",
        "finder-list--rank",
    }

    def part_style(self, name: str) -> Style:
        """The component style of a part of a row."""
        return self.get_visual_style(f"finder-list--{name}", partial=True)

    def row_room(self, rows: int) -> int:
        """Cells the text of a row may use: the list's width less an option's padding and
        the scrollbar that `rows` one-line rows will show (it appears only once they are set,
        too late to fit them). Counted without the scrollbar, the first rows of a long list of
        matches came 2 cells too long and lost their end to the row's "…": the rank, and
        with the name cut at its end its extension, "test_blueprint…" at 24 columns in flask
        (review, session 33)."""
        region = self.content_region
        padding = self.get_component_styles("option-list--option").padding.width
        shown = self.styles.overflow_y == "scroll" or rows > region.height
        scrollbar = self.styles.scrollbar_size_vertical if shown else 0
        return max(0, region.width - padding - scrollbar)

    BINDINGS: ClassVar[list[BindingType]] = [
        level_key("f", "full", "Full", "Pack the whole file"),
        level_key("s", "focused", "Focused", "Matching declarations in full"),
        level_key("o", "outline", "Outline", "Signatures and doc sentences only"),
        level_key("x", "off", "Off", "Leave the file out"),
        level_key("a", "auto", "Auto", "Let the planner choose the level"),
        Binding("p", "request_pin", "Pin", tooltip="Pin or unpin", id="finder-pin-key"),
    ]

    def action_request_level(self, level: str) -> None:
        """Set a level for the highlighted file (every match of a glob)."""
        screen = self.screen
        if isinstance(screen, FinderScreen):
            screen.act(level)

    def action_request_pin(self) -> None:
        """Pin or unpin the highlighted file (every match of a glob)."""
        screen = self.screen
        if isinstance(screen, FinderScreen):
            screen.act("pin")
