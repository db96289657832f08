"""The bottom layer of the main screen: the repository's saved state and its workspace's life.

It loads the per-repository state into reactives (and saves it on every change), opens the
workspace in a thread worker after the first frame while the question can already be typed,
switches the tokenizer at once for the files on show (the rest are counted in the background,
and a second press is never lost), and looks for files changed on disk once the person has
left the app alone for a moment (or comes back to the terminal), no more often than the check's
own cost allows; full garbage collections wait for the same moment (ctxtui.collector). Ranking
and keys are the layers above.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from textual import on, work
from textual.notifications import SeverityLevel
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState, get_current_worker

from ctxtui import clipboard, collector
from ctxtui.messages import (
    EncodingSwitched,
    IndexProgressed,
    IndexStarted,
    WorkspaceOpened,
    WorkspaceRefreshed,
)
from ctxtui.screens import jobs
from ctxtui.state import ENCODINGS, RepoState, StateStore, clamp_budget
from ctxtui.widgets.index_status import IndexStatus
from ctxtui.widgets.query_bar import printable_question
from ctxtui.workspace import LazyTokenizer
from ctxtui.workspace.answers import gone_paths
from ctxtui.workspace.notices import (
    APP_SECRET_HINT,
    as_sentences,
    dropped_choices_notice,
    index_notices,
)
from ctxtui.workspace.semantic import stage_of
from engine.changes import Changes
from engine.errors import EngineError, GitError
from engine.model import Format, Level, Progress
from engine.saved import same_files

REFRESH_INTERVAL = 1.0
"""Least seconds between two automatic checks for files changed on disk."""
REFRESH_IDLE = 1.0
"""Seconds the person must leave the app alone (no key, level or pin) after an exact pack is
on screen before the automatic check for changed files runs. The check lists and stats every
file (70-90 ms of the interpreter on textual's 1,449 files outside git, several times that
under load): run at every short pause, it landed on the first keys typed after it, the slowest
of the keystroke figures. Coming back to the terminal (focus in) and `r` check at once."""
IDLE_RECHECKS = (5.0, 15.0, 60.0)
"""Seconds after an automatic check that found nothing before the next one, while the person
stays away (the last repeats). A terminal multiplexer such as tmux sends no focus events by
default, so a file saved in the editor beside the app went unseen until a key (review, session
30); a check a minute is 0.15 % of a core on textual (90 ms), and never more than 1/20 of
one (REFRESH_COST_FACTOR); any key drops the wait as it drops the first."""
FIRST_LIST_WAIT = 3.0
"""Most seconds the check of the tree waits for the first list drawn from the saved index (it
would compete with that list for the interpreter); past it, the check goes ahead anyway."""
REFRESH_COST_FACTOR = 20
"""An automatic check waits at least this many times what the last one took, so that a slow
tree (a large folder outside git, a loaded machine) is never checked most of the time."""


@dataclass(frozen=True, slots=True)
class Services:
    """What the app hands the screen: how to open the workspace and where things go."""

    root: Path
    factory: jobs.WorkspaceFactory
    store: StateStore
    backend: clipboard.ClipboardBackend | None
    cache_dir: Path | None = None
    notices: tuple[str, ...] = ()
    """Problems found in the settings files, shown once the screen is up."""
    line_numbers: bool = False
    """Number the lines of packed files (a setting)."""
    redact: bool = True
    """Replace the secrets found in a pack with markers (a setting; off is said loudly)."""
    saved: jobs.SavedOpener | None = None
    """Opens the saved index alone, for a first list before the tree is checked; None to
    wait for `factory`."""


class IndexAbandoned(Exception):
    """The app closed while the index was being built: the open gives up at its next step."""


class WorkspaceHost(Screen[None]):
    """The saved state and the open workspace; the layers above rank and take keys."""

    query_text: var[str] = var("")
    """The question as typed."""
    budget: reactive[int] = reactive(8_000, init=False)
    """Token budget of the pack (clamped)."""
    fmt: reactive[Format] = reactive(Format.MARKDOWN, init=False)
    """Format of the copied pack."""
    encoding: reactive[str] = reactive("o200k_base", init=False)
    """Tokenizer encoding asked for (the workspace follows it, at once or shortly)."""
    pinned: var[frozenset[str]] = var(frozenset, init=False)
    """Pinned paths (set with the levels by `set_choices`)."""
    overrides: var[Mapping[str, Level]] = var(dict, init=False)
    """Levels the user chose per file (set with the pins by `set_choices`)."""
    history: var[tuple[str, ...]] = var(tuple, init=False)
    """Earlier questions of this repository, newest first."""
    ready: reactive[bool] = reactive(False)
    """The workspace is open (perhaps the saved index, the tree not yet checked)."""
    checked: var[bool] = var(False)
    """The full open is in: the tree was listed and compared with the saved index."""
    changed: reactive[bool] = reactive(False, init=False)
    """The work tree's changes are packed: changed files pinned, their diff a section."""

    def __init__(self, services: Services) -> None:
        super().__init__()
        self.services = services
        self.workspace: jobs.WorkspaceAPI | None = None
        """The open workspace; None until the first index is ready."""
        self.gate = jobs.ReadWriteGate()
        self._complete: dict[str, jobs.WorkspaceAPI] = {}
        """Fully counted workspaces by encoding, so switching back is instant."""
        self._tokenizers: dict[str, LazyTokenizer] = {}
        """Tokenizers of the other encodings, loaded ahead once the typing pauses."""
        self._full_count_due: str | None = None
        """The encoding whose files on show are counted, the rest not yet (see
        count_everything_now)."""
        self._next_refresh = time.monotonic() + REFRESH_INTERVAL
        self._refresh_timer: Timer | None = None
        self._idle_rechecks = 0
        """Automatic checks that found nothing since the person last did something."""
        self.open_error = ""
        """Why the workspace could not be opened ("" while it opens or once it is open)."""
        self.changes: Changes | None = None
        """The changes read while `changed` is on; None when off or there are none."""
        self._thresholds: tuple[int, int, int] | None = None
        """The collector's thresholds before the screen held full collections back."""
        self.first_list_shown = threading.Event()
        """Set once a first ranked list is on screen (the layer above sets it)."""
        state, self._state_notice = services.store.load()
        self.saved_place = (state.cursor, state.focus)
        """The file highlighted and where the keys went when the app last closed: the layer
        above puts them back with the first list (they were lost at every reopen)."""
        self.told_notes = state.notes
        """The planner's notes last shown (the layer above shows a pack's notes when they
        differ): kept across a reopen, where the same note came back every time."""
        self.set_reactive(WorkspaceHost.query_text, printable_question(state.query))
        self.set_reactive(WorkspaceHost.budget, state.budget)
        self.set_reactive(WorkspaceHost.fmt, state.fmt)
        self.set_reactive(WorkspaceHost.encoding, state.encoding)
        self.set_reactive(WorkspaceHost.pinned, state.pinned)
        self.set_reactive(WorkspaceHost.overrides, dict(state.overrides))
        self.set_reactive(WorkspaceHost.history, state.history)
        self.set_reactive(WorkspaceHost.changed, state.changed)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Notify, not reading the message as markup unless asked: messages here carry paths,
        questions and errors, and a name like `x[/y].py` read as markup stops the app."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def request_rank(self) -> None:
        """Ask for a new ranking of the current question and choices (the layer above)."""

    def shown_paths(self) -> tuple[str, ...]:
        """Files on show, counted first when the encoding changes (the layer above)."""
        return ()

    def request_changes(self) -> None:
        """Read the work tree's changes again when they are packed (the layer above)."""

    def place(self) -> tuple[str, str]:
        """The highlighted file and where the keys go, for the next open (the layer above)."""
        return self.saved_place

    # ------------------------------------------------------------------ state

    def validate_budget(self, budget: int) -> int:
        return clamp_budget(budget)

    def save_state(self) -> None:
        """Write pins, levels, budget, format, encoding, questions and the place in the list
        for the next start."""
        cursor, focus = self.place()
        state = RepoState(
            self.pinned,
            dict(self.overrides),
            self.budget,
            self.fmt,
            self.encoding,
            self.query_text,
            changed=self.changed,
            history=self.history,
            cursor=cursor,
            focus=focus,
            notes=self.told_notes,
        )
        try:
            self.services.store.save(state)
        except OSError as error:
            self.notify(f"Could not save the state: {error}", severity="error")

    def _choices(self) -> jobs.Choices:
        return jobs.Choices(
            self.pinned,
            dict(self.overrides),
            self.budget,
            self.fmt,
            changes=self.changes if self.changed else None,
            line_numbers=self.services.line_numbers,
            redact=self.services.redact,
        )

    # ------------------------------------------------------------------ opening

    def open_first(self) -> None:
        """Open the workspace (after the first frame: the import would compete with it)."""
        if self._state_notice:
            self.notify(self._state_notice, title="Saved state", severity="warning", timeout=10)
        for problem in self.services.notices:
            self.notify(problem, title="Settings", severity="warning", timeout=10)
        self.watch(self.app, "app_focus", self.look_on_focus_in, init=False)
        self._thresholds = collector.hold_full_collections()  # see when_idle
        # collections paused since the start resume with the first list (the layer above),
        # or after the longest wait for one: a first index, an empty folder, an error
        self.set_timer(FIRST_LIST_WAIT, collector.started)
        self.call_after_refresh(self.open_workspace, self.encoding)

    @work(thread=True, exclusive=True, group="open", exit_on_error=False)
    def open_workspace(self, encoding: str) -> None:
        """Index the repository (or load it from the cache) and hand it over.

        With a saved index, that comes first as it was saved (tens of ms), and the tree is
        checked once its list is on screen: a warm start shows a ranking without waiting for
        the listing of every file. What the check finds replaces it.

        The other encodings' tokenizers load here too, while the saved index's list is on
        show, before the checked workspace is handed over. Building one holds the interpreter
        in one piece for 70-300 ms (tiktoken's constructor keeps the GIL): loaded later, at
        the first pause, it froze the keys typed just after it.
        """
        started = time.perf_counter()
        root, options = self.services.root, {}
        if self.services.saved is not None:
            tokenizer = self._tokenizer_for(encoding)  # one load for both workspaces
            saved = self.services.saved(root, encoding=encoding, tokenizer=tokenizer)
            if saved is not None:
                seconds = time.perf_counter() - started
                self.post_message(WorkspaceOpened(saved, seconds, saved=True))
                self.first_list_shown.wait(FIRST_LIST_WAIT)
                options["tokenizer"] = tokenizer
        if "tokenizer" not in options:  # nothing on show yet: the status bar moves meanwhile
            self.post_message(IndexStarted())
        report = partial(self._report_progress, get_current_worker())
        try:
            workspace = jobs.open_workspace(
                self.services.factory, root, encoding, report, **options
            )
        except IndexAbandoned:
            return  # the app is closing: the next open indexes again
        if "tokenizer" in options:  # a list is on show: the check's result can wait for them
            # a table that cannot load is reported by the `e` that needs it, not here
            with contextlib.suppress(EngineError):
                self._load_tokenizers(tuple(self._other_tokenizers(encoding)))
        self.post_message(WorkspaceOpened(workspace, time.perf_counter() - started))

    def _report_progress(self, worker: Worker[None], progress: Progress) -> None:
        """Show the index's progress; once the app closes (Textual cancels the screen's
        workers, the open's among them), stop the index instead: quitting waited for the whole
        first index (81 s on the 16k tree) on a blank terminal, as Python joins the worker's
        thread at exit."""
        if worker.is_cancelled:
            raise IndexAbandoned  # the engine stops its worker processes as it unwinds
        self.post_message(IndexProgressed(progress))

    @on(IndexProgressed)
    def show_index_progress(self, message: IndexProgressed) -> None:
        self.query_one(IndexStatus).progress = message.progress

    @on(IndexStarted)
    def show_indexing(self, message: IndexStarted) -> None:
        self.query_one(IndexStatus).move_bar()
        self.show_held_back()  # no first list soon: the whole screen now

    def show_held_back(self) -> None:
        """Show what the layer above held back for a first list from the saved index."""

    @on(WorkspaceOpened)
    def start_ranking(self, message: WorkspaceOpened) -> None:
        workspace = message.workspace
        if message.saved:  # a first list now; notices and background work with the full open
            self.adopt_workspace(workspace)
            self.ready = True
            return
        self.checked = True
        self._complete[workspace.encoding] = workspace
        shown = self.workspace
        # The tree as saved (the usual warm start): the answer on screen stands, so it is not
        # ranked, planned and packed a second time (tens of ms of the interpreter on 16,000
        # files, competing with the first keys typed). Not with a semantic stage: the saved
        # workspace has none, and the full one fuses what it has cached.
        as_saved = (
            shown is not None
            and stage_of(workspace) is None
            and same_files(shown.index, workspace.index)
        )
        # the vanished files' choices go before the ranking below, which then leaves them out
        dropped = self.drop_gone_choices(workspace, rank=False)
        self.adopt_workspace(workspace, rerank=dropped or not as_saved)
        self.ready = True
        collector.settle()
        if workspace.encoding != self.encoding:  # `e` was pressed while it opened
            self.switch_encoding(workspace, self.encoding)
        if not workspace.index.files:
            self.notify(f"No files to index in {self.services.root}", severity="warning")
        for line in index_notices(workspace.report, secret_hint=APP_SECRET_HINT):
            self.notify(as_sentences([line]), title="Index", timeout=10)
        if not self.services.redact:
            self.notify(
                "Redaction is off (a setting): secrets found in a pack are left in it.",
                title="Secrets",
                severity="warning",
                timeout=10,
            )
        self.request_changes()
        self.workspace_opened(workspace)

    def drop_gone_choices(self, workspace: jobs.WorkspaceAPI, *, rank: bool = True) -> bool:
        """Unpin, and forget the level of, the files the checked tree no longer holds
        (deleted, renamed, now skipped), and say so once; whether any went. With `rank`
        off the caller ranks next (an open, a refresh): one ranking, not one more.

        They were kept, saved at every change and told of at every open until X cleared
        every pin with them (review, session 33). A pin is a choice about a file as it was:
        one that comes back (a branch switched back, an undone delete) is pinned again by
        hand, p or the finder, rather than behind the person's back. No undo entry: `u`
        would bring back a pin the next refresh drops again."""
        pins = gone_paths(workspace.index, self.pinned)
        levels = gone_paths(workspace.index, self.overrides)
        if not pins and not levels:
            return False
        text = as_sentences([dropped_choices_notice(pins, levels)])
        self.notify(text, title="Choices", timeout=10)
        overrides = {p: v for p, v in self.overrides.items() if p not in levels}
        self.set_choices(self.pinned - set(pins), overrides, rank=rank)
        return True

    def set_choices(
        self, pinned: frozenset[str], overrides: Mapping[str, Level], *, rank: bool = True
    ) -> None:
        """Set pins and levels together, then save the state and rank once (unless `rank`
        is off). Assigned one after the other, each reactive's watcher saved and ranked:
        dropping a vanished file's pin and level saved twice and ranked twice, and a refresh
        that found it ranked a third time (session 33)."""
        overrides = dict(overrides)
        if pinned == self.pinned and overrides == self.overrides:
            return
        self.set_reactive(WorkspaceHost.pinned, frozenset(pinned))
        self.set_reactive(WorkspaceHost.overrides, overrides)
        self.save_state()
        if rank:
            self.request_rank()

    def workspace_opened(self, workspace: jobs.WorkspaceAPI) -> None:
        """The first open is done (the layer above starts background work)."""

    def adopt_workspace(self, workspace: jobs.WorkspaceAPI, *, rerank: bool = True) -> None:
        """Rank with this workspace from now on (at once unless `rerank` is off: it indexes
        the same files as the one the answer on screen came from)."""
        self.workspace = workspace
        if rerank:
            self.request_rank()

    # ------------------------------------------------------------------ encoding

    def watch_encoding(self) -> None:
        self.save_state()

    def switch_encoding(self, workspace: jobs.WorkspaceAPI, encoding: str) -> None:
        """Count in `encoding`: at once from a workspace already counted, else in a worker."""
        self.postpone_refresh()  # a look at the disk waits for the next pause, not this frame
        self._full_count_due = None
        complete = self._complete.get(encoding)
        if complete is not None:
            self.workers.cancel_group(self, "encoding")
            self.adopt_workspace(complete)
            self.notify(f"Token counts in {encoding}", timeout=2)
            return
        tokenizer = self._tokenizer_for(encoding)
        self.run_encoding_switch(workspace, encoding, self.shown_paths(), tokenizer)

    def count_everything_now(self) -> None:
        """The files on show are counted and their exact meter is on screen: count every
        other file in the new encoding now (called a moment after a pack has been shown).
        Started any earlier, the full count (a re-open in the new encoding, parsing in worker
        processes on a first switch) took the cores from the ranking and pack the person
        waits for."""
        encoding, self._full_count_due = self._full_count_due, None
        workspace = self.workspace
        if encoding is not None and workspace is not None and workspace.encoding == encoding:
            self.run_full_count(workspace, encoding)

    def _tokenizer_for(self, encoding: str) -> LazyTokenizer:
        return self._tokenizers.setdefault(encoding, LazyTokenizer(encoding))

    def _other_tokenizers(self, encoding: str) -> list[LazyTokenizer]:
        return [self._tokenizer_for(e) for e in ENCODINGS if e != encoding]

    def load_other_encodings(self) -> None:
        """Load the other encodings' tokenizers in the background (0.4-1 s each, ~35 MB), so
        that `e` counts the files on show at once; called once the typing has paused, for a
        first open without a saved index (with one, the open loads them)."""
        others = [t for t in self._other_tokenizers(self.encoding) if not t.loaded]
        if others:
            self.run_load_tokenizers(tuple(others))

    @work(thread=True, group="tokenizers", exit_on_error=False)
    def run_load_tokenizers(self, tokenizers: tuple[LazyTokenizer, ...]) -> None:
        """Load tokenizers (a switch that needs one meanwhile waits for it, not twice)."""
        self._load_tokenizers(tokenizers)

    @staticmethod
    def _load_tokenizers(tokenizers: tuple[LazyTokenizer, ...]) -> None:
        for tokenizer in tokenizers:
            tokenizer.get()
        collector.settle()  # the tables are here to stay

    @work(
        thread=True, exclusive=True, group="encoding", exit_on_error=False, description="encoding"
    )
    def run_encoding_switch(
        self,
        workspace: jobs.WorkspaceAPI,
        encoding: str,
        shown: tuple[str, ...],
        tokenizer: LazyTokenizer,
    ) -> None:
        """Count the files on show in the new encoding (the rest: count_everything_now)."""
        with self.gate.reading():
            quick = workspace.recounted(encoding, shown, tokenizer)
        self.post_message(EncodingSwitched(quick, complete=False))

    @work(
        thread=True, exclusive=True, group="encoding", exit_on_error=False, description="count all"
    )
    def run_full_count(self, workspace: jobs.WorkspaceAPI, encoding: str) -> None:
        """Index everything in the new encoding (kept even if the person switched away
        meanwhile: switching back is then instant)."""
        self.post_message(EncodingSwitched(workspace.with_encoding(encoding), complete=True))

    @on(EncodingSwitched)
    def follow_encoding(self, message: EncodingSwitched) -> None:
        workspace = message.workspace
        if message.complete:
            self._complete[workspace.encoding] = workspace
        collector.settle()
        if workspace.encoding != self.encoding or self.workspace is None:
            return  # pressed again meanwhile: another switch is on its way
        self.adopt_workspace(workspace)
        if not message.complete:
            self._full_count_due = workspace.encoding  # once its exact meter is on screen
        if message.complete:
            self.notify(f"Every token count is now in {workspace.encoding}", timeout=3)

    # ------------------------------------------------------------------ refresh

    def on_unmount(self) -> None:
        if self._thresholds is not None:
            collector.release_full_collections(self._thresholds)

    def refresh_when_idle(self) -> None:
        """Once the person has been idle for REFRESH_IDLE, collect garbage and look for files
        changed on disk (any new ranking request drops the wait: see postpone_refresh)."""
        self.postpone_refresh()
        self._idle_rechecks = 0
        self._refresh_timer = self.set_timer(REFRESH_IDLE, self.when_idle)

    def when_idle(self) -> None:
        """The work that must not meet a keystroke: a full garbage collection (tens of ms
        holding the interpreter) and the check for changed files."""
        self._refresh_timer = None
        collector.collect_now()
        self.maybe_refresh()

    def look_on_focus_in(self, focused: bool) -> None:
        """Back in the terminal (perhaps from the editor that changed files): look now."""
        if focused:
            self.maybe_refresh()

    def maybe_refresh(self) -> None:
        """Look for files changed on disk now that the typing paused; if a check ran too
        recently for its cost, look as soon as it is allowed (unless typing resumes first)."""
        self.postpone_refresh()
        if self.workspace is None or not self.checked:
            return  # the full open is checking the tree already
        wait = self._next_refresh - time.monotonic()
        if wait > 0:
            if wait != float("inf"):  # inf: a check is running
                self._refresh_timer = self.set_timer(wait, self.maybe_refresh)
            return
        self._next_refresh = float("inf")  # until this check reports back
        self.run_refresh(self.workspace, automatic=True)

    def postpone_refresh(self) -> None:
        """Drop a check waiting for its turn: the person is typing again."""
        if self._refresh_timer is not None:
            self._refresh_timer.stop()
            self._refresh_timer = None

    @work(thread=True, exclusive=True, group="refresh", exit_on_error=False, description="refresh")
    def run_refresh(self, workspace: jobs.WorkspaceAPI, *, automatic: bool = False) -> None:
        """Re-index changed files in a thread, beside the readers."""
        started = time.monotonic()
        changed = jobs.refresh_job(workspace, self.gate)
        cost = time.monotonic() - started
        self.post_message(WorkspaceRefreshed(changed, automatic=automatic, seconds=cost))

    @on(WorkspaceRefreshed)
    def report_refresh(self, message: WorkspaceRefreshed) -> None:
        wait = max(REFRESH_INTERVAL, REFRESH_COST_FACTOR * message.seconds)
        self._next_refresh = time.monotonic() + wait
        if message.changed:
            collector.settle(collect=True)  # off the typing path: an idle check, focus-in or r
            self.notify("Re-indexed the files changed on disk.", timeout=2)
            self.request_changes()
            if self.workspace is not None:  # ranked below, once
                self.drop_gone_choices(self.workspace, rank=False)
        elif not message.automatic:
            self.notify("No changes on disk.", timeout=2)
        if message.changed or not message.automatic:
            self.request_rank()
        elif self._refresh_timer is None:  # nothing found, nothing new asked: look again later
            delay = IDLE_RECHECKS[min(self._idle_rechecks, len(IDLE_RECHECKS) - 1)]
            self._idle_rechecks += 1
            self._refresh_timer = self.set_timer(max(delay, wait), self.maybe_refresh)

    # ------------------------------------------------------------------ errors

    @on(Worker.StateChanged)
    def report_worker_error(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state is not WorkerState.ERROR or worker.is_cancelled:
            return
        text = jobs.describe_error(worker.error)
        if worker.group == "open" and self.workspace is None:
            self.open_error = f"Could not open {self.services.root}: {text}"
            self.query_one(IndexStatus).message = self.open_error
            self.show_held_back()
        if worker.group == "refresh":
            self._next_refresh = time.monotonic() + REFRESH_INTERVAL
        doing = _DOING.get(worker.group or "", worker.group)
        if isinstance(worker.error, GitError) and self.changes_unreadable(
            f"Could not {doing}", text
        ):
            return
        self.notify(text, title=f"Could not {doing}", severity="error", timeout=8)

    def changes_unreadable(self, title: str, reason: str) -> bool:
        """git failed to read the packed changes (a copy or a save read them again): the
        layer above turns their packing off and says so, in one notice. Whether it did."""
        return False


_DOING = {
    "open": "open the repository",
    "encoding": "switch the encoding",
    "rank": "rank",
    "pack": "pack",
    "preview": "show the preview",
    "refresh": "look for changes",
    "copy": "copy",
    "save": "save",
    "finder": "find files",
    "changes": "read the changes",
}
"""What each worker group does, for the title of its error notification."""
