"""Fit and judge the learned re-rank (engine.rerank), leave-one-repository-out over case sets.

    .venv/bin/python scripts/rerank_fit.py dump /tmp/learn/dev.npz     # features of every DEV case
    CTXBENCH_CACHE=/tmp/ctxtrain .venv/bin/python scripts/rerank_fit.py dump /tmp/learn/train.npz \
        --cases scripts/train_cases                                     # any other case set
    .venv/bin/python scripts/rerank_fit.py judge /tmp/learn/dev.npz /tmp/learn/train.npz \
        --shipped-folds w89.json --weights-out w.json                   # nested LORO, tables
    .venv/bin/python scripts/rerank_fit.py judge dev.npz train.npz train2.npz --shipped-refit \
        --rows-out rows.json                                            # shipped out of fold too
    .venv/bin/python scripts/rerank_fit.py compare a.json b.json      # paired bootstrap, per set
    .venv/bin/python scripts/rerank_fit.py compare rows.json --column A:shipped,B:new
    .venv/bin/python scripts/rerank_fit.py misses train2.npz --rows rows.json  # where misses sit
    .venv/bin/python scripts/rerank_fit.py dump dev-short.npz --short 1,2,3  # short questions
    .venv/bin/python scripts/rerank_fit.py score dev.npz dev-short.npz --shipped-refit \
        --model run100=w.json                                           # saved models, no fit
    .venv/bin/python scripts/rerank_fit.py judge dev.npz dev-short.npz ... --floor on \
        --short-weights 0,0.1                                           # issue 11, session 26

`dump` ranks every case of a set once (dev_eval's checkouts and caches) and keeps, per case, the
best 50 files before any re-rank, their scores and `engine.rerank.features` (the very function
the ranking serves with), which of them are gold, the case's language and set.

`dump --short 1,2,3` keeps, instead of the cases, their short questions (`short_question`:
the subject line's first 1, 2 and 3 content words, as written; the same gold): what a user types
in the app, which the fitting data barely holds (24 of 619 questions have 1-3 words). Every
table scores them apart (SHORT1..3) and no inner choice is made on them; a fit counts them only
with `--short-weights`. `score` judges saved models (--weights-out files: each case by its
repository's fold) beside today's order and the shipped one, without fitting.

`judge` is issue 11's protocol over every dump given (concatenated). Folds are repositories
(flask and swe-flask are one: 7 folds on DEV, 32 on DEV + TRAIN).
For each fold a model is fitted on the other repositories, with its hyper-parameters (L2
strength, depth, feature set) chosen inside them by an inner leave-one-repository-out (the
choice with the best mean of R@5 + R@10 + MRR over the inner held repositories; ties go to the
stronger L2, which is nearer today's order), then scored on the held fold: every figure it
prints is out of fold. It prints, per DEV case file and per language of the other sets, today's
order, the shipped model (`RankWeights.rerank`; on DEV the per-fold models of the run that fitted
it, `--shipped-folds`) and the new model; with `--tune-on-4`, the split fitted without DEV's
HELD repositories; and the model fitted on every case (what would ship) with its hyper-parameters
chosen by the same inner loop. `--weights-out` writes every fold's weights (JSON).

Model: s = (1 + w0) x log(score / best) + w . x over the best `depth` files, fitted by a
pairwise logistic loss (each gold file against each non-gold candidate of its question,
weighted LambdaRank-style by how much the swap moves a 1 / log2(2 + place) gain), L2 toward
w = 0 (today's order) on standardised features; numpy only, Newton's method. `--floor on`
keeps the model's weight on the log score ratio, 1 + w0 + w_long x length, at least run 94's
at every question length (run 100's fell below 0 for 1-3 words).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: on 2 loaded cores a threaded
os.environ.setdefault("OMP_NUM_THREADS", "1")  # BLAS made one Newton fit 12 s instead of 0.8 s
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine.query import CHANGE_WORDS, KIND_LABELS, LABEL_WORDS
from engine.words import STOP_WORDS

DEPTH = 50
REPO_OF = {"swe-flask": "flask"}
"""Case file -> repository (flask and swe-flask share one repository: one fold)."""
JUDGED = ("R@5", "R@10", "MRR")
TUNED = ("flask", "swe-flask", "express", "cobra")
HELD = ("textual", "clap", "hono", "gin")


SHORT_VERBS = (
    "use using used allow allows allowed make makes making support supports supported remove"
    " removes removed removing move moves moved enable enables ensure avoid handle improve"
    " improved correct corrected replace replaced rename renamed simplify deprecate provide"
    " drop implement implemented switch restore prevent don't doesn't won't can't isn't apply"
    " optimize added adding change changed changes some unused unnecessary better now dropped"
    " skip take missing fixing refactored cleanup clean extend bump upgrade reuse"
)
SHORT_SKIP = frozenset(
    " ".join((*STOP_WORDS, *LABEL_WORDS, KIND_LABELS, CHANGE_WORDS, SHORT_VERBS)).lower().split()
)
"""Words a short question leaves out of a subject line: function words (engine.words), the kind
of change (`fix`, `feat`, `Add`, `Update`, engine.query's labels and change words) and the verbs
that open most subjects (`Allow`, `Remove`, `Use`, `Don't`): what is left names the code."""
SHORT_PREFIX = re.compile(
    r"^(?:\s*\[[^\]\n]*\]|\s*[A-Za-z]+\([^()\n]*\)!?:|\s*[A-Za-z]+!?:(?=\s))+"
)
"""Leading tags of a subject: `[core]`, `fix:`, `chore(deps):`, `feat(binding)!:` (a bare
`router: ...` scope too; its word comes back below when it is not a label)."""
SHORT_EDGE = re.compile(r"^[\W_]+|[\W_]+$")


def short_question(query: str, words: int) -> str | None:
    """The first `words` content words of the question's subject line, as written (their outer
    punctuation stripped, backticks and commas part words: `` `IntoResponse` `` -> `IntoResponse`,
    `context.Abort` kept), or None
    when it has fewer: what a user types for the same change. No index or gold file is read."""
    subject = next((line for line in query.splitlines() if line.strip()), "")
    prefix = SHORT_PREFIX.match(subject)
    scope = ""
    if prefix:  # a scope that names code (`router:`, `fix(binding):`) stays a word of it
        tag = prefix.group(0).strip()
        inner = re.findall(r"\(([^()]*)\)", tag)
        bare = re.fullmatch(r"([A-Za-z]+):", tag)
        scope = " ".join(inner) if inner else (bare.group(1) if bare else "")
        subject = subject[prefix.end() :]
    kept = []
    for raw in re.split(r"[\s,`]+", scope + " " + subject):
        word = SHORT_EDGE.sub("", raw)
        if len(word) < 2 or not re.search(r"[^\W\d_]", word) or word.lower() in SHORT_SKIP:
            continue
        kept.append(word)
        if len(kept) == words:
            return " ".join(kept)
    return None


def dump(out: Path, case_dir: Path | None = None, short: Sequence[int] = ()) -> int:
    """Rank every case of `case_dir` (DEV by default; checkouts under $CTXBENCH_CACHE) once and
    keep its best 50 files before any re-rank with their features: one code path for every set.
    With `short`, each case's short questions of so many words instead (`short_question`: id
    `case~n`, the same gold), the short-question check set."""
    from dataclasses import replace

    from dev_eval import BENCH, Case, load, load_cases

    from engine.rerank import FEATURES

    case_dir = case_dir or BENCH / "cases"
    cases = load_cases(case_dir)
    workspaces = load(cases)
    lengths = [0] * len(cases)
    if short:
        variants: list[Case] = []
        lengths = []
        for case in cases:
            for n in short:
                text = short_question(case.query, n)
                if text is not None:
                    variants.append(replace(case, case_id=f"{case.case_id}~{n}", query=text))
                    lengths.append(n)
        cases = variants
    langs = _languages(case_dir)
    langs.update({c.case_id: langs.get(c.case_id.partition("~")[0], "") for c in cases})
    ids, files, paths, gold_counts, xs, labels, scores = [], [], [], [], [], [], []
    places = []
    for case in cases:
        index = workspaces[case.root].index
        top, score, x, place = _candidates(index, case.query, set(case.gold))
        names = [index.files[int(i)].path for i in top]
        places.append(place)
        ids.append(case.case_id)
        files.append(case.file)
        paths.append(names)
        gold_counts.append(len(set(case.gold)))
        xs.append(x)
        labels.append(np.array([p in set(case.gold) for p in names], dtype=bool))
        scores.append(score)
    offsets = np.cumsum([0] + [len(x) for x in xs])
    np.savez_compressed(
        out,
        ids=np.array(ids),
        files=np.array(files),
        langs=np.array([langs.get(i, "") for i in ids]),
        sets=np.array([set_name(case_dir)] * len(ids)),
        short=np.array(lengths, dtype=np.int64),
        gold_counts=np.array(gold_counts),
        offsets=offsets,
        x=np.concatenate(xs) if xs else np.zeros((0, len(FEATURES))),
        labels=np.concatenate(labels),
        scores=np.concatenate(scores),
        paths=np.array([p for ps in paths for p in ps]),
        features=np.array(FEATURES),
        gold_places=np.array([json.dumps(p) for p in places]),
    )
    print(f"{len(cases)} cases, {offsets[-1]} candidates -> {out}")
    return 0


def _candidates(
    index: object, query: str, gold: set[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """engine.rank.candidate_features (the best DEPTH files before any re-rank, their scores and
    features), and the place of each gold file in the whole order before the re-rank (-1 for one
    without a positive score): where the misses sit beyond the dump's 50."""
    from dataclasses import replace

    from engine.query import analyse_query
    from engine.rank import DEFAULT_WEIGHTS, _score_vector
    from engine.rerank import candidates, features
    from engine.templates import without_template_lines

    weights = DEFAULT_WEIGHTS
    text = without_template_lines(index, query)  # type: ignore[arg-type]
    analysis = analyse_query(index, text, weights.query_weights(), complete=True)  # type: ignore[arg-type]
    scores, signals = _score_vector(index, analysis, replace(weights, rerank=()), reranked=True)  # type: ignore[arg-type]
    top = candidates(scores, DEPTH)
    x = features(index, analysis, signals, scores, top)  # type: ignore[arg-type]
    order = candidates(scores, len(scores))
    at = {int(f): n for n, f in enumerate(order.tolist())}
    if id(index) not in _IDS:
        files = index.files  # type: ignore[attr-defined]
        names = getattr(files, "paths", None) or [f.path for f in files]
        _IDS[id(index)] = {name: i for i, name in enumerate(names)}
    ids = [_IDS[id(index)][p] for p in gold if p in _IDS[id(index)]]
    return top, scores[top], x, sorted(at.get(i, -1) for i in ids)


_IDS: dict[int, dict[str, int]] = {}


def set_name(case_dir: Path) -> str:
    """DEV for shared/bench/cases, else the folder's name without `_cases` (TRAIN, EXTRA)."""
    name = case_dir.resolve().name
    return "DEV" if name == "cases" else name.removesuffix("_cases").upper()


def _languages(case_dir: Path) -> dict[str, str]:
    out = {}
    for path in sorted(case_dir.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                raw = json.loads(line)
                out[raw["id"]] = raw.get("lang", "")
    return out


@dataclass
class Data:
    ids: np.ndarray
    files: np.ndarray
    gold_counts: np.ndarray
    offsets: np.ndarray
    x: np.ndarray
    labels: np.ndarray
    features: list[str]
    langs: np.ndarray
    sets: np.ndarray
    short: np.ndarray
    """Words of a short question (`short_question`), 0 for a case as it is."""

    @classmethod
    def read(cls, paths: Sequence[Path]) -> Data:
        """One or more dumps, concatenated (the same FEATURES in each)."""
        parts = [np.load(p) for p in paths]
        features = [str(f) for f in parts[0]["features"]]
        for z in parts[1:]:
            if [str(f) for f in z["features"]] != features:
                raise SystemExit("dumps of different FEATURES: dump them again")
        offsets, start = [np.zeros(1, dtype=np.int64)], 0
        for z in parts:
            offsets.append(z["offsets"][1:] + start)
            start += int(z["offsets"][-1])
        n = [len(z["ids"]) for z in parts]

        def column(key: str, default: str) -> np.ndarray:
            return np.concatenate([z[key] if key in z else np.array([default] * k)
                                   for z, k in zip(parts, n, strict=True)])  # fmt: skip

        return cls(column("ids", ""), column("files", ""),
                   np.concatenate([z["gold_counts"] for z in parts]), np.concatenate(offsets),
                   np.concatenate([z["x"] for z in parts]),
                   np.concatenate([z["labels"] for z in parts]), features,
                   column("langs", ""), column("sets", "DEV"),
                   np.concatenate([z["short"] if "short" in z else np.zeros(k, dtype=np.int64)
                                   for z, k in zip(parts, n, strict=True)]))  # fmt: skip

    def case(self, i: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = int(self.offsets[i]), int(self.offsets[i + 1])
        b = min(b, a + depth)
        return self.x[a:b], self.labels[a:b]

    def full_labels(self, i: int) -> np.ndarray:
        return self.labels[int(self.offsets[i]) : int(self.offsets[i + 1])]

    def real(self, cases: Sequence[int]) -> list[int]:
        """The cases as they are, without the short questions."""
        return [i for i in cases if not self.short[i]]

    def repo(self, i: int) -> str:
        f = str(self.files[i])
        return REPO_OF.get(f, f)


def fit(
    data: Data,
    cases: Sequence[int],
    depth: int,
    columns: np.ndarray,
    l2: float,
    rounds: int = 3,
    keep: int = 0,
    start_from: list[np.ndarray] | None = None,
    trace: list[np.ndarray] | None = None,
    short_weight: float = 0.0,
    floor: Sequence[tuple[float, float]] = (),
) -> np.ndarray:
    """Weights (one per feature; unused columns 0) of a pairwise logistic loss: every (gold,
    non-gold) pair of a question's best `depth` files, weighted by how much swapping the two
    would move the judged metrics at their current places (|change of 1 / log2(2 + place)|, a
    static LambdaRank weight, recomputed from the model's own order `rounds` times), + l2 |w|^2
    / 2 on standardised features; Newton's method with backtracking, vectorised.

    The short questions among `cases` count with their pairs' weight x `short_weight` (0: left
    out). `floor`, (length, least) pairs: the weight the model puts on the log score ratio at a
    question length (engine.rerank's `long`, 0..1), 1 + w0 + w_long x length, is kept at least
    `least` (a convex problem under linear constraints: the best of the fits with each set of
    them held as equalities that satisfies all)."""
    xs, bases, pair_g, pair_n, factor = [], [], [], [], []
    owner: list[np.ndarray] = []
    start = 0
    for i in cases:
        if data.short[i] and short_weight <= 0:
            continue
        x, y = data.case(i, depth)
        x, y = x[keep:], y[keep:]
        golds, nons = np.flatnonzero(y), np.flatnonzero(~y)
        if len(golds) == 0 or len(nons) == 0:
            continue
        xs.append(x[:, columns])
        bases.append(x[:, 0])
        gg, nn = np.meshgrid(golds, nons, indexing="ij")
        pair_g.append(gg.ravel() + start)
        pair_n.append(nn.ravel() + start)
        factor.append(np.full(gg.size, short_weight if data.short[i] else 1.0))
        owner.append(np.full(len(y), len(owner)))
        start += len(y)
    full = np.zeros(len(data.features))
    if not xs:
        return full
    x, base, group = np.concatenate(xs), np.concatenate(bases), np.concatenate(owner)
    pg, pn, factors = np.concatenate(pair_g), np.concatenate(pair_n), np.concatenate(factor)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    x = x / scale
    dx = x[pg] - x[pn]
    dbase = base[pg] - base[pn]
    first = np.concatenate(([0], np.flatnonzero(np.diff(group)) + 1))
    rows = _floor_rows(data.features, columns, scale, floor)

    def places(w: np.ndarray) -> np.ndarray:
        """Each row's place in its question by the model (ties: today's order), all at once."""
        s = base + x @ w
        order = np.lexsort((np.arange(len(s)), -s, group))  # questions are contiguous
        out = np.empty(len(s), dtype=np.int64)
        out[order] = np.arange(len(s)) - first[group[order]]
        return out

    w = np.zeros(x.shape[1])
    for round_number in range(rounds):
        place = places(w)
        weight = np.abs(1.0 / np.log2(2.0 + place[pg]) - 1.0 / np.log2(2.0 + place[pn]))
        if short_weight > 0:
            weight *= factors
        weight /= weight.sum() or 1.0
        if start_from is not None:  # Newton starts near the optimum; the optimum is the same
            w = start_from[round_number][columns] * scale
        if rows is None:
            w = _newton(dx, dbase, weight, l2, w)
        else:
            w = _constrained(dx, dbase, weight, l2, w, rows, start_from is not None)
        if trace is not None:
            trace.append(np.zeros(len(data.features)))
            trace[-1][columns] = w / scale
    full[columns] = w / scale
    return full


def _loss(
    dx: np.ndarray, dbase: np.ndarray, weight: np.ndarray, l2: float, v: np.ndarray,
    shift: np.ndarray | None = None,
) -> float:  # fmt: skip
    margin = dbase + dx @ v
    penalty = float(v @ v) if shift is None else float(v @ v + 2.0 * shift @ v)
    return float(weight @ np.logaddexp(0.0, -margin)) + 0.5 * l2 * penalty


def _newton(
    dx: np.ndarray, dbase: np.ndarray, weight: np.ndarray, l2: float, w: np.ndarray,
    shift: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """The loss's minimum from `w`. `shift` adds l2 x shift . w to it: over w = at + basis @ z
    (the floor's rows held as equalities, basis orthonormal) the L2 term of the weights is
    |at|^2 + 2 (basis' at) . z + |z|^2."""
    f = _loss(dx, dbase, weight, l2, w, shift)
    for _ in range(50):  # Newton's method: a few dozen parameters at most
        margin = dbase + dx @ w
        sig = 0.5 * (1.0 - np.tanh(0.5 * margin))  # 1 / (1 + e^margin), stable
        grad = -(weight * sig) @ dx + l2 * (w if shift is None else w + shift)
        hess = (dx * (weight * sig * (1.0 - sig))[:, None]).T @ dx + l2 * np.eye(len(w))
        direction = np.linalg.solve(hess, grad)
        step = 1.0
        while True:
            f_new = _loss(dx, dbase, weight, l2, w - step * direction, shift)
            if f_new <= f - 1e-4 * step * float(grad @ direction) or step < 1e-6:
                break
            step *= 0.5
        w = w - step * direction
        done = f - f_new < 1e-12
        f = f_new
        if done:
            break
    return w


def _floor_rows(
    features: Sequence[str], columns: np.ndarray, scale: np.ndarray,
    floor: Sequence[tuple[float, float]],
) -> tuple[np.ndarray, np.ndarray] | None:  # fmt: skip
    """`floor` as rows a . v >= b over the standardised weights v of `columns`."""
    if not floor:
        return None
    where = {int(c): n for n, c in enumerate(columns)}
    ratio = where.get(features.index("log_score_ratio"))
    long = where.get(features.index("long_x_log_score_ratio"))
    a = np.zeros((len(floor), len(columns)))
    b = np.zeros(len(floor))
    for k, (length, least) in enumerate(floor):
        if ratio is not None:
            a[k, ratio] = 1.0 / scale[ratio]
        if long is not None:
            a[k, long] = length / scale[long]
        b[k] = least - 1.0
    return a, b


def _holds(rows: tuple[np.ndarray, np.ndarray], v: np.ndarray, slack: float = 1e-9) -> bool:
    a, b = rows
    return bool(np.all(a @ v >= b - slack))


def _constrained(
    dx: np.ndarray, dbase: np.ndarray, weight: np.ndarray, l2: float, w: np.ndarray,
    rows: tuple[np.ndarray, np.ndarray], warm: bool = False,
) -> np.ndarray:  # fmt: skip
    """The minimum under a . v >= b from `w`. `warm` (w is near the minimum): first the rows
    active at w held as equalities, kept if the result satisfies every row and its multipliers
    are >= 0 (the minimum of a convex problem, by its optimality conditions). Else the
    unconstrained minimum if it satisfies the rows, else each set of rows held as equalities,
    the fewest first, the best loss among the results that satisfy every row (the minimum of a
    convex loss under linear constraints is the minimum on the face of its active rows)."""
    from itertools import combinations

    a, b = rows

    def on(chosen: Sequence[int]) -> np.ndarray:
        if not chosen:
            return _newton(dx, dbase, weight, l2, w)
        sub_a, sub_b = a[list(chosen)], b[list(chosen)]
        at = sub_a.T @ np.linalg.solve(sub_a @ sub_a.T, sub_b)  # its point nearest to 0
        basis = np.linalg.svd(sub_a)[2][len(chosen) :].T
        z = _newton(dx @ basis, dbase + dx @ at, weight, l2, basis.T @ (w - at), basis.T @ at)
        out: np.ndarray = at + basis @ z
        return out

    if warm:
        active = [k for k in range(len(b)) if a[k] @ w - b[k] <= 1e-7]
        v = on(active)
        if _holds(rows, v, 1e-7):
            if not active:
                return v
            sig = 0.5 * (1.0 - np.tanh(0.5 * (dbase + dx @ v)))
            grad = -(weight * sig) @ dx + l2 * v
            multipliers = np.linalg.lstsq(a[active].T, grad, rcond=None)[0]
            if np.all(multipliers >= -1e-9):
                return v
    v = on(())
    if _holds(rows, v):
        return v
    best, best_loss = None, np.inf
    for size in range(1, len(b) + 1):
        if best is not None:  # more rows held can only cost more
            break
        for chosen in combinations(range(len(b)), size):
            if np.linalg.matrix_rank(a[list(chosen)]) < len(chosen):
                continue
            v = on(chosen)
            if not _holds(rows, v, 1e-7):
                continue
            value = _loss(dx, dbase, weight, l2, v)
            if value < best_loss:
                best, best_loss = v, value
    if best is None:
        raise ValueError("no weights satisfy the floor")
    return best


def metrics(
    data: Data, i: int, w: np.ndarray | None, depth: int, keep: int = 0
) -> dict[str, float]:
    """score.py's R@5, R@10, MRR over the top 50 after re-sorting places keep .. depth - 1."""
    y = data.full_labels(i).copy()
    if w is not None:
        x, _ = data.case(i, depth)
        z = x[keep:, 0] + x[keep:] @ w
        order = np.lexsort((np.arange(len(z)), -z))
        y[keep : keep + len(order)] = y[keep : keep + len(order)][order]
    wanted = int(data.gold_counts[i])
    first = np.flatnonzero(y)
    return {
        "R@5": y[:5].sum() / wanted,
        "R@10": y[:10].sum() / wanted,
        "MRR": 0.0 if len(first) == 0 else 1.0 / (first[0] + 1),
    }


def objective(rows: Sequence[dict[str, float]]) -> float:
    return sum(r[m] for r in rows for m in JUDGED) / max(len(rows), 1)


from engine.rerank import FEATURES as _FEATURES  # noqa: E402  (after sys.path is set)

FEATURES_88 = _FEATURES[: _FEATURES.index("no_keyword") + 1]
"""Run 88's features (the ones after them came in run 89)."""
FEATURE_SETS = {
    "all": None,
    "s22": _FEATURES[: _FEATURES.index("long_x_declaration_share") + 1],
    "fields": _FEATURES[: _FEATURES.index("scope_path_share") + 1],
    "base": tuple(FEATURES_88),
    "structure": (
        "log_score_ratio",
        "declaration_share",
        "graph",
        "log_prior",
        "scattered",
        "log_tokens",
        "log_declarations",
        "mentioned",
        "no_keyword",
    ),
}
L2S = (1e-2, 1e-3, 1e-4, 1e-5)
DEPTHS = (30, 50)


def columns_of(data: Data, name: str) -> np.ndarray:
    chosen = FEATURE_SETS[name]
    if chosen is None:
        return np.arange(len(data.features))
    return np.array([data.features.index(f) for f in chosen])


SETS = tuple(FEATURE_SETS)
"""The feature sets the inner loop chooses among (--sets)."""
KEEPS = (0,)
"""How many of today's best files stay where they are (--keeps): the re-rank sorts the rest."""


class Setting(NamedTuple):
    features: str
    depth: int
    l2: float
    keep: int
    short_weight: float = 0.0
    """The short questions' pairs count this much (0: not fitted on)."""
    floor: bool = False
    """Keep the weight on the log score ratio at least run 94's at every length."""

    def fit(
        self,
        data: Data,
        cases: Sequence[int],
        start_from: list[np.ndarray] | None = None,
        trace: list[np.ndarray] | None = None,
    ) -> np.ndarray:
        return fit(data, cases, self.depth, columns_of(data, self.features), self.l2,
                   keep=self.keep, start_from=start_from, trace=trace,
                   short_weight=self.short_weight,
                   floor=shipped_floor() if self.floor else ())  # fmt: skip

    def metrics(self, data: Data, i: int, w: np.ndarray) -> dict[str, float]:
        return metrics(data, i, w, self.depth, self.keep)


SHORT_WEIGHTS: tuple[float, ...] = (0.0,)
"""How much the short questions' pairs count in a fit (--short-weights)."""
FLOORS: tuple[bool, ...] = (False,)
"""Fits with and without the floor on the log score ratio (--floor)."""
LENGTHS = (math.log1p(1) / math.log(81.0), 1.0)
"""engine.rerank's `long` at 1 and 80 question words: the weight on the log score ratio is
linear in it, so a floor held at both holds at every length."""


RUN94 = {"log_score_ratio": -0.8011, "long_x_log_score_ratio": 0.9562}
"""Run 94's weights on the log score ratio (RankWeights.rerank until session 26): its weight
there, 0.35 at one word, 1.16 at 80, is the floor (`--floor on`), fixed here so that the floor
does not move with whatever model ships."""


def shipped_floor() -> tuple[tuple[float, float], ...]:
    """(length, run 94's weight on the log score ratio there) at both LENGTHS."""
    return tuple((length, ratio_weight(RUN94, length)) for length in LENGTHS)


def ratio_weight(model: dict[str, float], length: float) -> float:
    """A model's weight on log(score / best) at a question length: 1 + w0 + w_long x length."""
    return (
        1.0 + model.get("log_score_ratio", 0.0) + length * model.get("long_x_log_score_ratio", 0.0)
    )


def grid() -> list[Setting]:
    """Stronger L2 first: the tie-break toward today's order."""
    return [Setting(s, d, l2, k, sw, fl) for s in SETS for d in DEPTHS for k in KEEPS
            for sw in SHORT_WEIGHTS for fl in FLOORS for l2 in L2S]  # fmt: skip


_FITS: dict[tuple[Setting, tuple[int, ...]], np.ndarray] = {}
_STARTS: dict[Setting, list[np.ndarray]] = {}


def fitted(setting: Setting, data: Data, cases: Sequence[int]) -> np.ndarray:
    """`setting.fit` remembered by its training cases: the inner fit that holds out repositories
    a and b serves both the outer fold a (inner b) and the outer fold b (inner a). Each round's
    Newton iterations start from that round's weights fitted on every case (the loss of a round
    is convex, so the start changes the iterations, not the weights beyond 1e-12 of the loss)."""
    key = (setting, tuple(sorted(cases)))
    if key not in _FITS:
        if setting not in _STARTS:
            trace: list[np.ndarray] = []
            setting.fit(data, range(len(data.ids)), trace=trace)
            _STARTS[setting] = trace
        _FITS[key] = setting.fit(data, key[1], start_from=_STARTS[setting])
    return _FITS[key]


def choose(data: Data, train: Sequence[int]) -> tuple[Setting, float]:
    """Hyper-parameters by leave-one-repository-out inside `train`: the setting with the best
    mean, over the training repositories each held in turn, of R@5 + R@10 + MRR of its cases as
    they are (short questions are fitted on, never judged here; ties within 1e-6 go to the
    earlier grid entry); and its gain over today's order on the same means."""
    repos = sorted({data.repo(i) for i in train})
    by_repo = {held: [i for i in data.real(train) if data.repo(i) == held] for held in repos}
    today = float(np.mean([objective([metrics(data, i, None, DEPTH) for i in by_repo[held]])
                           for held in repos]))  # fmt: skip
    best, best_value = grid()[0], -1.0
    for setting in grid():
        values = []
        for held in repos:
            w = fitted(setting, data, [i for i in train if data.repo(i) != held])
            values.append(objective([setting.metrics(data, i, w) for i in by_repo[held]]))
        value = float(np.mean(values))
        if value > best_value + 1e-6:
            best, best_value = setting, value
    return best, best_value - today


def groups(data: Data, members: Sequence[int], per_repo: bool) -> list[tuple[str, list[int]]]:
    """DEV per case file, TRAIN (or any other set) per language (and per repository), then
    DEV's TUNED and HELD, each set, and ALL."""
    out: list[tuple[str, list[int]]] = []
    shorts = [i for i in members if data.short[i]]
    members = data.real(members)
    sets = sorted({str(data.sets[i]) for i in members})
    for name in sets:
        mine = [i for i in members if data.sets[i] == name]
        if name == "DEV" or per_repo:
            out += [(f, [i for i in mine if data.files[i] == f])
                    for f in sorted({str(data.files[i]) for i in mine})]  # fmt: skip
        if name != "DEV":
            out += [(f"{name}:{lang}", [i for i in mine if data.langs[i] == lang])
                    for lang in sorted({str(data.langs[i]) for i in mine})]  # fmt: skip
    dev = [i for i in members if data.sets[i] == "DEV"]
    out += [("TUNED", [i for i in dev if data.files[i] in TUNED]),
            ("HELD", [i for i in dev if data.files[i] in HELD])]  # fmt: skip
    out += [(name, [i for i in members if data.sets[i] == name]) for name in sets]
    out.append(("ALL", list(members)))
    for n in sorted({int(data.short[i]) for i in shorts}):
        mine = [i for i in shorts if data.short[i] == n]
        out += [(f"SHORT{n}:{name}", [i for i in mine if data.sets[i] == name])
                for name in sorted({str(data.sets[i]) for i in mine})]  # fmt: skip
        out.append((f"SHORT{n}", mine))
    out.append(("SHORT", shorts))
    return [(name, m) for name, m in out if m]


def table(
    data: Data, columns: Sequence[tuple[str, dict[int, dict[str, float]]]], per_repo: bool = False
) -> str:
    """One line per group (see `groups`), R@5/R@10/MRR of each column (label, case -> metrics)."""
    members = sorted(columns[-1][1])
    head = f"{'group':<22}{'n':>4}" + "".join(f"  {label:>20}" for label, _ in columns)
    lines = [head]
    for name, group in groups(data, members, per_repo):
        cells = ["/".join(f"{np.mean([result[i][m] for i in group]):.3f}" for m in JUDGED)
                 for _, result in columns]  # fmt: skip
        lines.append(f"{name:<22}{len(group):>4}" + "".join(f"  {c:>20}" for c in cells))
    return "\n".join(lines)


SHIPPED = Setting("all", 30, 1e-3, 0)
"""Run 94's setting (RankWeights.rerank), fitted on DEV + TRAIN."""


def shipped(
    data: Data, folds_path: Path | None, refit: bool = False
) -> dict[int, dict[str, float]]:
    """Today's shipped re-rank scored like a candidate: RankWeights.rerank (fitted on all of DEV)
    on every case outside DEV; on DEV, with `folds_path` (a --weights-out file of the run it was
    fitted by), each DEV repository by the model fitted without it (the `mentioned` weight set
    to 0, as shipped), so that DEV too is out of fold; with `refit`, run 94's setting fitted
    without each repository of DEV and TRAIN in turn (today's features: the code_language fix
    came after run 94), so that both are out of fold."""
    from engine.rank import DEFAULT_WEIGHTS
    from engine.rerank import FEATURES

    def vector(weights: Sequence[float]) -> np.ndarray:
        named = dict(zip(FEATURES, weights, strict=False))
        named["mentioned"] = 0.0
        return np.array([named.get(f, 0.0) for f in data.features])

    folds = json.loads(folds_path.read_text())["folds"] if folds_path else {}
    fitted_on = ("DEV", "TRAIN")  # the sets run 94 was fitted on
    if refit:  # its setting refitted without each repository of the sets it saw
        seen = data.real([i for i in range(len(data.ids)) if data.sets[i] in fitted_on])
        for held in sorted({data.repo(i) for i in seen}):
            w = SHIPPED.fit(data, [i for i in seen if data.repo(i) != held])
            folds[held] = {"weights": list(w), "depth": SHIPPED.depth}
    out = {}
    for i in range(len(data.ids)):
        fold = folds.get(data.repo(i)) if data.sets[i] in fitted_on else None
        if fold is not None:
            out[i] = metrics(data, i, vector(fold["weights"]), int(fold["depth"]))
        else:
            out[i] = metrics(data, i, vector(DEFAULT_WEIGHTS.rerank), DEFAULT_WEIGHTS.rerank_depth)
    return out


def judge(
    paths: Sequence[Path],
    weights_out: Path | None,
    quick: bool,
    shipped_folds: Path | None = None,
    rows_out: Path | None = None,
    per_repo: bool = False,
    tune_on_4: bool = False,
    refit: bool = False,
) -> int:
    data = Data.read(paths)
    if quick:
        global L2S, DEPTHS
        L2S, DEPTHS = (1e-3, 1e-4), (40,)
    n = len(data.ids)
    base = {i: metrics(data, i, None, 50) for i in range(n)}
    ship = shipped(data, shipped_folds, refit)
    repos = sorted({data.repo(i) for i in range(n)})
    result: dict[int, dict[str, float]] = {}
    forced: dict[int, dict[str, float]] = {}  # the fold's best setting even when it lost inside
    saved: dict[str, object] = {"features": data.features, "folds": {}}
    for held in repos:
        train = [i for i in range(n) if data.repo(i) != held]
        test = [i for i in range(n) if data.repo(i) == held]
        setting, gain = choose(data, train)
        w = fitted(setting, data, train)
        forced_w = w
        if gain <= 1e-6:  # today's order is a choice too: no setting beat it inside train
            w = np.zeros(len(data.features))
        for i in test:
            result[i] = setting.metrics(data, i, w)
            forced[i] = setting.metrics(data, i, forced_w)
        saved["folds"][held] = {**setting._asdict(), "gain": gain, "weights": w.tolist()}  # type: ignore[index]
        up = sum(result[i]["MRR"] > base[i]["MRR"] for i in data.real(test))
        down = sum(result[i]["MRR"] < base[i]["MRR"] for i in data.real(test))
        print(f"fold {held:<14} chose {setting} (inner gain {gain:+.4f}); "
              f"first gold up {up}, down {down}", flush=True)  # fmt: skip
    print("\nleave-one-repository-out (nested; a fold whose best setting lost to today's order")
    print("inside its training repositories keeps today's order); shipped = today's re-rank")
    print("(RankWeights.rerank; on DEV its own out-of-fold models when --shipped-folds):")
    columns = [("today (no re-rank)", base), ("shipped", ship), ("new (out of fold)", result)]
    print(table(data, columns, per_repo))
    print("\nthe same, each fold's best setting forced on even where it lost inside:")
    print(table(data, [("today (no re-rank)", base), ("forced", forced)], per_repo))
    if rows_out:
        rows = {str(data.ids[i]): {"file": str(data.files[i]), "set": str(data.sets[i]),
                                   "short": int(data.short[i]), "today": base[i],
                                   "shipped": ship[i], "new": result[i]}
                for i in range(n)}  # fmt: skip
        rows_out.write_text(json.dumps(rows))
    if tune_on_4:
        train = [i for i in range(n) if data.files[i] not in HELD]  # short ones: fitted per setting
        setting, gain = choose(data, train)
        w = fitted(setting, data, train)
        split = {i: setting.metrics(data, i, w) for i in range(n) if data.files[i] in HELD}
        print(f"\nfitted without DEV's HELD repositories: {setting} "
              f"(inner gain {gain:+.4f}; forced on)")  # fmt: skip
        print(table(data, [("today", {i: base[i] for i in split}), ("re-rank", split)]))
    setting, gain = choose(data, list(range(n)))
    w = fitted(setting, data, list(range(n)))
    saved["all"] = {**setting._asdict(), "gain": gain, "weights": w.tolist()}
    print(f"\nfitted on all: {setting} (inner gain {gain:+.4f})")
    for f, v in zip(data.features, w, strict=True):
        print(f"  {f:<24} {v:+.4f}")
    if weights_out:
        weights_out.write_text(json.dumps(saved, indent=1))
    return 0


def score(paths: Sequence[Path], models: Sequence[str], refit: bool, rows_out: Path | None) -> int:
    """No fit: today's order, the shipped re-rank (`--shipped-refit`: out of fold on DEV and
    TRAIN) and each saved model (NAME=FILE, a --weights-out file: each case by the model of
    its repository's fold, out of fold; NAME=FILE:all, its model fitted on all) on every case
    of the dumps, short questions included; a table and, with `rows_out`, the rows."""
    data = Data.read(paths)
    n = len(data.ids)
    columns = [("today (no re-rank)", {i: metrics(data, i, None, DEPTH) for i in range(n)}),
               ("shipped", shipped(data, None, refit))]  # fmt: skip
    for spec in models:
        name, _, where = spec.partition("=")
        file, _, part = where.partition(":")
        saved = json.loads(Path(file).read_text())
        names = [str(f) for f in saved["features"]]

        def vector(weights: Sequence[float], names: list[str] = names) -> np.ndarray:
            named = dict(zip(names, weights, strict=True))
            named["mentioned"] = 0.0  # as shipped
            return np.array([named.get(f, 0.0) for f in data.features])

        result = {}
        for i in range(n):
            model = saved["all"] if part == "all" else saved["folds"][data.repo(i)]
            result[i] = metrics(data, i, vector(model["weights"]), int(model["depth"]))
        columns.append((name, result))
    print(table(data, columns))
    if rows_out:
        rows = {str(data.ids[i]): {"file": str(data.files[i]), "set": str(data.sets[i]),
                                   "short": int(data.short[i]),
                                   **{label.split(" ")[0]: c[i] for label, c in columns}}
                for i in range(n)}  # fmt: skip
        rows_out.write_text(json.dumps(rows))
    return 0


def bootstrap(
    a: np.ndarray, b: np.ndarray, draws: int = 4000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of b - a and its 95 % paired bootstrap interval over questions."""
    diff = b - a
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), (draws, len(diff)))].mean(axis=1)
    return float(diff.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


COMPARED = (("DEV", "TUNED"), ("DEV", "HELD"), ("TRAIN", ""), ("TRAIN2", ""), ("", ""))


def compare(paths: Sequence[Path], columns: str) -> int:
    """Two --rows-out files (or two columns of one: `--column A:shipped,B:new`), paired per
    question: per set (DEV TUNED and HELD, TRAIN, TRAIN2, all) and metric, the mean change, its
    95 % bootstrap interval and how many questions went up and down."""
    left, right = paths[0], paths[-1]
    names = columns.split(",") if "," in columns else [columns, columns]
    a_col, b_col = (n.split(":")[-1] for n in names)
    a, b = json.loads(left.read_text()), json.loads(right.read_text())
    ids = sorted(set(a) & set(b))
    print(f"{left}:{a_col} -> {right}:{b_col}, {len(ids)} questions")
    lengths = sorted({a[i].get("short", 0) for i in ids} - {0})
    for set_, part in (*COMPARED, *((f"SHORT{n}", "") for n in lengths)):
        chosen = TUNED if part == "TUNED" else HELD
        if set_.startswith("SHORT"):
            mine = [i for i in ids if a[i].get("short", 0) == int(set_[5:])]
        else:
            mine = [i for i in ids if not a[i].get("short", 0) and (not set_ or a[i]["set"] == set_)
                    and (not part or a[i]["file"] in chosen)]  # fmt: skip
        if not mine:
            continue
        cells = []
        for m in JUDGED:
            x = np.array([a[i][a_col][m] for i in mine])
            y = np.array([b[i][b_col][m] for i in mine])
            _, lo, hi = bootstrap(x, y)
            up, down = int((y > x).sum()), int((y < x).sum())
            cells.append(f"{m} {x.mean():.3f}->{y.mean():.3f} [{lo:+.3f},{hi:+.3f}] {up}/{down}")
        label = f"{set_ or 'ALL'} {part}".strip()
        print(f"{label:<11}{len(mine):>4}  " + "  ".join(cells))
    return 0


def misses(paths: Sequence[Path], rows_path: Path, column: str) -> int:
    """Where the gold files outside the top 10 of `column` sit before any re-rank, per dump: in
    the re-rank's 30, at 31-50, 51-200, beyond, without a score or not indexed (dumps with
    gold_places)."""
    rows = json.loads(rows_path.read_text())
    buckets = ((0, 30, "1-30"), (30, 50, "31-50"), (50, 200, "51-200"), (200, 1 << 40, ">200"))
    for path in paths:
        z = np.load(path)
        counts: dict[str, int] = {}
        missed = 0
        for n, case in enumerate(z["ids"]):
            places = json.loads(str(z["gold_places"][n]))
            wanted = int(z["gold_counts"][n])
            lost = round((1 - rows[str(case)][column]["R@10"]) * wanted)
            if lost == 0:
                continue
            missed += 1
            # the lost ones: every gold past the dump's 50 (no re-rank reaches it) and not
            # indexed, then the worst placed of the rest (the exact ones are not in the rows)
            ranked = sorted(places, key=lambda q: (q < 0 or q >= 50, q))
            lost_ranked = max(0, lost - (wanted - len(places)))
            for place in ranked[len(ranked) - lost_ranked :]:
                key = "no score" if place < 0 else next(k for a, b, k in buckets if a <= place < b)
                counts[key] = counts.get(key, 0) + 1
            if wanted > len(places):
                counts["not indexed"] = counts.get("not indexed", 0) + wanted - len(places)
        told = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        print(f"{path.name}: {missed} questions miss a gold file in the top 10 ({column}); "
              f"those gold files by place before the re-rank: {told}")  # fmt: skip
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    global SETS, KEEPS, L2S, DEPTHS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("dump", "judge", "compare", "misses", "score"))
    parser.add_argument("path", type=Path, nargs="+", help="dump: one .npz; judge: one or more")
    parser.add_argument("--cases", type=Path, help="dump: a folder of case files (default DEV)")
    parser.add_argument("--weights-out", type=Path)
    parser.add_argument("--rows-out", type=Path, help="judge: per-case metrics (JSON)")
    parser.add_argument(
        "--shipped-folds",
        type=Path,
        help="judge: the --weights-out of the shipped model's run (DEV out of fold)",
    )
    parser.add_argument("--per-repo", action="store_true", help="judge: a line per repository")
    parser.add_argument(
        "--shipped-refit",
        action="store_true",
        help="judge: the shipped model out of fold on DEV and TRAIN by refitting its setting",
    )
    parser.add_argument(
        "--column",
        default="new",
        help="compare: A:col,B:col (default new of both); misses: the column of --rows",
    )
    parser.add_argument("--rows", type=Path, help="misses: a --rows-out file")
    parser.add_argument(
        "--tune-on-4",
        action="store_true",
        help="judge: also fit without DEV's HELD repositories and score them",
    )
    parser.add_argument("--quick", action="store_true", help="a small grid")
    parser.add_argument("--short", help="dump: the short questions of these lengths (1,2,3)")
    parser.add_argument("--short-weights", help="judge: comma list of the short questions' weight")
    parser.add_argument(
        "--floor",
        choices=("off", "on", "both"),
        default="off",
        help="judge: the weight on the log score ratio at least run 94's at every length",
    )
    parser.add_argument(
        "--model", action="append", default=[], help="score: NAME=weights.json[:all]"
    )
    parser.add_argument("--keeps", help="comma list of how many best files stay (default 0)")
    parser.add_argument("--l2s", help=f"comma list of L2 strengths (default {L2S})")
    parser.add_argument("--depths", help=f"comma list of depths (default {DEPTHS})")
    parser.add_argument(
        "--sets", help=f"comma list of feature sets among {', '.join(FEATURE_SETS)}"
    )
    args = parser.parse_args(argv)
    global SHORT_WEIGHTS, FLOORS
    if args.short_weights:
        SHORT_WEIGHTS = tuple(float(v) for v in args.short_weights.split(","))
    FLOORS = {"off": (False,), "on": (True,), "both": (False, True)}[args.floor]
    if args.sets:
        SETS = tuple(args.sets.split(","))
    if args.keeps:
        KEEPS = tuple(int(k) for k in args.keeps.split(","))
    if args.l2s:
        L2S = tuple(float(v) for v in args.l2s.split(","))
    if args.depths:
        DEPTHS = tuple(int(v) for v in args.depths.split(","))
    if args.mode == "dump":
        if len(args.path) != 1:
            parser.error("dump writes one file")
        short = tuple(int(v) for v in args.short.split(",")) if args.short else ()
        return dump(args.path[0], args.cases, short)
    if args.mode == "compare":
        return compare(args.path, args.column)
    if args.mode == "score":
        return score(args.path, args.model, args.shipped_refit, args.rows_out)
    if args.mode == "misses":
        return misses(args.path, args.rows, args.column)
    return judge(args.path, args.weights_out, args.quick, args.shipped_folds, args.rows_out,
                 args.per_repo, args.tune_on_4, args.shipped_refit)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
