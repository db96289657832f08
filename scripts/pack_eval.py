"""How well the pack carries what the ranking found, and whether focused views show the answer.

    .venv/bin/python scripts/pack_eval.py                    # every DEV case, 8k budget
    .venv/bin/python scripts/pack_eval.py -b 4000 --repos flask,cobra
    .venv/bin/python scripts/pack_eval.py --planner greedy    # the baseline planner
    CTXBENCH_CACHE=/tmp/ctxtrain .venv/bin/python scripts/pack_eval.py --cases scripts/train_cases
    .venv/bin/python scripts/pack_eval.py --repos flask,express,cobra \
        --try breadth_files=8 --try match_share=0.5,max_matched=3   # variants, one load

On top of dev_eval.py's Pack it prints, per case file and for TUNED / HELD / ALL:
- R@10 and Pack side by side, and Lost: the share of gold files the ranking put in its top 10
  that the pack holds without code (outline or nothing);
- Top10: how many of the ranking's top 10 files the pack holds with code (mean), and Files:
  how many files it holds with code (median);
- per language (the cases' `lang`) as well when the case set has more than one;
- Lines: the share of the fix's lines (the old side of the real fix's diff in the gold files:
  changed lines, or the two lines around a pure insertion) that the pack shows as code, and
  Lines|code: the same over gold files that the pack holds with code only (what the focused
  view keeps of the answer). The diff comes from the bare mirrors (shared/bench README);
  cases whose diff cannot be read are left out of the two Lines columns.
The same protocol as dev_eval.py: decide on TUNED, accept or reject on HELD. Each --try
names PlanLimits and DeclarationWeights fields, or focus./levels. constants, to change
(comma-separated name=value); the
checkouts are loaded once and every variant is printed after the defaults.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dev_eval import BENCH, HELD, TUNED, Case, load, load_cases

import engine.explain
import engine.levels
from ctxtui.workspace import Workspace
from engine import Format, Level, Ranking, Session
from engine.analyse import read_text
from engine.model import PlanLimits
from engine.pack import pack
from engine.plan import greedy_plan

try:  # the declaration scorer of issue 11 (absent in older code)
    from engine.relevance import DeclarationWeights
except ImportError:  # pragma: no cover - comparing with older code
    DeclarationWeights = None  # type: ignore[assignment,misc]

MIRRORS = Path(os.environ.get("BENCH_MIRRORS", "/work/.mirror"))
GOLD_LINES = Path(os.environ.get("PACK_EVAL_LINES", "/tmp/pack-eval-gold-lines.json"))
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)
NUMBERED = re.compile(r"^\s*(\d+) \|")


def case_records(case_dir: Path, files: Sequence[str]) -> dict[str, dict[str, str]]:
    """Case id -> raw record (for repo and fix_commit)."""
    records = {}
    for path in sorted(case_dir.glob("*.jsonl")):
        if files and path.stem not in files:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                raw = json.loads(line)
                records[raw["id"]] = raw
    return records


def gold_lines(records: dict[str, dict[str, str]]) -> dict[str, dict[str, list[int]]]:
    """Case id -> gold path -> old-side lines the fix touched (cached in GOLD_LINES)."""
    cached: dict[str, dict[str, list[int]]] = {}
    if GOLD_LINES.exists():
        cached = json.loads(GOLD_LINES.read_text(encoding="utf-8"))
    changed = False
    for case_id, raw in records.items():
        if case_id in cached:
            continue
        repo = MIRRORS / raw["repo"].replace("/", "+") / "repo"
        fix = raw.get("fix_commit") or fix_commit(repo, case_id)
        if not fix:
            continue
        per_file: dict[str, list[int]] = {}
        for path in raw["gold"]:
            result = subprocess.run(
                ["git", "-C", str(repo), "diff", "--unified=0", raw["commit"],
                 fix, "--", path],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            if result.returncode != 0:
                continue
            lines: set[int] = set()
            for match in HUNK.finditer(result.stdout):
                start, count = int(match.group(1)), int(match.group(2) or 1)
                if count == 0:  # a pure insertion after line `start`
                    lines.update((max(start, 1), start + 1))
                else:
                    lines.update(range(start, start + count))
            if lines:
                per_file[path] = sorted(lines)
        cached[case_id] = per_file
        changed = True
    if changed:
        GOLD_LINES.write_text(json.dumps(cached), encoding="utf-8")
    return cached


def fix_commit(repo: Path, case_id: str) -> str:
    """The commit whose hash starts with the id's tail (extra_cases.py names cases so), or ""."""
    prefix = case_id.rpartition("-")[2]
    result = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{prefix}^{{commit}}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return result.stdout.strip() if result.returncode == 0 else ""


def shown_lines(workspace: Workspace, entry: object) -> set[int]:
    """Line numbers the pack shows of one entry (rendered with line numbers)."""
    text = workspace.render_file(entry, line_numbers=True)  # type: ignore[arg-type]
    shown = set()
    for line in text.split("\n"):
        match = NUMBERED.match(line)
        if match:
            shown.add(int(match.group(1)))
    return shown


MODULES = {
    name: importlib.import_module(f"engine.{name}")
    for name in ("levels", "focus")
    if importlib.util.find_spec(f"engine.{name}") is not None  # older code has no focus
}
LEVEL_CONSTANTS = {
    f"{prefix}.{name}": getattr(module, name)
    for prefix, module in MODULES.items()
    for name in dir(module)
    if name.isupper() and isinstance(getattr(module, name), (int, float))
}
"""engine.levels' and engine.focus' numbers as shipped; a --try may set one (focus.NAME=0)."""


def variant(spec: str) -> tuple[PlanLimits, object]:
    """PlanLimits and DeclarationWeights with the fields a --try spec names changed (and
    engine.levels constants set, the others restored)."""
    limits: dict[str, object] = {}
    weights: dict[str, object] = {}
    for key, value in LEVEL_CONSTANTS.items():
        prefix, _, name = key.partition(".")
        setattr(MODULES[prefix], name, value)
    for item in filter(None, re.split(r",(?![^\[]*\])", spec)):
        name, _, raw = item.partition("=")
        value = json.loads(raw)
        value = tuple(value) if isinstance(value, list) else value
        if name in LEVEL_CONSTANTS:
            prefix, _, constant = name.partition(".")
            setattr(MODULES[prefix], constant, value)
        elif name in PlanLimits.__dataclass_fields__:
            limits[name] = value
        elif DeclarationWeights is not None and name in DeclarationWeights.__dataclass_fields__:
            weights[name] = value
        else:
            raise SystemExit(f"unknown field {name}")
    decl = DeclarationWeights(**weights) if DeclarationWeights is not None else None
    return PlanLimits(**limits), decl  # type: ignore[arg-type]


def evaluate_case(
    case: Case,
    workspace: Workspace,
    budget: int,
    planner: str,
    gold: dict[str, list[int]],
    limits: PlanLimits,
    rankings: dict[str, Ranking] | None = None,
) -> tuple[dict[str, float], dict[str, str]]:
    """One case's figures, and the level of each gold file of the top 10 held without code.

    `rankings` keeps each case's ranking for the next variant and budget (only the plan
    differs between them)."""
    ranking = rankings.get(case.case_id) if rankings is not None else None
    if ranking is None:
        ranking = workspace.rank(case.query, Session())
        if rankings is not None:
            rankings[case.case_id] = ranking
    index = workspace.index
    if planner == "greedy":
        plan = greedy_plan(ranking, index, budget)
    else:
        plan, _ = pack(
            ranking, index, budget, Format.JSON, counter=workspace.tokenizer,
            read_text=lambda path: read_text(index.root, path), limits=limits,
        )  # fmt: skip
    top10 = [f.path for f in ranking.files[:10]]
    code = {e.path: e for e in plan.entries if e.level in (Level.FULL, Level.FOCUSED)}
    wanted = set(case.gold)
    found = wanted & set(top10)
    out = {
        "R@10": len(found) / len(wanted),
        "Pack": len(wanted & set(code)) / len(wanted),
        "Top10": float(sum(p in code for p in top10)),
        "Files": float(len(code)),
        "Tokens": float(sum(e.tokens for e in plan.entries)),
    }
    if found:
        out["Lost"] = len(found - set(code)) / len(found)
    levels = {e.path: e.level.value for e in plan.entries}
    detail = {p: levels.get(p, "absent") for p in sorted(found - set(code))}
    if gold:
        total = shown = code_total = code_shown = 0
        for path, lines in gold.items():
            entry = code.get(path)
            seen = shown_lines(workspace, entry) if entry is not None else set()
            hit = sum(line in seen for line in lines)
            total += len(lines)
            shown += hit
            if entry is not None:
                code_total += len(lines)
                code_shown += hit
        out["Lines"] = shown / total
        if code_total:
            out["Lines|code"] = code_shown / code_total
    return out, detail


COLUMNS = ("R@10", "Pack", "Lost", "Top10", "Files", "Lines", "Lines|code")


def table(rows: list[tuple[Case, dict[str, float]]], langs: dict[str, str] | None = None) -> str:
    """Per case file, then per language (`langs`: case id -> language), TUNED, HELD and ALL."""
    groups = [(n, [r for r in rows if r[0].file == n]) for n in sorted({c.file for c, _ in rows})]
    by_lang = langs or {}
    if len(set(by_lang.values())) > 1:
        for lang in sorted(set(by_lang.values())):
            groups.append((lang, [r for r in rows if by_lang.get(r[0].case_id) == lang]))
    groups.append(("TUNED", [r for r in rows if r[0].file in TUNED]))
    groups.append(("HELD", [r for r in rows if r[0].file in HELD]))
    groups.append(("ALL", rows))
    head = f"{'group':<10}{'n':>5}" + "".join(f"{c:>11}" for c in COLUMNS)
    lines = [head, "-" * len(head)]
    for name, group in groups:
        if not group:
            continue
        cells = []
        for column in COLUMNS:
            values = [m[column] for _, m in group if column in m]
            if not values:
                cells.append(f"{'–':>11}")
            elif column == "Files":
                cells.append(f"{statistics.median(values):>11.1f}")
            elif column == "Top10":
                cells.append(f"{statistics.mean(values):>11.2f}")
            else:
                cells.append(f"{statistics.mean(values):>11.3f}")
        lines.append(f"{name:<10}{len(group):>5}" + "".join(cells))
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", help="comma list of case files (stems) to keep")
    parser.add_argument(
        "--cases", type=Path, default=BENCH / "cases",
        help="a folder of case files (default DEV; scripts/train_cases: TRAIN)",
    )  # fmt: skip
    parser.add_argument(
        "-b", "--budget", default="8000", help="a budget, or several: 4000,8000,16000"
    )
    parser.add_argument("--planner", choices=("ctxtui", "greedy"), default="ctxtui")
    parser.add_argument("--out", type=Path, help="write per-case figures (JSON lines) here")
    parser.add_argument("--try", dest="tries", action="append", default=[], help="a variant")
    parser.add_argument(
        "--rows", type=Path,
        help="write every variant's per-case figures here (JSON lines with variant, budget)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    files = tuple(args.repos.split(",")) if args.repos else ()
    cases = load_cases(args.cases, files=files)
    records = case_records(args.cases, files)
    langs = {case_id: raw.get("lang", "") for case_id, raw in records.items()}
    lines = gold_lines(records)
    workspaces = load(cases)
    default_matching = engine.explain.matching_declarations
    budgets = [int(b) for b in args.budget.split(",")]
    rankings: dict[str, Ranking] = {}
    every = args.rows.open("w", encoding="utf-8") if args.rows else None
    for number, (spec, budget) in enumerate(
        (spec, budget) for spec in ["", *args.tries] for budget in budgets
    ):
        limits, weights = variant(spec)
        if weights is not None:
            engine.explain.matching_declarations = functools.partial(  # type: ignore[assignment]
                default_matching, weights=weights
            )
        rows = []
        details: dict[str, dict[str, str]] = {}
        for case in cases:
            figures, lost = evaluate_case(
                case, workspaces[case.root], budget, args.planner,
                lines.get(case.case_id, {}), limits, rankings,
            )  # fmt: skip
            rows.append((case, figures))
            details[case.case_id] = lost
            if every is not None:
                record = {"variant": spec or "defaults", "budget": budget, "id": case.case_id}
                every.write(json.dumps({**record, "file": case.file, **figures}) + "\n")
        title = f"{spec or 'defaults'}" + (f" at {budget:,}" if len(budgets) > 1 else "")
        sys.stdout.write(f"\n== {title}\n" + table(rows, langs))
        sys.stdout.flush()
        if args.out and number < len(budgets):
            path = args.out
            if len(budgets) > 1:
                path = path.with_name(f"{path.stem}-{budget}{path.suffix}")
            with path.open("w", encoding="utf-8") as out:
                for case, figures in rows:
                    record = {"id": case.case_id, "file": case.file, **figures}
                    record["lost"] = details[case.case_id]
                    out.write(json.dumps(record) + "\n")
    if every is not None:
        every.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
