"""The live half of the main screen: question, ranked files, preview and meter, kept current.

Every change (a keystroke, a level, a pin, the budget, the format) becomes one rank request with
a new generation number; a thread worker ranks and plans on frozen inputs and posts the answer,
and answers of older generations are dropped. A typed key's exact pack is rendered ahead, once
its list is on screen, and given up the moment the next key comes; it is shown, and the work
that holds the interpreter for tens of milliseconds (the highlighted preview, the check for
changed files) starts, only when the typing pauses, so none of it delays the next keystroke's
ranking. Widgets only draw what this screen hands them; the keys live in the layers above.
"""

from __future__ import annotations

import time
from functools import partial

from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.style import Style
from textual.timer import Timer

from ctxtui import collector
from ctxtui.messages import Answer, PackReady, PreviewReady, RankingReady
from ctxtui.screens import jobs
from ctxtui.screens.host import FIRST_LIST_WAIT, Services, WorkspaceHost
from ctxtui.screens.semantic import SemanticHook
from ctxtui.widgets.budget_meter import BudgetMeter
from ctxtui.widgets.file_list import FileList
from ctxtui.widgets.index_status import IndexStatus
from ctxtui.widgets.key_footer import KeyFooter
from ctxtui.widgets.preview import Preview, words_to_mark
from ctxtui.widgets.query_bar import QueryBar
from ctxtui.workspace.notices import secret_reasons
from ctxtui.workspace.stopping import PackStopped
from engine.model import Plan, PlanEntry, Rendered
from engine.shown_path import shown_line

__all__ = ["RankingScreen", "Services"]

PACK_PAUSE = 0.15
"""Seconds without a new key before the exact pack is shown (it is rendered ahead, and dropped
when a key comes first): longer than the gap between two keys of a fast typist (100-150 ms), so
its frame never lands between them. The pause counts from the key, not from its ranking: the
ranking's own time is part of the wait."""
PREVIEW_PAUSE = 0.15
"""Seconds the highlight must rest, while the question has focus, before the preview follows."""
AFTER_PACK_PAUSE = 0.05
"""Seconds between an exact pack's arrival and the work that would delay its frame (every row,
the preview, the look at the disk): time for the meter's frame to reach the screen first."""
TOKENIZER_PAUSE = 2.0
"""Seconds after the first exact pack before the other encoding's tokenizer loads."""
FULL_COUNT_PAUSE = 1.0
"""Seconds after an encoding switch's exact meter before every other file is counted in the
new encoding: a second `e` (on to the next encoding, or back) soon after finds the cores free."""
PREVIEWS_KEPT = 8
"""Highlighted previews kept: the highlight often comes back to a file it just left."""
WIDE_FOOTER = 130
"""Below this many columns the footer drops the spaces between its keys."""
PALETTE_IN_FOOTER = 90
"""From this many columns the footer also lists ctrl+p (it works at any width; the help says so)."""
NO_FILES = "No files to index in this folder."
"""What the list says whatever the question, when the folder has nothing to index."""
NO_MATCH_PAUSE = 1.5
"""Seconds a question must match nothing before a notification says so."""
FRAME_PERIOD = 1 / 120
"""Least seconds between two frames of this screen (Textual's default is 1/60). A key paints
twice: the question's echo at once, its ranked list some 20 ms later; at 60 frames a second
the list's frame waited for the next slot after the echo's, 14 ms of a 50 ms key -> list
median (issue 7). Frames are still painted only when something changed, each costs what it
did, and a paint takes longer than this period, so the cap rarely binds."""
TINY_HEIGHT = 12
"""Below this many lines (a split pane) the question bar loses its border and the meter its
bar, one line each, so that the list keeps rows: at 20x8 the bar (3 lines), the meter (2), the
footer and the list's border took every line and no ranked row was shown (review, session 29).
From 12 lines the usual layout already shows two rows."""
LOADING_TEXT = "Indexing… type your question now: the files are ranked the moment it is ready."


class RankingScreen(WorkspaceHost, SemanticHook):
    """Question, ranked files, preview and meter, kept current by thread workers."""

    HORIZONTAL_BREAKPOINTS = [  # noqa: RUF012 - Textual declares it a list
        (0, "-cramped"),
        (80, "-narrow"),
        (110, "-wide"),
    ]
    VERTICAL_BREAKPOINTS = [  # noqa: RUF012 - Textual declares it a list
        (0, "-tiny"),  # below TINY_HEIGHT lines the bar and the meter take one line each
        (TINY_HEIGHT, "-short"),
        (24, "-tall"),
    ]
    AUTO_FOCUS = "#query-bar"

    def __init__(self, services: Services) -> None:
        super().__init__(services)
        self.answer: Answer | None = None
        """The ranking on show."""
        self.packed: tuple[int, Plan, Rendered] | None = None
        """The exact pack of the answer on show: generation, plan, the message."""
        self._generation = 0
        self._preview_key: tuple[object, ...] = ()
        """What the preview shows or is being highlighted for (path, level, tokens, words)."""
        self._preview_shown: tuple[object, ...] = ()
        self._preview_job: tuple[PlanEntry, tuple[str, ...], Style] | None = None
        self._previews: dict[tuple[object, ...], tuple[Content, tuple[str, ...]]] = {}
        """The last previews highlighted (a file shown again is not highlighted again)."""
        self._was_over_budget = False
        self._no_match_timer: Timer | None = None
        self._pack_timer: Timer | None = None
        self._typed = False
        self._typed_at = 0.0
        """When the last key was typed into the question (time.monotonic)."""
        self._tokenizer_timer: Timer | None = None
        self._preview_timer: Timer | None = None
        self._packing = -1
        """Generation whose exact pack was started last."""
        self._paused = -1
        """Generation on which the typing paused: its exact pack is shown as it comes."""
        self._held: PackReady | None = None
        """An exact pack made ahead of the pause, shown when the typing pauses."""
        self._frame_timer: Timer | None = None
        self._held_for_first_list = False
        """The footer's keys and the status line's hiding wait for the first list (see
        show_held_back)."""
        self._opened_query = self.query_text
        """The question restored at the open (another one since: the person has typed)."""
        self.add_class(*self._breakpoint_classes(), update=False)

    def _breakpoint_classes(self) -> tuple[str, ...]:
        """The breakpoint classes Textual gives the screen at its first resize, given from the
        start: the first resize then changes no class. Given at that resize, they restyled
        every widget once more before the first list (25 ms of the interpreter, under load,
        on the way to the 16,000-file tree's first list)."""
        width, height = self.app.size
        classes = []
        for size, points in (
            (width, self.HORIZONTAL_BREAKPOINTS or []),
            (height, self.VERTICAL_BREAKPOINTS or []),
        ):
            classes += [name for edge, name in sorted(points, reverse=True) if size >= edge][:1]
        return tuple(classes)

    @property
    def _update_timer(self) -> Timer:
        """Textual's frame timer for this screen, at FRAME_PERIOD instead of 1/60 s. (Textual
        is pinned to an exact release: Screen reads its timer only through this property.)"""
        if self._frame_timer is None:
            self._frame_timer = self.set_interval(
                FRAME_PERIOD, self._on_timer_update, name="screen_update", pause=True
            )
        return self._frame_timer

    # ------------------------------------------------------------------ layout

    def on_resize(self, event: events.Resize) -> None:
        """Fit the footer to the width: tighter spacing, and fewer keys listed when narrow."""
        footer = self.query_one(KeyFooter)
        footer.compact = event.size.width < WIDE_FOOTER
        footer.show_command_palette = event.size.width >= PALETTE_IN_FOOTER
        self.refresh_bindings()

    def compose(self) -> ComposeResult:
        query_bar = QueryBar(self.query_text, id="query-bar")
        query_bar.history = self.history
        yield query_bar
        yield IndexStatus(id="index-status")
        with Horizontal(id="panes"):
            file_list = FileList(id="file-list")
            file_list.redact_names = self.services.redact
            file_list.question = lambda: query_bar.value  # as typed, before its Changed
            yield file_list
            yield Preview(id="preview")
        yield BudgetMeter(id="budget-meter")
        footer = KeyFooter()
        if self.services.saved is not None:  # a saved index may give a first list at once
            self._held_for_first_list = True
            footer.hold()  # from before its first bindings change (at the first focus)
        yield footer

    def on_mount(self) -> None:
        meter = self.query_one(BudgetMeter)
        meter.budget, meter.encoding, meter.fmt = self.budget, self.encoding, self.fmt
        self.query_one(Preview).show_title("Preview")
        file_list = self.query_one(FileList)
        file_list.border_title = "Files"
        file_list.empty_text = LOADING_TEXT
        self.query_one(QueryBar).focus()  # from the first frame: keys typed early are kept
        cursor, _focus = self.saved_place
        if cursor:  # the file highlighted when the app closed, once its question's list comes
            file_list.restore_cursor(cursor, self.query_text)
        if self._held_for_first_list:
            self.set_timer(FIRST_LIST_WAIT, self.show_held_back)
        self.open_first()

    async def on_key(self, event: events.Key) -> None:  # async: as MainScreen's
        """A letter that reached the screen itself was typed before the question had focus
        (the terminal hands over keys typed during start-up before the first frame): it is
        the question's. Letters typed into the question never get here (the box takes them)."""
        query_bar = self.query_one(QueryBar)
        early = self.focused is None or self.focused is query_bar
        if early and event.is_printable and event.character:
            # at once, not on the next idle as `Widget.focus` would: by then a tab typed
            # after this letter has given the list focus, and the question took it back
            self.set_focus(query_bar)
            query_bar.insert_text_at_cursor(event.character)
            event.stop()

    def watch_ready(self, ready: bool) -> None:
        if self._held_for_first_list:
            return  # hidden with the first list (show_held_back)
        self.query(IndexStatus).set_class(ready, "-opened")  # none before compose: shown

    def show_held_back(self) -> None:
        """Show what a warm start leaves out of the frames before its first list: the footer's
        keys, and the status line hidden once the workspace is open. Built or laid out
        earlier, each took the interpreter from the threads that open the saved index and
        rank (the footer's seven keys just after the first frame, the screen laid out again
        for the status line as the first ranking began); called once the first list is
        painted, when the repository must be indexed first, or after FIRST_LIST_WAIT."""
        if not self._held_for_first_list:
            return
        self._held_for_first_list = False
        footer = self.query_one(KeyFooter)
        footer.call_later(footer.release)  # its build binds to the footer: run on its own queue
        self.query(IndexStatus).set_class(self.ready, "-opened")

    def watch_history(self, history: tuple[str, ...]) -> None:
        if self.is_mounted:
            self.query_one(QueryBar).history = history

    # ------------------------------------------------------------------ choices

    def watch_budget(self, budget: int) -> None:
        self.query_one(BudgetMeter).budget = budget
        self._choices_changed()

    def watch_fmt(self) -> None:
        self.query_one(BudgetMeter).fmt = self.fmt
        self._choices_changed()

    def _choices_changed(self) -> None:
        self.save_state()
        self.request_rank()

    def adopt_workspace(self, workspace: jobs.WorkspaceAPI, *, rerank: bool = True) -> None:
        self._previews.clear()  # keyed by workspace: none would match, and each holds one
        self.query_one(BudgetMeter).encoding = workspace.encoding
        if not workspace.index.files:
            self.query_one(FileList).empty_text = NO_FILES
        super().adopt_workspace(workspace, rerank=rerank)

    def workspace_opened(self, workspace: jobs.WorkspaceAPI) -> None:
        self.start_embedding(workspace)

    def file_list(self) -> FileList:
        """The ranked file list."""
        return self.query_one(FileList)

    def shown_paths(self) -> tuple[str, ...]:
        """The files in the plan, the pinned and chosen ones, and the rows on screen.

        Only these are counted when the encoding changes before its exact meter shows (the
        rest a moment later): each costs an encode of its whole text, and cl100k encodes at
        4-5 MB/s on one core (threads barely help it, FACTS.md §2). Counting the first 40
        ranked files, most of them off screen, took 0.3-0.9 s of the first `e`."""
        paths: dict[str, None] = dict.fromkeys((*self.pinned, *self.overrides))
        if self.answer is not None:
            paths.update(dict.fromkeys(e.path for e in self.answer.plan.entries))
            paths.update(dict.fromkeys(self.query_one(FileList).paths_in_view()))
        return tuple(paths)

    # ------------------------------------------------------------------ ranking

    @on(QueryBar.Changed, "#query-bar")
    def rerank(self, event: QueryBar.Changed) -> None:
        event.stop()
        self.query_text = event.value
        self.request_rank(typed=True)

    def request_rank(self, typed: bool = False) -> None:
        """Ask for a new ranking of the current question and choices (`typed`: of a key typed
        into the question, whose exact pack waits for a pause in the typing)."""
        if self.workspace is None or not self.is_mounted:
            return
        self._typed = typed
        if typed:
            self._typed_at = time.monotonic()
        self.postpone_refresh()
        self._generation += 1
        self._held = None
        self.run_rank(self.workspace, self._generation, self.query_text, self._choices())

    # Each worker names itself: Textual would otherwise describe it by the repr of every
    # argument (a workspace, a ranking of 200 files), on every keystroke.
    @work(thread=True, exclusive=True, group="rank", exit_on_error=False, description="rank")
    def run_rank(
        self, workspace: jobs.WorkspaceAPI, generation: int, query: str, choices: jobs.Choices
    ) -> None:
        """Rank and plan in a thread; the answer carries its generation."""
        self.post_message(
            RankingReady(jobs.rank_job(workspace, self.gate, generation, query, choices))
        )

    def place(self) -> tuple[str, str]:
        """The highlighted file and where the keys go; before the first list, as saved."""
        if self.answer is None or not self.is_mounted:
            return self.saved_place
        file_list = self.query_one(FileList)
        focus = "list" if self.focused is file_list else "question"
        return file_list.highlighted_path or "", focus

    def _restore_focus(self) -> None:
        """Once the first list is painted: the keys go to the list again if they went there
        when the app closed, unless the person has typed or moved since the open (then they
        stay theirs). Not before that paint: the list's focus builds all its rows, 200 instead
        of 50 (1 -> 6 ms on flask, up to 15 under load), and the first list waited for them."""
        answer = self.answer
        if answer is None or self.saved_place[1] != "list" or not answer.ranking.files:
            return
        if answer.query == self._opened_query and isinstance(self.focused, QueryBar):
            self.set_focus(self.query_one(FileList))

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
        self.answer_shown()
        self._stop(self._pack_timer)
        self._pack_timer = None
        if not self.first_list_shown.is_set():
            # The first list paints before the pack and the check of the tree (waiting on the
            # event) compete with it: after the list builds its rows (its own call_later), and
            # the frame that shows them.
            painted = partial(self._first_list_painted, answer)
            file_list.call_later(file_list.call_after_refresh, painted)
            return
        self._schedule_pack(answer)

    def answer_shown(self) -> None:
        """A ranked list is on its way to the screen (the layer above acts on keys that
        waited for one)."""

    def _first_list_painted(self, answer: Answer) -> None:
        self.first_list_shown.set()
        self.show_held_back()
        collector.started()  # the start is over (ctxtui.collector.hold_until_started)
        self._restore_focus()
        if answer.generation == self._generation:
            self._stop(self._pack_timer)
            self._schedule_pack(answer)

    def _schedule_pack(self, answer: Answer) -> None:
        """The exact pack (tens of ms, GIL-bound rendering) is shown once the typing pauses:
        its frame never lands between two keys, and until then the meter says ≈. For a typed
        key it is rendered ahead, as soon as the key's list is on screen, and given up the
        moment another key comes; the pause then shows a pack already made instead of starting
        one. A level, a pin, the budget, the format or the encoding is one key: packed and
        shown at once."""
        wait = PACK_PAUSE - (time.monotonic() - self._typed_at) if self._typed else 0.0
        if wait > 0:
            self._pack_timer = self.set_timer(wait, partial(self._pause_reached, answer))
            file_list = self.query_one(FileList)
            file_list.call_after_refresh(partial(self._start_pack, answer))
        else:
            self._pause_reached(answer)

    def _pause_reached(self, answer: Answer) -> None:
        """The typing paused on this answer: show its pack (made ahead, or when it comes)."""
        self._pack_timer = None
        if answer.generation != self._generation:
            return
        self._paused = answer.generation
        held, self._held = self._held, None
        if held is not None and held.generation == answer.generation:
            self._show_pack(held)
        else:
            self._start_pack(answer)
        self.after_typing_pause(answer)

    def _start_pack(self, answer: Answer) -> None:
        current = answer.generation == self._generation and self.workspace is not None
        if current and self._packing != answer.generation:
            self._packing = answer.generation
            self.run_pack(self.workspace, answer, self._choices())

    def _empty_text(self, answer: Answer) -> str:
        self._stop(self._no_match_timer)
        self._no_match_timer = None
        if self.workspace is not None and not self.workspace.index.files:
            return NO_FILES  # "No file matches ... Try other words." sent people to other words
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

    @staticmethod
    def _stop(timer: Timer | None) -> None:
        if timer is not None:
            timer.stop()

    @work(thread=True, exclusive=True, group="pack", exit_on_error=False, description="pack")
    def run_pack(self, workspace: jobs.WorkspaceAPI, answer: Answer, choices: jobs.Choices) -> None:
        """Render the pack exactly for the meter, the list and a copy (given up as soon as a
        newer request makes it stale)."""
        generation = answer.generation
        try:
            plan, rendered = jobs.pack_job(
                workspace,
                self.gate,
                answer.ranking,
                choices,
                should_stop=lambda: self._generation != generation,
            )
        except PackStopped:
            return  # a newer key or choice: its own pack follows
        self.post_message(PackReady(generation, plan, rendered))

    @on(PackReady)
    def show_pack(self, message: PackReady) -> None:
        if message.generation != self._generation:
            return
        if self._paused != message.generation:
            self._held = message  # made ahead of the pause: shown when the typing pauses
            return
        self._show_pack(message)

    def _show_pack(self, message: PackReady) -> None:
        self.packed = (message.generation, message.plan, message.rendered)
        file_list = self.query_one(FileList)
        file_list.secrets = secret_reasons(message.rendered)
        file_list.plan = message.plan
        self.query_one(BudgetMeter).plan = message.plan
        self._warn_about(message.plan)
        if self._tokenizer_timer is None:  # once: the other encoding, before `e` asks for it
            collector.settle()  # the first pack loaded this encoding's tokenizer
            self._tokenizer_timer = self.set_timer(TOKENIZER_PAUSE, self.load_other_encodings)
        # The exact meter paints first; the work that competes with that frame for the
        # interpreter (the rows past the first screens, the preview's highlighting, the look at
        # the disk) starts once it is on screen.
        self.set_timer(AFTER_PACK_PAUSE, partial(self._after_pack_shown, message.generation))

    def _after_pack_shown(self, generation: int) -> None:
        if generation != self._generation:
            return  # typing resumed: the next pause does this
        self.query_one(FileList).list_all()
        self.request_preview()
        # after an encoding switch: the files not on show, once a second `e` is unlikely
        self.set_timer(FULL_COUNT_PAUSE, partial(self._count_everything_after, generation))
        self.refresh_when_idle()  # the typing has paused: look at the disk if it stays so

    def _count_everything_after(self, generation: int) -> None:
        """Start the full count only while this pack is still the one on show: a ranking
        since (typing, a re-index) has its own pack, whose pause starts the count instead
        (the count stays due), so it never takes the cores from a meter not yet exact."""
        if generation == self._generation and self.packed and self.packed[0] == generation:
            self.count_everything_now()

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
        if plan.notes and plan.notes != self.told_notes:
            self.notify(" ".join(plan.notes), title="Pack")
        self.told_notes = plan.notes

    # ------------------------------------------------------------------ preview

    @on(FileList.Highlighted)
    def follow_highlight(self, event: FileList.Highlighted) -> None:
        event.stop()
        self._stop(self._preview_timer)
        self._preview_timer = None
        if self.query_one(FileList).has_focus:
            self.request_preview()  # the person moves the cursor: follow at once
        elif self.packed is not None and self.packed[0] == self._generation:
            # A new ranking moved it: wait for the typing to pause. (While the ranking's exact
            # pack is still to come, its arrival shows the preview: not twice, not competing.)
            self._preview_timer = self.set_timer(PREVIEW_PAUSE, self.request_preview)

    def request_preview(self) -> None:
        """Show the highlighted file as the pack carries it."""
        self._preview_timer = None
        preview = self.query_one(Preview)
        path = self.query_one(FileList).highlighted_path
        plan = self.answer.plan if self.answer else None
        if self.packed and self.answer and self.packed[0] == self.answer.generation:
            plan = self.packed[1]
        entry = next((e for e in plan.entries if e.path == path), None) if plan else None
        if path is None or entry is None or self.workspace is None or self.answer is None:
            self._preview_key = self._preview_shown = ()
            preview.show_title(self._shown(path) if path else "Preview")
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
        level, tokens = entry.level.value, f"{entry.tokens:,}"
        preview.show_title(self._shown(entry.path), f"{level} · {tokens} tokens", level)
        self._preview_job = (entry, words, preview.match_style)
        if (shown := self._previews.get(key)) is not None:
            self._show_preview_text(key, *shown)
            return
        self.run_preview(self.workspace, key, *self._preview_job, preview.head_lines)

    def _shown(self, path: str) -> str:
        return shown_line(path, redact=self.services.redact)

    @on(Preview.WholeWanted)
    def highlight_whole_preview(self, event: Preview.WholeWanted) -> None:
        """The view nears the plain rest of the file: highlight all of it."""
        event.stop()
        if self._preview_key and self._preview_job is not None and self.workspace is not None:
            self.run_preview(self.workspace, self._preview_key, *self._preview_job, None)

    @work(thread=True, exclusive=True, group="preview", exit_on_error=False, description="preview")
    def run_preview(
        self,
        workspace: jobs.WorkspaceAPI,
        key: tuple[object, ...],
        entry: PlanEntry,
        words: tuple[str, ...],
        match_style: Style,
        lines: int | None,
    ) -> None:
        """Render a file and highlight it in a thread (its first `lines` lines; None: all)."""
        redact = self.services.redact
        head, rest = jobs.preview_job(
            workspace, self.gate, entry, words, match_style, redact=redact, lines=lines
        )
        self.post_message(PreviewReady(key, head, rest))

    @on(PreviewReady)
    def show_preview(self, message: PreviewReady) -> None:
        if message.key == self._preview_key:
            self._previews[message.key] = (message.text, message.rest)
            while len(self._previews) > PREVIEWS_KEPT:
                del self._previews[next(iter(self._previews))]
            self._show_preview_text(message.key, message.text, message.rest)

    def _show_preview_text(
        self, key: tuple[object, ...], head: Content, rest: tuple[str, ...]
    ) -> None:
        # the file on show at the same level (highlighted whole now, saved in the editor,
        # counted anew, its words marked for a new question): the view stays where it was
        same_file = key[:2] == self._preview_shown[:2]
        self._preview_shown = key
        self.query_one(Preview).show(head, rest, keep_place=same_file)
