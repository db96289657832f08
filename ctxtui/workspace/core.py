"""One repository opened for questions: its index, its tokenizer and its cache folder.

Shared by the command line, the app and the MCP server, so all rank, plan and render through
the same calls. The tokenizer loads in a background thread while the index is built (its tables take
0.5-1 s to read), and the index is refreshed from disk on demand with a cheap stat check.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import engine
from ctxtui.workspace.keystrokes import WordsInverter
from ctxtui.workspace.memory import CountCache, TextCache, view_cache
from ctxtui.workspace.semantic import SemanticStage, semantic_wanted
from ctxtui.workspace.stopping import StoppableCounter, stoppable_reader
from engine import (
    Format,
    Index,
    IndexReport,
    Plan,
    PlanEntry,
    Progress,
    RankedFile,
    Ranking,
    Rendered,
    ScanOptions,
    Session,
)
from engine.changes import SECRET_DIFF_HINT, Changes, without_secret_diffs
from engine.diff_section import CHANGES_SHARE, ChangesSection, fit_changes
from engine.model import SecretFound
from engine.pack import section_tokens
from engine.rank import DEFAULT_WEIGHTS, RankWeights
from engine.render import file_content
from engine.semantic.embedder import SemanticUnavailable

if TYPE_CHECKING:
    from engine.redact import SecretPolicy, SecretScanner
    from engine.render import TokenCounter

DEFAULT_ENCODING = "o200k_base"
REFRESH_INTERVAL = 1.0
"""Seconds between two stat checks of the tree (each lists and stats every file)."""


WORKERS_SWITCH = "CTXTUI_WORKERS"
"""Environment variable: worker processes of a cold index (a whole number from 1)."""
MOST_WORKERS = 64
"""The most CTXTUI_WORKERS is taken at: each worker holds its own parser and tokenizer."""


def index_workers() -> int | None:
    """Worker processes for indexing from CTXTUI_WORKERS (at most `MOST_WORKERS`), or None
    for the engine's default (one per usable core, at most 8). A value that is not a whole
    number from 1 is ignored: a typo in the environment must not stop an index."""
    raw = os.environ.get(WORKERS_SWITCH, "").strip()
    if not (raw.isascii() and raw.isdigit()):  # "²" and "٣" are digits to isdigit
        return None
    count = int(raw)
    return min(count, MOST_WORKERS) if count >= 1 else None


def cache_dir_for(root: Path) -> Path:
    """This repository's folder under the user cache dir: <name>-<hash of its path>."""
    from platformdirs import user_cache_dir  # deliberate: only needed when indexing

    digest = hashlib.sha1(os.fsencode(root), usedforsecurity=False).hexdigest()[:12]
    return Path(user_cache_dir("ctxtui")) / "repos" / f"{root.name or 'root'}-{digest}"


class LazyTokenizer:
    """Loads the tokenizer once, on first use, from any thread.

    Indexing asks for it only when a file must be counted (so a warm reopen never pays the
    0.4 s load); rendering asks for it always. The app warms it in a worker after first paint.
    """

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._tokenizer: engine.Tokenizer | None = None
        self._lock = threading.Lock()

    def get(self) -> engine.Tokenizer:
        """The loaded tokenizer (loads it the first time)."""
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = engine.load_tokenizer(self.encoding)
            return self._tokenizer

    @property
    def loaded(self) -> bool:
        """True once the tables are loaded."""
        return self._tokenizer is not None


class LazyScanner:
    """Loads the secret scanner once, on first use, from any thread.

    Importing detect-secrets costs 0.2-0.3 s (its plugins import `requests`), so a command
    that never packs never pays it; the app warms it in a worker with the tokenizer.
    """

    def __init__(self) -> None:
        self._scanner: SecretScanner | None = None
        self._lock = threading.Lock()

    def get(self) -> SecretScanner:
        """The loaded scanner (loads it the first time)."""
        with self._lock:
            if self._scanner is None:
                from engine.redact import shared_scanner  # deliberate: detect-secrets is slow

                self._scanner = shared_scanner()
            return self._scanner

    def policy(self, redact: bool) -> SecretPolicy:
        """How a pack treats its secrets: replaced by markers, or only reported."""
        from engine.redact import SecretPolicy  # deliberate: see get()

        return SecretPolicy(self.get(), redact=redact)


@dataclass(frozen=True, slots=True)
class Tuning:
    """How a repository wants its packs made, from its settings."""

    weights: RankWeights = DEFAULT_WEIGHTS
    """The ranking's weights (`[ranking]` in the settings)."""
    instructions: str = ""
    """Text placed at the top of every pack; empty for none."""
    secret_hint: str = SECRET_DIFF_HINT
    """How the front-end's user packs a secret file, said where a pack's Changes leave its
    diff out: `--include-secret NAME` on the command line, `!NAME` in `.ctxtuiignore` for
    the app and an MCP agent."""


class Workspace:
    """An opened repository: index + tokenizer + cache folder, ready for questions."""

    def __init__(
        self,
        index: Index,
        report: IndexReport,
        tokenizer: LazyTokenizer,
        *,
        options: ScanOptions,
        cache_dir: Path | None,
        tuning: Tuning = Tuning(),
        semantic: SemanticStage | None = None,
    ) -> None:
        self.index = index
        """The current index; replaced whole by refresh(), never mutated (but for its
        declarations' words inverted once typing starts: ctxtui.workspace.keystrokes)."""
        self.report = report
        """What the last build or refresh did."""
        self.options = options
        self.cache_dir = cache_dir
        self.tuning = tuning
        """Ranking weights and instructions from the settings."""
        self.semantic = semantic
        """The semantic stage (the `semantic` extra); None without it or when turned off."""
        self._tokenizer = tokenizer
        self._last_check = time.monotonic()
        self._lock = threading.Lock()
        self._texts = TextCache()
        self._counts = CountCache(tokenizer.get)
        self._views = view_cache()
        self._sections: OrderedDict[tuple[Changes, int], ChangesSection] = OrderedDict()
        self._instructions_tokens: int | None = None
        self._last_plan: tuple[tuple[RankedFile, ...], Index, tuple[object, ...], Plan] | None
        self._last_plan = None
        """The last plan drafted: for the ranked files, index and choices it was drafted for."""
        self.secrets = LazyScanner()
        """The secret scanner every pack, copy and MCP answer goes through."""
        self._words = WordsInverter()
        self._keystrokes = 0

    @classmethod
    def open(
        cls,
        root: Path,
        *,
        encoding: str = DEFAULT_ENCODING,
        use_cache: bool = True,
        options: ScanOptions = ScanOptions(),
        on_progress: Callable[[Progress], None] | None = None,
        tokenizer: LazyTokenizer | None = None,
        tuning: Tuning = Tuning(),
        semantic: bool = True,
    ) -> Workspace:
        """Index (or refresh the cached index of) a folder; slow the first time.

        `semantic` uses the semantic stage when its extra is installed and not switched off
        (CTXTUI_SEMANTIC=off); see `rank`.

        Raises:
            EngineError: the folder cannot be scanned or the tokenizer cannot load.
        """
        root = Path(root).expanduser().resolve()
        lazy = tokenizer if tokenizer is not None and tokenizer.encoding == encoding else None
        lazy = lazy or LazyTokenizer(encoding)
        cache_dir = cache_dir_for(root) if use_cache else None
        index, report = engine.build_index(
            root,
            options=options,
            encoding=encoding,
            cache_dir=cache_dir,
            on_progress=on_progress,
            workers=index_workers(),
            tokenizer=lazy.get,
        )
        stage = SemanticStage(cache_dir) if semantic and semantic_wanted() else None
        return cls(
            index, report, lazy, options=options, cache_dir=cache_dir, tuning=tuning, semantic=stage
        )

    @classmethod
    def open_saved(
        cls,
        root: Path,
        *,
        encoding: str = DEFAULT_ENCODING,
        options: ScanOptions = ScanOptions(),
        tuning: Tuning = Tuning(),
        tokenizer: LazyTokenizer | None = None,
    ) -> Workspace | None:
        """The workspace as its cache saved it, without looking at the tree (tens of ms on
        16,000 files); None without a usable cache. For a first answer while `open` checks
        the tree; it has no semantic stage and no scan skips (both come with `open`).
        Hand `open` the same `tokenizer`, so that it loads once."""
        root = Path(root).expanduser().resolve()
        cache_dir = cache_dir_for(root)
        index = engine.open_saved(root, encoding=encoding, cache_dir=cache_dir)
        if index is None:
            return None
        files = len(index.files)
        report = IndexReport(files, (), (), files, index.skipped, (), (), ())
        same = tokenizer is not None and tokenizer.encoding == encoding
        lazy = tokenizer if tokenizer is not None and same else LazyTokenizer(encoding)
        return cls(index, report, lazy, options=options, cache_dir=cache_dir, tuning=tuning)

    @property
    def root(self) -> Path:
        """The repository folder."""
        return Path(self.index.root)

    @property
    def encoding(self) -> str:
        """Encoding of every token count."""
        return self.index.encoding

    @property
    def tokenizer(self) -> engine.Tokenizer:
        """The loaded tokenizer (loads it the first time: about 0.4 s)."""
        return self._tokenizer.get()

    def rank(self, query: str, session: Session, *, complete: bool = True) -> Ranking:
        """Rank the files for a question: lexically, then fused with semantic similarity when
        the semantic stage is on.

        A complete question (command line, MCP server, a pause in the typing) waits for the
        vectors this question lacks; a keystroke (`complete=False`) uses only cached ones.
        """
        index = self.index
        if not complete:  # a session that types: keystrokes read declarations by word soon
            # ... from its second keystroke ranking on: the first is the app's opening list,
            # which the build (0.4 s of CPU on 16k) delayed by ~0.1 s (session 23)
            self._keystrokes += 1
            if self._keystrokes > 1:
                self._words.later(index)
        ranking = engine.rank(index, query, session, self.tuning.weights, complete=complete)
        if self.semantic is None:
            return ranking
        read = partial(self._texts.read, index)
        return self.semantic.rerank(index, ranking, read, wait=complete)

    def prepare_typing(self) -> None:
        """Build now what keystrokes otherwise build in the background after the first one
        (ctxtui.workspace.keystrokes): for timing keystrokes as a session types them."""
        self._words.now(self.index)

    def prepare_semantic(
        self, ranking: Ranking, should_stop: Callable[[], bool] | None = None
    ) -> bool:
        """Embed what a typed question's ranking lacks (the question, the re-ranked files);
        True when a keystroke's ranking of it can now be fused."""
        if self.semantic is None or not ranking.files:
            return False
        index = self.index
        read = partial(self._texts.read, index)
        try:
            self.semantic.prepare(index, ranking, read, should_stop)
        except SemanticUnavailable as error:
            self.semantic.failed = str(error)
            return False
        return self.semantic.covers(index, ranking)

    def embed_all(
        self,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        first: Sequence[int] = (),
    ) -> int:
        """Embed every file of the index that has no vectors yet (minutes on a big
        repository: run it in a background thread); 0 without the semantic stage."""
        from engine.analyse import read_text  # deliberate: keeps start-up light

        if self.semantic is None:
            return 0
        index = self.index
        read = partial(read_text, index.root)  # not the text cache: it would churn it
        try:
            return self.semantic.embed_all(
                index, read, on_progress=on_progress, should_stop=should_stop, first=first
            )
        except SemanticUnavailable as error:
            self.semantic.failed = str(error)
            return 0

    def plan(
        self, ranking: Ranking, budget: int, session: Session, *, changes: Changes | None = None
    ) -> Plan:
        """Plan a pack on estimated token counts (fast enough for every keystroke).

        The instructions and the diff are estimated until the tokenizer has counted them.
        """
        section = self._sections.get((changes, budget)) if changes is not None else None
        instructions = self._count_instructions()
        if changes is not None and section is None:  # not fitted yet: its share, at most
            estimate = sum(len(f.header) + sum(map(len, f.hunks)) for f in changes.files)
            changes_tokens = min(-(-estimate // 3), int(CHANGES_SHARE * budget))
            section = ChangesSection(changes.base, changes.files, "", changes_tokens, 0, 0)
        reserved = section_tokens(instructions, section)
        index = self.index
        choices = (budget, reserved, session.key)
        last = self._last_plan
        same = last is not None and last[0] is ranking.files and last[1] is index
        if last is not None and same and last[2] == choices:
            # the same ranked files (a keystroke that asked what the last one asked: engine.rank
            # hands back its very tuple): the same plan, under this question
            drafted = replace(last[3], query=ranking.query)
        else:
            drafted = engine.plan(ranking, index, budget, session, reserved=reserved)
            self._last_plan = (ranking.files, index, choices, drafted)
        return replace(
            drafted,
            changes_tokens=section.tokens if section is not None else 0,
            instructions_tokens=instructions,
        )

    def pack(
        self,
        ranking: Ranking,
        budget: int,
        session: Session,
        fmt: Format,
        *,
        line_numbers: bool = False,
        changes: Changes | None = None,
        redact: bool = True,
        should_stop: Callable[[], bool] | None = None,
    ) -> tuple[Plan, Rendered]:
        """Plan, render and fit a pack, measured with the real tokenizer.

        Every part of it is scanned for secrets: replaced by `[redacted: <kind>]` when
        `redact`, else left in; either way `Rendered.secrets` lists them.

        Raises:
            PackStopped: `should_stop` said to give up (checked before each count and read).
        """
        index = self.index
        self.tokenizer  # noqa: B018 - loads it, or raises, before any count
        counter: TokenCounter = self._counts
        read: Callable[[str], str] = partial(self._texts.read, index)
        if should_stop is not None:
            counter = StoppableCounter(counter, should_stop)
            read = stoppable_reader(read, should_stop)
        return engine.pack(
            ranking,
            index,
            budget,
            fmt,
            counter=counter,
            session=session,
            read_text=read,
            line_numbers=line_numbers,
            instructions=self.tuning.instructions,
            changes=self.changes_section(changes, budget) if changes is not None else None,
            secrets=self.secrets.policy(redact),
            views=self._views,
        )

    def changes_section(self, changes: Changes, budget: int) -> ChangesSection:
        """The diff fitted to its share of `budget`, counted exactly (kept for the next ask)."""
        key = (changes, budget)
        with self._lock:
            section = self._sections.get(key)
        if section is None:
            indexed = self.index.path_ids.__contains__
            shown = without_secret_diffs(changes, indexed, self.tuning.secret_hint)
            section = fit_changes(shown, int(CHANGES_SHARE * budget), self.tokenizer)
            with self._lock:
                self._sections[key] = section
                while len(self._sections) > 8:
                    self._sections.popitem(last=False)
        return section

    def _count_instructions(self) -> int:
        """Tokens of the instructions: exact once the tokenizer is loaded, else estimated."""
        text = self.tuning.instructions
        if not text.strip():
            return 0
        if self._instructions_tokens is None and self._tokenizer.loaded:
            self._instructions_tokens = self.tokenizer.count(text)
        return self._instructions_tokens or -(-len(text) // 3)

    def read_text(self, path: str) -> str:
        """A file's text as the pack reads it (kept in memory while its mtime holds)."""
        return self._texts.read(self.index, path)

    def render_file(
        self, entry: PlanEntry, *, line_numbers: bool = False, redact: bool = True
    ) -> str:
        """One file's content at its planned level, as the pack shows it (secrets redacted
        unless `redact` is off)."""
        index = self.index
        content, text = file_content(
            entry, index, partial(self._texts.read, index), line_numbers, None
        )  # a file gone from disk since indexing: the note the pack carries
        return self.redact_text(content, entry.path, original=text, redact=redact)[0]

    def redact_text(
        self, text: str, path: str, *, original: str = "", redact: bool = True
    ) -> tuple[str, list[SecretFound]]:
        """A file's text (or part of it) as it may leave: secrets replaced unless `redact` is
        off, and the secrets found (lines counted in `original`, the whole file, if given)."""
        return self.secrets.policy(redact).apply(text, path, path=path, original=original)

    def refresh(self, *, force: bool = False) -> bool:
        """Pick up files changed on disk; True when the index changed.

        A stat check of the tree at most once a second unless forced; only changed files
        are parsed again.
        """
        now = time.monotonic()
        if not force and now - self._last_check < REFRESH_INTERVAL:
            return False
        refreshed = self.find_changes()
        if refreshed is None:
            return False
        self.adopt(refreshed)
        return True

    def find_changes(self) -> tuple[Index, IndexReport] | None:
        """Index the files changed on disk (a stat check first), without replacing the index.

        Returns the new index and its report, or None when nothing changed. Readers go on
        with the current index meanwhile; `adopt` swaps the new one in.
        """
        with self._lock:
            self._last_check = time.monotonic()
            return engine.refresh_index(
                self.index,
                options=self.options,
                cache_dir=self.cache_dir,
                tokenizer=self._tokenizer.get,
            )

    def adopt(self, refreshed: tuple[Index, IndexReport]) -> None:
        """Replace the index with one `find_changes` built (with no reader in between)."""
        self.index, self.report = refreshed

    def recounted(
        self, encoding: str, paths: Iterable[str], tokenizer: LazyTokenizer | None = None
    ) -> Workspace:
        """The same index counted in another encoding at once for `paths` (the files on show).

        Loads the new tokenizer (or takes `tokenizer`, perhaps loaded ahead in the background)
        and counts only those files again; every other file keeps its count in the current
        encoding (a few per cent off) until `with_encoding` has indexed them all. Nothing is
        parsed, so this takes a fraction of a second once the tokenizer is loaded. The
        semantic stage is this one's (files mean the same in any encoding).
        """
        from engine.recount import recount  # deliberate: only an encoding switch needs it

        same = tokenizer is not None and tokenizer.encoding == encoding
        lazy = tokenizer if tokenizer is not None and same else LazyTokenizer(encoding)
        index = self.index
        texts: dict[str, str] = {}
        for path in paths:
            if path in index.path_ids and path not in texts:
                with contextlib.suppress(OSError):  # vanished: the next refresh drops it
                    texts[path] = self._texts.read(index, path)
        counted, _ = recount(index, lazy.get(), texts)
        workspace = Workspace(
            counted,
            self.report,
            lazy,
            options=self.options,
            cache_dir=self.cache_dir,
            tuning=self.tuning,
            semantic=self.semantic,  # what a file means does not depend on the encoding
        )
        workspace._texts = self._texts  # same files: the texts read so far still hold
        workspace.secrets = self.secrets
        return workspace

    def with_encoding(self, encoding: str) -> Workspace:
        """The same repository counted in another encoding (re-opens; slow the first time),
        with this workspace's semantic stage."""
        switched = Workspace.open(
            self.root,
            encoding=encoding,
            use_cache=self.cache_dir is not None,
            options=self.options,
            tuning=self.tuning,
            tokenizer=self._tokenizer,
            semantic=False,  # this one's: a stage of its own would load the model again
        )
        switched.semantic = self.semantic  # (vectors, question vectors, the background run)
        switched.secrets = self.secrets  # loaded once per process is enough
        switched._texts = self._texts
        return switched
