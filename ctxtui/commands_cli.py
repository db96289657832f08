"""The subcommands `index`, `rank` and `pack`: open a workspace, print data to stdout.

Each takes the parsed arguments and returns an exit code; errors raise EngineError (turned
into one line and exit 1 by cli.main) or UsageFailure (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ctxtui.cli import UsageFailure
from ctxtui.workspace import Workspace
from engine import EngineError, Format, IndexReport, Progress, Ranking, ScanOptions, Session
from engine.model import printable


def read_question(question: str) -> str:
    """The question itself, or stdin's text for `-`."""
    text = sys.stdin.read() if question == "-" else question
    if not text.strip():
        raise UsageFailure("ctxtui: the question is empty")
    return text


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
    *,
    encoding: str = "o200k_base",
    use_cache: bool = True,
    exclude: tuple[str, ...] = (),
) -> Workspace:
    """Open a folder, reporting a discarded cache in one line on stderr."""
    with progress_on_stderr() as on_progress:
        workspace = Workspace.open(
            Path(path),
            encoding=encoding,
            use_cache=use_cache,
            options=ScanOptions(exclude=exclude),
            on_progress=on_progress,
        )
    if workspace.report.cache_notice:
        print(f"ctxtui: {workspace.report.cache_notice}", file=sys.stderr)
    return workspace


def run_index(args: argparse.Namespace) -> int:
    """`ctxtui index`: build or refresh, then print what is in the index."""
    workspace = open_workspace(args.path, encoding=args.encoding, use_cache=not args.no_cache)
    print(format_index_report(workspace, args.verbose), end="")
    return 0


def format_index_report(workspace: Workspace, verbose: bool) -> str:
    """The human summary of an index: counts by language and reason, totals, stage times."""
    index, report = workspace.index, workspace.report
    lines = [f"{index.root}", ""]
    languages = Counter(f.language for f in index.files)
    lines.append(
        f"files        {len(index.files):>8,}   "
        + ", ".join(
            f"{lang} {n:,}" for lang, n in sorted(languages.items(), key=lambda x: (-x[1], x[0]))
        )
    )
    reasons = Counter(s.reason.value for s in report.skipped)
    lines.append(
        f"skipped      {len(report.skipped):>8,}   "
        + ", ".join(f"{r} {n:,}" for r, n in sorted(reasons.items(), key=lambda x: (-x[1], x[0])))
    )
    declarations = sum(len(f.declarations) for f in index.files)
    edges = len(index.edges)
    tokens = sum(f.tokens for f in index.files)
    lines.append(f"declarations {declarations:>8,}")
    lines.append(f"import edges {edges:>8,}   (resolved to repository files)")
    lines.append(f"tokens       {tokens:>8,}   ({index.encoding})")
    lines.append(
        f"this run     parsed {len(report.parsed):,}, reused {report.reused:,}, "
        f"removed {len(report.removed):,}"
    )
    if report.replaced:
        lines.append(f"not UTF-8    {len(report.replaced):>8,}   (decoded with replacement)")
    if report.partial:
        lines.append(f"partial      {len(report.partial):>8,}   (syntax errors; parse recovered)")
    total = sum(t.seconds for t in report.times)
    lines.append(
        "time         "
        + ", ".join(f"{t.stage} {t.seconds:.3f}s" for t in report.times)
        + f"  = {total:.3f}s"
    )
    if report.cache_path:
        lines.append(f"cache        {report.cache_path}")
    if verbose:
        lines += ["", "skipped files:"]
        lines += [
            f"  {s.path}  ({s.reason.value}{', ' + s.detail if s.detail else ''})"
            for s in report.skipped
        ]
        lines += [f"  {p}  (decoded with replacement)" for p in report.replaced]
        lines += [f"  {p}  (partial parse)" for p in report.partial]
    return "\n".join(lines) + "\n"


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
    session = Session(focus=tuple(_relative(workspace, f) for f in args.focus))
    ranking = workspace.rank(question, session)
    if args.json:
        json.dump(ranking_to_json(ranking, args.limit), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_ranking(ranking, args.limit))
    return 0


def run_pack(args: argparse.Namespace) -> int:
    """`ctxtui pack`: plan, render and print (or save, or copy) the pack."""
    question = read_question(args.question)
    workspace = open_workspace(
        args.path,
        encoding=args.encoding,
        use_cache=not args.no_cache,
        exclude=tuple(args.exclude),
    )
    session = Session(focus=tuple(_relative(workspace, f) for f in args.focus))
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


def _relative(workspace: Workspace, name: str) -> str:
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


def run_eval(args: argparse.Namespace) -> int:
    """`ctxtui eval`: see ctxtui.evaluate."""
    from ctxtui.evaluate import run_eval as evaluate

    return evaluate(args)


def run_bench(args: argparse.Namespace) -> int:
    """`ctxtui bench`: see ctxtui.bench."""
    from ctxtui.bench import run_bench as bench

    return bench(args)


__all__ = ["IndexReport", "run_bench", "run_eval", "run_index", "run_pack", "run_rank"]
