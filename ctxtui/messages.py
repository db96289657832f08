"""App-level messages that no single widget owns: answers from thread workers.

Workers never touch widgets; they post one of these to the main screen, which checks that the
answer is still current (its generation) before showing it. Facts are named in the past tense.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from engine.changes import Changes
from engine.model import Plan, Progress, Ranking, Rendered

if TYPE_CHECKING:
    from textual.content import Content

    from ctxtui.clipboard import CopyResult
    from ctxtui.workspace import WorkspaceAPI


class IndexProgressed(Message):
    """The first index moved on; a burst collapses into the newest report."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress
        """Stage and counts."""

    def can_replace(self, message: Message) -> bool:
        """Replace an older, still queued report: only the newest matters for a bar."""
        return isinstance(message, IndexProgressed)


class IndexStarted(Message):
    """No saved index could be shown first: the repository is being indexed (seconds on a
    large one, where a moving bar says the app is at work)."""


class WorkspaceOpened(Message):
    """The workspace is indexed and ready to rank (also after an encoding change)."""

    def __init__(self, workspace: WorkspaceAPI, seconds: float, *, saved: bool = False) -> None:
        super().__init__()
        self.workspace = workspace
        """The opened workspace."""
        self.seconds = seconds
        """Wall time the opening took."""
        self.saved = saved
        """It is the cache as saved, the tree not yet checked: the full open follows."""


class EncodingSwitched(Message):
    """The workspace was counted in another encoding: the files on show, or all of them."""

    def __init__(self, workspace: WorkspaceAPI, *, complete: bool) -> None:
        super().__init__()
        self.workspace = workspace
        """The workspace counted in the new encoding."""
        self.complete = complete
        """False while only the files on show are counted; True once every file is."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A ranking and its fast (estimated) plan for one question."""

    generation: int
    """Counter of the request; older generations are dropped."""
    query: str
    """The question ranked."""
    ranking: Ranking
    """Ranked files."""
    plan: Plan
    """Estimated plan for the budget."""
    full_tokens: dict[str, int]
    """Tokens of each ranked file at full level, for files the plan leaves out."""


class RankingReady(Message):
    """A rank worker answered."""

    def __init__(self, answer: Answer) -> None:
        super().__init__()
        self.answer = answer
        """The answer."""


class PackReady(Message):
    """A pack worker rendered the pack exactly for a ranking."""

    def __init__(self, generation: int, plan: Plan, rendered: Rendered) -> None:
        super().__init__()
        self.generation = generation
        """Generation of the ranking it packed."""
        self.plan = plan
        """The exact plan, fitted to the budget."""
        self.rendered = rendered
        """The text that a copy delivers."""


class PreviewReady(Message):
    """The preview of one file was rendered and highlighted."""

    def __init__(self, key: tuple[object, ...], text: Content, rest: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.key = key
        """What was asked (path, level, tokens, words); answers to older asks are dropped."""
        self.text = text
        """Highlighted content (the file's head when `rest` holds the other lines)."""
        self.rest = rest
        """The lines after the highlighted head, plain (none: the whole file is highlighted)."""


class PackDelivered(Message):
    """A copy finished, one way or another."""

    def __init__(self, result: CopyResult, rendered: Rendered) -> None:
        super().__init__()
        self.result = result
        """Which way it went."""
        self.rendered = rendered
        """What was copied."""


class PackSaved(Message):
    """A pack was written to a file the user named."""

    def __init__(self, path: Path, rendered: Rendered) -> None:
        super().__init__()
        self.path = path
        """The file written."""
        self.rendered = rendered
        """What was written."""


class WorkspaceRefreshed(Message):
    """A refresh looked for changes on disk."""

    def __init__(self, changed: bool, *, automatic: bool = False, seconds: float = 0.0) -> None:
        super().__init__()
        self.changed = changed
        """True when files were re-indexed."""
        self.automatic = automatic
        """True for the check made after a pause; False when the user pressed r."""
        self.seconds = seconds
        """Wall time the check (and any re-index) took."""


class ChangesRead(Message):
    """Git answered: the work tree's changes, or a notice why there are none to pack."""

    def __init__(self, changes: Changes | None, notice: str, *, failed: bool = False) -> None:
        super().__init__()
        self.changes = changes
        """The changes; None outside git, when nothing changed, or when git failed."""
        self.notice = notice
        """One line saying why there are none; empty when there are."""
        self.failed = failed
        """git failed in the work tree (a damaged index...): the notice is its reason."""


class SemanticProgressed(Message):
    """The background embedding moved on; a burst collapses into the newest report."""

    def __init__(self, progress: Progress, finished: bool = False) -> None:
        super().__init__()
        self.progress = progress
        """Files embedded of those that had no vectors when it started."""
        self.finished = finished
        """The embedding ended (done, stopped or failed)."""

    def can_replace(self, message: Message) -> bool:
        """Replace an older, still queued report that is not the last one."""
        return isinstance(message, SemanticProgressed) and not message.finished


class SemanticReady(Message):
    """After a pause in the typing, the vectors of the answer on show were made."""

    def __init__(self, generation: int) -> None:
        super().__init__()
        self.generation = generation
        """Generation of the answer they were made for."""
