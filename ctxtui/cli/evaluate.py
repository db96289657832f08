"""`ctxtui eval CASES.jsonl [PATH]`: retrieval metrics on benchmark cases, beside grep.

Cases use the shared/bench format (id, repo, commit, query, gold). Each case runs against
PATH, or else against its own checkout under $CTXBENCH_CACHE/<owner>+<name>/<commit> as
shared/bench/materialise.py lays them out. Per case: R@1/5/10, MRR, Hit@5 and Pack (share of
gold files in the pack with code, full or focused), for ctxtui, for ctxtui's ranking packed
by a plain greedy planner, and for the grep baseline (word counts, whole files).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxtui.cli.output import emit
from ctxtui.errors import UsageFailure
from ctxtui.workspace import Workspace
from engine import EngineError, Format, Level, Session
from engine.plan import greedy_plan
from engine.scan import check_root
from engine.words import STOP_WORDS

WITH_CODE = {Level.FULL, Level.FOCUSED}
METRICS = ("R@1", "R@5", "R@10", "MRR", "Hit@5", "Pack")


@dataclass(slots=True)
class CaseResult:
    """Metrics of one case for each method."""

    case_id: str
    gold: list[str]
    ranked: list[str]
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    seconds: float = 0.0


def retrieval_metrics(gold: list[str], ranked: list[str], packed: set[str]) -> dict[str, float]:
    """R@k, MRR, Hit@5 and Pack of one ranking and one pack."""
    wanted = set(gold)
    first = next((i for i, p in enumerate(ranked) if p in wanted), None)
    return {
        "R@1": len(wanted & set(ranked[:1])) / len(wanted),
        "R@5": len(wanted & set(ranked[:5])) / len(wanted),
        "R@10": len(wanted & set(ranked[:10])) / len(wanted),
        "MRR": 0.0 if first is None else 1.0 / (first + 1),
        "Hit@5": 1.0 if wanted & set(ranked[:5]) else 0.0,
        "Pack": len(wanted & packed) / len(wanted),
    }


def grep_baseline(workspace: Workspace, question: str, budget: int) -> tuple[list[str], set[str]]:
    """Count the question's words in each file; pack whole files greedily (chars / 4)."""
    words = {w for w in re.findall(r"[a-z0-9_]+", question.lower()) if len(w) >= 3}
    words -= STOP_WORDS
    scored = []
    root = workspace.index.root
    for f in workspace.index.files:
        try:
            text = Path(root, f.path).read_text(encoding="utf-8", errors="replace").lower()
        except OSError:
            continue
        score = sum(text.count(w) for w in words)
        if score:
            scored.append((-score, f.path, len(text)))
    scored.sort()
    ranked = [p for _, p, _ in scored]
    left, packed = budget, set()
    for _, path, chars in scored:
        cost = math.ceil(chars / 4)
        if cost <= left:
            left -= cost
            packed.add(path)
    return ranked, packed


def checkout_for(case: dict[str, Any], path: str | None) -> Path:
    """The folder a case runs against."""
    if path:
        return Path(path)
    cache = Path(os.environ.get("CTXBENCH_CACHE", "/tmp/ctxbench"))
    folder: Path = cache / str(case["repo"]).replace("/", "+") / str(case["commit"])
    if not folder.is_dir():
        raise EngineError(f"no checkout for {case['id']} at {folder} (run materialise.py)")
    return folder


def evaluate_case(
    case: dict[str, Any], root: Path, budget: int, *, semantic: bool = True
) -> CaseResult:
    """Run ctxtui (as `ctxtui rank` would: with the semantic stage when its extra is
    installed, unless `semantic` is False), greedy packing and grep on one case."""
    start = time.perf_counter()
    workspace = Workspace.open(root, semantic=semantic)
    ranking = workspace.rank(case["query"], Session())
    plan, _ = workspace.pack(ranking, budget, Session(), Format.JSON)
    seconds = time.perf_counter() - start
    ranked = [f.path for f in ranking.files]
    gold = list(case["gold"])
    result = CaseResult(case["id"], gold, ranked, seconds=seconds)
    packed = {e.path for e in plan.entries if e.level in WITH_CODE}
    result.metrics["ctxtui"] = retrieval_metrics(gold, ranked, packed)
    greedy = {e.path for e in greedy_plan(ranking, workspace.index, budget).entries}
    result.metrics["greedy"] = retrieval_metrics(gold, ranked, greedy)
    grep_ranked, grep_packed = grep_baseline(workspace, case["query"], budget)
    result.metrics["grep"] = retrieval_metrics(gold, grep_ranked, grep_packed)
    return result


def load_cases(path: str, *, need_checkout: bool = False) -> list[dict[str, Any]]:
    """Read a .jsonl file of cases (`-`: stdin); a line that is not a case is one error
    naming its number.

    Args:
        need_checkout: each case must say its `repo` and `commit` (no PATH was given).

    Raises:
        EngineError: the file cannot be read, or a line is not UTF-8 or not JSON (exit 1).
        UsageFailure: a line is JSON but not a case (a field missing or of the wrong type).
    """
    try:
        if path == "-":  # a script's cases, piped in (`... | ctxtui eval - PATH`)
            path, data = "<stdin>", sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except OSError as exc:
        raise EngineError(f"cannot read {path}: {exc.strerror}") from exc
    raw_lines = data.split(b"\n")
    cases: list[dict[str, Any]] = []
    for number, raw in enumerate(raw_lines, 1):
        if not raw.strip():
            continue
        problem = _case_problem(raw, need_checkout)
        if isinstance(problem, _Unreadable):
            raise EngineError(f"{path}:{number}: {problem.reason}")
        if isinstance(problem, str):
            raise UsageFailure(f"ctxtui: {path}:{number}: {problem}")
        problem.setdefault("id", f"case-{len(cases) + 1}")
        cases.append(problem)
    if not cases:
        raise EngineError(f"{path}: no cases in it")
    return cases


@dataclass(frozen=True, slots=True)
class _Unreadable:
    reason: str


def _case_problem(raw: bytes, need_checkout: bool) -> dict[str, Any] | _Unreadable | str:
    """The case on one line, why it cannot be read, or what is wrong with it."""
    try:
        case = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return _Unreadable("not UTF-8 text (is it a .jsonl file?)")
    except (json.JSONDecodeError, RecursionError) as exc:
        return _Unreadable(f"not JSON lines ({getattr(exc, 'msg', 'nested too deeply')})")
    if not isinstance(case, dict):
        return "a case must be a JSON object"
    query, gold = case.get("query"), case.get("gold")
    if not isinstance(query, str) or not query.strip():
        return "'query' must be a non-empty string"
    if not isinstance(gold, list) or not gold or not all(isinstance(g, str) for g in gold):
        return "'gold' must be a non-empty list of paths"
    needed = ("repo", "commit") if need_checkout else ()
    for key in ("id", *needed):
        if (key in case or key in needed) and not isinstance(case.get(key), str):
            return f"'{key}' must be a string"
    return case


def mean(results: list[CaseResult], method: str, metric: str) -> float:
    """Average of one metric over cases."""
    return sum(r.metrics[method][metric] for r in results) / len(results) if results else 0.0


def format_table(results: list[CaseResult], budget: int) -> str:
    """The per-question table, then the averages beside greedy packing and grep."""
    lines = [
        f"{'case':<34} {'R@5':>5} {'R@10':>5} {'MRR':>5} {'Pack':>5} | {'grep R@5':>8} "
        f"{'Pack':>5} | first gold rank",
        "-" * 92,
    ]
    for r in results:
        ours, grep = r.metrics["ctxtui"], r.metrics["grep"]
        first = next((i + 1 for i, p in enumerate(r.ranked) if p in set(r.gold)), None)
        lines.append(
            f"{r.case_id[:34]:<34} {ours['R@5']:5.2f} {ours['R@10']:5.2f} {ours['MRR']:5.2f} "
            f"{ours['Pack']:5.2f} | {grep['R@5']:8.2f} {grep['Pack']:5.2f} | {first or '-'}"
        )
    lines += ["", f"{len(results)} cases, budget {budget:,} tokens", ""]
    lines.append(f"{'method':<16}" + "".join(f"{m:>8}" for m in METRICS))
    for method, label in (("ctxtui", "ctxtui"), ("greedy", "ctxtui+greedy"), ("grep", "grep")):
        lines.append(f"{label:<16}" + "".join(f"{mean(results, method, m):8.3f}" for m in METRICS))
    seconds = [r.seconds for r in results]
    if seconds:
        lines.append(
            f"\nseconds per case (index + rank + pack): median "
            f"{statistics.median(seconds):.2f}, max {max(seconds):.2f}"
        )
    return "\n".join(lines) + "\n"


def run_eval(args: argparse.Namespace) -> int:
    """Evaluate every case; print the table (or JSON)."""
    cases = load_cases(args.cases, need_checkout=args.path is None)
    if args.path is not None:
        check_root(os.path.expanduser(args.path))  # one line, before any case runs
    results = []
    for number, case in enumerate(cases, 1):
        root = checkout_for(case, args.path)
        results.append(evaluate_case(case, root, args.budget, semantic=not args.no_semantic))
        if sys.stderr.isatty():
            print(f"\r{number}/{len(cases)}", end="", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if args.json:
        summary = {
            method: {m: round(mean(results, method, m), 4) for m in METRICS}
            for method in ("ctxtui", "greedy", "grep")
        }
        cases_out = [
            {"id": r.case_id, "metrics": r.metrics, "top10": r.ranked[:10]} for r in results
        ]
        emit(json.dumps({"summary": summary, "cases": cases_out}, indent=1) + "\n")
    else:
        emit(format_table(results, args.budget))
    return 0
