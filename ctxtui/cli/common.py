"""What the subcommands share: the question, settings, progress on stderr, opening a workspace.

Errors raise EngineError (one line and exit 1 in `ctxtui.cli.main`) or UsageFailure (exit 2).
Data goes to stdout through `ctxtui.cli.output.emit`.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxtui.errors import UsageFailure
from ctxtui.settings import Settings, load_settings, scan_options, tuning
from ctxtui.time_left import Pace
from ctxtui.workspace import Workspace
from ctxtui.workspace.answers import left_out, under_root
from ctxtui.workspace.notices import counted, index_notices
from engine import Progress
from engine.model import SkipReason, printable
from engine.scan import check_root
from engine.shown_path import named as shown_as

MAX_QUESTION_CHARS = 8 * 1024 * 1024
"""Characters a question may hold (8 MiB of text); reading stdin stops one past it. The largest
budget (2,000,000 tokens) quotes a question of up to a quarter of itself, 500,000 tokens, about
2 MiB of English, code or a log at ~4 characters a token, and no model takes a context much
over 1M tokens: a real question, even a pasted log or bug report, stays well under 8 MiB. What
reaches it is a mistake (`- < /dev/zero`, a pipe from `yes`, a disk image) that would otherwise
be read into memory without end."""


def read_question(question: str) -> str:
    """The question itself, or stdin's text for `-`, as valid Unicode: bytes of an argument
    that are not UTF-8 (kept by Python as surrogates) become U+FFFD, so the pack can be
    written as UTF-8 whatever was typed.

    Raises:
        UsageFailure: the question is empty, or stdin holds over MAX_QUESTION_CHARS (exit 2).
    """
    text = sys.stdin.read(MAX_QUESTION_CHARS + 1) if question == "-" else question
    if len(text) > MAX_QUESTION_CHARS:
        raise UsageFailure(
            f"ctxtui: the question is over {MAX_QUESTION_CHARS:,} characters (8 MiB):"
            " give the part that asks (a pasted log's cause and its ask are enough)"
        )
    if not text.strip():
        raise UsageFailure("ctxtui: the question is empty")
    return printable(text)


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
"""Characters a terminal acts on (escape sequences start with ESC or a C1 control); a lone
carriage return could hide a line under the next."""


def visible_controls(text: str) -> str:
    """Text for a terminal: control characters shown as their symbols (ESC as ␛), not obeyed,
    so that a file's `\\x1b]...` or `\\x1b[2J` cannot retitle, clear or rewrite the screen.
    Tabs, newlines and CRLF line ends are kept."""
    return _CONTROL.sub(_shown, text)


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ ... ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{code:02x}"


def read_settings(path: str, **flags: Any) -> Settings:
    """The settings for a folder with the flags given on top; problems go to stderr.

    Raises:
        ScanError: the folder is missing, not one, or cannot be read (one line, exit 1).
    """
    check_root(os.path.expanduser(path))  # before its settings are looked for, and resolved
    settings = load_settings(Path(path)).with_flags(**flags)
    for problem in settings.problems:
        print(f"ctxtui: {problem}", file=sys.stderr)
    return settings


PROGRESS_REFRESH_SECONDS = 0.1
"""How often the progress bar is drawn again while a stage reports (rich's own rate)."""


@contextmanager
def progress_on_stderr() -> Iterator[Callable[[Progress], None] | None]:
    """A rich progress bar on stderr for long stages, only when stderr is a terminal.

    The bar is drawn from the reports themselves, not by rich's refresh thread: a first
    index forks its worker processes only while this process has no other thread (or it
    starts them through a forkserver, which imports everything again and shares no page),
    and on a terminal that thread made every `ctxtui index` take the slow way."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console  # deliberate: rich loads only for a terminal
    from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn
    from rich.progress import Progress as Bar

    with Bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[left]}"),  # the parse's time left, as the app says it
        console=Console(stderr=True),
        transient=True,
        auto_refresh=False,
    ) as bar:
        tasks: dict[str, TaskID] = {}
        drawn = [0.0]
        pace = Pace()

        def update(progress: Progress) -> None:
            task = tasks.get(progress.stage)
            started = task is None
            if task is None:
                task = tasks[progress.stage] = bar.add_task(
                    progress.stage, total=progress.total or None, left=""
                )
            now = time.monotonic()
            left = pace.said(progress.stage, progress.done, progress.total, now)
            bar.update(task, completed=progress.done, total=progress.total or None, left=left)
            if started or now - drawn[0] >= PROGRESS_REFRESH_SECONDS:
                drawn[0] = now
                bar.refresh()

        yield update


def open_workspace(
    path: str,
    settings: Settings,
    *,
    use_cache: bool = True,
    secret_files: tuple[str, ...] = (),
    notices: bool = True,
    semantic: bool = True,
) -> Workspace:
    """Open a folder with its settings, reporting on stderr, one line each, a discarded cache
    and (with `notices`) what the index left out: secret files, ctxtui's own packs, bad
    ignore patterns, files too slow to analyse.

    Args:
        secret_files: --include-secret patterns (secret files to index anyway).
        semantic: use the semantic stage when its extra is installed (not --no-semantic).
    """
    options = replace(scan_options(settings), secret_files=secret_files)
    with progress_on_stderr() as on_progress:
        workspace = Workspace.open(
            Path(path),
            encoding=settings.encoding,
            use_cache=use_cache,
            options=options,
            on_progress=on_progress,
            tuning=tuning(settings),
            semantic=semantic,
        )
    lines = [workspace.report.cache_notice] if workspace.report.cache_notice else []
    if notices:
        lines += index_notices(workspace.report)
    for line in lines:
        print(f"ctxtui: {line}", file=sys.stderr)
    return workspace


def repository_path(workspace: Workspace, name: str) -> str:
    """A --focus FILE as a repository path; it must exist in the index.

    FILE is a repository path (`src/app.py`, `src/../app.py`: normalised, wherever the
    command runs), else a path from the current folder or an absolute one, which must lead
    into the repository (a `..` out of it that names no file is outside it), or the name as
    `rank` and `pack` show it (U+FFFD for bytes that are not UTF-8, a secret marked)."""
    if name in workspace.index.path_ids:
        return name  # a repository path, whatever the current folder holds
    candidate = Path(name)
    normal = name if candidate.is_absolute() else posixpath.normpath(name)
    if normal in workspace.index.path_ids:
        return normal  # src/../app.py is app.py of the repository, from any folder
    named = candidate.is_absolute() or os.path.exists(candidate)  # False for too long a name
    if named or normal.split("/")[0] == "..":
        # `../x.py` from a folder of the repository; an escape that names nothing is outside
        relative = under_root(workspace.root, candidate) if named else None
        if relative is None:
            raise UsageFailure(f"ctxtui: --focus {name} is outside {workspace.root}")
        name = relative
    else:
        name = normal  # a repository path: what the index says of it
    if name not in workspace.index.path_ids and ("\ufffd" in name or "[redacted:" in name):
        # a name as rank and pack show it: its odd bytes as U+FFFD, a secret in it marked
        name = shown_as(name, workspace.index.path_ids) or name
    if name not in workspace.index.path_ids:
        reason = left_out(workspace.index, name)
        folder = "" if name in ("", ".") else name.rstrip("/") + "/"
        if not reason and any(path.startswith(folder) for path in workspace.index.path_ids):
            raise UsageFailure(f"ctxtui: --focus {name or '.'} is a folder: give one of its files")
        if not reason:
            raise UsageFailure(f"ctxtui: --focus {name}: no such file in the index")
        how = f": --include-secret {name} indexes it" if reason == SkipReason.SECRET_FILE else ""
        raise UsageFailure(f"ctxtui: --focus {name} is not indexed ({reason}){how}")
    return name


def semantic_notice(workspace: Workspace) -> None:
    """Say on stderr what the semantic stage did for the question: the files it had to embed
    first (a cold cache), a discarded vector cache, or why it could not run."""
    stage = workspace.semantic
    if stage is None:
        return
    lines = [stage.notice] if stage.notice else []
    if stage.failed:
        lines.append(f"{stage.failed}; ranked by words only")
    elif stage.last is not None and stage.last.files:
        status = stage.status(workspace.index)
        lines.append(
            f"semantic: embedded {counted(stage.last.files, 'file')} "
            f"({counted(stage.last.chunks, 'chunk')}) for "
            f"this question in {stage.last.seconds:.1f} s; {status.embedded:,} of "
            f"{status.files:,} files have vectors (`ctxtui index --semantic` embeds them all)"
        )
    for line in lines:
        print(f"ctxtui: {line}", file=sys.stderr)
