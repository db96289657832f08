"""Assemble the index's stored arrays from analysed files and a previous cache, and view them.

`assemble` serves a first build and every refresh: files kept from the previous cache bring
their stored records, term rows, line tokens and declaration postings as array slices (never
decoded), analysed files bring theirs, and the result is the complete set of arrays the cache
file holds (`store.Stored`). `open_index` turns such a set, fresh or memory-mapped, into the
queryable Index without copying it. A first build, a refresh and a reopen all go through the
same two functions, so they give the same Index; the incremental tests compare them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.analyse import stored_record
from engine.fresh import Fresh
from engine.heap import give_back_memory
from engine.index import (
    TermRows,
    build_postings,
    pack_rows,
    packable,
    postings_of_packed,
)
from engine.model import GitSignal, Import, Index, ParsedFile, Postings, SkippedFile, UnitIndex
from engine.store import Arrays, Stored
from engine.tables import (
    Blobs,
    DeclarationPostings,
    FileTable,
    GitTable,
    TermIds,
    TermList,
    adjacency,
    decode_imports,
    encode_imports,
    join_strings,
    join_words,
    split_strings,
)
from engine.units import unit_arrays

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

RESOLUTION_INPUTS = ("go.mod", ".json")
"""A changed file named so (go.mod, tsconfig.json and what it extends) can change how other
files' imports resolve, so every file is resolved again."""


@dataclass(slots=True)
class Plan:
    """Where each file of the new index comes from, in path order."""

    paths: list[str]
    """The new index's files, sorted."""
    old_ids: list[int]
    """Per file: its id in the previous cache, or -1 when it was analysed now."""
    mtimes: list[int]
    """Per file: its modification time now (a touched, unchanged file keeps its record)."""
    fresh: Fresh
    """The files analysed now, in path order."""
    fresh_ids: list[int]
    """New file id of each file of `fresh`."""

    def position_of(self) -> dict[int, int]:
        """New file id -> position in `fresh`, for the files analysed now."""
        return {new_id: k for k, new_id in enumerate(self.fresh_ids)}


def assemble(
    root: Path,
    encoding: str,
    plan: Plan,
    old: Stored | None,
    vocabulary: list[str],
    git: tuple[npt.NDArray[np.float64], npt.NDArray[np.int32]],
) -> Stored:
    """Build every array of the cache for the files of `plan`.

    Args:
        root: the repository folder (import resolution reads a few config files).
        encoding: tokenizer encoding of the token counts.
        plan: the files and where each comes from.
        old: the previous cache, when files are kept from it.
        vocabulary: words by term id (`Vocabulary.words`): the previous cache's words first
            (so its term ids stay valid), then the words of the analyses, numbered in it.
            Emptied once the vocabulary is stored.
        git: last change (NaN: none) and change count per file of `plan`.
    """
    import numpy as np  # deliberate: numpy loads with the index

    old_ids = np.array(plan.old_ids, dtype=np.int64)
    kept = np.flatnonzero(old_ids >= 0)
    old_to_new = np.full(len(old.arrays["file_size"]) if old else 0, -1, dtype=np.int64)
    old_to_new[old_ids[kept]] = kept
    arrays: Arrays = {}
    give_back_memory()  # the analyses as they arrived, before their renumbered copies
    languages = _file_columns(plan, old, arrays)
    # imports resolve in a process of their own while this one builds the postings (on the
    # 16k tree the resolution was 40-60 % of this serial stage)
    imports = _ImportWork(root, plan, old, languages, arrays["file_language"].tolist())
    try:
        _word_arrays(plan, old, old_to_new, vocabulary, arrays)
    except BaseException:
        imports.close()
        raise
    imports.finish(arrays)
    arrays["git_last"], arrays["git_changes"] = git
    return Stored(str(root), encoding, arrays, languages)


def _word_arrays(
    plan: Plan,
    old: Stored | None,
    old_to_new: npt.NDArray[np.int64],
    vocabulary: list[str],
    arrays: Arrays,
) -> None:
    """The vocabulary, postings, declaration postings, unit index and line tokens."""
    import numpy as np  # deliberate: see assemble()

    n = len(plan.paths)
    give_back_memory()  # the records' bytes, joined into one blob
    parts, body_length = _term_rows(plan, old, old_to_new)
    # words no file uses any more leave the vocabulary (a mark, not a sort of every row)
    in_use = np.zeros(len(vocabulary), dtype=bool)
    for _, terms, _, _ in parts:
        in_use[terms] = True
    used = np.flatnonzero(in_use)
    del in_use
    words = [vocabulary[i] for i in used.tolist()]
    order = sorted(range(len(words)), key=words.__getitem__)
    renumber = np.full(len(vocabulary), -1, dtype=np.int32)
    renumber[used[order]] = np.arange(len(order), dtype=np.int32)
    for _, terms, _, _ in parts:  # each part's own array (taken from Fresh or made above)
        terms[...] = renumber[terms]
    n_terms = len(order)
    arrays["vocab_blob"], arrays["vocab_ptr"] = join_words([words[i] for i in order])
    del words, order
    # the words are stored: let go of their strings (20 MB on 16k files) before the postings
    vocabulary.clear()
    postings = _postings(parts, n, n_terms)
    give_back_memory()  # the sort's transients
    arrays["body_length"] = body_length
    arrays["post_ptr"], arrays["post_docs"], arrays["post_tf"] = (
        postings.ptr, postings.docs, postings.tf
    )  # fmt: skip
    _declaration_postings(plan, old, old_to_new, renumber, n_terms, arrays)
    give_back_memory()  # each batch's declaration postings (100 MB of heap on the 5x tree)
    arrays.update(unit_arrays(plan.old_ids, plan.fresh, old, renumber))
    give_back_memory()  # each file's declaration words
    _line_tokens(plan, old, arrays)
    give_back_memory()


COLUMNS = {
    "file_size": "size", "file_tokens": "tokens", "file_lines": "lines",
    "file_declarations": "declarations", "file_outline": "outline_tokens",
    "file_focused": "focused_tokens", "roles": "role", "file_flags": "flags",
}  # fmt: skip
"""Stored per-file column -> the Fresh column (Analysis attribute) it holds."""


def _file_columns(plan: Plan, old: Stored | None, arrays: Arrays) -> list[str]:
    """Paths, per-file columns and declaration records; returns the language table."""
    import numpy as np  # deliberate: see assemble()

    from engine.store import SCHEMA

    n = len(plan.paths)
    old_ids = np.array(plan.old_ids, dtype=np.int64)
    kept = np.flatnonzero(old_ids >= 0)
    fresh_ids = np.array(plan.fresh_ids, dtype=np.int64)
    fresh = plan.fresh
    for name, attribute in COLUMNS.items():
        column = np.zeros(n, dtype=SCHEMA[name][0])
        if old is not None:
            column[kept] = old.arrays[name][old_ids[kept]]
        column[fresh_ids] = fresh.columns[attribute]
        arrays[name] = column
    old_languages = old.languages if old is not None else []
    languages = sorted({*old_languages, *fresh.languages})
    code = {name: i for i, name in enumerate(languages)}
    language = np.zeros(n, dtype=np.uint8)
    if old is not None:
        recode = np.array([code[name] for name in old_languages] or [0], dtype=np.uint8)
        language[kept] = recode[old.arrays["file_language"][old_ids[kept]]]
    language[fresh_ids] = [code[name] for name in fresh.languages]
    arrays["file_language"] = language
    sha1 = np.zeros((n, 20), dtype=np.uint8)
    if old is not None:
        sha1[kept] = old.arrays["file_sha1"][old_ids[kept]]
    if len(fresh):
        sha1[fresh_ids] = np.frombuffer(fresh.sha1, dtype=np.uint8).reshape(-1, 20)
    arrays["file_sha1"] = sha1
    arrays["file_mtime"] = np.array(plan.mtimes, dtype=np.int64)
    previous = Blobs(old.arrays["record_blob"], old.arrays["record_ptr"]) if old else None
    records: list[bytes] = []
    fresh_records = iter(fresh.records)
    for old_id in plan.old_ids:
        if old_id < 0:
            records.append(stored_record(next(fresh_records)))
        else:
            assert previous is not None
            records.append(previous.get(old_id))
    fresh.records.clear()  # joined below: let each record go
    _blob(arrays, "record", records)
    path_blob, path_offsets = join_strings(plan.paths)
    arrays["path_blob"] = np.frombuffer(path_blob, dtype=np.uint8)
    arrays["path_ptr"] = np.array(path_offsets, dtype=np.int64)
    return languages


def _blob(arrays: Arrays, name: str, items: list[bytes]) -> None:
    import numpy as np  # deliberate: see assemble()

    lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    arrays[f"{name}_blob"] = np.frombuffer(b"".join(items), dtype=np.uint8)
    arrays[f"{name}_ptr"] = offsets


Part = tuple[Any, Any, Any, Any]
"""Term rows of some files: (file ids, term ids, field columns, counts)."""


def _term_rows(
    plan: Plan, old: Stored | None, old_to_new: npt.NDArray[np.int64]
) -> tuple[list[Part], npt.NDArray[np.float32]]:
    """Term rows of every file (kept files' read back from the old postings) in parts, in
    the vocabulary's term ids, and the body length of every file."""
    import numpy as np  # deliberate: see assemble()

    n = len(plan.paths)
    body_length = np.zeros(n, dtype=np.float32)
    parts: list[Part] = []
    if old is not None and len(old_to_new):
        a = old.arrays
        ptr = a["post_ptr"]
        term_of = np.repeat(np.arange(len(ptr) - 1, dtype=np.int32), np.diff(ptr))
        new_doc = old_to_new[a["post_docs"]]
        live = np.flatnonzero(new_doc >= 0)
        tf = a["post_tf"][live]
        posting, field = np.nonzero(tf)
        parts.append((
            new_doc[live][posting].astype(np.int32), term_of[live][posting],
            field.astype(np.int8), tf[posting, field].astype(np.int32),
        ))  # fmt: skip
        kept = np.flatnonzero(old_to_new >= 0)
        body_length[old_to_new[kept]] = a["body_length"][kept]
    fresh_ids = np.array(plan.fresh_ids, dtype=np.int32)
    for files, terms, fields, counts in plan.fresh.take_rows():
        parts.append((fresh_ids[files], terms, fields, counts))
    body_length[fresh_ids] = plan.fresh.body_length
    return parts, body_length


def _postings(parts: list[Part], n_docs: int, n_terms: int) -> Postings:
    """The postings of term rows given in parts, each part let go once packed."""
    import numpy as np  # deliberate: see assemble()

    if not packable(n_docs, n_terms):  # past ~10^12 file-term pairs: one table of rows
        columns = [np.concatenate(c) for c in zip(*parts, strict=True)] if parts else []
        parts.clear()
        rows = TermRows(*columns) if columns else TermRows.empty()
        return build_postings(rows, n_docs, n_terms)[0]
    total = sum(len(docs) for docs, _, _, _ in parts)
    # no local name holds the packed rows: postings_of_packed lets them go half way
    return postings_of_packed(_packed(parts, n_docs, total), n_docs, n_terms)


def _packed(parts: list[Part], n_docs: int, total: int) -> npt.NDArray[np.int64]:
    """pack_rows, then the heap the last parts' rows held is handed back before the sort's
    transients are made."""
    packed = pack_rows(parts, n_docs, total)
    give_back_memory()
    return packed


def _declaration_postings(
    plan: Plan,
    old: Stored | None,
    old_to_new: npt.NDArray[np.int64],
    renumber: npt.NDArray[np.int32],
    n_terms: int,
    arrays: Arrays,
) -> None:
    """Term -> (file, declaration position) pairs, sorted by term, file and position."""
    import numpy as np  # deliberate: see assemble()

    files: list[Any] = []
    positions: list[Any] = []
    terms: list[Any] = []
    if old is not None and len(old_to_new):
        a = old.arrays
        ptr = a["decl_ptr"]
        old_terms = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
        owner = old_to_new[a["decl_files"]]
        live = owner >= 0
        files.append(owner[live].astype(np.int32))
        positions.append(a["decl_positions"][live])
        # old term ids are the vocabulary's first ids (see assemble's `vocabulary`)
        terms.append(renumber[old_terms[live]])
    fresh_ids = np.array(plan.fresh_ids, dtype=np.int32)  # file ids, as stored
    for owners, declared, named in plan.fresh.take_declarations():
        files.append(fresh_ids[owners])
        positions.append(declared)
        terms.append(renumber[named])
    file_ids = np.concatenate(files) if files else np.zeros(0, np.int32)
    position = np.concatenate(positions) if positions else np.zeros(0, np.int32)
    term = np.concatenate(terms) if terms else np.zeros(0, np.int32)
    order = np.lexsort((position, file_ids, term))
    ptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(term, minlength=n_terms), out=ptr[1:])
    arrays["decl_ptr"] = ptr
    arrays["decl_files"] = file_ids[order].astype(np.int32, copy=False)
    arrays["decl_positions"] = position[order].astype(np.int32, copy=False)


def _line_tokens(plan: Plan, old: Stored | None, arrays: Arrays) -> None:
    """Per-file token prefix sums, concatenated in path order; Fresh's runs are consumed
    (copied into the result, allocated whole first, and let go a chunk at a time)."""
    import numpy as np  # deliberate: see assemble()

    if old is not None:
        line_ptr = old.arrays["line_ptr"].tolist()
        line_tokens = old.arrays["line_tokens"]
    fresh_lengths = iter(plan.fresh.line_prefix.rows())
    lengths = np.fromiter(
        (
            next(fresh_lengths) if old_id < 0 else line_ptr[old_id + 1] - line_ptr[old_id]
            for old_id in plan.old_ids
        ),
        dtype=np.int64,
        count=len(plan.old_ids),
    )
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    out = np.empty(int(ptr[-1]), dtype=np.int32)
    fresh_runs = plan.fresh.line_prefix.take()  # each chunk let go once copied
    for new_id, old_id in enumerate(plan.old_ids):
        start, end = int(ptr[new_id]), int(ptr[new_id + 1])
        if old_id < 0:
            out[start:end] = next(fresh_runs)
        else:
            out[start:end] = line_tokens[line_ptr[old_id] : line_ptr[old_id + 1]]
    arrays["line_ptr"] = ptr
    arrays["line_tokens"] = out


ASIDE_MIN_FILES = 2000
"""Files to resolve from which the resolution runs in a process of its own (engine.pool.Aside).
A round number, not tuned: far above a refresh of edited files (resolved here, as before, with
no process to start) and far below a first index of a tree whose resolution takes seconds."""
ASIDE_MAX_FILES = 25_000
"""Files to resolve above which the resolution stays in this process. The aside is a fork of
this process at its largest (every file's analysis held); the child's work touches inherited
objects, whose pages are then copied. On the 5x scale tree (78,475 files) that raised the
peak of the whole process tree from 1,179 to 1,737 MB (PSS 1,111 to 1,514 MB) in a quiet
cold index; on the 16k tree (15,695) the peak is set while parsing and the aside costs none
of it (563 MB against 583 before the aside and its two companions). 25,000: above the
largest tree measured without a cost, below the one with it."""


class _ImportWork:
    """Resolve imports, store them, and draw the graph's edges; begun before the postings,
    finished after them.

    Only the analysed files are resolved when the set of paths and the files resolution reads
    (go.mod, tsconfig) are unchanged: every other file's targets, hence its edges, stay as
    they were. Otherwise every file is resolved again.
    """

    def __init__(
        self, root: Path, plan: Plan, old: Stored | None, languages: list[str], code: list[int]
    ) -> None:
        from engine.pool import Aside  # deliberate: multiprocessing loads here

        old_blobs = Blobs(old.arrays["import_blob"], old.arrays["import_ptr"]) if old else None
        old_paths = split_strings(old.arrays["path_blob"], old.arrays["path_ptr"]) if old else []
        configs_changed = any(
            posixpath.basename(path) == "go.mod" or path.endswith(".json")
            for path in plan.fresh.paths
        )
        self.everything = old is None or configs_changed or old_paths != plan.paths
        self.old, self.old_ids = old, plan.old_ids
        self.stored: list[bytes] = []
        """Each file's stored imports; b"" for those being resolved."""
        to_resolve: list[tuple[str, str, bytes]] = []
        where: list[int] = []
        fresh_imports = iter(plan.fresh.imports)
        for new_id, old_id in enumerate(plan.old_ids):
            if old_id >= 0 and not self.everything:
                assert old_blobs is not None
                self.stored.append(old_blobs.get(old_id))
                continue
            self.stored.append(b"")
            # stored imports as written (analysed now) or as resolved before (kept)
            imports = next(fresh_imports) if old_id < 0 else _stored_imports(old_blobs, old_id)
            to_resolve.append((plan.paths[new_id], languages[code[new_id]], imports))
            where.append(new_id)
        self.resolving = Aside(
            resolved_imports,
            to_resolve,
            where,
            root,
            plan.paths,
            enabled=ASIDE_MIN_FILES <= len(to_resolve) <= ASIDE_MAX_FILES,
        )

    def close(self) -> None:
        """Stop the resolution if it runs aside (the index is not being finished)."""
        self.resolving.close()

    def finish(self, arrays: Arrays) -> None:
        """Store the imports (`import_blob`, `import_ptr`) and the edges."""
        import numpy as np  # deliberate: see assemble()

        encoded, rows = self.resolving.result()
        stored = self.stored
        for new_id, data in encoded:
            stored[new_id] = data
        _blob(arrays, "import", stored)
        old = self.old
        if not self.everything and old is not None:  # the same paths in the same order: same ids
            previous = old.arrays["edges"].astype(np.int64)
            untouched = np.array(self.old_ids, dtype=np.int64) >= 0
            rows = np.concatenate([rows, previous[untouched[previous[:, 0]]]])
        order = np.lexsort((rows[:, 1], rows[:, 0]))
        arrays["edges"] = rows[order].astype(np.int32).reshape(-1, 2)


def resolved_imports(
    files: list[tuple[str, str, bytes]], where: list[int], root: Path, paths: list[str]
) -> tuple[list[tuple[int, bytes]], npt.NDArray[np.int64]]:
    """Resolve the imports of `files` (path, language, stored imports; their new ids in
    `where`) among `paths`: each file's stored imports (new id, encode_imports) and the
    edges they draw, as (importer, imported) rows of new ids."""
    import numpy as np  # deliberate: see assemble()

    from engine.parse.resolve import resolve_imports  # deliberate: lazy

    bare = [_bare_file(path, language, _unresolved(data)) for path, language, data in files]
    path_ids = {path: i for i, path in enumerate(paths)}
    encoded: list[tuple[int, bytes]] = []
    edges: list[tuple[int, int]] = []
    for new_id, resolved in zip(where, resolve_imports(bare, root, paths), strict=True):
        encoded.append((new_id, encode_imports(resolved.imports)))
        targets = {path_ids[t] for imp in resolved.imports for t in imp.targets if t in path_ids}
        edges.extend((new_id, t) for t in sorted(targets - {new_id}))
    rows = np.array(edges or np.zeros((0, 2)), dtype=np.int64).reshape(-1, 2)
    return encoded, rows


def _stored_imports(blobs: Blobs | None, old_id: int) -> bytes:
    assert blobs is not None
    return blobs.get(old_id)


def _unresolved(data: bytes) -> tuple[Import, ...]:
    """Stored imports as written: their targets, if any, dropped."""
    return tuple(Import(i.raw, i.start_line, i.end_line) for i in decode_imports(data))


def _bare_file(path: str, language: str, imports: tuple[Import, ...]) -> ParsedFile:
    """The parts of a file record import resolution reads."""
    return ParsedFile(path, language, 0, 0, "", 0, 0, (), imports)


# --------------------------------------------------------------------------- open


def open_index(
    stored: Stored, skipped: Sequence[SkippedFile] = (), paths: list[str] | None = None
) -> Index:
    """The queryable Index over stored arrays (fresh or memory-mapped), copying nothing big;
    `paths` are the stored paths in their order, if the caller has them decoded already."""
    import numpy as np  # deliberate: numpy loads with the index

    a = stored.arrays
    if paths is None:
        paths = split_strings(a["path_blob"], a["path_ptr"])
    n = len(paths)
    files = FileTable(paths, stored.languages, a, source=stored.source)
    terms = TermList(Blobs(a["vocab_blob"], a["vocab_ptr"]))
    edges = a["edges"]
    last = a["git_last"]
    known = ~np.isnan(last)
    newest = float(last[known].max()) if known.any() else 0.0
    return Index(
        root=stored.root,
        encoding=stored.encoding,
        files=files,
        vocab=TermIds(terms),
        terms_sorted=terms,
        postings=Postings(ptr=a["post_ptr"], docs=a["post_docs"], tf=a["post_tf"]),
        body_length=a["body_length"],
        line_tokens=a["line_tokens"],
        line_tokens_ptr=a["line_ptr"],
        imports=adjacency(edges[:, 0], edges[:, 1], n),
        importers=adjacency(edges[:, 1], edges[:, 0], n),
        git=GitTable(last, a["git_changes"]),
        git_age_days=np.where(known, (newest - last) / 86400.0, np.nan),
        git_changes=a["git_changes"],
        edges=edges,
        roles=a["roles"],
        declaration_postings=DeclarationPostings(
            a["decl_ptr"], a["decl_files"], a["decl_positions"]
        ),
        skipped=tuple(skipped),
        path_ids={path: i for i, path in enumerate(paths)},
        left_out={path: (size, mtime) for path, (size, mtime, _) in stored.sniffed.items()},
        units=UnitIndex(
            file_ptr=np.concatenate(([0], np.cumsum(a["file_declarations"], dtype=np.int64))),
            row_ptr=a["unit_ptr"],
            terms=a["unit_terms"],
            tf=a["unit_tf"],
            length=a["unit_length"],
        ),
    )


def git_columns(
    paths: list[str], signals: dict[str, GitSignal]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int32]]:
    """Last change (NaN: no history) and change count per path."""
    import numpy as np  # deliberate: see assemble()

    found = [signals.get(p) for p in paths]
    return (
        np.array([np.nan if g is None else g.last_change for g in found], dtype=np.float64),
        np.array([0 if g is None else g.changes for g in found], dtype=np.int32),
    )
