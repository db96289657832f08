"""What the subcommands share: the question, settings, progress on stderr, opening a workspace.

Errors raise EngineError (one line and exit 1 in `ctxtui.cli.main`) or UsageFailure (exit 2).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxtui.errors import UsageFailure
from ctxtui.settings import Settings, load_settings, scan_options, tuning
from ctxtui.workspace import Workspace
from ctxtui.workspace.notices import index_notices
from engine import Progress


def read_question(question: str) -> str:
    """The question itself, or stdin's text for `-`."""
    text = sys.stdin.read() if question == "-" else question
    if not text.strip():
        raise UsageFailure("ctxtui: the question is empty")
    return text


def read_settings(path: str, **flags: Any) -> Settings:
    """The settings for a folder with the flags given on top; problems go to stderr."""
    settings = load_settings(Path(path)).with_flags(**flags)
    for problem in settings.problems:
        print(f"ctxtui: {problem}", file=sys.stderr)
    return settings


@contextmanager
def progress_on_stderr() -> Iterator[Callable[[Progress], None] | None]:
    """A rich progress bar on stderr for long stages, only when stderr is a terminal."""
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
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def update(progress: Progress) -> None:
            task = tasks.get(progress.stage)
            if task is None:
                task = tasks[progress.stage] = bar.add_task(progress.stage, total=progress.total)
            bar.update(task, completed=progress.done, total=progress.total or None)

        yield update


def open_workspace(
    path: str,
    settings: Settings,
    *,
    use_cache: bool = True,
    secret_files: tuple[str, ...] = (),
    notices: bool = True,
) -> Workspace:
    """Open a folder with its settings, reporting on stderr, one line each, a discarded cache
    and (with `notices`) what the index left out: secret files, ctxtui's own packs, bad
    ignore patterns, files too slow to analyse.

    Args:
        secret_files: --include-secret patterns (secret files to index anyway).
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
        )
    lines = [workspace.report.cache_notice] if workspace.report.cache_notice else []
    if notices:
        lines += index_notices(workspace.report)
    for line in lines:
        print(f"ctxtui: {line}", file=sys.stderr)
    return workspace


def repository_path(workspace: Workspace, name: str) -> str:
    """A --focus FILE as a repository path; it must exist in the index."""
    if name in workspace.index.path_ids:
        return name  # a repository path, whatever the current folder holds
    candidate = Path(name)
    if candidate.is_absolute() or candidate.exists():
        try:
            name = candidate.resolve().relative_to(workspace.root).as_posix()
        except ValueError:
            raise UsageFailure(f"ctxtui: --focus {name} is outside {workspace.root}") from None
    if name not in workspace.index.path_ids:
        raise UsageFailure(f"ctxtui: --focus {name}: no such file in the index")
    return name
