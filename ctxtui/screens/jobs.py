"""The app's own jobs on top of the shared ones in `ctxtui.workspace`.

The front-end-neutral work (gate, choices, pack, refresh, errors) lives in `ctxtui.workspace`
and is re-exported here, so the screens keep one name for their jobs. What is the app's alone
stays: the ranking answer with the list's token column, and the highlighted preview.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxtui.widgets.file_list import LISTED_FILES, REASONED_ROWS
from ctxtui.workspace import (
    Choices,
    ReadWriteGate,
    SavedOpener,
    WorkspaceAPI,
    WorkspaceFactory,
    describe_error,
    fresh_pack,
    open_workspace,
    pack_job,
    rank_and_plan,
    refresh_job,
    working_changes,
)
from engine.model import PlanEntry

if TYPE_CHECKING:
    from textual.content import Content
    from textual.style import Style

    from ctxtui.messages import Answer

__all__ = [
    "Choices",
    "ReadWriteGate",
    "SavedOpener",
    "WorkspaceAPI",
    "WorkspaceFactory",
    "describe_error",
    "fresh_pack",
    "open_workspace",
    "pack_job",
    "preview_job",
    "rank_job",
    "refresh_job",
    "working_changes",
]


def rank_job(
    workspace: WorkspaceAPI,
    gate: ReadWriteGate,
    generation: int,
    query: str,
    choices: Choices,
) -> Answer:
    """Rank and plan one question as it is typed, with the listed files' full sizes."""
    from ctxtui.messages import Answer

    with gate.reading():  # one index for the ranking and the sizes: a refresh waits
        # the question is being typed: a last word the index does not know may be a prefix
        ranking, plan = rank_and_plan(workspace, gate, query, choices, complete=False)
        index = workspace.index
        full_tokens = {
            ranked.path: index.files[ranked.file_id].tokens
            for ranked in ranking.files[:LISTED_FILES]
        }
        for ranked in ranking.files[:REASONED_ROWS]:  # the first screen's reasons, here, not
            len(ranked.reasons)  # in the UI thread (the ranking works them out when first read)
    return Answer(generation, query, ranking, plan, full_tokens)


def preview_job(
    workspace: WorkspaceAPI,
    gate: ReadWriteGate,
    entry: PlanEntry,
    words: tuple[str, ...],
    match_style: Style,
    *,
    redact: bool = True,
    lines: int | None = None,
) -> tuple[Content, tuple[str, ...]]:
    """Render one file at its level, as the pack carries it (secrets redacted unless the
    setting says not to), and highlight its syntax and the question's words: its first
    `lines` lines (all when None), the rest returned as plain lines."""
    from ctxtui.widgets.preview import highlight

    with gate.reading():
        text = workspace.render_file(entry, redact=redact)
    return highlight(text, entry.path, words, match_style, lines)
