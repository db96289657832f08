"""The semantic stage on the DEV benchmark: embed what the re-rank needs, then sweep its numbers.

    nice -n 10 .venv/bin/python scripts/semantic_eval.py embed   # vectors of each case's top 50
    .venv/bin/python scripts/semantic_eval.py sweep              # fusion numbers: TUNED, HELD
    .venv/bin/python scripts/semantic_eval.py loo --embedded 20  # the same, leave-one-repo-out
    .venv/bin/python scripts/semantic_eval.py table --pack       # lexical vs fused, rank + pack

`embed` ranks every DEV case lexically (what `ctxtui rank` does without the extra), embeds the
files of each case's top 50 that have no vectors yet, and writes each case's lexical top 50 with
every file's best chunk to `features.jsonl`. Vectors are kept by file content in one store per
repository (checkouts of one repository share most files), under --cache
(default $CTXBENCH_CACHE/semantic). `sweep` and `table` read the features only, except `table`'s
Pack column, which packs each fused ranking for real. The protocol is dev_eval's: choose on
TUNED, judge on HELD, report both.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dev_eval import HELD, TUNED, Case, Row, case_metrics, load, load_cases, table

from ctxtui.workspace import LazyTokenizer, Workspace
from engine import RankedFile, Ranking, Session
from engine.model import Intent
from engine.semantic import store as vector_store
from engine.semantic.embedder import load_embedder
from engine.semantic.fuse import fuse
from engine.semantic.vectors import ChunkMatch, SemanticWeights, best_chunks, embed_files
from engine.store import StaleCache

TOP = 50
DEFAULT_CACHE = Path(os.environ.get("CTXBENCH_CACHE", "/tmp/ctxbench")) / "semantic"


def interleaved(cases: Sequence[Case], per_file: int) -> list[Case]:
    """At most `per_file` cases of each case file (spread over the file), taken round-robin
    across the files, so any prefix of a run is balanced between TUNED and HELD."""
    groups: dict[str, list[Case]] = {}
    for case in cases:
        groups.setdefault(case.file, []).append(case)
    for name, group in groups.items():
        step = max(1, len(group) // per_file) if per_file else 1
        groups[name] = group[::step][: per_file or None]
    rounds = itertools.zip_longest(*groups.values())
    return [case for row in rounds for case in row if case is not None]


def run_embed(args: argparse.Namespace) -> int:
    cases = load_cases(files=tuple(args.repos.split(",")) if args.repos else ())
    cases = interleaved(cases, args.per_file)
    embedder = load_embedder(args.threads)
    tokenizer = LazyTokenizer("o200k_base")
    weights = SemanticWeights()
    stores: dict[str, vector_store.VectorStore] = {}
    out = args.cache / "features.jsonl"
    done = _done_ids(out)
    started = time.perf_counter()
    total_chunks = 0
    with out.open("a", encoding="utf-8") as features:
        for number, case in enumerate(cases, 1):
            if case.case_id in done:
                continue
            repo = case.root.parent.name
            store = stores.get(repo) or _open_store(args.cache, repo, embedder)
            stores[repo] = store
            workspace = Workspace.open(case.root, tokenizer=tokenizer, semantic=False)
            index = workspace.index
            ranking = workspace.rank(case.query, Session())
            ids = [f.file_id for f in ranking.files[: args.top]]
            chunks = embed_files(index, ids, store, embedder, workspace.read_text, weights)
            total_chunks += chunks
            if chunks:
                vector_store.save(_store_path(args.cache, repo, embedder.model_id), store)
            question = embedder.embed([case.query])[0]
            matches = best_chunks(index, ids, store, question, weights) or {}
            record = {
                "id": case.case_id,
                "file": case.file,
                "gold": list(case.gold),
                "files": [
                    [f.path, f.score, *_match(matches.get(f.file_id))] for f in ranking.files[:TOP]
                ],
            }
            features.write(json.dumps(record) + "\n")
            features.flush()
            elapsed = time.perf_counter() - started
            print(f"{number}/{len(cases)} {case.case_id}: +{chunks} chunks "
                  f"({total_chunks} in {elapsed:.0f} s)", file=sys.stderr, flush=True)  # fmt: skip
    return 0


def _match(match: ChunkMatch | None) -> list[float]:
    return [] if match is None else [match.similarity, match.start_line, match.end_line]


def _store_path(cache: Path, repo: str, model_id: str) -> Path:
    return vector_store.vectors_file(cache / repo, model_id)


def _open_store(cache: Path, repo: str, embedder: object) -> vector_store.VectorStore:
    model_id, dim = embedder.model_id, embedder.dim  # type: ignore[attr-defined]
    try:
        return vector_store.load(_store_path(cache, repo, model_id), model_id, dim)
    except (FileNotFoundError, StaleCache):
        return vector_store.VectorStore(model_id, dim)


def _done_ids(path: Path) -> set[str]:
    if not path.exists():
        return set()
    return {json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()}


def read_features(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def ranking_of(record: dict[str, object]) -> tuple[Ranking, dict[int, ChunkMatch]]:
    """The case's lexical top 50 as a Ranking (file ids are positions) and its matches."""
    files, matches = [], {}
    for position, item in enumerate(record["files"]):  # type: ignore[attr-defined]
        files.append(RankedFile(item[0], position, item[1], ()))
        if len(item) > 2:
            matches[position] = ChunkMatch(item[2], int(item[3]), int(item[4]))
    return Ranking(str(record["id"]), (), Intent.GENERAL, tuple(files)), matches


def scored_rows(
    records: Sequence[dict[str, object]], weights: SemanticWeights | None, cases: dict[str, object]
) -> list[Row]:
    rows = []
    for record in records:
        ranking, matches = ranking_of(record)
        if weights is not None:
            ranking = fuse(ranking, matches, weights)
        top = [f.path for f in ranking.files]
        rows.append(Row(cases[record["id"]], top, [], case_metrics(record["gold"], top, None)))  # type: ignore[arg-type]
    return rows


def mean(rows: Sequence[Row], metric: str, files: Sequence[str]) -> float:
    chosen = [r.metrics[metric] for r in rows if r.case.file in files]
    return sum(chosen) / max(len(chosen), 1)


def run_sweep(args: argparse.Namespace) -> int:
    records = read_features(args.cache / "features.jsonl")
    cases = {c.case_id: c for c in load_cases()}
    base = scored_rows(records, None, cases)
    head = f"{'R@5':>10}{'R@10':>7}{'MRR':>7}"
    print(f"{'setting':<22}{head}{head}   (TUNED, then HELD)")

    def line(name: str, rows: list[Row]) -> None:
        cells = [mean(rows, m, g) for g in (TUNED, HELD) for m in ("R@5", "R@10", "MRR")]
        print(f"{name:<22}" + "".join(f"{v:>10.3f}" if i % 3 == 0 else f"{v:>7.3f}"
                                      for i, v in enumerate(cells)))  # fmt: skip

    line("lexical", base)
    reranks = [n for n in (5, 10, 20, 30, 50) if n <= args.embedded]
    for rerank, mix in itertools.product(reranks, (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)):
        weights = replace(SemanticWeights(), rerank=rerank, mix=mix)
        line(f"top {rerank} mix {mix}", scored_rows(records, weights, cases))
        raw = replace(weights, scaled=False)
        line(f"top {rerank} mix {mix} raw", scored_rows(records, raw, cases))
    for rerank, rrf in itertools.product(reranks, (1 / 3, 1 / 2, 1.0)):
        weights = replace(SemanticWeights(), rerank=rerank, rrf=rrf)
        line(f"top {rerank} rrf 1:{1 / rrf:.0f}", scored_rows(records, weights, cases))
    return 0


def run_loo(args: argparse.Namespace) -> int:
    """Choose the fusion numbers leave-one-repository-out (dev_loo's protocol): for each case
    file, the setting best on the other seven is scored on it. Only the cases in the features
    count (a prefix of the round-robin run): lexical is scored on the same cases."""
    from dev_loo import DEFAULTS, means, report

    records = read_features(args.cache / "features.jsonl")
    if args.cases:
        records = records[: args.cases]
    cases = {c.case_id: c for c in load_cases()}
    settings: dict[str, SemanticWeights | None] = {DEFAULTS: SemanticWeights(), "lexical": None}
    reranks = [n for n in (5, 10, 15, 20, 30, 50) if n <= args.embedded]
    for rerank, mix in itertools.product(reranks, (0.1, 0.2, 0.3, 0.4, 0.5)):
        for scaled in (False, True):
            name = f"top{rerank} mix{mix}{' scaled' if scaled else ''}"
            settings[name] = replace(SemanticWeights(), rerank=rerank, mix=mix, scaled=scaled)
    for rerank, rrf in itertools.product(reranks, (1 / 3, 1 / 2, 1.0)):
        settings[f"top{rerank} rrf1:{1 / rrf:.0f}"] = replace(
            SemanticWeights(), rerank=rerank, rrf=rrf
        )
    results = {name: means(scored_rows(records, w, cases)) for name, w in settings.items()}
    counts: dict[str, int] = {}
    for record in records:
        counts[str(record["file"])] = counts.get(str(record["file"]), 0) + 1
    print(f"{len(records)} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    sys.stdout.write(report(results))
    return 0


def run_table(args: argparse.Namespace) -> int:
    os.environ["CTXTUI_SEMANTIC"] = "off"  # the packs are of the rankings in the features
    records = read_features(args.cache / "features.jsonl")
    cases = load_cases()
    by_id = {c.case_id: c for c in cases}
    weights = replace(SemanticWeights(), mix=args.mix, rerank=args.rerank, scaled=not args.raw)
    wanted = [by_id[str(r["id"])] for r in records]
    workspaces = load(wanted) if args.pack else {}
    rows_before, rows_after = [], []
    for record in records:
        case = by_id[str(record["id"])]
        ranking, matches = ranking_of(record)
        fused = fuse(ranking, matches, weights)
        for target, chosen in ((rows_before, ranking), (rows_after, fused)):
            top = [f.path for f in chosen.files]
            with_code = None
            if args.pack:
                with_code = _packed(workspaces[case.root], case.query, chosen)
            target.append(Row(case, top, [], case_metrics(case.gold, top, with_code)))
    print("lexical\n" + table(rows_before))
    print(f"fused (top {weights.rerank}, mix {weights.mix})\n" + table(rows_after))
    return 0


def _packed(workspace: object, query: str, ranking: Ranking) -> set[str]:
    from engine import Format, Level

    real = workspace.rank(query, Session())  # type: ignore[attr-defined]
    position = {f.path: f for f in real.files}
    files = tuple(
        replace(position[f.path], score=f.score, reasons=position[f.path].reasons)
        for f in ranking.files
        if f.path in position
    )
    rest = tuple(f for f in real.files if f.path not in {g.path for g in files})
    plan, _ = workspace.pack(replace(real, files=files + rest), 8000, Session(), Format.JSON)  # type: ignore[attr-defined]
    return {e.path for e in plan.entries if e.level in (Level.FULL, Level.FOCUSED)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    sub = parser.add_subparsers(dest="command", required=True)
    embed = sub.add_parser("embed")
    embed.add_argument("--repos", help="comma list of case files (stems)")
    embed.add_argument("--threads", type=int, default=2)
    embed.add_argument("--top", type=int, default=TOP, help="files embedded per case")
    embed.add_argument("--per-file", type=int, default=0, help="cases per case file (0: all)")
    sweep = sub.add_parser("sweep")
    sweep.add_argument("--embedded", type=int, default=10, help="the --top the run embedded")
    loo = sub.add_parser("loo")
    loo.add_argument("--embedded", type=int, default=20, help="the --top the run embedded")
    loo.add_argument("--cases", type=int, default=0, help="only the first N records (0: all)")
    tab = sub.add_parser("table")
    tab.add_argument("--mix", type=float, default=SemanticWeights().mix)
    tab.add_argument("--rerank", type=int, default=SemanticWeights().rerank)
    tab.add_argument("--raw", action="store_true", help="mix the raw cosine, not min-max scaled")
    tab.add_argument("--pack", action="store_true", help="also pack each ranking (slow)")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    handlers = {"embed": run_embed, "sweep": run_sweep, "loo": run_loo, "table": run_table}
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
