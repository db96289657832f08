"""`ctxtui pack QUESTION [PATH]`: plan, render and print (or save, or copy) a pack."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ctxtui.cli.common import (
    open_workspace,
    read_question,
    read_settings,
    repository_path,
    semantic_notice,
    visible_controls,
)
from ctxtui.cli.output import emit
from ctxtui.errors import UsageFailure
from ctxtui.settings import pack_choices
from ctxtui.state import FORMAT_EXTENSIONS, write_output
from ctxtui.workspace import ReadWriteGate, build_pack, working_changes
from ctxtui.workspace.notices import secret_notices
from engine import EngineError, Format, UsageError
from engine.changes import Changes
from engine.model import printable


def run_pack(args: argparse.Namespace) -> int:
    """`ctxtui pack`: plan, render and print (or save, or copy) the pack."""
    if args.output is not None and not args.output.strip():  # before the index's minutes
        raise UsageFailure("ctxtui: -o needs a file name (without -o the pack goes to stdout)")
    if args.output == "-":  # as the question's "-" is stdin: not a file named "-"
        args.output = None
    question = read_question(args.question)
    settings = read_settings(
        args.path,
        budget=args.budget,
        fmt=Format(args.format) if args.format else None,
        encoding=args.encoding,
        exclude=tuple(args.exclude),
        line_numbers=args.line_numbers,
        redact=False if args.no_redact else None,
    )
    if not settings.redact:
        print(
            f"ctxtui: WARNING: redaction is off ({settings.source('redact')}): secrets found"
            " in the pack are left in it",
            file=sys.stderr,
        )
    workspace = open_workspace(
        args.path,
        settings,
        use_cache=not args.no_cache,
        secret_files=tuple(args.include_secret),
        semantic=not args.no_semantic,
    )
    changes = changed_files(workspace.root, args.changed)
    focus = tuple(repository_path(workspace, f) for f in args.focus)
    choices = pack_choices(settings, changes=changes, focus=focus)
    _ranking, plan, rendered = build_pack(workspace, ReadWriteGate(), question, choices)
    semantic_notice(workspace)
    for note in (*plan.notes, *secret_notices(rendered)):
        print(f"ctxtui: {note}", file=sys.stderr)
    if args.output:
        shown = printable(args.output)  # a name's odd bytes said as U+FFFD, not `\udcff`
        try:
            write_output(args.output, rendered.text)
        except OSError as exc:
            raise EngineError(f"cannot write {shown}: {exc.strerror}") from exc
        print(
            f"ctxtui: wrote {rendered.tokens:,} tokens, {rendered.files} "
            f"file{'' if rendered.files == 1 else 's'} to {shown}",
            file=sys.stderr,
        )
    elif sys.stdout.isatty():
        emit(visible_controls(rendered.text))  # shown, not obeyed: see visible_controls
    else:
        emit(rendered.text)
    if args.copy:
        from ctxtui.clipboard import PyperclipBackend, deliver, describe  # deliberate: lazy

        ext = FORMAT_EXTENSIONS[settings.fmt]
        result = deliver(rendered.text, ext, backend=PyperclipBackend(), terminal=None)
        print(f"ctxtui: {describe(result, rendered.tokens, rendered.files)}", file=sys.stderr)
    return 0


def changed_files(root: Path, changed: str | None) -> Changes | None:
    """The changes `--changed [BASE]` asks for; a one-line notice when there are none (or
    no git to read them with); a BASE that cannot be diffed against fails the command, and so
    does a git that fails to read them (README: exit 2 for bad usage, 1 for work that cannot
    be done)."""
    if changed is None:
        return None
    try:
        changes, notice = working_changes(root, changed or None)
    except UsageError as error:  # an unknown base, or one named outside git: exit 2
        # `pack Q --changed DIR`: --changed takes the word after it as its BASE
        folder = os.path.isdir(changed or "")
        hint = f" (to pack the folder {changed}, write it before --changed)" if folder else ""
        raise UsageFailure(f"ctxtui: --changed: {error}{hint}") from None
    except EngineError as error:  # git missing, or failing (GitError): the work failed, exit 1
        raise EngineError(f"--changed: {error}") from None
    if notice:
        print(f"ctxtui: {notice}", file=sys.stderr)
    return changes
