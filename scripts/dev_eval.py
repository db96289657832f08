"""Evaluate ranking and packing on the DEV benchmark in one process, for honest tuning.

    .venv/bin/python scripts/dev_eval.py                      # every DEV case, rank + pack
    .venv/bin/python scripts/dev_eval.py --repos hono,gin     # some case files only
    .venv/bin/python scripts/dev_eval.py --out run.jsonl --compare before.jsonl
    CTXBENCH_CACHE=/tmp/ctxextra .venv/bin/python scripts/dev_eval.py --cases scripts/extra_cases

The metrics are those of shared/bench/score.py (R@1/5/10 over the top 50, MRR, Hit@5, and Pack:
the share of gold files that the 8,000-token JSON pack holds with code, full or focused); the
same engine calls as `ctxtui rank` / `ctxtui pack`, without a process and a cache load per case,
so a whole run takes about a minute once the caches are warm. Checkouts come from
shared/bench/materialise.py ($CTXBENCH_CACHE, default /tmp/ctxbench).

Tuning protocol (issue 11): every tuning decision is made on the TUNED case files and judged on
the HELD ones, which no number was chosen on; a change that helps TUNED but not HELD is
reverted. The table prints both groups. Import `load`, `evaluate` and `table` to try weights
without leaving Python (a tuning loop re-ranks the loaded workspaces only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctxtui.workspace import LazyTokenizer, Workspace
from engine import Format, Level, Ranking, Session

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
TUNED = ("flask", "swe-flask", "express", "cobra")
"""Case files the ranking was tuned on before issue 11 (and may be tuned on again)."""
HELD = ("textual", "clap", "hono", "gin")
"""Case files added later: never used to choose a number, only to accept or reject a change."""
METRICS = ("R@1", "R@5", "R@10", "MRR", "Hit@5", "Pack")
WITH_CODE = {Level.FULL, Level.FOCUSED}
RANK_LIMIT = 50
"""score.py runs `rank --json --limit 50`."""


@dataclass(slots=True)
class Case:
    """One benchmark question and the checkout it runs against."""

    case_id: str
    file: str
    query: str
    gold: tuple[str, ...]
    root: Path


@dataclass(slots=True)
class Row:
    """One case's result."""

    case: Case
    top: list[str]
    packed: list[tuple[str, str]]
    metrics: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0


RankFn = Callable[[Workspace, str], Ranking]
PackFn = Callable[[Workspace, Ranking, int], tuple[object, object]]


def load_cases(case_dir: Path = BENCH / "cases", files: Sequence[str] = ()) -> list[Case]:
    """The DEV cases, optionally only some case files (by stem)."""
    cache = Path(os.environ.get("CTXBENCH_CACHE", "/tmp/ctxbench"))
    cases = []
    for path in sorted(case_dir.glob("*.jsonl")):
        if files and path.stem not in files:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            raw = json.loads(line)
            root = cache / raw["repo"].replace("/", "+") / raw["commit"]
            cases.append(Case(raw["id"], path.stem, raw["query"], tuple(raw["gold"]), root))
    return cases


def load(cases: Sequence[Case], *, verbose: bool = True) -> dict[Path, Workspace]:
    """Open (or index) every checkout once; a checkout shared by cases is opened once."""
    workspaces: dict[Path, Workspace] = {}
    tokenizer = LazyTokenizer("o200k_base")  # one table load for every checkout
    roots = sorted({c.root for c in cases})
    for number, root in enumerate(roots, 1):
        if not root.is_dir():
            raise SystemExit(f"no checkout at {root}: run shared/bench/materialise.py cases/")
        # the lexical stage only: the semantic one is measured by scripts/semantic_eval.py
        workspaces[root] = Workspace.open(root, tokenizer=tokenizer, semantic=False)
        if verbose and sys.stderr.isatty():
            print(f"\ropened {number}/{len(roots)}", end="", file=sys.stderr, flush=True)
    if verbose and sys.stderr.isatty():
        print(file=sys.stderr)
    return workspaces


def default_rank(workspace: Workspace, query: str) -> Ranking:
    """What `ctxtui rank` does."""
    return workspace.rank(query, Session())


def default_pack(workspace: Workspace, ranking: Ranking, budget: int) -> tuple[object, object]:
    """What `ctxtui pack --format json` does."""
    return workspace.pack(ranking, budget, Session(), Format.JSON)


def case_metrics(
    gold: Sequence[str], top: list[str], with_code: set[str] | None
) -> dict[str, float]:
    """score.py's metrics of one case."""
    wanted = set(gold)
    first = next((i for i, p in enumerate(top) if p in wanted), None)
    metrics = {f"R@{k}": len(wanted & set(top[:k])) / len(wanted) for k in (1, 5, 10)}
    metrics["MRR"] = 0.0 if first is None else 1.0 / (first + 1)
    metrics["Hit@5"] = 1.0 if wanted & set(top[:5]) else 0.0
    if with_code is not None:
        metrics["Pack"] = len(wanted & with_code) / len(wanted)
    return metrics


def evaluate(
    cases: Sequence[Case],
    workspaces: dict[Path, Workspace],
    *,
    rank_fn: RankFn = default_rank,
    pack_fn: PackFn | None = default_pack,
    budget: int = 8000,
) -> list[Row]:
    """Rank (and pack) every case; return one row per case."""
    rows = []
    for case in cases:
        workspace = workspaces[case.root]
        start = time.perf_counter()
        ranking = rank_fn(workspace, case.query)
        top = [f.path for f in ranking.files[:RANK_LIMIT]]
        packed: list[tuple[str, str]] = []
        with_code = None
        if pack_fn is not None:
            plan, _ = pack_fn(workspace, ranking, budget)
            entries = getattr(plan, "entries", ())
            packed = [(e.path, e.level.value) for e in entries if e.level is not Level.OFF]
            with_code = {e.path for e in entries if e.level in WITH_CODE}
        row = Row(case, top, packed, case_metrics(case.gold, top, with_code))
        row.seconds = time.perf_counter() - start
        rows.append(row)
    return rows


def summary(rows: Sequence[Row]) -> dict[str, float]:
    """Mean of each metric over rows."""
    out: dict[str, float] = {"n": float(len(rows))}
    for metric in METRICS:
        values = [r.metrics[metric] for r in rows if metric in r.metrics]
        if values:
            out[metric] = sum(values) / len(rows)
    return out


def table(rows: Sequence[Row], compare: dict[str, dict[str, float]] | None = None) -> str:
    """Per case file, then TUNED, HELD and ALL; `compare` (case id -> metrics) adds deltas."""
    groups: list[tuple[str, list[Row]]] = []
    for name in sorted({r.case.file for r in rows}):
        groups.append((name, [r for r in rows if r.case.file == name]))
    groups.append(("TUNED", [r for r in rows if r.case.file in TUNED]))
    groups.append(("HELD", [r for r in rows if r.case.file in HELD]))
    groups.append(("ALL", list(rows)))
    width = 8 if compare is None else 14
    head = f"{'group':<10}{'n':>5}" + "".join(f"{m:>{width}}" for m in METRICS)
    lines = [head, "-" * len(head)]
    for name, group in groups:
        if not group:
            continue
        means = summary(group)
        cells = []
        for metric in METRICS:
            value = means.get(metric)
            if value is None:
                cells.append(f"{'–':>{width}}")
                continue
            cell = f"{value:.3f}"
            if compare is not None:
                before = [compare[r.case.case_id].get(metric, 0.0) for r in group
                          if r.case.case_id in compare]  # fmt: skip
                if len(before) == len(group):
                    cell += f"{value - sum(before) / len(group):+.3f}"
            cells.append(f"{cell:>{width}}")
        lines.append(f"{name:<10}{len(group):>5}" + "".join(cells))
    seconds = [r.seconds for r in rows]
    if seconds:
        lines.append(
            f"\nseconds per case (rank + pack, warm): median {statistics.median(seconds):.3f}, "
            f"max {max(seconds):.3f}"
        )
    return "\n".join(lines) + "\n"


def write_rows(rows: Sequence[Row], path: Path) -> None:
    """One JSON line per case: id, file, gold, metrics, top 10 and the pack."""
    with path.open("w", encoding="utf-8") as out:
        for r in rows:
            record = {
                "id": r.case.case_id,
                "file": r.case.file,
                "gold": list(r.case.gold),
                "metrics": r.metrics,
                "top10": r.top[:10],
                "pack": r.packed,
            }
            out.write(json.dumps(record) + "\n")


def read_rows(path: Path) -> dict[str, dict[str, float]]:
    """Case id -> metrics of an earlier --out file."""
    result = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            result[record["id"]] = record["metrics"]
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", help="comma list of case files (stems) to keep")
    parser.add_argument(
        "--cases",
        type=Path,
        default=BENCH / "cases",
        help="a folder of case files (default DEV; scripts/extra_cases: the second held-out set)",
    )
    parser.add_argument("--no-pack", action="store_true", help="ranking metrics only")
    parser.add_argument("-b", "--budget", type=int, default=8000)
    parser.add_argument("--out", type=Path, help="write per-case rows (JSON lines) here")
    parser.add_argument("--compare", type=Path, help="an earlier --out file: print deltas")
    args = parser.parse_args(argv)
    files = tuple(args.repos.split(",")) if args.repos else ()
    cases = load_cases(args.cases, files=files)
    workspaces = load(cases)
    rows = evaluate(
        cases, workspaces, pack_fn=None if args.no_pack else default_pack, budget=args.budget
    )
    compare = read_rows(args.compare) if args.compare else None
    sys.stdout.write(table(rows, compare))
    if args.out:
        write_rows(rows, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
