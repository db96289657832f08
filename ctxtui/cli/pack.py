"""`ctxtui pack QUESTION [PATH]`: plan, render and print (or save, or copy) a pack."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ctxtui.cli.common import open_workspace, read_question, repository_path
from engine import EngineError, Format, Session


def run_pack(args: argparse.Namespace) -> int:
    """`ctxtui pack`: plan, render and print (or save, or copy) the pack."""
    question = read_question(args.question)
    workspace = open_workspace(
        args.path,
        encoding=args.encoding,
        use_cache=not args.no_cache,
        exclude=tuple(args.exclude),
    )
    session = Session(focus=tuple(repository_path(workspace, f) for f in args.focus))
    ranking = workspace.rank(question, session)
    plan, rendered = workspace.pack(
        ranking, args.budget, session, Format(args.format), line_numbers=args.line_numbers
    )
    for note in plan.notes:
        print(f"ctxtui: {note}", file=sys.stderr)
    if args.output:
        try:
            Path(args.output).write_text(rendered.text, encoding="utf-8")
        except OSError as exc:
            raise EngineError(f"cannot write {args.output}: {exc.strerror}") from exc
        print(
            f"ctxtui: wrote {rendered.tokens:,} tokens, {rendered.files} files to {args.output}",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(rendered.text)
    if args.copy:
        from ctxtui.clipboard import PyperclipBackend, deliver, describe  # deliberate: lazy

        ext = {Format.MARKDOWN: "md", Format.XML: "xml", Format.JSON: "json"}[Format(args.format)]
        result = deliver(rendered.text, ext, backend=PyperclipBackend(), terminal=None)
        print(f"ctxtui: {describe(result, rendered.tokens, rendered.files)}", file=sys.stderr)
    return 0
