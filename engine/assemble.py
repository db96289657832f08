"""Assemble the queryable Index: merge cached and fresh rows, then postings, graph, roles.

The same functions serve a fresh build, a refresh and a cache reload, so all give the same
Index; the incremental tests compare a refreshed index with a fresh one word by word.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine import store
from engine.analyse import Analysis
from engine.index import TermRows, Vocabulary, build_postings
from engine.model import GitSignal, Index, ParsedFile, SkippedFile
from engine.roles import classify

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def merge_term_rows(
    paths: list[str],
    cached: store.CachedIndex | None,
    analyses: list[Analysis],
    vocabulary: Vocabulary,
) -> tuple[list[str], TermRows]:
    """Merge cached term rows of unchanged files with rows of newly analysed files."""
    import numpy as np  # deliberate: numpy loads with the index

    if cached is not None and not analyses and [f.path for f in cached.files] == paths:
        return cached.vocab, cached.rows  # nothing changed: the stored rows are the rows

    new_id = {p: i for i, p in enumerate(paths)}
    parts_docs: list[npt.NDArray[np.int32]] = []
    parts_terms: list[npt.NDArray[np.int32]] = []
    parts_fields: list[npt.NDArray[np.int8]] = []
    parts_counts: list[npt.NDArray[np.int32]] = []
    fresh = {a.file.path for a in analyses}
    if cached is not None:
        old_to_new = np.array(
            [-1 if f.path in fresh else new_id.get(f.path, -1) for f in cached.files] or [-1],
            dtype=np.int64,
        )
        keep = old_to_new[cached.rows.docs] >= 0 if len(cached.rows.docs) else np.zeros(0, bool)
        parts_docs.append(old_to_new[cached.rows.docs[keep]].astype(np.int32))
        parts_terms.append(cached.rows.terms[keep])
        parts_fields.append(cached.rows.fields[keep])
        parts_counts.append(cached.rows.counts[keep])
    vocab = vocabulary.words
    for analysis in analyses:
        parts_docs.append(np.full(len(analysis.terms), new_id[analysis.file.path], np.int32))
        parts_terms.append(analysis.terms)
        parts_fields.append(analysis.fields)
        parts_counts.append(analysis.counts)
    if not parts_terms:
        return [], TermRows.empty()
    all_terms = np.concatenate(parts_terms)
    used = np.unique(all_terms)  # drop words no file uses any more, renumber densely
    compact_terms = np.searchsorted(used, all_terms).astype(np.int32)
    rows = TermRows(
        np.concatenate(parts_docs),
        compact_terms,
        np.concatenate(parts_fields),
        np.concatenate(parts_counts),
    )
    return [vocab[i] for i in used.tolist()], rows


def merge_line_tokens(
    paths: list[str], cached: store.CachedIndex | None, analyses: list[Analysis]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Concatenate per-file line token prefix sums in path order."""
    import numpy as np  # deliberate: numpy loads with the index

    if cached is not None and not analyses and [f.path for f in cached.files] == paths:
        return cached.line_tokens, cached.line_tokens_ptr

    fresh = {a.file.path: a.line_prefix for a in analyses}
    old: dict[str, tuple[int, int]] = {}
    if cached is not None:
        ptr = cached.line_tokens_ptr
        old = {f.path: (int(ptr[i]), int(ptr[i + 1])) for i, f in enumerate(cached.files)}
    runs: list[npt.NDArray[np.int64]] = []
    for path in paths:
        run = fresh.get(path)
        if run is None:
            assert cached is not None
            start, end = old[path]
            run = cached.line_tokens[start:end]
        runs.append(np.asarray(run, dtype=np.int64))
    lengths = np.array([len(r) for r in runs], dtype=np.int64)
    line_ptr = np.zeros(len(runs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=line_ptr[1:])
    flat = np.concatenate(runs) if runs else np.zeros(0, dtype=np.int64)
    return flat, line_ptr


def assemble_index(
    root: str,
    encoding: str,
    files: list[ParsedFile],
    vocab: list[str],
    rows: TermRows,
    line_tokens: npt.NDArray[np.int64],
    line_ptr: npt.NDArray[np.int64],
    git: dict[str, GitSignal],
    skipped: tuple[SkippedFile, ...] = (),
) -> Index:
    """Build the queryable Index from its stored parts (postings, graph, git signals)."""
    import numpy as np  # deliberate: numpy loads with the index

    postings, body_length = build_postings(rows, len(files), len(vocab))
    path_ids = {f.path: i for i, f in enumerate(files)}
    term_ids = {t: i for i, t in enumerate(vocab)}
    imports: list[tuple[int, ...]] = []
    importers: list[set[int]] = [set() for _ in files]
    for i, f in enumerate(files):
        targets = sorted(
            {path_ids[t] for imp in f.imports for t in imp.targets if t in path_ids} - {i}
        )
        imports.append(tuple(targets))
        for t in targets:
            importers[t].add(i)
    edges = np.array(
        [(i, t) for i, targets in enumerate(imports) for t in targets] or np.zeros((0, 2)),
        dtype=np.int32,
    ).reshape(-1, 2)
    signals = tuple(git.get(f.path) for f in files)
    newest = max((g.last_change for g in signals if g is not None), default=0.0)
    index = Index(
        root=root,
        encoding=encoding,
        files=tuple(files),
        vocab=term_ids,
        terms_sorted=tuple(sorted(vocab)),
        postings=postings,
        body_length=body_length,
        line_tokens=line_tokens,
        line_tokens_ptr=line_ptr,
        imports=tuple(imports),
        importers=tuple(tuple(sorted(s)) for s in importers),
        git=signals,
        git_age_days=np.array(
            [np.nan if g is None else (newest - g.last_change) / 86400.0 for g in signals],
            dtype=np.float64,
        ),
        git_changes=np.array([0 if g is None else g.changes for g in signals], dtype=np.int32),
        edges=edges,
        roles=np.array([classify(f).value for f in files], dtype=np.int8),
        declaration_postings=declaration_postings(files, term_ids),
        skipped=skipped,
        path_ids=path_ids,
    )
    return index


def declaration_postings(
    files: list[ParsedFile], term_ids: dict[str, int]
) -> dict[int, tuple[tuple[int, int], ...]]:
    """Map each word of a declaration name to the declarations that have it."""
    from engine.words import words  # deliberate: small module, kept local for clarity

    cache: dict[str, list[str]] = {}
    known: dict[str, set[int]] = {}
    found: dict[int, list[tuple[int, int]]] = {}
    for file_id, f in enumerate(files):
        for position, decl in enumerate(f.declarations):
            ids = known.get(decl.name)
            if ids is None:
                ids = {term_ids[w] for w in words(decl.name, cache) if w in term_ids}
                known[decl.name] = ids
            for term in ids:
                found.setdefault(term, []).append((file_id, position))
    return {term: tuple(pairs) for term, pairs in found.items()}
