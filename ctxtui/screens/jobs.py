"""The work the main screen runs in thread workers, as plain functions over immutable requests.

Each job takes the workspace, a gate and frozen inputs, and returns a value the screen posts
as a message; none touches a widget, so each can be called and tested without running the app.
The gate lets many readers (rank, pack, preview) share the index while a refresh, which
re-indexes changed files, waits for them and keeps them out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ctxtui.widgets.file_list import LISTED_FILES
from engine.errors import EngineError
from engine.model import Format, Index, Level, Plan, PlanEntry, Progress, Ranking, Rendered, Session

if TYPE_CHECKING:
    from textual.content import Content
    from textual.style import Style

    from ctxtui.messages import Answer


class WorkspaceAPI(Protocol):
    """What the app needs from `ctxtui.workspace.Workspace` (a fake satisfies it in tests)."""

    root: Path
    encoding: str
    index: Index

    def rank(self, query: str, session: Session, *, complete: bool = True) -> Ranking: ...

    def plan(self, ranking: Ranking, budget: int, session: Session) -> Plan: ...

    def pack(
        self,
        ranking: Ranking,
        budget: int,
        session: Session,
        fmt: Format,
        *,
        line_numbers: bool = False,
    ) -> tuple[Plan, Rendered]: ...

    def render_file(self, entry: PlanEntry, *, line_numbers: bool = False) -> str: ...

    def refresh(self, *, force: bool = False) -> bool: ...

    def with_encoding(self, encoding: str) -> WorkspaceAPI: ...


WorkspaceFactory = Callable[..., WorkspaceAPI]
"""`Workspace.open(root, *, encoding=..., on_progress=...)` or a stand-in."""


class ReadWriteGate:
    """Many readers at once, or one writer alone (writers wait for readers to leave)."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._readers = 0

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the gate for reading."""
        with self._condition:
            self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                self._readers -= 1
                if not self._readers:
                    self._condition.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the gate alone; new readers wait until the writer is done."""
        with self._condition:
            self._condition.wait_for(lambda: self._readers == 0)
            yield


@dataclass(frozen=True, slots=True)
class Choices:
    """The user's choices, frozen for a worker."""

    pinned: frozenset[str]
    """Pinned paths, including ones that may have left the repository."""
    overrides: Mapping[str, Level]
    """Per-file levels chosen by the user (a private copy)."""
    budget: int
    """Token budget."""
    fmt: Format
    """Format of the pack."""

    def session(self, index: Index) -> Session:
        """Return the engine's Session, ignoring pins and overrides of vanished files."""
        known = index.path_ids or {f.path: i for i, f in enumerate(index.files)}
        return Session(
            pinned=frozenset(path for path in self.pinned if path in known),
            overrides={path: lvl for path, lvl in self.overrides.items() if path in known},
        )


def open_workspace(
    factory: WorkspaceFactory,
    root: Path,
    encoding: str,
    on_progress: Callable[[Progress], None],
) -> WorkspaceAPI:
    """Open (index or load from cache) the workspace of root."""
    return factory(root, encoding=encoding, on_progress=on_progress)


def rank_job(
    workspace: WorkspaceAPI,
    gate: ReadWriteGate,
    generation: int,
    query: str,
    choices: Choices,
) -> Answer:
    """Rank and plan one question."""
    from ctxtui.messages import Answer

    with gate.reading():
        index = workspace.index
        session = choices.session(index)
        # the question is being typed: a last word the index does not know may be a prefix
        ranking = workspace.rank(query, session, complete=False)
        plan = workspace.plan(ranking, choices.budget, session)
        full_tokens = {
            ranked.path: index.files[ranked.file_id].tokens
            for ranked in ranking.files[:LISTED_FILES]
        }
    return Answer(generation, query, ranking, plan, full_tokens)


def pack_job(
    workspace: WorkspaceAPI, gate: ReadWriteGate, ranking: Ranking, choices: Choices
) -> tuple[Plan, Rendered]:
    """Render the pack exactly, fitted to the budget and measured with the real tokenizer."""
    with gate.reading():
        session = choices.session(workspace.index)
        return workspace.pack(ranking, choices.budget, session, choices.fmt)


def preview_job(
    workspace: WorkspaceAPI,
    gate: ReadWriteGate,
    entry: PlanEntry,
    words: tuple[str, ...],
    match_style: Style,
) -> Content:
    """Render one file at its level and highlight its syntax and the question's words."""
    from ctxtui.widgets.preview import highlight

    with gate.reading():
        text = workspace.render_file(entry)
    return highlight(text, entry.path, words, match_style)


def refresh_job(workspace: WorkspaceAPI, gate: ReadWriteGate) -> bool:
    """Look for files changed on disk (a stat check) and re-index them; True when any were."""
    with gate.writing():
        return workspace.refresh(force=True)


def describe_error(error: BaseException | None) -> str:
    """One line for the user about a worker's error."""
    if isinstance(error, EngineError):
        return str(error)
    if isinstance(error, OSError):
        where = f": {error.filename}" if error.filename else ""
        return f"{error.strerror or error}{where}"
    return f"{type(error).__name__}: {error}"
