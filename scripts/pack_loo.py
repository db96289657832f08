"""Choose PlanLimits leave-one-repository-out from pack_eval.py's per-case rows.

    .venv/bin/python scripts/pack_eval.py --cases CASES -b 4000,8000,16000 \
        --rows ROWS.jsonl --try tail_files=10 --try breadth_files=12 ...   # once per case set
    .venv/bin/python scripts/pack_loo.py DEV=dev.jsonl:CASES TRAIN=train.jsonl:CASES ...

Every set's rows are pooled: for each repository (its cases' `repo`; flask and swe-flask are
one), the variant with the best objective on every other repository's cases is chosen and
scored on the held-out one. The objective is PlanLimits' own (session 20, 24): the mean over
the budgets of Pack + Lines + Top10/10, each a mean over cases; the guard: a variant is
eligible only if no budget's Lines is more than GUARD under the defaults' on those cases. Ties
go to the defaults. Prints the out-of-fold figures per set (and DEV's HELD case files), how
often each variant was chosen, and each variant's pooled figures (Pack against Lines: the
frontier of the trade).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dev_eval import HELD

DEFAULTS = "defaults"
GUARD = 0.01
"""How far under the defaults' Lines a variant may fall at any budget on the fold's cases."""
SHOWN = ("Pack", "Lines", "Top10")

Row = dict[str, object]


def load_rows(spec: str) -> tuple[str, list[Row]]:
    """`NAME=rows.jsonl[,more.jsonl]:case_dir` -> the set's name and its rows, each with its
    `repo` and `set`."""
    name, _, rest = spec.partition("=")
    rows_path, _, case_dir = rest.partition(":")
    repos = {}
    for path in sorted(Path(case_dir).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                raw = json.loads(line)
                repos[raw["id"]] = raw["repo"]
    rows: dict[tuple[str, int, str], Row] = {}
    for part in rows_path.split(","):  # several runs: a variant in two must agree
        for line in Path(part).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            key = (str(row["variant"]), int(row["budget"]), str(row["id"]))
            if key in rows and rows[key] != {**row, "repo": repos[row["id"]], "set": name}:
                raise SystemExit(f"{key} differs between the runs")
            row["repo"] = repos[row["id"]]
            row["set"] = name
            rows[key] = row
    return name, list(rows.values())


def in_set(row: Row, name: str) -> bool:
    return row["set"] == name


def figures(rows: Iterable[Row]) -> dict[int, dict[str, float]]:
    """Budget -> mean of each shown figure (Lines over the cases that have it)."""
    by_budget: dict[int, list[Row]] = defaultdict(list)
    for row in rows:
        by_budget[int(row["budget"])].append(row)  # type: ignore[call-overload]
    out = {}
    for budget, group in sorted(by_budget.items()):
        out[budget] = {
            name: statistics.mean(float(r[name]) for r in group if name in r)  # type: ignore[arg-type]
            for name in SHOWN
            if any(name in r for r in group)
        }
    return out


def objective(figs: dict[int, dict[str, float]]) -> float:
    """Mean over budgets of Pack + Lines + Top10/10."""
    return statistics.mean(f["Pack"] + f.get("Lines", 0.0) + f["Top10"] / 10 for f in figs.values())


def choose(
    by_variant: dict[str, list[Row]], variants: Sequence[str], guard_rows: list[Row] | None = None
) -> str:
    """The variant with the best objective whose Lines stay within GUARD of the defaults'
    (of `guard_rows`' when given: main's, the depth the shipped pack gave)."""
    best, best_score = DEFAULTS, objective(figures(by_variant[DEFAULTS]))
    base = figures(guard_rows if guard_rows is not None else by_variant[DEFAULTS])
    for name in variants:
        if name == DEFAULTS:
            continue
        figs = figures(by_variant[name])
        if any(figs[b].get("Lines", 0.0) < base[b].get("Lines", 0.0) - GUARD for b in base):
            continue
        score = objective(figs)
        if score > best_score + 1e-12:
            best, best_score = name, score
    return best


def line(label: str, figs: dict[int, dict[str, float]], n: int) -> str:
    cells = []
    for budget, f in figs.items():
        cells.append(
            f"{budget // 1000}k {f['Pack']:.3f}/{f.get('Lines', 0.0):.3f}/{f['Top10']:.2f}"
        )
    return f"{label:<34}{n:>5}  " + "  ".join(cells) + f"  obj {objective(figs):.4f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+", help="NAME=rows.jsonl:case_dir")
    parser.add_argument("--base", action="append", default=[], help="NAME=rows.jsonl: main's")
    parser.add_argument(
        "--guard-main", action="store_true",
        help="guard against main's Lines (the --base rows of every set), not the defaults'",
    )  # fmt: skip
    args = parser.parse_args(argv)
    rows: list[Row] = []
    names = []
    for spec in args.sets:
        name, found = load_rows(spec)
        names.append(name)
        rows.extend(found)
    variants = list(dict.fromkeys(str(r["variant"]) for r in rows))
    cases_of = {str(r["id"]) for r in rows if r["variant"] == DEFAULTS}
    # every variant must cover the same cases and budgets
    for name in variants:
        have = {str(r["id"]) for r in rows if r["variant"] == name}
        if have != cases_of:
            raise SystemExit(f"variant {name} covers {len(have)} cases, defaults {len(cases_of)}")
    repos = sorted({str(r["repo"]) for r in rows})
    by_repo_variant: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        by_repo_variant[(str(row["repo"]), str(row["variant"]))].append(row)
    base_rows: dict[str, list[Row]] = {}
    repo_of = {str(r["id"]): str(r["repo"]) for r in rows}
    for spec in args.base:
        name, _, rest = spec.partition("=")
        base_rows[name] = [json.loads(x) for x in Path(rest).read_text().splitlines()]
    every_base = [r for found in base_rows.values() for r in found]
    if args.guard_main and {str(r["id"]) for r in every_base} != cases_of:
        raise SystemExit("--guard-main needs main's rows (--base) of every set")
    chosen: dict[str, str] = {}
    for held in repos:
        others = {
            name: [r for repo in repos if repo != held for r in by_repo_variant[(repo, name)]]
            for name in variants
        }
        guard = [r for r in every_base if repo_of[str(r["id"])] != held]
        chosen[held] = choose(others, variants, guard if args.guard_main else None)
    out_of_fold = [r for repo in repos for r in by_repo_variant[(repo, chosen[repo])]]
    print("guard: Lines of " + ("main (--base)" if args.guard_main else "the defaults"))
    print(f"{len(repos)} repositories, {len(cases_of)} cases, {len(variants)} variants")
    print("chosen:", dict(Counter(chosen.values()).most_common()))
    print("\nfigures per budget: Pack/Lines/Top10")
    groups: list[tuple[str, Callable[[Row], bool]]] = [
        (n, functools.partial(in_set, name=n)) for n in names
    ]
    groups.append(("DEV HELD", lambda r: r["set"] == "DEV" and r["file"] in HELD))
    groups.append(("ALL", lambda r: True))
    for label, keep in groups:
        mine = [r for r in out_of_fold if keep(r)]
        if not mine:
            continue
        n = len({r["id"] for r in mine})
        if label in base_rows:
            print(line(f"{label} main", figures(base_rows[label]), n))
        elif label == "DEV HELD" and "DEV" in base_rows:
            kept = [r for r in base_rows["DEV"] if r["file"] in HELD]
            print(line(f"{label} main", figures(kept), n))
        defaults = [r for r in rows if r["variant"] == DEFAULTS and keep(r)]
        print(line(f"{label} defaults", figures(defaults), n))
        print(line(f"{label} out of fold", figures(mine), n))
    print("\neach variant pooled over every case (the Pack / Lines frontier)")
    for name in variants:
        mine = [r for r in rows if r["variant"] == name]
        print(line(name, figures(mine), len({r["id"] for r in mine})))
    for label in names:
        print(f"\n{label}: each variant on the set")
        for name in variants:
            mine = [r for r in rows if r["variant"] == name and r["set"] == label]
            print(line(name, figures(mine), len({r["id"] for r in mine})))
    print("\nchosen per repository:", json.dumps(chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
