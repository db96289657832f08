"""The MCP server's tools as plain methods over a warm repository.

Each returns the text an agent reads and the data a client can use, or raises `ToolError`
with one line that says what was wrong and how to ask instead; anything else is a bug and is
reported as such by the server (which keeps running). `build_pack` and `current_selection`
go through the very function `ctxtui pack` uses, so their text is the same to the byte, but
for the note in place of a secret file's diff: it says what an agent can do (`!NAME` in
`.ctxtuiignore`), not the command line's `--include-secret`.
"""

from __future__ import annotations

import posixpath
from functools import partial
from pathlib import Path
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from ctxtui.mcp.warm import WarmRepository
from ctxtui.settings import pack_choices
from ctxtui.state import MAX_BUDGET, StateStore
from ctxtui.workspace import Choices, Workspace, build_pack, working_changes
from ctxtui.workspace.answers import (
    gone_paths,
    left_out,
    pack_summary,
    ranked_files,
    under_root,
)
from ctxtui.workspace.notices import counted, dropped_choices_notice, secret_notices
from engine import EngineError, Format, Level, Session, UsageError
from engine.changes import Changes
from engine.ignore import BadPattern, compile_rule
from engine.levels import shown_level
from engine.model import Plan, Rendered, SkipReason, one_line
from engine.shown_path import named, shown_path

MAX_LIMIT = 200
"""Most files rank_files returns (the ranking keeps no more)."""
ECHO_CHARACTERS = 200
"""Most characters of the question rank_files says it ranked for: the agent sent it, so a
reminder is enough (a pasted log of 1.5 MB came back whole)."""


class Tools:
    """rank_files, build_pack, file_outline, file_focused and current_selection."""

    def __init__(self, repository: WarmRepository, state_dir: Path | None = None) -> None:
        self.repository = repository
        self.state_dir = state_dir
        """Folder of the app's saved state (None: the user state folder, as the app uses)."""

    def rank_files(self, question: str, limit: int = 20) -> dict[str, Any]:
        """The best files for a question, with scores, token costs and reasons."""
        question = _question(question)
        if not 1 <= limit <= MAX_LIMIT:
            raise ToolError(f"limit must be between 1 and {MAX_LIMIT} (got {limit})")
        settings = self.repository.settings()
        workspace, gate = self.repository.workspace(settings)
        with gate.reading():
            ranking = workspace.rank(question, Session())
            files = ranked_files(ranking, workspace.index, limit, redact=settings.redact)
        return {"question": _echo(question), "encoding": workspace.encoding, "files": files}

    def build_pack(
        self,
        question: str,
        budget: int | None = None,
        format: str | None = None,
        focus: list[str] | None = None,
        exclude: list[str] | None = None,
        changed: bool = False,
        base: str | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """A pack for a question: its text and a summary (files, levels, tokens)."""
        question = _question(question)
        settings = self.repository.settings().with_flags(
            budget=_budget(budget), fmt=_format(format), exclude=tuple(_patterns(exclude))
        )
        workspace, gate = self.repository.workspace(settings)
        changes, notice = self._changes(workspace, changed, base)
        names = tuple(_repository_path(workspace, name) for name in focus or ())
        choices = pack_choices(settings, changes=changes, focus=names)
        return self._pack(workspace, gate, question, choices, notice=notice)

    def file_outline(self, path: str) -> tuple[str, dict[str, Any]]:
        """One file's outline: signatures and first doc sentences."""
        settings = self.repository.settings()
        workspace, gate = self.repository.workspace(settings)
        with gate.reading():
            name = _repository_path(workspace, path)
            return _one_file(workspace, name, Level.OUTLINE, (), redact=settings.redact)

    def file_focused(self, path: str, question: str) -> tuple[str, dict[str, Any]]:
        """One file focused on a question: matching declarations whole, the rest outlined."""
        question = _question(question)
        settings = self.repository.settings()
        workspace, gate = self.repository.workspace(settings)
        with gate.reading():
            name = _repository_path(workspace, path)
            ranking = workspace.rank(question, Session(focus=(name,)))
            ranked = next(f for f in ranking.files if f.path == name)
            matched = tuple(ranked.matched_declarations)
            return _one_file(workspace, name, Level.FOCUSED, matched, redact=settings.redact)

    def current_selection(self) -> tuple[str, dict[str, Any]]:
        """The pack the person built in the app for this repository, as it saved it."""
        store = StateStore(self.repository.root, self.state_dir)
        if not store.path.is_file():
            raise ToolError(
                f"No selection saved for {self.repository.root}: the person has not opened it "
                "in the ctxtui app yet. Use build_pack with a question instead."
            )
        state, problem = store.load(set_aside=False)  # a read-only tool leaves the file be
        if problem:
            raise ToolError(f"{problem} The app sets it aside when it next opens.")
        settings = self.repository.settings()
        workspace, gate = self.repository.workspace(settings, encoding=state.encoding)
        changes, notice = self._changes(workspace, state.changed, None)
        # pins and levels of files gone since the app saved them (deleted, renamed, now
        # skipped) are dropped, as the app drops them when it next opens (its state file is
        # the app's to change: a read-only tool leaves it be), and said in a note
        gone_pins = gone_paths(workspace.index, state.pinned)
        gone_levels = gone_paths(workspace.index, state.overrides)
        pinned = state.pinned - set(gone_pins)
        overrides = {p: v for p, v in state.overrides.items() if p not in gone_levels}
        choices = Choices(
            pinned=pinned,
            overrides=overrides,
            budget=state.budget,
            fmt=state.fmt,
            changes=changes,
            line_numbers=settings.line_numbers,
            redact=settings.redact,
        )
        text, summary = self._pack(
            workspace, gate, state.query, choices, notice=notice, complete=False
        )
        summary["question"] = state.query
        shown = partial(shown_path, redact=settings.redact)
        if gone_pins or gone_levels:
            summary["notes"].append(dropped_choices_notice(gone_pins, gone_levels))
        summary["pinned"] = sorted(shown(path) for path in pinned)
        summary["levels"] = {shown(path): level.value for path, level in sorted(overrides.items())}
        return text, summary

    # ------------------------------------------------------------------ helpers

    def _changes(
        self, workspace: Workspace, changed: bool, base: str | None
    ) -> tuple[Changes | None, str]:
        if not changed:
            if base:
                raise ToolError("base is only used with changed=true")
            return None, ""
        try:
            return working_changes(workspace.root, base or None)
        except UsageError as error:
            raise ToolError(str(error)) from None

    def _pack(
        self,
        workspace: Workspace,
        gate: Any,
        question: str,
        choices: Choices,
        *,
        notice: str,
        complete: bool = True,
    ) -> tuple[str, dict[str, Any]]:
        try:
            _ranking, plan, rendered = build_pack(
                workspace, gate, question, choices, complete=complete
            )
        except EngineError as error:
            raise ToolError(str(error)) from None
        summary = pack_summary(plan, rendered)
        summary["notes"] = [*([notice] if notice else []), *plan.notes, *secret_notices(rendered)]
        summary["summary"] = summary_line(plan, rendered)
        return rendered.text, summary


def summary_line(plan: Plan, rendered: Rendered) -> str:
    """One line about a pack for the agent reading it."""
    return (
        f"{counted(rendered.files, 'file')}, {rendered.tokens:,} of {plan.budget:,} tokens, "
        f"{rendered.fmt.value}"
    )


def _question(question: str) -> str:
    if not question.strip():
        raise ToolError("question is empty: say what the code should answer")
    return question


def _echo(question: str) -> str:
    """The question as one line of at most ECHO_CHARACTERS: its spaces and line breaks
    run together, its end cut and its length said."""
    line = " ".join(question.split())
    if len(line) <= ECHO_CHARACTERS:
        return line
    told = f"… ({len(question):,} characters)"
    return line[: ECHO_CHARACTERS - len(told)].rstrip() + told


def _budget(budget: int | None) -> int | None:
    if budget is not None and not 1 <= budget <= MAX_BUDGET:
        raise ToolError(f"budget must be between 1 and {MAX_BUDGET:,} tokens (got {budget})")
    return budget


def _format(name: str | None) -> Format | None:
    if name is None:
        return None
    try:
        return Format(name)
    except ValueError:
        choices = ", ".join(f.value for f in Format)
        raise ToolError(f"unknown format {name!r}: use one of {choices}") from None


def _patterns(patterns: list[str] | None) -> list[str]:
    cleaned = [p for p in patterns or () if p.strip()]
    if len(cleaned) != len(patterns or ()):
        raise ToolError("exclude patterns must not be empty")
    for pattern in cleaned:  # the index would leave it out and tell only its own stderr
        try:
            compile_rule(pattern)
        except BadPattern as error:
            raise ToolError(f"exclude: bad pattern {pattern!r} ({error})") from None
    return cleaned


def _repository_path(workspace: Workspace, name: str) -> str:
    """A path an agent gave, as the index's relative POSIX path; ToolError when it is not one."""
    root = workspace.root
    if not name.strip():
        raise ToolError("path is empty: give a file's path, relative to the repository")
    if "\0" in name:  # no file name holds one; Path.resolve would fail on it
        raise ToolError(f"{one_line(name)}: a path cannot hold a NUL character")
    candidate = Path(name)
    if candidate.is_absolute():
        relative = under_root(root, candidate)
        if relative is None:
            raise ToolError(f"{one_line(name)} is outside the repository {root}")
        name = relative
    relative = posixpath.normpath(name.replace("\\", "/"))  # "app/../app/x.py" is app/x.py
    if relative == ".." or relative.startswith("../"):
        raise ToolError(f"{one_line(name)} is outside the repository {root}")
    index = workspace.index
    if relative in index.path_ids:
        return relative
    if "\ufffd" in relative or "[redacted:" in relative:  # a name as the server showed it
        same = named(relative, index.path_ids)
        if same is not None:
            return same
    shown = one_line(relative)
    reason = left_out(index, relative)
    if reason == SkipReason.SECRET_FILE:  # what the agent can do: it has no --include-secret
        raise ToolError(f"{shown} is not indexed ({reason}): !{shown} in .ctxtuiignore packs it")
    if reason:
        raise ToolError(f"{shown} is not indexed ({reason})")
    folder = relative.rstrip("/") + "/"
    if folder == "./" or any(path.startswith(folder) for path in index.path_ids):
        raise ToolError(f"{shown} is a folder: give the path of one of its files")
    raise ToolError(f"{shown}: no such file in the repository (paths are relative to {root})")


def _one_file(
    workspace: Workspace, path: str, level: Level, matched: tuple[int, ...], *, redact: bool
) -> tuple[str, dict[str, Any]]:
    index = workspace.index
    parsed = index.files[index.path_ids[path]]
    try:
        text = workspace.read_text(path)
    except OSError as error:
        shown = shown_path(path, redact=redact)
        raise ToolError(f"{shown} could not be read: {error.strerror or error}") from None
    # the level asked for, or a richer one that costs no more (as in a pack)
    shown, content, _ = shown_level(parsed, text, level, matched, workspace.tokenizer.count)
    content, secrets = workspace.redact_text(content, path, original=text, redact=redact)
    return content, {
        "path": shown_path(path, redact=redact),
        "level": shown.value,
        "asked": level.value,
        "language": parsed.language,
        "tokens": workspace.tokenizer.count(content),
        "declarations": len(parsed.declarations),
        "secrets": [{"line": s.line, "kind": s.kind, "redacted": redact} for s in secrets],
    }
