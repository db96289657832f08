"""The main screen: moving between the question and the list, finding files, copy and save.

On top of the live ranking and the choices (`ChoicesScreen`): tab moves between the question
and the list, ↑ at the top of the list recalls earlier questions (ctrl+r lists them), ctrl+f
finds any indexed file, ctrl+d / ctrl+u scroll the preview, and copy and save render the pack
(or reuse the current one) in a worker and say in a notification where it went.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import ClassVar

from textual import events, on, work
from textual.binding import Binding, BindingType
from textual.command import CommandListItem, SimpleCommand, SimpleProvider

from ctxtui import clipboard
from ctxtui.messages import Answer, PackDelivered, PackSaved, WorkspaceRefreshed
from ctxtui.screens import jobs
from ctxtui.screens.choices import ChoicesScreen
from ctxtui.screens.finder import FinderHost, FinderScreen
from ctxtui.screens.footer_keys import shown_when_wide
from ctxtui.screens.palette import Palette
from ctxtui.screens.prompt import PromptScreen
from ctxtui.screens.ranking import Services
from ctxtui.state import FORMAT_EXTENSIONS, remember, write_output
from ctxtui.widgets.file_list import FileList
from ctxtui.widgets.preview import Preview
from ctxtui.widgets.query_bar import QueryBar, printable_question
from ctxtui.workspace.notices import as_sentences, secret_notices
from engine.model import Level, Plan, Rendered
from engine.shown_path import shown_line

__all__ = ["MainScreen", "Services"]


class MainScreen(ChoicesScreen):
    """Ask, rank, choose levels and pins, watch the budget, copy."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Priority: handled as the key arrives, before the keys queued behind it go to the
        # widget that has focus now (`tab o` must set a level, not type an "o"); check_action
        # lets each through only where it applies, so a `/` in the question is typed.
        Binding(
            "tab",
            "focus_list",
            "Files",
            tooltip="Go to the ranked files",
            id="focus-list",
            priority=True,
        ),
        Binding(
            "tab",
            "focus_query",
            "Ask",
            tooltip="Back to the question",
            id="focus-query",
            priority=True,
        ),
        Binding("down", "move_cursor(1)", "Down the list", show=False, id="list-down"),
        Binding(
            "up",
            "move_cursor(-1)",
            "Up the list",
            show=False,
            tooltip="Up the list; at its top, the earlier question",
            id="list-up",
        ),
        Binding(
            "escape,slash",
            "focus_query",
            "Ask",
            show=False,
            tooltip="Back to the question",
            id="focus-query",
            priority=True,
        ),
        Binding(
            "ctrl+r",
            "pick_question",
            "Earlier",
            show=False,
            tooltip="Pick one of this repository's earlier questions",
            id="pick-question",
        ),
        *shown_when_wide(
            "ctrl+f",
            "find_file",
            "Find",
            tooltip="Find any indexed file by name or glob; pin it or set its level",
            id="find-file",
        ),
        Binding("c", "copy_pack", "Copy", show=False, tooltip="Copy the pack", id="copy-pack"),
        Binding("ctrl+y", "copy_pack", "Copy", tooltip="Copy the pack", id="copy-pack"),
        Binding("ctrl+s", "save_pack", "Save", show=False, tooltip="Save the pack", id="save-pack"),
        Binding(
            "ctrl+d",
            "scroll_preview(1)",
            "Preview down",
            show=False,
            tooltip="Scroll the preview down half a page (from the list)",
            id="preview-down",
        ),
        Binding(
            "ctrl+u",
            "scroll_preview(-1)",
            "Preview up",
            show=False,
            tooltip="Scroll the preview up half a page (from the list)",
            id="preview-up",
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

    def __init__(self, services: Services) -> None:
        super().__init__(services)
        self._output_waiting: list[Callable[[], None]] = []
        """Copy and save (ctrl+y, ctrl+s) pressed before the question's ranked list, in the
        order pressed: each runs once the list is shown (`answer_shown`)."""
        self._save_asked: str | None = None
        """The question as typed when ctrl+s was last pressed (see `_save_pack`)."""
        self._handed_over: set[events.Key] = set()
        """Keys the app handed this screen itself, nothing having focus as they arrived
        (typed before the first frame): `on_key` runs each in its turn."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """tab says where it goes; the letter keys hide while the question has focus. With
        nothing focused yet (keys typed before the first frame), tab, escape and / are not
        run as they arrive but in their turn, by `on_key` (escape and / there only from the
        list: in the question, escape does nothing and / is typed)."""
        if action in ("focus_list", "focus_query") and self.focused is None:
            return False
        in_question = isinstance(self.focused, QueryBar)
        if action == "focus_list":
            return in_question
        if action == "focus_query":
            return not in_question
        return super().check_action(action, parameters)

    def _forward_event(self, event: events.Event) -> None:
        """The app hands a key to the screen itself only when nothing has focus (Textual 8:
        to the focused widget otherwise): note it for `on_key`."""
        if isinstance(event, events.Key):
            self._handed_over.add(event)
        super()._forward_event(event)

    async def on_key(self, event: events.Key) -> None:
        """Keys typed before the first frame, each in its turn.

        A tab goes to the list after the letters typed before it (they are the question's)
        and before the keys after it (the list's: `p` pins rank 1 once the rows come). Run as
        it arrived, as a priority key is, it went before those letters, found nothing focused
        and focused the question: `why tab p` gave the question "pwhy" (review, session 33).

        The keys after it, while the list has focus, run here too, each as it comes: escape
        and / back to the question, the list's keys by their binding. escape was dropped
        (its priority binding found nothing focused as it arrived), and the list's keys,
        whose bindings the app looks up once a key has gone up to it, ran after an escape
        handled here: `session tab p escape x` must pin rank 1, then type the x. So do the
        question's own editing keys while it has focus (the letters: RankingScreen)."""
        handed_over = event in self._handed_over
        self._handed_over.discard(event)
        if event.key == "tab":  # only an early one gets here: the priority binding takes the rest
            event.stop()
            event.prevent_default()  # the layers' own on_key (the question's letters) too
            if isinstance(self.focused, FileList):
                self.action_focus_query()
            else:
                self.action_focus_list()
        elif handed_over and isinstance(self.focused, FileList):
            event.stop()
            event.prevent_default()
            if event.key in ("escape", "slash"):  # their binding, as from the list
                self.action_focus_query()
            elif (active := self.active_bindings.get(event.key)) and active.enabled:
                await self.app.run_action(active.binding.action, active.node)
        elif (
            # the question's own editing keys (backspace, the arrows...) now too: looked up
            # by the app after a tab handled here, `sessionx backspace tab` kept the x
            handed_over
            and isinstance(self.focused, QueryBar)
            and not event.is_printable
            and await self.focused.run_own_binding(event.key)
        ):
            event.stop()
            event.prevent_default()

    # ------------------------------------------------------------------ focus and questions

    def action_focus_list(self) -> None:
        """From the question to the list (the question joins the history). Focus moves now,
        not on the next idle as `Widget.focus` would: the next key is already on its way."""
        self.remember_question()
        self.set_focus(self.query_one(FileList))

    def action_focus_query(self) -> None:
        """Back to the question, cursor at its end (at once, as `action_focus_list`)."""
        self.set_focus(self.query_one(QueryBar))

    @on(QueryBar.Submitted, "#query-bar")
    def submit_question(self, event: QueryBar.Submitted) -> None:
        event.stop()
        self.action_focus_list()

    def remember_question(self) -> None:
        """Put the question on show first in this repository's history."""
        history = remember(self.history, self.query_text)
        if history != self.history:
            self.history = history
            self.save_state()

    def action_move_cursor(self, step: int) -> None:
        """From the question: move the list's cursor; ↑ at its top recalls earlier questions."""
        file_list = self.query_one(FileList)
        query_bar = self.query_one(QueryBar)
        if step < 0 and (not file_list.highlighted or query_bar.recalling):
            query_bar.recall(1)
        elif step > 0 and query_bar.recalling:
            query_bar.recall(-1)
        elif step > 0:
            file_list.action_cursor_down()
        else:
            file_list.action_cursor_up()

    def action_pick_question(self) -> None:
        """Pick an earlier question of this repository from a searchable list."""
        if not self.history:
            self.notify("No earlier questions yet: they are kept as you ask them.", timeout=3)
            return
        questions = dict.fromkeys(q for q in map(printable_question, self.history) if q.strip())
        commands: list[CommandListItem] = [
            SimpleCommand(q, partial(self.use_question, q)) for q in questions
        ]
        # as App.search_commands, with the palette that answers a double enter once; an
        # instance where a Provider class is typed: SimpleProvider returns itself when called
        provider = SimpleProvider(self, commands)
        placeholder = "Earlier questions of this repository…"
        palette = Palette(providers=[provider], placeholder=placeholder)  # type: ignore[list-item]
        self.app.push_screen(palette)

    def use_question(self, question: str) -> None:
        """Show an earlier question in the box, as an undoable edit."""
        query_bar = self.query_one(QueryBar)
        query_bar.replace_text(question)
        query_bar.focus()

    # ------------------------------------------------------------------ finder and preview

    def action_find_file(self, _where: str = "") -> None:
        """Find any indexed file by name or glob, then pin it or set its level."""
        if self.workspace is None:
            self.notify("The index is not ready yet.", severity="warning", timeout=3)
            return
        ranked = {f.path: n for n, f in enumerate(self.answer.ranking.files)} if self.answer else {}
        host = FinderHost(
            paths=tuple(f.path for f in self.workspace.index.files),
            ranked=ranked,
            state_of=self.state_of,
            apply=self.apply_from_finder,
        )
        self.app.push_screen(FinderScreen(host))

    def state_of(self, path: str) -> tuple[bool, Level | None]:
        """Whether a file is pinned and the level chosen for it."""
        return path in self.pinned, self.overrides.get(path)

    def apply_from_finder(self, paths: tuple[str, ...], what: str) -> None:
        """Pin or level files the finder picked, and say what happened."""
        self.apply_to_files(paths, what)
        one = shown_line(paths[0], redact=self.services.redact) if paths else ""
        files = one if len(paths) == 1 else f"{len(paths):,} files"
        if what == "pin":
            done = "Pinned" if set(paths) <= self.pinned else "Unpinned"
            self.notify(f"{done} {files}.", timeout=3)
        else:
            self.notify(f"{files}: {what}.", timeout=3)

    def action_scroll_preview(self, direction: int) -> None:
        """Scroll the preview half a page."""
        preview = self.query_one(Preview)
        preview.scroll_relative(y=direction * max(1, preview.size.height // 2), animate=False)

    # ------------------------------------------------------------------ output

    def action_copy_pack(self) -> None:
        """Copy the pack: clipboard, else terminal, and always the last-pack file (with the
        levels and pins asked for before: see `FileList.after_requests`)."""
        self.file_list().after_requests(self._copy_pack)

    def _copy_pack(self) -> None:
        if not self._ranked_for(self._copy_pack, "copy", "copied once they are"):
            return
        assert self.workspace is not None and self.answer is not None
        self.remember_question()
        current = self._current_pack()
        self.run_copy(self.workspace, self.answer, self._choices(), current, self._terminal_copy)

    def _ranked_for(self, output: Callable[[], None], verb: str, then: str) -> bool:
        """Whether the question on show is ranked, for `output` (copy or save) to run now.
        If not (the first index, a key just typed), `output` waits for its list, saying so
        once, "The files are still being ranked: `then`."; the pack of the list on screen,
        perhaps the empty question's, is not the one asked for. ctrl+s said "Nothing to save
        yet." and dropped the save where ctrl+y waited (review, session 33)."""
        if self.workspace is None and self.open_error:
            self.notify(f"Nothing to {verb}. {self.open_error}", severity="warning")
            return False
        answer = self.answer
        if self.workspace is None or answer is None or answer.query != self.query_text:
            if output not in self._output_waiting:
                if answer is None:  # a key's ranking is a blink: unsaid
                    self.notify(f"The files are still being ranked: {then}.", timeout=4)
                self._output_waiting.append(output)
            return False
        if output in self._output_waiting:  # pressed again once ranked: done now, not twice
            self._output_waiting.remove(output)
        return True

    def answer_shown(self) -> None:
        """The question's ranked list is on its way: run the copy and save that waited for it,
        after the list has built its rows and sent the requests of the keys that waited for
        them (`tab p ctrl+y` pins rank 1, then copies)."""
        if self._output_waiting:
            file_list = self.file_list()
            file_list.call_later(file_list.after_requests, self._run_waiting_output)

    def _run_waiting_output(self) -> None:
        """Once, however many lists came meanwhile; one still not ranked waits again."""
        waiting, self._output_waiting = self._output_waiting, []
        for output in waiting:
            output()

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
        rendered, moved = jobs.fresh_pack(workspace, self.gate, answer.query, choices, current)
        if moved:  # the list and the meter follow the tree the copy was made from
            self.post_message(WorkspaceRefreshed(True, automatic=True))
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
        failed = result.way is clipboard.CopyWay.FILE or result.doubtful
        warn = failed or (bool(rendered.secrets) and not rendered.redacted)
        self.notify(text, title="Copy", severity="warning" if warn else "information")

    def action_save_pack(self) -> None:
        """Ask for a file name and write the pack there (with the levels and pins asked for
        before)."""
        self._save_asked = self.query_one(QueryBar).value
        self.file_list().after_requests(self._save_pack)

    def _save_pack(self) -> None:
        then = "the save asks for a file name once they are"
        if not self._ranked_for(self._save_pack, "save", then):
            return
        asked, self._save_asked = self._save_asked, None
        if asked is not None and asked != self.query_one(QueryBar).value:
            # Typed into since the press (the save waited for the list, or for the requests
            # before it): the prompt, opening now, took the rest of a word typed into the
            # question (session 33). The keys stay the question's; the save is asked again.
            self.notify(
                "Not saved: the question changed while the save waited for its list. "
                "Press ctrl+s to save this one.",
                title="Save",
                severity="warning",
                timeout=6,
            )
            return
        assert self.workspace is not None and self.answer is not None
        self.remember_question()
        workspace, answer, choices = self.workspace, self.answer, self._choices()
        current = self._current_pack()

        def save(answer_text: str | None) -> None:
            if answer_text and answer_text.strip():  # a name of spaces, like none, saves nothing
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
        rendered, moved = jobs.fresh_pack(workspace, self.gate, answer.query, choices, current)
        if moved:
            self.post_message(WorkspaceRefreshed(True, automatic=True))
        target.parent.mkdir(parents=True, exist_ok=True)
        write_output(str(target), rendered.text)  # as `pack -o`: a link, a device, a mode kept
        self.post_message(PackSaved(target, rendered))

    @on(PackSaved)
    def report_save(self, message: PackSaved) -> None:
        tokens, files = message.rendered.tokens, message.rendered.files
        text = f"Saved {tokens:,} tokens, {files} file{'' if files == 1 else 's'} to {message.path}"
        if message.rendered.secrets:
            text += "\n" + as_sentences(secret_notices(message.rendered))
        self.notify(text, title="Save")

    def action_refresh_index(self) -> None:
        """Look for changed files now and rank again."""
        if self.workspace is not None:
            self.run_refresh(self.workspace)
