"""The main screen: the keys of the app on top of the live ranking (`RankingScreen`).

Levels and pins arrive as requests from the file list; budget, format and encoding are keys on
the screen; copy and save render the pack (or reuse the current one) in a worker and say in a
notification where it went. Every change of a choice re-ranks through the base class.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.binding import Binding, BindingType

from ctxtui import clipboard
from ctxtui.messages import (
    Answer,
    ChangesRead,
    PackDelivered,
    PackSaved,
    WorkspaceOpened,
    WorkspaceRefreshed,
)
from ctxtui.screens import jobs
from ctxtui.screens.prompt import PromptScreen
from ctxtui.screens.ranking import RankingScreen, Services
from ctxtui.state import (
    ENCODINGS,
    FORMAT_EXTENSIONS,
    next_in_cycle,
    parse_budget,
    step_budget,
    write_atomic,
)
from ctxtui.widgets.file_list import FileList
from ctxtui.widgets.query_bar import QueryBar
from ctxtui.workspace.notices import as_sentences, secret_notices
from engine.model import Format, Plan, Rendered

__all__ = ["MainScreen", "Services"]


def budget_problem(text: str) -> str:
    """Say what is wrong with a typed budget, or return "" when it is fine."""
    try:
        parse_budget(text)
    except ValueError as error:
        return str(error)
    return ""


class MainScreen(RankingScreen):
    """Ask, rank, choose levels and pins, watch the budget, copy."""

    _announce_changes = False
    """The next changes read answer a press of `d`: say what they hold."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "tab",
            "toggle_focus",
            "List/ask",
            tooltip="Move between the question and the list",
            id="toggle-focus",
        ),
        Binding("down", "move_cursor(1)", "Down the list", show=False, id="list-down"),
        Binding("up", "move_cursor(-1)", "Up the list", show=False, id="list-up"),
        Binding(
            "escape,slash",
            "focus_query",
            "Ask",
            show=False,
            tooltip="Back to the question",
            id="focus-query",
        ),
        Binding(
            "c,ctrl+y",
            "copy_pack",
            "Copy",
            tooltip="Copy the pack to the clipboard",
            id="copy-pack",
        ),
        Binding(
            "ctrl+s",
            "save_pack",
            "Save",
            show=False,
            tooltip="Save the pack to a file",
            id="save-pack",
        ),
        Binding(
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
            "b",
            "type_budget",
            "Type budget",
            show=False,
            tooltip="Type a token budget",
            id="budget-type",
        ),
        Binding(
            "F",
            "cycle_format",
            "Format",
            tooltip="Cycle the pack format: Markdown, XML, JSON",
            id="cycle-format",
        ),
        Binding(
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
        Binding(
            "r",
            "refresh_index",
            "Refresh",
            show=False,
            tooltip="Re-index files changed on disk",
            id="refresh-index",
        ),
    ]

    # ------------------------------------------------------------------ choices

    @on(FileList.LevelRequested)
    def set_level(self, event: FileList.LevelRequested) -> None:
        event.stop()
        overrides = dict(self.overrides)
        if event.level is None:
            overrides.pop(event.path, None)
        else:
            overrides[event.path] = event.level
        self.overrides = overrides

    @on(FileList.PinRequested)
    def toggle_pin(self, event: FileList.PinRequested) -> None:
        event.stop()
        self.pinned = self.pinned ^ {event.path}

    def action_step_budget(self, direction: int) -> None:
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

    def action_cycle_format(self) -> None:
        """Switch the pack between Markdown, XML and JSON."""
        self.fmt = next_in_cycle(tuple(Format), self.fmt)
        self.notify(f"Pack format: {self.fmt.value}", timeout=2)

    def action_cycle_encoding(self) -> None:
        """Count tokens with the next tokenizer (re-opens the workspace in a worker)."""
        if self.workspace is None:
            return
        encoding = next_in_cycle(ENCODINGS, self.encoding)
        self.notify(f"Counting tokens with {encoding}…", timeout=2)
        self.switch_encoding(self.workspace, encoding)

    @work(thread=True, exclusive=True, group="open", exit_on_error=False)
    def switch_encoding(self, workspace: jobs.WorkspaceAPI, encoding: str) -> None:
        """Re-open the workspace with another tokenizer."""
        started = time.perf_counter()
        with self.gate.reading():
            switched = workspace.with_encoding(encoding)
        self.post_message(WorkspaceOpened(switched, time.perf_counter() - started))

    def watch_encoding(self) -> None:
        self.save_state()

    def action_toggle_changes(self) -> None:
        """Pack the work tree's changes, or stop packing them."""
        self._announce_changes = not self.changed
        self.changed = not self.changed
        if not self.changed:
            self.notify("Changes no longer packed.", title="Changes", timeout=2)

    # ------------------------------------------------------------------ changes

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
        changes, notice = jobs.working_changes(root)
        self.post_message(ChangesRead(changes, notice))

    @on(ChangesRead)
    def show_changes(self, message: ChangesRead) -> None:
        if not self.changed:
            return  # toggled off while git was asked
        announce, self._announce_changes = self._announce_changes, False
        if announce and message.changes is None:
            self.notify(message.notice, title="Changes", timeout=4)
        elif announce and message.changes is not None:
            count = len(message.changes.files)
            self.notify(
                f"Packing {count} changed file{'' if count == 1 else 's'} and their diff "
                f"against {message.changes.base}.",
                title="Changes",
                timeout=3,
            )
        self.changes = message.changes
        files = message.changes.files if message.changes is not None else ()
        self.query_one(FileList).changed = {f.path: f.status.value for f in files}
        self.request_rank()

    # ------------------------------------------------------------------ focus

    def action_toggle_focus(self) -> None:
        """Move focus between the question and the list."""
        query_bar = self.query_one(QueryBar)
        if query_bar.has_focus:
            self.query_one(FileList).focus()
        else:
            query_bar.focus()

    def action_focus_query(self) -> None:
        """Back to the question."""
        self.query_one(QueryBar).focus()

    def action_move_cursor(self, step: int) -> None:
        """Move the list's cursor while the question has focus."""
        file_list = self.query_one(FileList)
        file_list.action_cursor_down() if step > 0 else file_list.action_cursor_up()

    # ------------------------------------------------------------------ output

    def action_copy_pack(self) -> None:
        """Copy the pack: clipboard, else terminal, and always the last-pack file."""
        if self.workspace is None or self.answer is None:
            self.notify("Nothing to copy yet.", severity="warning")
            return
        self.save_state()
        current = self._current_pack()
        self.run_copy(self.workspace, self.answer, self._choices(), current, self._terminal_copy)

    def _terminal_copy(self, text: str) -> None:
        self.app.call_from_thread(self.app.copy_to_clipboard, text)

    def _current_pack(self) -> tuple[Plan, Rendered] | None:
        if self.packed and self.packed[0] == self._generation and self.packed[2].fmt is self.fmt:
            return self.packed[1], self.packed[2]
        return None

    @work(thread=True, exclusive=True, group="copy", exit_on_error=False)
    def run_copy(
        self,
        workspace: jobs.WorkspaceAPI,
        answer: Answer,
        choices: jobs.Choices,
        current: tuple[Plan, Rendered] | None,
        terminal: object,
    ) -> None:
        """Render (unless current and no packed file changed on disk) and deliver the pack."""
        rendered = jobs.fresh_pack(workspace, self.gate, answer.query, choices, current)
        result = clipboard.deliver(
            rendered.text,
            FORMAT_EXTENSIONS[rendered.fmt],
            backend=self.services.backend,
            terminal=terminal,  # type: ignore[arg-type]
            cache_dir=self.services.cache_dir,
        )
        self.post_message(PackDelivered(result, rendered))

    @on(PackDelivered)
    def report_copy(self, message: PackDelivered) -> None:
        result, rendered = message.result, message.rendered
        text = clipboard.describe(result, rendered.tokens, rendered.files)
        if rendered.secrets:
            text += "\n" + as_sentences(secret_notices(rendered))
        failed = result.way is clipboard.CopyWay.FILE
        warn = failed or (bool(rendered.secrets) and not rendered.redacted)
        self.notify(text, title="Copy", severity="warning" if warn else "information")

    def action_save_pack(self) -> None:
        """Ask for a file name and write the pack there."""
        if self.workspace is None or self.answer is None:
            self.notify("Nothing to save yet.", severity="warning")
            return
        workspace, answer, choices = self.workspace, self.answer, self._choices()
        current = self._current_pack()

        def save(answer_text: str | None) -> None:
            if answer_text:
                target = Path(answer_text).expanduser()
                self.run_save(workspace, answer, choices, current, Path.cwd() / target)

        default = f"./ctxtui-pack.{FORMAT_EXTENSIONS[self.fmt]}"
        self.app.push_screen(
            PromptScreen("Save the pack to", default, hint=f"relative to {Path.cwd()}"), save
        )

    @work(thread=True, exclusive=True, group="save", exit_on_error=False)
    def run_save(
        self,
        workspace: jobs.WorkspaceAPI,
        answer: Answer,
        choices: jobs.Choices,
        current: tuple[Plan, Rendered] | None,
        target: Path,
    ) -> None:
        """Render (unless current and no packed file changed on disk) and write the pack."""
        rendered = jobs.fresh_pack(workspace, self.gate, answer.query, choices, current)
        write_atomic(target, rendered.text)
        self.post_message(PackSaved(target, rendered))

    @on(PackSaved)
    def report_save(self, message: PackSaved) -> None:
        tokens, files = message.rendered.tokens, message.rendered.files
        text = f"Saved {tokens:,} tokens, {files} files to {message.path}"
        if message.rendered.secrets:
            text += "\n" + as_sentences(secret_notices(message.rendered))
        self.notify(text, title="Save")

    def action_refresh_index(self) -> None:
        """Look for changed files now and rank again."""
        if self.workspace is not None:
            self.run_refresh(self.workspace)

    @work(thread=True, exclusive=True, group="refresh", exit_on_error=False)
    def run_refresh(self, workspace: jobs.WorkspaceAPI) -> None:
        """Re-index changed files in a thread."""
        self.post_message(WorkspaceRefreshed(jobs.refresh_job(workspace, self.gate)))
