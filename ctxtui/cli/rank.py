"""`ctxtui rank QUESTION [PATH]`: the ranked files with their reasons, as text or JSON."""

from __future__ import annotations

import argparse
import json
import sys

from ctxtui.cli.common import open_workspace, read_question, repository_path
from engine import Ranking, Session
from engine.model import printable


def ranking_to_json(ranking: Ranking, limit: int) -> list[dict[str, object]]:
    """The `rank --json` list: path, score and reasons, best first."""
    return [
        {
            "path": printable(f.path),  # JSON must be valid Unicode
            "score": round(f.score, 6),
            "reasons": [
                {
                    "kind": r.kind.value,
                    "detail": r.detail,
                    "fields": list(r.fields),
                    "share": r.share,
                }
                for r in f.reasons
            ],
            "pinned": f.pinned,
            "focused": f.focused,
        }
        for f in ranking.files[:limit]
    ]


def format_ranking(ranking: Ranking, limit: int) -> str:
    """A readable ranking: rank, score, path, then a line of reasons."""
    if not ranking.files:
        return "no file matches the question\n"
    best = ranking.files[0].score or 1.0
    lines = []
    for position, f in enumerate(ranking.files[:limit], 1):
        lines.append(f"{position:>3}. {f.score / best:5.2f}  {f.path}")
        details = [
            r.detail if r.kind.value == "word" else f"{r.kind.value}: {r.detail}"
            for r in f.reasons[:6]
        ]
        if details:
            lines.append("       " + " · ".join(details))
    return "\n".join(lines) + "\n"


def run_rank(args: argparse.Namespace) -> int:
    """`ctxtui rank`: the ranked files with reasons, as text or JSON."""
    question = read_question(args.question)
    workspace = open_workspace(args.path, use_cache=not args.no_cache, exclude=tuple(args.exclude))
    session = Session(focus=tuple(repository_path(workspace, f) for f in args.focus))
    ranking = workspace.rank(question, session)
    if args.json:
        json.dump(ranking_to_json(ranking, args.limit), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_ranking(ranking, args.limit))
    return 0
