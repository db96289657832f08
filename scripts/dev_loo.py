"""Judge ranking weights leave-one-repository-out on the DEV benchmark (issue 11's protocol).

    .venv/bin/python scripts/dev_loo.py scope_weight=2 scope_weight=4
    .venv/bin/python scripts/dev_loo.py coverage_floor=0.6 "graph_boost=0.5,graph_seeds=12"

Each argument is a variant: comma-separated `RankWeights` fields with Python literal values.
The checkouts are loaded once, then the defaults and every variant rank all DEV cases (rank
metrics only: Pack follows R@10 closely and costs a pack per case; check it with dev_eval.py
once a change is chosen). Then, for each of the 8 case files, the variant with the best mean
of R@5 + R@10 + MRR over the 7 other files is chosen (ties go to the defaults) and scored on
the held-out one: the out-of-fold figure, the only one a change may be accepted on. The
tune-on-TUNED split (chosen on TUNED, scored on HELD) is printed too. A change that no fold
chooses, or that scores worse out of fold, is rejected; record the run in `RankWeights`.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dev_eval import HELD, TUNED, Row, evaluate, load, load_cases

from ctxtui.workspace import Workspace
from engine import Ranking, Session, rank
from engine.rank import DEFAULT_WEIGHTS, RankWeights

JUDGED = ("R@5", "R@10", "MRR")
"""What a fold chooses by (the sum of their means over the other case files)."""
DEFAULTS = "defaults"

Scores = dict[str, dict[str, float]]
"""Case file (and TUNED / HELD) -> metric -> mean."""


def parse_variant(text: str) -> RankWeights:
    """`scope_weight=2,graph_boost=0.5` -> the default weights with those fields replaced."""
    known = {f.name for f in fields(RankWeights)}
    changes: dict[str, object] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        if name not in known:
            raise SystemExit(f"unknown RankWeights field {name!r} in {text!r}")
        try:
            changes[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise SystemExit(f"not a Python literal: {value!r} in {text!r}") from None
    return replace(DEFAULT_WEIGHTS, **changes)


def means(rows: Sequence[Row]) -> Scores:
    """Mean of each judged metric per case file, and over TUNED and HELD."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row.case.file, []).append(row)
    groups["TUNED"] = [r for r in rows if r.case.file in TUNED]
    groups["HELD"] = [r for r in rows if r.case.file in HELD]
    return {
        name: {m: sum(r.metrics[m] for r in group) / len(group) for m in JUDGED}
        for name, group in groups.items()
        if group
    }


def objective(scores: Scores, files: Sequence[str]) -> float:
    """Mean over `files` of R@5 + R@10 + MRR."""
    return sum(scores[f][m] for f in files for m in JUDGED) / len(files)


def choose(results: Mapping[str, Scores], files: Sequence[str]) -> str:
    """The variant best on `files` (ties within 1e-6 go to the defaults, then to the first)."""
    names = list(results)
    return max(
        names,
        key=lambda n: (round(objective(results[n], files), 6), n == DEFAULTS, -names.index(n)),
    )


def cells(values: Mapping[str, float]) -> str:
    return "/".join(f"{values[m]:.3f}" for m in JUDGED)


def report(results: Mapping[str, Scores]) -> str:
    """Every variant's TUNED / HELD, then each fold's choice and its out-of-fold figures."""
    files = sorted(f for f in results[DEFAULTS] if f not in ("TUNED", "HELD"))
    width = max(len(n) for n in results) + 2
    lines = [f"{'variant':<{width}}{'TUNED R@5/R@10/MRR':>20}{'HELD R@5/R@10/MRR':>20}"]
    for name, scores in results.items():
        lines.append(f"{name:<{width}}{cells(scores['TUNED']):>20}{cells(scores['HELD']):>20}")
    lines.append("\nleave-one-repository-out (chosen on the 7 others, scored on this one):")
    lines.append(f"{'case file':<12}{'defaults':>20}{'out of fold':>20}  chosen")
    for held_out in files:
        chosen = choose(results, [f for f in files if f != held_out])
        before, after = results[DEFAULTS][held_out], results[chosen][held_out]
        lines.append(f"{held_out:<12}{cells(before):>20}{cells(after):>20}  {chosen}")
    chosen = choose(results, [f for f in files if f in TUNED])
    lines.append(
        f"\ntune on TUNED chooses {chosen}: HELD {cells(results[DEFAULTS]['HELD'])} -> "
        f"{cells(results[chosen]['HELD'])}"
    )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="+", help="comma-separated RankWeights field=value")
    args = parser.parse_args(argv)
    variants = {DEFAULTS: DEFAULT_WEIGHTS} | {v: parse_variant(v) for v in args.variants}
    cases = load_cases()
    workspaces = load(cases)
    results: dict[str, Scores] = {}
    for name, weights in variants.items():

        def rank_fn(workspace: Workspace, query: str, w: RankWeights = weights) -> Ranking:
            return rank(workspace.index, query, Session(), w)

        results[name] = means(evaluate(cases, workspaces, rank_fn=rank_fn, pack_fn=None))
    sys.stdout.write(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
