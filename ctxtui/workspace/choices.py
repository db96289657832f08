"""What a front-end hands a worker: the user's choices frozen, and the workspace it asks.

`Choices` is the person's pack as data (pins, levels, budget, format), the same whether it
comes from the app's keys or its saved state; `WorkspaceAPI` is what the front-ends need of
`Workspace`, so a test can hand them a stand-in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from engine.changes import Changes
from engine.model import (
    Format,
    Index,
    IndexReport,
    Level,
    Plan,
    PlanEntry,
    Progress,
    Ranking,
    Rendered,
    Session,
)

if TYPE_CHECKING:
    from ctxtui.workspace.core import LazyTokenizer


class WorkspaceAPI(Protocol):
    """What the front-ends need from `ctxtui.workspace.Workspace` (a fake satisfies it)."""

    index: Index
    report: IndexReport

    @property
    def root(self) -> Path: ...

    @property
    def encoding(self) -> str: ...

    def rank(self, query: str, session: Session, *, complete: bool = True) -> Ranking: ...

    def plan(
        self, ranking: Ranking, budget: int, session: Session, *, changes: Changes | None = None
    ) -> Plan: ...

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
    ) -> tuple[Plan, Rendered]: ...

    def render_file(
        self, entry: PlanEntry, *, line_numbers: bool = False, redact: bool = True
    ) -> str: ...

    def refresh(self, *, force: bool = False) -> bool: ...

    def find_changes(self) -> tuple[Index, IndexReport] | None: ...

    def adopt(self, refreshed: tuple[Index, IndexReport]) -> None: ...

    def recounted(
        self, encoding: str, paths: Iterable[str], tokenizer: LazyTokenizer | None = None
    ) -> WorkspaceAPI: ...

    def with_encoding(self, encoding: str) -> WorkspaceAPI: ...

    def prepare_semantic(
        self, ranking: Ranking, should_stop: Callable[[], bool] | None = None
    ) -> bool: ...

    def embed_all(
        self,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        first: Sequence[int] = (),
    ) -> int: ...


WorkspaceFactory = Callable[..., WorkspaceAPI]
"""`Workspace.open(root, *, encoding=..., on_progress=...)` or a stand-in."""
SavedOpener = Callable[..., WorkspaceAPI | None]
"""`Workspace.open_saved(root, *, encoding=..., tokenizer=...)`: the cache alone, or None."""


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
    changes: Changes | None = None
    """The work tree's changes to pack (their files pinned, their diff a section); None
    when not asked for."""
    focus: tuple[str, ...] = ()
    """Paths named with --focus (the command line and the MCP server), in order."""
    line_numbers: bool = False
    """Prefix source lines with their numbers."""
    redact: bool = True
    """Replace the secrets found in the pack with markers (off: leave them in, loudly)."""

    def session(self, index: Index) -> Session:
        """Return the engine's Session, ignoring pins and overrides of vanished files.

        Changed files count as pinned while the changes are packed.
        """
        known = index.path_ids or {f.path: i for i, f in enumerate(index.files)}
        changed = self.changes.present if self.changes is not None else ()
        return Session(
            pinned=frozenset(path for path in (*self.pinned, *changed) if path in known),
            focus=tuple(path for path in self.focus if path in known),
            overrides={path: lvl for path, lvl in self.overrides.items() if path in known},
        )
