"""`ctxtui bench PATH`: how fast is ctxtui on this repository, as a user would feel it.

Measures, with the repository's size:
- a cold index (no cache) and a warm reopen, each in a fresh process, with time per stage
  and the peak memory of the process (and of its largest worker);
- typing: each question is typed one character at a time; every prefix is ranked (as the app's
  ranking job does while typing: with the reasons of the first screen of rows, SHOWN_ROWS,
  which a ranking works out when first read), planned on estimates (with the matches and
  reasons of the files the plan reads), and packed exactly (rendered and measured with the
  real tokenizer). Median and p95 of each, in milliseconds. Rows scrolled into view work out
  their reasons when drawn; no figure here counts that.
Figures, not asserts: tests never time anything.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ctxtui import collector
from ctxtui.cli.output import emit
from ctxtui.errors import UsageFailure
from ctxtui.workspace import Workspace
from engine import EngineError, Format, Session
from engine.scan import check_root

DEFAULT_QUESTIONS = (
    "where is the configuration loaded and validated",
    "fix the error handling when a request fails",
    "how are command line arguments parsed",
    "add a test for the session cookie",
)

_INDEX_PROBE = """
import json, resource, sys, time
from pathlib import Path
from ctxtui import collector
from ctxtui.errors import UsageFailure
from ctxtui.workspace import Workspace
from engine import Session
start = time.perf_counter()
ws = Workspace.open(Path(sys.argv[1]), use_cache=sys.argv[2] == "cache", semantic=False)
wall = time.perf_counter() - start
ws.rank(sys.argv[3], Session())
first_rank = time.perf_counter() - start - wall
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"wall": wall, "rss_mb": own / 1024, "worker_rss_mb": kids / 1024,
    "files": len(ws.index.files), "parsed": len(ws.report.parsed), "first_rank": first_rank,
    "stages": [[t.stage, t.seconds] for t in ws.report.times]}))
"""
RANK_RUNS = 5
"""Runs of `ctxtui rank` timed end to end (process start to answer)."""
SHOWN_ROWS = 25
"""Rows whose reasons the app's ranking job works out with each keystroke's ranking
(ctxtui.widgets.file_list.REASONED_ROWS: the first screen); the planner reads those of the files
it packs, and counts them in its own figure."""


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def probe_index(path: Path, cached: bool) -> dict[str, object]:
    """Open the repository in a fresh process; return its timings and peak memory."""
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _INDEX_PROBE,
            str(path),
            "cache" if cached else "nocache",
            DEFAULT_QUESTIONS[0],
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        last = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed"
        raise EngineError(f"the index probe failed: {last.rpartition('Error: ')[2]}")
    data: dict[str, object] = json.loads(result.stdout)
    return data


def probe_rank_command(path: Path, question: str) -> tuple[list[float], float]:
    """Run `ctxtui rank QUESTION PATH --json` as a user would; return the wall seconds of
    each run (process start to exit) and the largest peak memory of one run, in MB."""
    seconds: list[float] = []
    peak = 0.0
    for _ in range(RANK_RUNS):
        start = time.perf_counter()
        process = subprocess.Popen(  # `--` first: a question may start with a dash
            [sys.executable, "-m", "ctxtui", "rank", "--json", "--", question, str(path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        said = process.stderr.read()  # a few notices at most; read before the wait
        _, status, usage = os.wait4(process.pid, 0)
        seconds.append(time.perf_counter() - start)
        process.returncode = os.waitstatus_to_exitcode(status)
        process.stderr.close()
        if process.returncode != 0:
            last = said.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
            raise EngineError(
                f"`ctxtui rank` failed with exit code {process.returncode}: {last[0]}"
            )
        peak = max(peak, usage.ru_maxrss / 1024)
    return seconds, peak


def typing_figures(
    workspace: Workspace, questions: list[str], budget: int
) -> dict[str, list[float]]:
    """Rank, plan and pack every prefix of every question; milliseconds per call."""
    figures: dict[str, list[float]] = {"rank": [], "plan": [], "pack": []}
    session = Session()
    workspace.tokenizer  # noqa: B018 - load it before timing
    workspace.prepare_typing()  # as a session has it from shortly after its first key
    # The collector as the app runs it (ctxtui.screens.host): what the start and the open
    # built is frozen out of collections, and full collections wait for an idle moment.
    # Without it two full collections in the 160 keys of the 16k tree (50-100 ms each under
    # load) walked the records decoded so far and landed in the p95, where the app has none.
    collector.settle()
    thresholds = collector.hold_full_collections()
    try:
        for question in questions:
            for end in range(1, len(question) + 1):
                _type(workspace, question[:end], session, budget, figures)
    finally:
        collector.release_full_collections(thresholds)
    return figures


def _type(
    workspace: Workspace,
    prefix: str,
    session: Session,
    budget: int,
    figures: dict[str, list[float]],
) -> None:
    """Rank, plan and pack one keystroke's prefix; add each one's milliseconds."""
    start = time.perf_counter()
    ranking = workspace.rank(prefix, session, complete=False)
    for ranked in ranking.files[:SHOWN_ROWS]:
        len(ranked.reasons)  # the rows' evidence, as the app's ranking job reads it
    middle = time.perf_counter()
    workspace.plan(ranking, budget, session)
    after = time.perf_counter()
    workspace.pack(ranking, budget, session, Format.MARKDOWN)
    done = time.perf_counter()
    figures["rank"].append((middle - start) * 1000)
    figures["plan"].append((after - middle) * 1000)
    figures["pack"].append((done - after) * 1000)


def run_bench(args: argparse.Namespace) -> int:
    """Print the benchmark figures for one repository (of the app itself with --app)."""
    check_root(os.path.expanduser(args.path))  # here: the probes run in other processes
    path = Path(args.path).expanduser().resolve()
    if any(not question.strip() for question in args.question):  # before minutes of probes
        raise UsageFailure("ctxtui: --question must not be empty")
    if args.app:
        from ctxtui.cli.bench_app import run_app_bench  # deliberate: Textual only for --app

        questions = list(args.question) or list(DEFAULT_QUESTIONS)
        return run_app_bench(path, questions, args.interval / 1000, args.repeat)
    cold = probe_index(path, cached=False)
    probe_index(path, cached=True)  # make sure the cache exists
    warm = probe_index(path, cached=True)
    questions = list(args.question) or list(DEFAULT_QUESTIONS)
    rank_seconds, rank_peak = probe_rank_command(path, questions[0])
    workspace = Workspace.open(path, semantic=False)  # the keystroke path; see README "Semantic"
    files = len(workspace.index.files)
    tokens = workspace.report.tokens
    figures = typing_figures(workspace, questions, args.budget)
    out = [
        f"repository   {path}",
        f"size         {files:,} files, {tokens:,} tokens ({workspace.encoding})",
        "",
        _index_line("cold index", cold),
        _index_line("warm reopen", warm),
        f"{'':<12} then the first ranking {warm['first_rank']:.3f} s",
        f"rank command {statistics.median(rank_seconds):.2f} s median of {RANK_RUNS} "
        f"(`ctxtui rank` end to end, warm), max {max(rank_seconds):.2f} s, peak {rank_peak:.0f} MB",
        "",
        f"typing       {len(questions)} questions, {len(figures['rank'])} keystrokes, "
        f"budget {args.budget:,}",
    ]
    for name, label in (
        ("rank", f"rank (+{SHOWN_ROWS} rows' reasons)"),
        ("plan", "plan (estimate)"),
        ("pack", "pack (exact)"),
    ):
        values = figures[name]
        out.append(
            f"  {label:<26} median {statistics.median(values):7.2f} ms   "
            f"p95 {percentile(values, 0.95):7.2f} ms   max {max(values):7.2f} ms"
        )
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.append(f"\nthis process peak memory {own:.0f} MB")
    emit("\n".join(out) + "\n")
    return 0


def _index_line(label: str, data: dict[str, object]) -> str:
    stages = data.get("stages")
    parts = ", ".join(f"{s} {t:.2f}s" for s, t in stages) if isinstance(stages, list) else ""
    return (
        f"{label:<12} {data['wall']:.2f} s  (parsed {data['parsed']}; {parts})  "
        f"peak {data['rss_mb']:.0f} MB, largest worker {data['worker_rss_mb']:.0f} MB"
    )
