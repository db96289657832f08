"""`ctxtui rank QUESTION [PATH]`: the ranked files with their reasons, as text or JSON."""

from __future__ import annotations

import argparse
import json

from ctxtui.cli.common import (
    open_workspace,
    read_question,
    read_settings,
    repository_path,
    semantic_notice,
)
from ctxtui.cli.output import emit
from ctxtui.workspace.answers import ranking_to_json, reason_text
from engine import Ranking, Session
from engine.model import one_line
from engine.shown_path import shown_line


def format_ranking(ranking: Ranking, limit: int, *, redact: bool = True) -> str:
    """A readable ranking: rank, score, path, then a line of reasons (a secret in a file
    name redacted unless `redact` is off: engine.shown_path)."""
    if not ranking.files:
        return "no file matches the question\n"
    best = ranking.files[0].score or 1.0
    lines = []
    for position, f in enumerate(ranking.files[:limit], 1):
        lines.append(f"{position:>3}. {f.score / best:5.2f}  {shown_line(f.path, redact=redact)}")
        details = [reason_text(r, redact=redact) for r in f.reasons[:6]]
        if details:
            lines.append("       " + one_line(" · ".join(details)))
    return "\n".join(lines) + "\n"


def run_rank(args: argparse.Namespace) -> int:
    """`ctxtui rank`: the ranked files with reasons, as text or JSON."""
    question = read_question(args.question)
    settings = read_settings(args.path, exclude=tuple(args.exclude))
    workspace = open_workspace(
        args.path,
        settings,
        use_cache=not args.no_cache,
        secret_files=tuple(args.include_secret),
        semantic=not args.no_semantic,
    )
    session = Session(focus=tuple(repository_path(workspace, f) for f in args.focus))
    ranking = workspace.rank(question, session)
    semantic_notice(workspace)
    if args.json:
        emit(
            json.dumps(
                ranking_to_json(ranking, args.limit, redact=settings.redact),
                indent=1,
                ensure_ascii=False,
            )
            + "\n"
        )
    else:
        emit(format_ranking(ranking, args.limit, redact=settings.redact))
    return 0
