"""The person's choices on the main screen: levels, pins, clearing them, budget, format, encoding,
and whether the work tree's changes are packed (`d`).

Levels and pins arrive as requests from the file list or the finder; every change of them can
be taken back (ctrl+z or u in the list), including clearing them all, which says so in a
notification. Keys that are letters act only away from the question (where they are text), so
the footer shows them only there; the palette runs every action from anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.binding import Binding, BindingType

from ctxtui.messages import ChangesRead
from ctxtui.screens import jobs
from ctxtui.screens.footer_keys import fits_footer, shown_when_wide
from ctxtui.screens.prompt import PromptScreen
from ctxtui.screens.ranking import RankingScreen
from ctxtui.state import ENCODINGS, next_in_cycle, parse_budget, step_budget
from ctxtui.widgets.file_list import FileList
from ctxtui.widgets.query_bar import QueryBar
from ctxtui.workspace.answers import gone_paths
from ctxtui.workspace.notices import counted, not_brought_back_notice
from engine.errors import GitError
from engine.model import Format, Level

UNDO_CHOICES = 100
"""Changes of pins and levels that can be taken back."""
QUESTION_TEXT_ACTIONS = frozenset(
    {"step_budget", "cycle_format", "clear_choices", "toggle_changes"}
)
"""Actions on letter keys the footer shows: hidden while the question has focus."""

ChoiceState = tuple[frozenset[str], Mapping[str, Level]]


def budget_problem(text: str) -> str:
    """Say what is wrong with a typed budget, or return "" when it is fine."""
    try:
        parse_budget(text)
    except ValueError as error:
        return str(error)
    return ""


def describe_choices(pinned: int, levels: int) -> str:
    """ "2 pins and 3 levels" for a notification."""
    parts = [f"{count} {noun}{'' if count == 1 else 's'}" for count, noun in
             ((pinned, "pin"), (levels, "level")) if count]  # fmt: skip
    return " and ".join(parts) or "nothing"


class ChoicesScreen(RankingScreen):
    """Levels, pins, budget, format and encoding, each undoable where it matters."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *shown_when_wide(
            "plus,equals_sign",
            "step_budget(1)",
            "Budget",
            key_display="+/-",
            tooltip="Raise the token budget a step",
            id="budget-up",
        ),
        Binding(
            "minus",
            "step_budget(-1)",
            "Budget down",
            show=False,
            tooltip="Lower the token budget a step",
            id="budget-down",
        ),
        Binding(
            "b", "type_budget", "Type budget", show=False, tooltip="Type a budget", id="budget-type"
        ),
        *shown_when_wide(
            "F",
            "cycle_format",
            "Format",
            tooltip="Cycle the pack format: Markdown, XML, JSON",
            id="cycle-format",
        ),
        *shown_when_wide(
            "X",
            "clear_choices",
            "Clear",
            tooltip="Clear every pin and level (u or ctrl+z in the list brings them back)",
            id="clear-choices",
        ),
        Binding(
            "u,ctrl+z",
            "undo_choice",
            "Undo choice",
            show=False,
            tooltip="Take back the last change of pins or levels (from the list)",
            id="undo-choice",
        ),
        *shown_when_wide(
            "d",
            "toggle_changes",
            "Changes",
            tooltip="Pack the work tree's changes: changed files pinned, their diff added",
            id="toggle-changes",
        ),
        Binding(
            "e",
            "cycle_encoding",
            "Encoding",
            show=False,
            tooltip="Cycle the tokenizer: o200k_base, cl100k_base",
            id="cycle-encoding",
        ),
    ]

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._undo_choices: list[ChoiceState] = []
        self._announce_changes = False
        """The next changes read answer a press of `d`: say what they hold."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Letter keys are text in the question: neither shown nor run from there; some keys
        are listed in the footer only when it has room (see `footer_keys`)."""
        if action in QUESTION_TEXT_ACTIONS and isinstance(self.focused, QueryBar):
            return False
        return fits_footer(action, parameters, self.size.width)

    # ------------------------------------------------------------------ pins and levels

    def change_choices(self, pinned: frozenset[str], overrides: Mapping[str, Level]) -> None:
        """Set pins and levels, remembering the old ones for an undo."""
        self._undo_choices.append((self.pinned, dict(self.overrides)))
        del self._undo_choices[:-UNDO_CHOICES]
        self.set_choices(pinned, overrides)

    @on(FileList.LevelRequested)
    def set_level(self, event: FileList.LevelRequested) -> None:
        event.stop()
        self.apply_to_files((event.path,), event.level.value if event.level else "auto")

    @on(FileList.PinRequested)
    def toggle_pin(self, event: FileList.PinRequested) -> None:
        event.stop()
        self.apply_to_files((event.path,), "pin")

    def apply_to_files(self, paths: tuple[str, ...], what: str) -> None:
        """Pin ("pin": unpins when all are pinned) or set a level ("full" ... "auto")."""
        pinned, overrides = set(self.pinned), dict(self.overrides)
        if what == "pin":
            if set(paths) <= pinned:
                pinned -= set(paths)
            else:
                pinned |= set(paths)
        else:
            for path in paths:
                if what == "auto":
                    overrides.pop(path, None)
                else:
                    overrides[path] = Level(what)
        self.change_choices(frozenset(pinned), overrides)

    def action_clear_choices(self, _where: str = "") -> None:
        """Clear every pin and level; ctrl+z or u in the list brings them back."""
        self.file_list().after_requests(self._clear_choices)

    def _clear_choices(self) -> None:
        if not self.pinned and not self.overrides:
            if self.changes is not None and self.changes.files:  # their ◆ comes from d
                self.notify("No pins or levels to clear; d pins the changed files.", timeout=3)
            else:
                self.notify("No pins or levels to clear.", timeout=2)
            return
        cleared = describe_choices(len(self.pinned), len(self.overrides))
        self.change_choices(frozenset(), {})
        self.notify(
            f"Cleared {cleared}. Press u (or ctrl+z) in the list to bring them back.",
            title="Choices cleared",
            timeout=8,
        )

    @on(FileList.NothingToActOn)
    def say_nothing_to_act_on(self, event: FileList.NothingToActOn) -> None:
        event.stop()
        self.notify("Nothing to pin or level: no file is ranked for this question.", timeout=3)

    @on(FileList.QuestionMovedOn)
    def say_question_moved_on(self, event: FileList.QuestionMovedOn) -> None:
        event.stop()
        self.notify(
            "Pin or level keys pressed before the list came were not applied: the question"
            " changed before it was ranked.",
            timeout=5,
        )

    @on(FileList.RequestsSent)
    def run_after_requests(self, event: FileList.RequestsSent) -> None:
        event.stop()
        event.then()

    def action_undo_choice(self) -> None:
        """Take back the last change of pins or levels, once the list's requests are in."""
        self.file_list().after_requests(self._undo_choice)

    def _undo_choice(self) -> None:
        if not self._undo_choices:
            self.notify("Nothing to undo.", timeout=2)
            return
        pinned, overrides = self._undo_choices.pop()
        # a choice about a file gone from the index since stays gone: brought back, it was
        # dropped again at the next check, with a second notice (session 33)
        index = self.workspace.index if self.workspace is not None else None
        gone = gone_paths(index, (*pinned, *overrides)) if index is not None else ()
        if gone:
            pinned = pinned - set(gone)
            overrides = {p: v for p, v in overrides.items() if p not in gone}
        back = describe_choices(len(pinned), len(overrides))
        self.set_choices(pinned, overrides)
        if gone:
            text = f"Back to {back}; {not_brought_back_notice(gone)}."
            self.notify(text, timeout=8)
        else:
            self.notify(f"Back to {back}.", timeout=3)

    # ------------------------------------------------------------------ budget, format, encoding

    def action_step_budget(self, direction: int, _where: str = "") -> None:
        """Raise or lower the budget by one step."""
        self.budget = step_budget(self.budget, direction)

    def action_type_budget(self) -> None:
        """Ask for a budget in a small dialog."""

        def apply(answer: str | None) -> None:
            if answer is not None:
                self.budget = parse_budget(answer)

        hint = "e.g. 12000, 12k, 1.5k"
        prompt = PromptScreen("Token budget", f"{self.budget:,}", hint=hint, check=budget_problem)
        self.app.push_screen(prompt, apply)

    def action_cycle_format(self, _where: str = "") -> None:
        """Switch the pack between Markdown, XML and JSON."""
        self.fmt = next_in_cycle(tuple(Format), self.fmt)
        self.notify(f"Pack format: {self.fmt.value}", timeout=2)

    def action_cycle_encoding(self) -> None:
        """Count tokens with the next tokenizer: the files on show at once, the rest after."""
        self.encoding = next_in_cycle(ENCODINGS, self.encoding)
        self.notify(f"Counting tokens with {self.encoding}…", timeout=2)
        if self.workspace is not None:
            self.switch_encoding(self.workspace, self.encoding)

    # ------------------------------------------------------------------ the work tree's changes

    def action_toggle_changes(self, _where: str = "") -> None:
        """Pack the work tree's changes, or stop packing them."""
        self._announce_changes = not self.changed
        self.changed = not self.changed
        if not self.changed:
            self.notify("Changes no longer packed.", title="Changes", timeout=2)

    def watch_changed(self, changed: bool) -> None:
        self.save_state()
        if changed:
            self.request_changes()
        else:
            self.changes = None
            self.query_one(FileList).changed = {}
            self.request_rank()

    def request_changes(self) -> None:
        """Read the work tree's changes again (after a toggle, an open or a refresh)."""
        if self.workspace is not None and self.changed:
            self.run_read_changes(self.workspace.root)

    @work(thread=True, exclusive=True, group="changes", exit_on_error=False)
    def run_read_changes(self, root: Path) -> None:
        """Ask git for the changes in a thread."""
        try:
            changes, notice = jobs.working_changes(root)
        except GitError as error:  # said by show_changes, which turns the packing off
            self.post_message(ChangesRead(None, str(error), failed=True))
            return
        self.post_message(ChangesRead(changes, notice))

    def changes_unreadable(self, title: str, reason: str) -> bool:
        """git failed to read the changes while they are packed: say why and that they are no
        longer packed, in one notice, and turn `d` off (a copy that failed so, with `d` left
        on, was followed by the next check's own notice of the same failure, session 33)."""
        if not self.changed:
            return False
        self.notify(
            f"{reason.rstrip('.')}. Changes no longer packed; press d to try again.",
            title=title,
            severity="error",
            timeout=8,
        )
        self.changed = False
        return True

    @on(ChangesRead)
    def show_changes(self, message: ChangesRead) -> None:
        if not self.changed:
            return  # toggled off while git was asked
        announce, self._announce_changes = self._announce_changes, False
        if message.failed:
            # git failed (a damaged index): the worker's notification said so but `changed`
            # stayed on, and was saved on for every later open (review, session 33). It goes
            # off, at a press, an open or a refresh alike; d tries again.
            self.changes_unreadable("Could not read the changes", message.notice)
            return
        if announce and message.changes is None:
            self.notify(message.notice, title="Changes", timeout=4)
            # just pressed, and nothing can be packed here (not a git work tree): the setting
            # goes back off rather than stay on, saved, for every later open (review, session
            # 29); a saved "on" that fails at an open is kept, as the person chose it
            self.changed = False
            return
        elif announce and message.changes is not None:
            count = len(message.changes.files)
            self.notify(
                f"Packing {counted(count, 'changed file')} and {'its' if count == 1 else 'their'}"
                f" diff against {message.changes.base}.",
                title="Changes",
                timeout=3,
            )
        self.changes = message.changes
        files = message.changes.files if message.changes is not None else ()
        self.query_one(FileList).changed = {f.path: f.status.value for f in files}
        self.request_rank()
