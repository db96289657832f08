"""The semantic stage on a case set: embed what the re-rank needs, then choose its numbers.

    .venv/bin/python scripts/semantic_eval.py embed --top 20     # each DEV case's lexical top 20
    .venv/bin/python scripts/semantic_eval.py features           # best chunks of what is embedded
    .venv/bin/python scripts/semantic_eval.py loo                # choose leave-one-repo-out
    .venv/bin/python scripts/semantic_eval.py sweep              # the same on TUNED, judged on HELD
    .venv/bin/python scripts/semantic_eval.py table --pack       # lexical vs fused, rank + pack

Any case set (DEV by default): `--cases DIR` names its case files, the checkouts come from
$CTXBENCH_CACHE as for dev_eval, and `--memo DIR` (default $CTXBENCH_CACHE/semantic) holds the
plans, the vectors and the features; give each set's run that set's XDG folders so the index
cache is the set's. One memo can serve several sets (vectors are keyed by text):

    CTXBENCH_CACHE=/tmp/ctxtrain2 XDG_CACHE_HOME=... .venv/bin/python scripts/semantic_eval.py \
        --memo /tmp/sem/memo plan --cases scripts/train2_cases --top 20
    .venv/bin/python scripts/semantic_eval.py --memo /tmp/sem/memo embed --top 20 \
        --cases scripts/train2_cases --cases scripts/train_cases    # one queue, both sets

`plan` ranks every case of the set lexically (what `ctxtui rank` does without the extra) and
cuts the files of each case's top N into chunks as the product does (`plan-SET-N.json`, SET the
case folder's name; `embed` makes it when missing, with a single --cases). `embed` embeds each
distinct chunk text once (checkouts of one repository share most chunks: DEV's top 20 is 47.5k
chunks by file, 28.3k texts) into the memo: `*hashes.bin` (SHA-1 of each text) beside
`*vecs.f16` (its vector), appended a group at a time, so a stopped run resumes. Texts go in
rank order across the cases of every set given (every case's first file, then every second
file, ...), so whatever a run reached covers the whole top k of every case for some k.
`features` then writes each case's lexical top 50 with the best chunk of every file whose
chunks are all embedded, to `features-SET.jsonl` (`features.jsonl` for DEV), and prints that k:
the deepest re-rank the features can judge. `loo`, `sweep` and `table` read DEV's features
only, except `table`'s Pack column, which packs each fused ranking for real. The protocol is
dev_eval's: choose leave-one-repository-out (or on TUNED, judged on HELD), report both.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dev_eval import BENCH, HELD, TUNED, Row, case_metrics, load, load_cases, table

from engine import RankedFile, Ranking, Session
from engine.model import Intent
from engine.semantic import store as vector_store
from engine.semantic.chunks import chunk_file
from engine.semantic.embedder import load_embedder
from engine.semantic.fuse import fuse
from engine.semantic.vectors import ChunkMatch, SemanticWeights

TOP = 50
GROUP = 128
"""Texts embedded between two appends to the memo."""
DEFAULT_CACHE = Path(os.environ.get("CTXBENCH_CACHE", "/tmp/ctxbench")) / "semantic"
DEV_CASES = BENCH / "cases"


def set_name(case_dir: Path) -> str:
    """A case set's name in the memo: its folder's name ("" for DEV, whose files keep their
    old names: `plan-N.json`, `features.jsonl`)."""
    return "" if case_dir.resolve() == DEV_CASES.resolve() else case_dir.resolve().name


def _ranking_code() -> str:
    """A fingerprint of the code that ranks (engine and workspace sources): a plan made by
    other code holds another ranking, and reusing it would report that ranking's figures."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha1()
    for source in sorted([*root.glob("engine/**/*.py"), *root.glob("ctxtui/workspace/*.py")]):
        digest.update(str(source.relative_to(root)).encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()


def _plan(
    cache: Path, top: int, case_dir: Path = DEV_CASES, *, make: bool = True
) -> dict[str, object]:
    """Every case's lexical top 50 (path, score) and its top `top` files' chunks (text key and
    lines), plus the distinct texts in rank order across cases; made once per ranking code,
    kept in the cache (a plan of other code is made again; the embedded texts stay)."""
    code = _ranking_code()
    prefix = f"plan-{set_name(case_dir)}-" if set_name(case_dir) else "plan-"
    made_plans = [p for p in cache.glob(f"{prefix}*.json") if p.stem[len(prefix) :].isdigit()]
    for made in sorted(made_plans, key=lambda p: int(p.stem[len(prefix) :])):
        # a deeper plan holds this one, if the code is the same
        if int(made.stem[len(prefix) :]) >= top:
            plan = json.loads(made.read_text())
            if plan.get("code") == code:
                return plan  # type: ignore[no-any-return]
            made.unlink()
    if not make:
        raise SystemExit(
            f"no plan of {case_dir} to {top} in {cache}: run `plan --cases {case_dir}` first"
        )
    path = cache / f"{prefix}{top}.json"
    weights = SemanticWeights()
    cases = load_cases(case_dir)
    workspaces = load(cases, verbose=False)
    records, texts = [], {}
    for case in cases:
        workspace = workspaces[case.root]
        ranking = workspace.rank(case.query, Session())
        files = []
        for depth, ranked in enumerate(ranking.files[:TOP]):
            item: dict[str, object] = {"path": ranked.path, "score": ranked.score}
            if depth < top:
                parsed = workspace.index.files[ranked.file_id]
                chunks = chunk_file(parsed.path, workspace.read_text(parsed.path),
                                    parsed.declarations, lines=weights.chunk_lines,
                                    max_chunks=weights.max_chunks)  # fmt: skip
                keys = [vector_store.chunk_key(chunk.text).hex() for chunk in chunks]
                texts.update(zip(keys, (chunk.text for chunk in chunks), strict=True))
                item["chunks"] = [
                    [k, c.start_line, c.end_line] for k, c in zip(keys, chunks, strict=True)
                ]
            files.append(item)
        records.append({"id": case.case_id, "file": case.file, "query": case.query,
                        "repo": case.root.parent.name, "gold": list(case.gold),
                        "files": files})  # fmt: skip
    plan = {"top": top, "code": code, "cases": records, "texts": texts}
    path.write_text(json.dumps(plan))
    return plan


def read_memo(cache: Path, dim: int = 384) -> dict[str, object]:
    """Text key (hex) -> vector, from every `*hashes.bin` / `*vecs.f16` pair in the cache."""
    import numpy as np

    memo: dict[str, object] = {}
    for hashes in sorted(cache.glob("*hashes.bin")):
        keys = hashes.read_bytes()
        vectors = np.fromfile(hashes.with_name(hashes.name.replace("hashes.bin", "vecs.f16")),
                              dtype=np.float16).reshape(-1, dim)  # fmt: skip
        for row in range(min(len(keys) // 20, len(vectors))):  # a killed run: the shorter
            memo[keys[20 * row : 20 * row + 20].hex()] = vectors[row]
    return memo


def sample(records: Sequence[dict[str, Any]], per_file: int) -> list[dict[str, Any]]:
    """At most `per_file` cases of each case file, spread over the file (0: every case)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault(record["file"], []).append(record)
    chosen = []
    for group in groups.values():
        step = max(1, len(group) // per_file) if per_file else 1
        chosen += group[::step][: per_file or None]
    return chosen


def rank_order(records: Sequence[dict[str, Any]], top: int) -> dict[str, int]:
    """Text key -> the rank it is first needed at: every case's first file's chunks, then
    every case's second file's, ..., down to rank `top`."""
    order: dict[str, int] = {}
    for depth in range(top):
        for record in records:
            for item in record["files"][depth : depth + 1]:
                for key, _, _ in item.get("chunks", []):
                    order.setdefault(key, depth)
    return order


def run_plan(args: argparse.Namespace) -> int:
    for case_dir in args.cases or [DEV_CASES]:
        plan = _plan(args.cache, args.top, case_dir)
        log(f"{case_dir}: {len(plan['cases'])} cases, {len(plan['texts'])} distinct texts")  # type: ignore[arg-type]
    return 0


def run_embed(args: argparse.Namespace) -> int:
    case_dirs = args.cases or [DEV_CASES]
    records: list[dict[str, Any]] = []
    texts: dict[str, str] = {}
    for case_dir in case_dirs:
        plan = _plan(args.cache, args.top, case_dir, make=len(case_dirs) == 1)
        records += plan["cases"]  # type: ignore[arg-type]
        texts.update(plan["texts"])  # type: ignore[call-overload]
    memo = read_memo(args.cache)
    queries = {vector_store.chunk_key(r["query"]).hex(): r["query"] for r in records}
    texts.update(queries)
    # balanced samples of the cases first (N a case file to depth K, for each N:K of
    # --samples, else --per-file to --top), then every case (to --top)
    order = {k: 0 for k in queries}
    stages = [(args.per_file, args.top)]
    if args.samples:
        stages = [(int(n), int(k)) for n, k in (s.split(":") for s in args.samples.split(","))]
    for per_file, depth_limit in stages:
        for key, depth in rank_order(sample(records, per_file), depth_limit).items():
            order.setdefault(key, depth)
    for key, depth in rank_order(records, args.top).items():
        order.setdefault(key, depth)
    todo = [(k, d) for k, d in order.items() if k not in memo]
    log(f"{len(order)} distinct texts, {len(memo)} embedded, {len(todo)} to do")
    embedder = load_embedder(args.threads)
    started, done = time.perf_counter(), 0
    memo_keys, memo_vectors = args.cache / "hashes.bin", args.cache / "vecs.f16"
    _align(memo_keys, memo_vectors, embedder.dim)
    with memo_keys.open("ab") as keys, memo_vectors.open("ab") as out:
        for start in range(0, len(todo), GROUP):
            group = todo[start : start + GROUP]
            vectors = embedder.embed([texts[k] for k, _ in group]).astype("<f2")
            out.write(vectors.tobytes())
            out.flush()
            keys.write(b"".join(bytes.fromhex(k) for k, _ in group))
            keys.flush()
            done += len(group)
            rate = done / (time.perf_counter() - started)
            left = (len(todo) - done) / rate / 60
            log(f"{done}/{len(todo)} embedded, rank <= {group[-1][1] + 1}, {rate:.1f} chunks/s, "
                f"{left:.0f} min left, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    return 0


def _align(keys: Path, vectors: Path, dim: int) -> None:
    """Cut the memo's two files to the rows both hold: a run stopped between the two appends
    (or within one) would otherwise shift every later key against its vector."""
    if not keys.exists() or not vectors.exists():
        return
    rows = min(keys.stat().st_size // 20, vectors.stat().st_size // (2 * dim))
    for path, width in ((keys, 20), (vectors, 2 * dim)):
        if path.stat().st_size != rows * width:
            log(f"{path.name}: cut to {rows} rows (a stopped run)")
            os.truncate(path, rows * width)


def run_features(args: argparse.Namespace) -> int:
    """Each case's top 50 with the best chunk of each file whose chunks are all embedded; the
    deepest rank k up to which every case's every file has them is printed."""
    import numpy as np

    case_dir = args.cases[0] if args.cases else DEV_CASES
    plan = _plan(args.cache, args.top, case_dir, make=False)
    memo = read_memo(args.cache)
    depths: dict[str, list[int]] = {}
    name = f"features-{set_name(case_dir)}.jsonl" if set_name(case_dir) else "features.jsonl"
    with (args.cache / name).open("w", encoding="utf-8") as features:
        for record in plan["cases"]:  # type: ignore[union-attr]
            question = memo.get(vector_store.chunk_key(record["query"]).hex())
            files, complete = [], 0 if question is None else len(record["files"])
            for depth, item in enumerate(record["files"]):
                row = [item["path"], item["score"]]
                chunks = item.get("chunks")
                if question is None or chunks is None or any(k not in memo for k, _, _ in chunks):
                    complete = min(complete, depth)
                elif chunks:
                    matrix = np.stack([memo[k] for k, _, _ in chunks]).astype(np.float32)
                    similarities = matrix @ np.asarray(question, dtype=np.float32)
                    best = int(similarities.argmax())
                    row += [float(similarities[best]), chunks[best][1], chunks[best][2]]
                files.append(row)
            out = {k: record[k] for k in ("id", "file", "repo", "query", "gold") if k in record}
            features.write(json.dumps({**out, "embedded": complete, "files": files}) + "\n")
            depths.setdefault(record["file"], []).append(complete)
    for k in (3, 5, 8, 10, 15, 20):  # loo --embedded k judges the cases with k files embedded
        counts = {name: sum(d >= k for d in found) for name, found in sorted(depths.items())}
        print(f"top {k} embedded: {sum(counts.values())} cases ({counts})")
    return 0


def log(message: str) -> None:
    print(time.strftime("%H:%M:%S"), message, file=sys.stderr, flush=True)


def embedded(records: list[dict[str, Any]], top: int) -> list[dict[str, Any]]:
    """The cases whose top `top` files all have vectors (features without the count: all)."""
    return [r for r in records if int(r.get("embedded", TOP)) >= top]


def read_features(path: Path) -> list[dict[str, Any]]:
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
    records = embedded(records, args.embedded)
    cases = {c.case_id: c for c in load_cases()}
    base = scored_rows(records, None, cases)
    head = f"{'R@5':>10}{'R@10':>7}{'MRR':>7}"
    print(f"{'setting':<22}{head}{head}   (TUNED, then HELD)")

    def line(name: str, rows: list[Row]) -> None:
        cells = [mean(rows, m, g) for g in (TUNED, HELD) for m in ("R@5", "R@10", "MRR")]
        print(f"{name:<22}" + "".join(f"{v:>10.3f}" if i % 3 == 0 else f"{v:>7.3f}"
                                      for i, v in enumerate(cells)))  # fmt: skip

    line("lexical", base)
    reranks = [n for n in (3, 5, 8, 10, 15, 20, 30, 50) if n <= args.embedded]
    for rerank, mix in itertools.product(reranks, (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)):
        weights = replace(SemanticWeights(), rerank=rerank, mix=mix)
        line(f"top {rerank} mix {mix}", scored_rows(records, weights, cases))
        scaled = replace(weights, scaled=True)
        line(f"top {rerank} mix {mix} scaled", scored_rows(records, scaled, cases))
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
    records = embedded(records, args.embedded)
    cases = {c.case_id: c for c in load_cases()}
    settings: dict[str, SemanticWeights | None] = {DEFAULTS: SemanticWeights(), "lexical": None}
    reranks = [n for n in (3, 5, 8, 10, 15, 20, 30, 50) if n <= args.embedded]
    settings.update(setting_grid(reranks, (0.1, 0.2, 0.3, 0.4, 0.5)))
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
    records = embedded(records, args.rerank)
    cases = load_cases()
    by_id = {c.case_id: c for c in cases}
    weights = replace(SemanticWeights(), mix=args.mix, rerank=args.rerank, scaled=args.scaled)
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


SET_NAMES = {"features.jsonl": "DEV", "features-train_cases.jsonl": "TRAIN",
             "features-train2_cases.jsonl": "TRAIN2"}  # fmt: skip
REPORTED = ("DEV TUNED", "DEV HELD", "TRAIN", "TRAIN2")
LONG_WORDS = (0, 20, 40)
"""Split candidates: a question of at least this many words is long (0: no split)."""


def pool_settings(window_limit: int) -> dict[str, SemanticWeights | None]:
    """Words only, today's stage, and every window x mix x scaling x fusion judged."""
    settings: dict[str, SemanticWeights | None] = {"lexical": None}
    if SemanticWeights().rerank <= window_limit:  # else today's stage cannot be judged
        settings["today"] = SemanticWeights()
    windows = [w for w in (2, 3, 4, 5, 8, 10, 15, 20, 30, 40, 50) if w <= window_limit]
    settings.update(setting_grid(windows, (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)))
    return settings


def setting_grid(
    windows: Sequence[int], mixes: Sequence[float]
) -> dict[str, SemanticWeights | None]:
    """Every window x mix, raw and scaled, and every window x reciprocal-rank fusion."""
    settings: dict[str, SemanticWeights | None] = {}
    for window, mix in itertools.product(windows, mixes):
        for scaled in (False, True):
            name = f"top{window} mix{mix}{' scaled' if scaled else ''}"
            settings[name] = replace(SemanticWeights(), rerank=window, mix=mix, scaled=scaled)
    for window, rrf in itertools.product(windows, (1 / 3, 1 / 2, 1.0)):
        settings[f"top{window} rrf1:{1 / rrf:.0f}"] = replace(
            SemanticWeights(), rerank=window, rrf=rrf
        )
    return settings


def run_choose(args: argparse.Namespace) -> int:
    """Choose the window, mix and scaling leave-one-repository-out over every case set given
    (their features files), optionally apart for long and short questions; report out of fold
    per set against words only and today's stage, with paired bootstrap intervals."""
    import numpy as np

    records: list[dict[str, Any]] = []
    for path in args.features:
        label = SET_NAMES.get(path.name, path.stem)
        for record in read_features(path):
            group = label
            if label == "DEV":
                group = "DEV TUNED" if record["file"] in TUNED else "DEV HELD"
            if int(record.get("embedded", TOP)) >= args.min_embedded:
                records.append({**record, "group": group})
    deepest = min(int(r.get("embedded", TOP)) for r in records)
    limit = min(deepest, args.window_limit) if args.window_limit else deepest
    print(f"{len(records)} cases; every case has its top {deepest} embedded: windows <= {limit}")
    settings = pool_settings(limit)
    names = list(settings)
    judged = ("R@5", "R@10", "MRR")
    metrics = np.zeros((len(names), len(records), 3))
    for c, record in enumerate(records):
        ranking, matches = ranking_of(record)
        for s, weights in enumerate(settings.values()):
            fused = ranking if weights is None else fuse(ranking, matches, weights)
            got = case_metrics(record["gold"], [f.path for f in fused.files], None)
            metrics[s, c] = [got[m] for m in judged]
    repos = sorted({r["repo"] for r in records})
    repo_of = np.array([repos.index(r["repo"]) for r in records])
    words = np.array([len(str(r["query"]).split()) for r in records])
    groups = np.array([r["group"] for r in records])

    def pick(train: np.ndarray) -> int:
        """The setting best on the cases `train` (mean over repositories of R@5+R@10+MRR;
        ties go to words only, then today's stage, then the first listed)."""
        totals = metrics[:, train, :].sum(axis=2)  # settings x cases
        present = sorted(set(repo_of[train].tolist()))
        per_repo = np.stack(
            [totals[:, repo_of[train] == repo].mean(axis=1) for repo in present], axis=1
        )
        score = np.round(per_repo.mean(axis=1), 6)
        return int(np.flatnonzero(score == score.max())[0])

    def out_of_fold(split: int) -> tuple[np.ndarray, dict[str, list[str]]]:
        """Each case scored with the setting chosen on the other repositories (for its
        length class when split > 0)."""
        chosen = np.zeros(len(records), dtype=int)
        log_choices: dict[str, list[str]] = {}
        for repo in range(len(repos)):
            for long in (False, True) if split else (None,):
                mask = (
                    np.ones(len(records), dtype=bool) if long is None else (words >= split) == long
                )
                train = mask & (repo_of != repo)
                held = mask & (repo_of == repo)
                if not held.any():
                    continue
                best = pick(train)
                chosen[held] = best
                key = "all" if long is None else ("long" if long else "short")
                log_choices.setdefault(key, []).append(names[best])
        return metrics[chosen, np.arange(len(records))], log_choices

    def interval(gain: np.ndarray, rng: np.random.Generator) -> str:
        draws = rng.integers(0, len(gain), size=(args.bootstrap, len(gain)))
        means = gain[draws].mean(axis=1)
        low, high = np.percentile(means, [2.5, 97.5])
        return f"{gain.mean():+.3f} [{low:+.3f}, {high:+.3f}]"

    lexical = metrics[names.index("lexical")]
    today = metrics[names.index("today" if "today" in names else "lexical")]
    if "today" not in names:
        print(f"today's stage (top {SemanticWeights().rerank}) not judged: 'today' is words only")
    print("\nin sample (every case), mean over cases R@5/R@10/MRR; best 15 by the objective:")
    everyone = np.ones(len(records), dtype=bool)
    ranked = sorted(range(len(names)), key=lambda s: -metrics[s].sum(axis=1).mean())
    for s in [
        names.index("lexical"),
        names.index("today" if "today" in names else "lexical"),
        *ranked[:15],
    ]:
        cells = "  ".join(
            "/".join(f"{v:.3f}" for v in metrics[s, groups == g].mean(axis=0))
            for g in REPORTED
            if (groups == g).any()
        )
        print(f"{names[s]:<22}{cells}")
    print(f"{'':<22}" + "  ".join(f"{g:<17}" for g in REPORTED if (groups == g).any()))
    for split in args.long_words:
        oof, choices = out_of_fold(split)
        title = "no split" if not split else f"long = {split}+ words"
        print(f"\nleave-one-repository-out ({len(repos)} folds), {title}:")
        for key, chosen_names in choices.items():
            counts = sorted(((chosen_names.count(n), n) for n in set(chosen_names)), reverse=True)
            print(f"  {key} choices: " + ", ".join(f"{n} x{k}" for k, n in counts))
        for g in (*REPORTED, "ALL"):
            mask = groups == g if g != "ALL" else everyone
            if not mask.any():
                continue
            rng = np.random.default_rng(11)

            def row(values: np.ndarray, where: np.ndarray = mask) -> str:
                return "/".join(f"{v:.3f}" for v in values[where].mean(axis=0))

            print(f"  {g:<10} n={int(mask.sum()):>3}  words {row(lexical)}  today {row(today)}"
                  f"  chosen {row(oof)}")  # fmt: skip
            for m, metric in enumerate(judged):
                versus_words = interval(oof[mask, m] - lexical[mask, m], rng)
                versus_today = interval(oof[mask, m] - today[mask, m], rng)
                print(f"      {metric:<5} gain vs words {versus_words}   vs today {versus_today}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memo", "--cache", dest="cache", type=Path, default=DEFAULT_CACHE,
                        help="plans, vectors, features ($CTXBENCH_CACHE/semantic)")  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("plan", "embed", "features"):
        command = sub.add_parser(name)
        command.add_argument("--top", type=int, default=20, help="files embedded per case")
        command.add_argument("--cases", type=Path, action="append",
                             help="a case folder (default DEV's); embed takes several")  # fmt: skip
        if name == "embed":
            command.add_argument("--threads", type=int, default=1)
            command.add_argument("--per-file", type=int, default=0,
                                 help="embed a sample of N cases a case file first")  # fmt: skip
            command.add_argument("--samples", default="",
                                 help="N:K,...: N cases a file to depth K, in turn")  # fmt: skip
    sweep = sub.add_parser("sweep")
    sweep.add_argument("--embedded", type=int, default=10, help="the --top the run embedded")
    loo = sub.add_parser("loo")
    loo.add_argument("--embedded", type=int, default=20, help="the --top the run embedded")
    tab = sub.add_parser("table")
    tab.add_argument("--mix", type=float, default=SemanticWeights().mix)
    tab.add_argument("--rerank", type=int, default=SemanticWeights().rerank)
    tab.add_argument(
        "--scaled",
        action="store_true",
        default=SemanticWeights().scaled,
        help="min-max scale the cosines first (else the defaults' choice)",
    )
    tab.add_argument("--pack", action="store_true", help="also pack each ranking (slow)")
    pool = sub.add_parser("choose", help="choose over several sets, leave-one-repo-out")
    pool.add_argument("features", type=Path, nargs="+", help="features files of the sets")
    pool.add_argument("--window-limit", type=int, default=0, help="judge windows up to this")
    pool.add_argument("--min-embedded", type=int, default=0,
                      help="only the cases with this many files embedded (a sample)")  # fmt: skip
    pool.add_argument("--long-words", type=int, nargs="*", default=list(LONG_WORDS))
    pool.add_argument("--bootstrap", type=int, default=2000)
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    handlers = {"plan": run_plan, "embed": run_embed, "features": run_features,
                "sweep": run_sweep, "loo": run_loo, "table": run_table,
                "choose": run_choose}  # fmt: skip
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
