"""A learned re-rank of a ranking's best files: the features the ranking already computes, per
(question, candidate file), and a linear model over them (issue 11, session 11 runs 88+).

The ranking scores every file (engine.rank); this stage reads the best `depth` of them again
with features that a single score folds away (which fields hold the question's words, how much
of it one declaration holds, the graph, the role prior, size) and re-sorts them by
`(1 + w0) x log(score / best) + w . x`: all zero weights are today's order exactly. The re-sorted
files take the same score values, best first, so what reads the scores (the planner's shares
of the best) sees the same numbers. The model is fitted by scripts/rerank_fit.py on DEV and
TRAIN, leave-one-repository-out; the same `features` function serves training and the ranking.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from engine.index import idf
from engine.model import FIELDS
from engine.relevance import best_declaration_share
from engine.roles import Role
from engine.tables import FileTable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engine.explain import TermHits
    from engine.model import Index
    from engine.query import QueryAnalysis, QueryTerm

FEATURES: tuple[str, ...] = (
    "log_score_ratio",
    "coverage",
    "idf_coverage",
    *(f"share_{f}" for f in FIELDS),
    "scope_path_share",
    "declaration_share",
    "graph",
    "log_prior",
    "scattered",
    "log_tokens",
    "log_declarations",
    "mentioned",
    "no_keyword",
    "inverse_place",
    "same_folder_as_best",
    "rarest_share",
    "long_x_log_score_ratio",
    "long_x_idf_coverage",
    "long_x_declaration_share",
    "role_test",  # the four role columns: 0 for a kind the question asks for
    "role_doc",
    "role_example",
    "role_other",
    "aside_path",
    "log_depth",
    "code_language",
    "same_language_as_best",
)
"""The columns of `features`, in order; a model's weights follow this order (a shorter model
weighs the columns it lacks 0)."""

ASIDE_DIRS = frozenset(
    {"docs_src", "sandbox", "playground", "fixtures", "fixture", "e2e", "__snapshots__"}
    | {"__mocks__", "mocks", "test-dts", "types-test", "typetests", "benches", "i18n"}
    | {"locale", "locales", "translations", "vendor", "third_party", "thirdparty"}
)
"""Folders of files beside the product that the roles (engine.roles) do not set apart:
tutorial sources, scratch apps, fixtures, type tests, translations, vendored code."""
ASIDE_NAME = re.compile(r"(\.test-d\.tsx?|\.d\.test\.ts|\.bench\.[jt]sx?|_bench\.go)$")
DOC_LANGUAGE_FOLDER = re.compile(
    r"(^|/)docs?/(ar|az|bn|cs|de|es|fa|fr|he|hi|hu|id|it|ja|ko|nl|pl|pt|ru|sv|th|tr|uk|ur|vi"
    r"|yo|zh)([-_][a-z]{2,4})?/"
)
"""A translated copy of the docs: `docs/zh/...`, `docs/pt-br/...` (lower-cased path)."""
NOT_CODE = frozenset({"markdown", "rst", "text"})
UNPARSED_CODE = frozenset(
    {".kt", ".kts", ".swift", ".scala", ".sc", ".vue", ".svelte", ".astro", ".dart", ".lua"}
    | {".ex", ".exs", ".erl", ".hrl", ".hs", ".ml", ".mli", ".clj", ".cljs", ".cljc", ".fs"}
    | {".fsx", ".m", ".mm", ".r", ".jl", ".pl", ".pm", ".groovy", ".zig", ".nim", ".sol"}
    | {".cr", ".elm", ".vb", ".cu", ".f90", ".pas", ".gleam", ".v", ".hx", ".purs", ".rkt"}
)
"""Extensions of programming languages the parser does not know: stored as "text", they are code
all the same (the review of session 23: a Kotlin or Vue answer was marked as prose and pushed
below helpers in a parsed language). Shell, build files, markup and data stay "not code", as
in every repository the model was fitted on."""


@dataclass(frozen=True, slots=True)
class Signals:
    """What the ranking computed on the way to a question's scores, for the re-rank."""

    keyword: npt.NDArray[np.float64]
    """BM25F x coverage per file."""
    priors: npt.NDArray[np.float64]
    """The role prior per file."""
    graph: npt.NDArray[np.float64] | None
    """The graph walk's value per file, 0..1; None with no import graph."""
    undamped: npt.NDArray[np.float64]
    """Scores before the scattered damping (engine.rank._damp_scattered)."""
    per_term: dict[int, TermHits]
    """Each question word's postings (files, tf per field)."""


def candidates(scores: npt.NDArray[np.float64], depth: int) -> npt.NDArray[np.int64]:
    """The best `depth` files with a positive score, best first (score desc, then id)."""
    import numpy as np  # deliberate: numpy loads with the index

    positive = np.flatnonzero(scores > 0)
    if len(positive) > depth:
        positive = positive[np.argpartition(-scores[positive], depth - 1)[:depth]]
    return positive[np.lexsort((positive, -scores[positive]))].astype(np.int64)


def features(
    index: Index,
    analysis: QueryAnalysis,
    signals: Signals,
    scores: npt.NDArray[np.float64],
    top: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    """One row per file of `top` (best first), one column per name of FEATURES."""
    import numpy as np  # deliberate: see candidates

    k = len(top)
    out = np.zeros((k, len(FEATURES)), dtype=np.float64)
    if k == 0:
        return out
    column = {name: i for i, name in enumerate(FEATURES)}
    best = float(scores[top[0]]) or 1.0
    out[:, column["log_score_ratio"]] = np.log(np.maximum(scores[top], 1e-300) / best)

    terms = analysis.terms
    share = _shares(index, signals, top, terms)
    if share.total_weight > 0:
        out[:, column["coverage"]] = share.weight_only / share.total_weight
    if share.total_idf > 0:
        out[:, column["idf_coverage"]] = share.weighted / share.total_idf
        first = column[f"share_{FIELDS[0]}"]
        out[:, first : first + len(FIELDS)] = share.by_field / share.total_idf
        order = np.argsort(top, kind="stable")
        held = np.zeros(k)
        asked = np.array([term.term_id for term in terms], dtype=np.int64)
        held[order] = best_declaration_share(index, share.by_term, top[order], asked)
        out[:, column["declaration_share"]] = held / share.total_idf
    if share.total_scope > 0:
        out[:, column["scope_path_share"]] = share.scope_path / share.total_scope
    if signals.graph is not None:
        out[:, column["graph"]] = signals.graph[top]
    out[:, column["log_prior"]] = np.log(np.maximum(signals.priors[top], 1e-6))
    out[:, column["scattered"]] = np.log(
        np.maximum(scores[top], 1e-300) / np.maximum(signals.undamped[top], 1e-300)
    )
    out[:, column["log_tokens"]] = np.log1p(_tokens(index, top)) / math.log(10.0)
    units = index.units
    if units is not None:
        declarations = units.file_ptr[top + 1] - units.file_ptr[top]
        out[:, column["log_declarations"]] = np.log1p(declarations)
    if analysis.mentioned:
        out[:, column["mentioned"]] = np.isin(top, np.array(analysis.mentioned))
    out[:, column["no_keyword"]] = signals.keyword[top] <= 0
    out[:, column["inverse_place"]] = 1.0 / (1.0 + np.arange(k))
    files = index.files
    if isinstance(files, FileTable):  # a saved index: its list of paths, no file record
        paths = [files.paths[i] for i in top.tolist()]
    else:
        paths = [files[i].path for i in top.tolist()]
    folders = [p.rpartition("/")[0] for p in paths]
    out[:, column["same_folder_as_best"]] = [f == folders[0] for f in folders]
    if share.rarest_question > 0:
        out[:, column["rarest_share"]] = share.rarest / share.rarest_question
    long = math.log1p(len(terms)) / math.log(81.0)  # 80 words: RankWeights.max_query_terms
    for name in ("log_score_ratio", "idf_coverage", "declaration_share"):
        out[:, column[f"long_x_{name}"]] = long * out[:, column[name]]
    # a kind of file the question asks for is no mark against it: the benchmarks' gold files
    # are never tests (their recipe), a user asking "which tests cover x" wants them
    roles = np.asarray(index.roles)[top]
    tests = analysis.wants_tests or analysis.asks_tests
    kind_asked = tests or analysis.wants_docs or analysis.wants_examples
    out[:, column["role_test"]] = (roles == Role.TEST) & (not tests)
    out[:, column["role_doc"]] = (roles == Role.DOC) & (not analysis.wants_docs)
    out[:, column["role_example"]] = (roles == Role.EXAMPLE) & (not analysis.wants_examples)
    other = [Role.GENERATED, Role.CONFIG] + ([] if analysis.wants_changelog else [Role.CHANGELOG])
    out[:, column["role_other"]] = np.isin(roles, other)
    if not kind_asked:
        out[:, column["aside_path"]] = [_aside(p) for p in paths]
    out[:, column["log_depth"]] = [math.log1p(p.count("/")) for p in paths]
    languages = [
        lang if lang != "text" or ext not in UNPARSED_CODE else ext
        for lang, ext in zip(_languages(index, top), map(_extension, paths), strict=True)
    ]
    out[:, column["code_language"]] = [lang not in NOT_CODE for lang in languages]
    out[:, column["same_language_as_best"]] = [lang == languages[0] for lang in languages]
    return out


@dataclass(frozen=True, slots=True)
class _Shares:
    """How the question's words fall on the candidates (rows in `top` order)."""

    weight_only: npt.NDArray[np.float64]
    """Query weight of the words each candidate has."""
    weighted: npt.NDArray[np.float64]
    """Query weight x idf of the words each candidate has."""
    by_field: npt.NDArray[np.float64]
    """The same per field that holds the word, shape (candidates, len(FIELDS))."""
    scope_path: npt.NDArray[np.float64]
    """Weight x idf of the scope words in each candidate's name or folders."""
    rarest: npt.NDArray[np.float64]
    """The largest idf among each candidate's words."""
    by_term: npt.NDArray[np.float64]
    """Weight x idf per term id (0 for a word not asked)."""
    total_weight: float
    """Query weight of all the question's words."""
    total_idf: float
    """Query weight x idf of all the question's words."""
    total_scope: float
    """Query weight x idf of the question's scope words."""
    rarest_question: float
    """The largest idf among the question's words."""


def _shares(
    index: Index, signals: Signals, top: npt.NDArray[np.int64], terms: tuple[QueryTerm, ...]
) -> _Shares:
    """Every word's part in each candidate at once: a (words x candidates) table summed down
    its words in their order (cumsum adds in order, as the per-word loop this replaces did:
    the same numbers bit for bit; an absent word adds 0.0, which changes no sum)."""
    import numpy as np  # deliberate: see candidates

    k, count = len(top), len(terms)
    ptr = index.postings.ptr
    ids = np.fromiter((t.term_id for t in terms), dtype=np.int64, count=count)
    weight = np.fromiter((t.weight for t in terms), dtype=np.float64, count=count)
    scope = np.fromiter((t.scope for t in terms), dtype=bool, count=count)
    term_idf = idf((ptr[ids + 1] - ptr[ids]).astype(np.float64), len(index.files))
    value = weight * term_idf
    by_term = np.zeros(len(ptr), dtype=np.float64)
    np.add.at(by_term, ids, value)  # in order, as `+=` word by word
    total_weight = total_idf = total_scope = rarest_question = 0.0
    for said in zip(
        weight.tolist(), value.tolist(), term_idf.tolist(), scope.tolist(), strict=True
    ):
        total_weight += said[0]  # word by word, as before: the same sums
        total_idf += said[1]
        total_scope += said[1] if said[3] else 0.0
        rarest_question = max(rarest_question, said[2])
    found = np.zeros((count, k), dtype=bool)
    tf = np.zeros((count, k, len(FIELDS)), dtype=np.float32)
    for j, term_id in enumerate(ids.tolist()):
        hits = signals.per_term.get(term_id)
        if hits is None or len(hits.docs) == 0:
            continue
        # the candidates in the postings' own dtype: no copy of a long posting list
        at = np.minimum(hits.docs.searchsorted(top.astype(hits.docs.dtype)), len(hits.docs) - 1)
        found[j] = hits.docs[at] == top
        tf[j] = hits.tf[at]
    has = (tf > 0) & found[:, :, None]

    def summed(parts: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        total: npt.NDArray[np.float64] = parts.cumsum(axis=0)[-1] if count else parts.sum(axis=0)
        return total

    return _Shares(
        weight_only=summed(found * weight[:, None]),
        weighted=summed(found * value[:, None]),
        by_field=summed(has * value[:, None, None]),
        scope_path=summed((has[:, :, 0] | has[:, :, 1]) * (value * scope)[:, None]),
        rarest=(found * term_idf[:, None]).max(axis=0, initial=0.0),
        by_term=by_term,
        total_weight=total_weight,
        total_idf=total_idf,
        total_scope=total_scope,
        rarest_question=rarest_question,
    )


@lru_cache(maxsize=1 << 16)  # the same best files come back keystroke after keystroke
def _aside(path: str) -> bool:
    lowered = path.lower()
    folders = lowered.split("/")[:-1]
    return (
        any(f in ASIDE_DIRS for f in folders)
        or ASIDE_NAME.search(lowered) is not None
        or DOC_LANGUAGE_FOLDER.search(lowered) is not None
    )


def _extension(path: str) -> str:
    name = path.rpartition("/")[2].lower()
    if name.endswith(".gradle.kts"):
        return ".gradle.kts"  # a build script, as build.gradle is (mockito, in TRAIN)
    dot = name.rfind(".")
    return name[dot:] if dot > 0 else ""


def _languages(index: Index, top: npt.NDArray[np.int64]) -> list[str]:
    files = index.files
    if isinstance(files, FileTable):
        names = files.languages
        return [names[c] for c in files.arrays["file_language"][top].tolist()]
    return [files[i].language for i in top.tolist()]


def _tokens(index: Index, top: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    import numpy as np  # deliberate: see candidates

    from engine.rank import file_tokens  # deliberate: engine.rank imports this module

    return np.asarray(file_tokens(index)[top], dtype=np.float64)


def rerank(
    index: Index,
    analysis: QueryAnalysis,
    signals: Signals,
    scores: npt.NDArray[np.float64],
    model: tuple[float, ...],
    depth: int,
) -> None:
    """Re-sort, in place, the best `depth` files of `scores` by the model: they keep the same
    score values, handed out in the model's order. `model` holds one weight per FEATURES."""
    import numpy as np  # deliberate: see candidates

    top = candidates(scores, depth)
    if len(top) < 2:
        return
    x = features(index, analysis, signals, scores, top)
    w = np.zeros(x.shape[1])
    w[: len(model)] = model
    z = x[:, 0] + x @ w  # (1 + w0) x log ratio + the rest
    if analysis.mentioned:  # a file the question names keeps its place: the user asked for it
        movable = ~np.isin(top, np.asarray(analysis.mentioned, dtype=np.int64))
        top, z = top[movable], z[movable]
    new_order = np.lexsort((np.arange(len(top)), -z))  # ties keep today's order
    values = scores[top].copy()
    # Equal first-stage scores would be sorted by path again when the list is cut (rank._top),
    # undoing the model's order among them: each tie is nudged just below the value before it.
    for i in range(1, len(values)):
        if values[i] >= values[i - 1]:
            values[i] = np.nextafter(values[i - 1], -np.inf)
    scores[top[new_order]] = values
