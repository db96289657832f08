"""The live half of the main screen: question, ranked files, preview and meter, kept current.

Every change (a keystroke, a level, a pin, the budget, the format) becomes one rank request with
a new generation number; a thread worker ranks and plans on frozen inputs and posts the answer,
and answers of older generations are dropped. A second worker renders the exact pack for the
meter and the list, a third the preview. Widgets only draw what this screen hands them; the
keys live in `MainScreen`, the subclass. It stays whole past 400 lines because the request,
worker and answer of each of the three renderings (ranking, exact pack, preview) belong
together; splitting them apart would scatter one flow over modules.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.style import Style
from textual.timer import Timer
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

from ctxtui import clipboard
from ctxtui.messages import (
    Answer,
    IndexProgressed,
    PackReady,
    PreviewReady,
    RankingReady,
    WorkspaceOpened,
    WorkspaceRefreshed,
)
from ctxtui.screens import jobs
from ctxtui.screens.semantic import SemanticHook
from ctxtui.state import RepoState, StateStore, clamp_budget
from ctxtui.widgets.budget_meter import BudgetMeter
from ctxtui.widgets.file_list import FileList
from ctxtui.widgets.index_status import IndexStatus
from ctxtui.widgets.preview import Preview, words_to_mark
from ctxtui.widgets.query_bar import QueryBar
from ctxtui.workspace.notices import as_sentences, index_notices, secret_reasons
from engine.changes import Changes
from engine.model import Format, Level, Plan, PlanEntry, Progress, Rendered, one_line

REFRESH_INTERVAL = 1.0
"""Seconds between stat checks for changed files made while ranking."""
PACK_PAUSE = 0.1
"""Seconds without a new ranking before the exact pack is rendered."""
WIDE_FOOTER = 130
"""Below this many columns the footer drops the spaces between its keys (at 120 the list's
keys, `d` and quit and help then still fit)."""
NO_MATCH_PAUSE = 1.5
"""Seconds a question must match nothing before a notification says so."""


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


class RankingScreen(Screen[None], SemanticHook):
    """Question, ranked files, preview and meter, kept current by thread workers."""

    HORIZONTAL_BREAKPOINTS = [  # noqa: RUF012 - Textual declares it a list
        (0, "-cramped"),
        (80, "-narrow"),
        (110, "-wide"),
    ]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (24, "-tall")]  # noqa: RUF012 - Textual declares it a list
    AUTO_FOCUS = "#query-bar"

    query_text: var[str] = var("")
    """The question as typed."""
    budget: reactive[int] = reactive(8_000, init=False)
    """Token budget of the pack (clamped)."""
    fmt: reactive[Format] = reactive(Format.MARKDOWN, init=False)
    """Format of the copied pack."""
    encoding: reactive[str] = reactive("o200k_base", init=False)
    """Tokenizer encoding of every count."""
    pinned: var[frozenset[str]] = var(frozenset, init=False)
    """Pinned paths."""
    overrides: var[Mapping[str, Level]] = var(dict, init=False)
    """Levels the user chose per file."""
    ready: reactive[bool] = reactive(False)
    """The workspace is open."""
    changed: reactive[bool] = reactive(False, init=False)
    """The work tree's changes are packed: changed files pinned, their diff a section."""

    def __init__(self, services: Services) -> None:
        super().__init__()
        self.services = services
        self.workspace: jobs.WorkspaceAPI | None = None
        """The open workspace; None until the first index is ready."""
        self.gate = jobs.ReadWriteGate()
        self.answer: Answer | None = None
        """The ranking on show."""
        self.packed: tuple[int, Plan, Rendered] | None = None
        """The exact pack of the answer on show: generation, plan, text."""
        self._generation = 0
        self._last_refresh = time.monotonic()
        self._preview_key: tuple[object, ...] = ()
        self._last_notes: tuple[str, ...] = ()
        self._was_over_budget = False
        self._no_match_timer: Timer | None = None
        self._pack_timer: Timer | None = None
        self.changes: Changes | None = None
        """The changes read while `changed` is on; None when off or there are none."""
        state, self._state_notice = services.store.load()
        self.set_reactive(RankingScreen.query_text, state.query)
        self.set_reactive(RankingScreen.budget, state.budget)
        self.set_reactive(RankingScreen.fmt, state.fmt)
        self.set_reactive(RankingScreen.encoding, state.encoding)
        self.set_reactive(RankingScreen.pinned, state.pinned)
        self.set_reactive(RankingScreen.overrides, dict(state.overrides))
        self.set_reactive(RankingScreen.changed, state.changed)

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

    # ------------------------------------------------------------------ layout

    def on_resize(self, event: events.Resize) -> None:
        """Tighten the footer's spacing on narrow terminals, so all its keys still show."""
        self.query_one(Footer).compact = event.size.width < WIDE_FOOTER

    def compose(self) -> ComposeResult:
        yield QueryBar(self.query_text, id="query-bar")
        yield IndexStatus(id="index-status")
        with Horizontal(id="panes"):
            yield FileList(id="file-list")
            yield Preview(id="preview")
        yield BudgetMeter(id="budget-meter")
        yield Footer()

    def on_mount(self) -> None:
        meter = self.query_one(BudgetMeter)
        meter.budget, meter.encoding = self.budget, self.encoding
        self.query_one(Preview).border_title = "Preview"
        self.query_one(FileList).border_title = "Files"
        if self._state_notice:
            self.notify(self._state_notice, title="Saved state", severity="warning", timeout=10)
        for problem in self.services.notices:
            self.notify(problem, title="Settings", severity="warning", timeout=10)
        # after the first frame: the import and cache load would compete with it for the GIL
        self.call_after_refresh(self.open_workspace, self.encoding)

    def watch_ready(self, ready: bool) -> None:
        self.set_class(not ready, "-loading")

    # ------------------------------------------------------------------ state

    def validate_budget(self, budget: int) -> int:
        return clamp_budget(budget)

    def watch_budget(self, budget: int) -> None:
        self.query_one(BudgetMeter).budget = budget
        self._choices_changed()

    def watch_fmt(self) -> None:
        self._choices_changed()

    def watch_pinned(self) -> None:
        self._choices_changed()

    def watch_overrides(self) -> None:
        self._choices_changed()

    def _choices_changed(self) -> None:
        self.save_state()
        self.request_rank()

    def save_state(self) -> None:
        """Write pins, levels, budget, format, encoding and the question for the next start."""
        state = RepoState(
            self.pinned,
            dict(self.overrides),
            self.budget,
            self.fmt,
            self.encoding,
            self.query_text,
            self.changed,
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

    def request_changes(self) -> None:
        """Read the work tree's changes again when they are packed (`MainScreen` does)."""

    # ------------------------------------------------------------------ workspace

    @work(thread=True, exclusive=True, group="open", exit_on_error=False)
    def open_workspace(self, encoding: str) -> None:
        """Index the repository (or load it from the cache) and hand it over."""
        started = time.perf_counter()
        workspace = jobs.open_workspace(
            self.services.factory,
            self.services.root,
            encoding,
            self._report_progress,
        )
        self.post_message(WorkspaceOpened(workspace, time.perf_counter() - started))

    def _report_progress(self, progress: Progress) -> None:
        self.post_message(IndexProgressed(progress))

    @on(IndexProgressed)
    def show_index_progress(self, message: IndexProgressed) -> None:
        self.query_one(IndexStatus).progress = message.progress

    @on(WorkspaceOpened)
    def start_ranking(self, message: WorkspaceOpened) -> None:
        switched = self.workspace is not None
        self.workspace = message.workspace
        self.ready = True
        self.set_reactive(RankingScreen.encoding, message.workspace.encoding)
        self.query_one(BudgetMeter).encoding = message.workspace.encoding
        if switched:
            self.notify(f"Token counts now in {message.workspace.encoding}")
        if not message.workspace.index.files:
            self.query_one(FileList).empty_text = "No files to index in this folder."
            self.notify(f"No files to index in {self.services.root}", severity="warning")
        if not switched:
            for line in index_notices(message.workspace.report):
                self.notify(as_sentences([line]), title="Index", timeout=10)
            if not self.services.redact:
                self.notify(
                    "Redaction is off (a setting): secrets found in a pack are left in it.",
                    title="Secrets",
                    severity="warning",
                    timeout=10,
                )
        self.request_changes()
        self.request_rank()
        self.start_embedding(message.workspace)

    # ------------------------------------------------------------------ ranking

    def file_list(self) -> FileList:
        """The ranked file list."""
        return self.query_one(FileList)

    @on(QueryBar.Changed, "#query-bar")
    def rerank(self, event: QueryBar.Changed) -> None:
        event.stop()
        self.query_text = event.value
        self.request_rank()

    @on(QueryBar.Submitted, "#query-bar")
    def focus_list(self, event: QueryBar.Submitted) -> None:
        event.stop()
        self.query_one(FileList).focus()

    def request_rank(self) -> None:
        """Ask for a new ranking of the current question and choices."""
        if self.workspace is None or not self.is_mounted:
            return
        self._generation += 1
        now = time.monotonic()
        refresh = now - self._last_refresh > REFRESH_INTERVAL
        if refresh:
            self._last_refresh = now
        self.run_rank(self.workspace, self._generation, self.query_text, self._choices(), refresh)

    @work(thread=True, exclusive=True, group="rank", exit_on_error=False)
    def run_rank(
        self,
        workspace: jobs.WorkspaceAPI,
        generation: int,
        query: str,
        choices: jobs.Choices,
        refresh: bool,
    ) -> None:
        """Rank and plan in a thread; the answer carries its generation.

        The stat check for changed files (about 10 ms on 1,000 files, once a second at most)
        runs after the answer is posted, so it never delays a keystroke; a change re-ranks.
        """
        answer = jobs.rank_job(workspace, self.gate, generation, query, choices)
        self.post_message(RankingReady(answer))
        if refresh and jobs.refresh_job(workspace, self.gate):
            self.post_message(WorkspaceRefreshed(True, automatic=True))

    @on(RankingReady)
    def show_ranking(self, message: RankingReady) -> None:
        answer = message.answer
        if answer.generation != self._generation or answer.query != self.query_text:
            return  # an answer to an older keystroke; a newer one is on its way
        self.answer = answer
        file_list = self.query_one(FileList)
        file_list.full_tokens = answer.full_tokens
        file_list.overrides = dict(self.overrides)
        file_list.empty_text = self._empty_text(answer)
        file_list.ranking = answer.ranking
        file_list.plan = answer.plan
        self.query_one(BudgetMeter).plan = answer.plan
        self.show_semantic_status(answer)
        # The exact pack (tens of ms, GIL-bound rendering) waits for a pause in the typing, so
        # that it never delays the ranking of the next keystroke; until then the meter says ≈.
        if self._pack_timer is not None:
            self._pack_timer.stop()
        self._pack_timer = self.set_timer(PACK_PAUSE, partial(self._start_pack, answer))

    def _start_pack(self, answer: Answer) -> None:
        self._pack_timer = None
        if answer.generation == self._generation and self.workspace is not None:
            self.run_pack(self.workspace, answer, self._choices())
            self.after_typing_pause(answer)

    def _empty_text(self, answer: Answer) -> str:
        if self._no_match_timer is not None:
            self._no_match_timer.stop()
            self._no_match_timer = None
        if not answer.query.strip():
            return "Type a question to rank the files."
        if answer.ranking.files:
            return ""
        # Say it only once the typing has paused: a half-typed word often matches nothing.
        self._no_match_timer = self.set_timer(NO_MATCH_PAUSE, self._report_no_match)
        return f"No file matches “{answer.query}”. Try other words."

    def _report_no_match(self) -> None:
        self._no_match_timer = None
        if self.answer is not None and not self.answer.ranking.files:
            self.notify(f"No file matches “{self.answer.query}”.", severity="warning", timeout=4)

    @work(thread=True, exclusive=True, group="pack", exit_on_error=False)
    def run_pack(self, workspace: jobs.WorkspaceAPI, answer: Answer, choices: jobs.Choices) -> None:
        """Render the pack exactly for the meter, the list and a copy."""
        plan, rendered = jobs.pack_job(workspace, self.gate, answer.ranking, choices)
        self.post_message(PackReady(answer.generation, plan, rendered))

    @on(PackReady)
    def show_pack(self, message: PackReady) -> None:
        if message.generation != self._generation:
            return
        self.packed = (message.generation, message.plan, message.rendered)
        file_list = self.query_one(FileList)
        file_list.secrets = secret_reasons(message.rendered)
        file_list.plan = message.plan
        self.query_one(BudgetMeter).plan = message.plan
        self._warn_about(message.plan)
        self.request_preview()

    def _warn_about(self, plan: Plan) -> None:
        """Notify once when the user's own choices go over budget, and on new planner notes."""
        if plan.over_budget:
            if not self._was_over_budget:  # the meter's figure: the notes may hold estimates
                self.notify(
                    f"The files you pinned or set take {plan.total_tokens:,} tokens, "
                    f"{plan.total_tokens - plan.budget:,} over the budget of {plan.budget:,}.",
                    title="Over budget",
                    severity="warning",
                )
            self._was_over_budget = True
            return
        self._was_over_budget = False
        if plan.notes and plan.notes != self._last_notes:
            self.notify(" ".join(plan.notes), title="Pack")
        self._last_notes = plan.notes

    @on(WorkspaceRefreshed)
    def report_refresh(self, message: WorkspaceRefreshed) -> None:
        self._last_refresh = time.monotonic()
        if message.changed:
            self.notify("Re-indexed the files changed on disk.", timeout=2)
            self.request_changes()
        elif not message.automatic:
            self.notify("No changes on disk.", timeout=2)
        self.request_rank()

    # ------------------------------------------------------------------ preview

    @on(FileList.Highlighted)
    def follow_highlight(self, event: FileList.Highlighted) -> None:
        event.stop()
        self.request_preview()

    def request_preview(self) -> None:
        """Show the highlighted file as the pack carries it."""
        preview = self.query_one(Preview)
        path = self.query_one(FileList).highlighted_path
        plan = self.answer.plan if self.answer else None
        if self.packed and self.answer and self.packed[0] == self.answer.generation:
            plan = self.packed[1]
        entry = next((e for e in plan.entries if e.path == path), None) if plan else None
        if path is None or entry is None or self.workspace is None or self.answer is None:
            self._preview_key = ()
            preview.border_title = Content(one_line(path)) if path else "Preview"
            preview.show_note(
                "Left out of the pack. Press f, s or o to include it."
                if path
                else "The highlighted file appears here as the pack carries it."
            )
            return
        words = words_to_mark(self.answer.query, self.answer.ranking.terms)
        key = (entry.path, entry.level, entry.tokens, words, self.workspace)
        if key == self._preview_key:
            return
        self._preview_key = key
        title = f"{one_line(entry.path)} · {entry.level.value} · {entry.tokens:,} tokens"
        preview.border_title = Content(title)  # plain text: a name like `x[/y].py` is no markup
        self.run_preview(self.workspace, key, entry, words, preview.match_style)

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False)
    def run_preview(
        self,
        workspace: jobs.WorkspaceAPI,
        key: tuple[object, ...],
        entry: PlanEntry,
        words: tuple[str, ...],
        match_style: Style,
    ) -> None:
        """Render and highlight one file in a thread."""
        content = jobs.preview_job(
            workspace, self.gate, entry, words, match_style, redact=self.services.redact
        )
        self.post_message(PreviewReady(key, content))

    @on(PreviewReady)
    def show_preview(self, message: PreviewReady) -> None:
        if message.key == self._preview_key:
            self.query_one(Preview).content = message.text

    # ------------------------------------------------------------------ errors

    @on(Worker.StateChanged)
    def report_worker_error(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state is not WorkerState.ERROR or worker.is_cancelled:
            return
        error = worker.error
        text = jobs.describe_error(error)
        if worker.group == "open" and self.workspace is None:
            self.query_one(IndexStatus).message = f"Could not open {self.services.root}: {text}"
        self.notify(text, title=f"Could not {worker.group}", severity="error", timeout=8)
