"""The work every front-end runs on a warm workspace, as plain functions over frozen inputs.

Each takes the workspace, a gate and immutable requests and returns plain values, so the app
can run it in a thread worker and the MCP server in its own thread, and tests can call it
directly. Reads share the gate; a refresh (which replaces the index) holds it alone.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ctxtui.workspace.choices import Choices, WorkspaceAPI, WorkspaceFactory
from ctxtui.workspace.gate import ReadWriteGate
from engine.changes import read_changes
from engine.errors import EngineError
from engine.model import Plan, Progress, Ranking, Rendered


def open_workspace(
    factory: WorkspaceFactory,
    root: Path,
    encoding: str,
    on_progress: Callable[[Progress], None],
    **options: object,
) -> WorkspaceAPI:
    """Open (index or load from cache) the workspace of root; `options` go to the factory."""
    return factory(root, encoding=encoding, on_progress=on_progress, **options)


def rank_and_plan(
    workspace: WorkspaceAPI,
    gate: ReadWriteGate,
    query: str,
    choices: Choices,
    *,
    complete: bool = True,
) -> tuple[Ranking, Plan]:
    """Rank a question and plan its pack on estimated counts (fast: every keystroke)."""
    with gate.reading():
        session = choices.session(workspace.index)
        ranking = workspace.rank(query, session, complete=complete)
        plan = workspace.plan(ranking, choices.budget, session, changes=choices.changes)
        return ranking, plan


def pack_job(
    workspace: WorkspaceAPI,
    gate: ReadWriteGate,
    ranking: Ranking,
    choices: Choices,
    *,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[Plan, Rendered]:
    """Render the pack exactly, fitted to the budget and measured with the real tokenizer.

    Raises:
        PackStopped: `should_stop` said to give up.
    """
    with gate.reading():
        session = choices.session(workspace.index)
        return workspace.pack(
            ranking,
            choices.budget,
            session,
            choices.fmt,
            line_numbers=choices.line_numbers,
            changes=choices.changes,
            redact=choices.redact,
            should_stop=should_stop,
        )


def build_pack(
    workspace: WorkspaceAPI,
    gate: ReadWriteGate,
    question: str,
    choices: Choices,
    *,
    complete: bool = True,
) -> tuple[Ranking, Plan, Rendered]:
    """Rank a question and render its pack exactly: what `ctxtui pack` prints, what the MCP
    server's build_pack and current_selection return, what the app copies."""
    with gate.reading():  # one index for the ranking and the pack: a refresh waits
        ranking, _estimate = rank_and_plan(workspace, gate, question, choices, complete=complete)
        plan, rendered = pack_job(workspace, gate, ranking, choices)
    return ranking, plan, rendered


def fresh_pack(
    workspace: WorkspaceAPI,
    gate: ReadWriteGate,
    question: str,
    choices: Choices,
    current: tuple[Plan, Rendered] | None,
) -> tuple[Rendered, bool]:
    """The pack to copy or save, as the files are now, and whether the tree had moved on
    from the pack on show (files re-indexed, the changes read again: the screen should
    follow). `current` is kept when none of its files changed on disk since it was
    rendered (a stat each) and, when the changes are packed, git shows the same changes;
    else the changed files are re-indexed and the pack is built again.

    The app renders a pack when the typing pauses; a file edited after that (in an editor
    beside it) must not reach the clipboard in its old form, nor its diff.

    Raises:
        GitError: the changes are packed and git failed to read them again (a damaged
            index): the copy fails with git's reason rather than copy a diff that may be
            stale, or none (the app's copy worker shows it in its error notification).
    """
    changes = choices.changes
    if changes is not None:
        now = read_changes(workspace.root, None if changes.base == "HEAD" else changes.base)
        if now != changes:
            choices = replace(choices, changes=now if now is not None and now.files else None)
    moved = choices.changes is not changes
    if current is not None and not moved and not _changed_on_disk(workspace, current[0]):
        return current[1], False
    if current is not None or moved:
        moved = refresh_job(workspace, gate) or moved
    _ranking, _plan, rendered = build_pack(workspace, gate, question, choices, complete=False)
    return rendered, moved


def _changed_on_disk(workspace: WorkspaceAPI, plan: Plan) -> bool:
    """Tell whether a file of the plan differs on disk (size or mtime) from the index."""
    index = workspace.index  # replaced whole by a refresh, never changed in place
    for entry in plan.entries:
        if entry.file_id >= len(index.files) or index.files[entry.file_id].path != entry.path:
            return True
        known = index.files[entry.file_id]
        try:
            stat = os.stat(os.path.join(index.root, entry.path))
        except OSError:
            return True
        if stat.st_size != known.size or stat.st_mtime_ns != known.mtime_ns:
            return True
    return False


def refresh_job(workspace: WorkspaceAPI, gate: ReadWriteGate) -> bool:
    """Look for files changed on disk (a stat check) and re-index them; True when any were.

    The check and the re-index run beside the readers (on a 2,000-file tree outside git
    the check alone takes a few hundred milliseconds); only the swap holds the gate alone.
    """
    refreshed = workspace.find_changes()
    if refreshed is None:
        return False
    with gate.writing():
        workspace.adopt(refreshed)
    return True


def describe_error(error: BaseException | None) -> str:
    """One line for the user about a worker's error."""
    if isinstance(error, EngineError):
        return str(error)
    if isinstance(error, OSError):
        where = f": {error.filename}" if error.filename else ""
        return f"{error.strerror or error}{where}"
    return f"{type(error).__name__}: {error}"
