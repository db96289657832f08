"""Read-only views over the index's flat arrays, decoded only where they are looked at.

A warm reopen maps the cache file and builds nothing: the file records, the vocabulary, the
declaration postings and the import graph stay as the arrays they were saved as, and these
views answer `files[i]`, `vocab["word"]`, `imports[i]` by slicing them. Each view is a plain
`Sequence` or `Mapping`, so the ranking reads it as it read the tuples and dicts before; a
record is decoded (JSON) the first time it is asked for and kept.
"""

from __future__ import annotations

import bisect
import contextlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, overload

from engine.errors import DamagedCache
from engine.model import Declaration, DeclKind, GitSignal, Import, ParsedFile
from engine.units import decode_import_uses

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

T = TypeVar("T")

SURROGATES = "surrogateescape"
"""How text goes to and from UTF-8 here: a file name that is not UTF-8 keeps its bytes."""


def join_strings(items: Sequence[str]) -> tuple[bytes, list[int]]:
    """Concatenate strings as UTF-8; return the bytes and the n + 1 offsets around each."""
    offsets = [0]
    parts = []
    total = 0
    for item in items:
        data = item.encode("utf-8", SURROGATES)
        parts.append(data)
        total += len(data)
        offsets.append(total)
    return b"".join(parts), offsets


def join_words(items: Sequence[str]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """`join_strings` as arrays, for strings that hold no NUL (index words): one encode of
    them all and a few array passes, not a bytes object and a Python int per word (the
    vocabulary of 16,000 files is 330,000 words)."""
    import numpy as np  # deliberate: numpy loads with the index

    data = np.frombuffer("\x00".join(items).encode("utf-8", SURROGATES), dtype=np.uint8)
    ends = np.flatnonzero(data == 0)
    if len(ends) != max(len(items) - 1, 0):  # a NUL inside a string: the general way
        joined, starts = join_strings(items)
        return np.frombuffer(joined, dtype=np.uint8), np.array(starts, dtype=np.int64)
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    offsets[1:-1] = ends - np.arange(len(ends))  # each end, less the NULs before it
    kept = np.ones(len(data), dtype=bool)
    kept[ends] = False
    blob = data[kept]
    offsets[-1] = len(blob)
    return blob, offsets


def split_strings(blob: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> list[str]:
    """The strings `join_strings` concatenated, all at once (one decode, no per-item slicing
    of the arrays): for the paths, which every reopen needs."""
    text = blob.tobytes()
    bounds = offsets.tolist()
    return [text[start:end].decode("utf-8", SURROGATES) for start, end in pairwise(bounds)]


def _sliced(items: Sequence[Any], part: slice) -> tuple[Any, ...]:
    """items[part] of a lazy sequence, as a tuple."""
    return tuple(items[k] for k in range(*part.indices(len(items))))


# --------------------------------------------------------------------------- file records


def encode_declarations(declarations: Sequence[Declaration]) -> bytes:
    """The stored form of a file's declarations (the one part of a file record that is text)."""
    return _COMPACT([_declaration_to_list(d) for d in declarations]).encode("utf-8", SURROGATES)


def decode_declarations(data: bytes) -> tuple[Declaration, ...]:
    """Read back `encode_declarations`."""
    return tuple(_declaration_from_list(d) for d in json.loads(data.decode("utf-8", SURROGATES)))


class Span(NamedTuple):
    """Where a declaration sits in its file, and its kind: all that matching declarations
    and a plan's first look at a file read (engine.relevance, engine.plan)."""

    kind: DeclKind
    start_line: int
    end_line: int


class Outline:
    """A file's declarations as matching them and giving reasons read them: where each sits
    and its name, from one decode of the stored record (no whole declaration made), and
    which ones hold which, worked out when first asked."""

    __slots__ = ("_holders", "kept", "names", "spans")

    def __init__(self, spans: tuple[Span, ...], names: tuple[str, ...], *, kept: bool) -> None:
        self.spans = spans
        """Each declaration's kind and lines, in the file's order."""
        self.names = names
        """Each declaration's qualified name, in the same order."""
        self.kept = kept
        """Kept for the index's life (a stored file's): worth working out `holders` once."""
        self._holders: tuple[tuple[int, ...], ...] | None = None

    @property
    def holders(self) -> tuple[tuple[int, ...], ...] | None:
        """Per declaration, the positions of those whose lines strictly hold its lines (the
        very same lines do not count), by start, then end descending, then position.

        None when not `kept` (made for one call: the nesting pass then sorts the few
        matches instead) or when a span ends before it starts (then the pass's own order
        decides)."""
        if not self.kept:
            return None
        found = self._holders
        if found is None:
            found = self._holders = _holders_of(self.spans)  # two threads: equal answers
        return found or None


def _holders_of(spans: Sequence[Span]) -> tuple[tuple[int, ...], ...]:
    """`Outline.holders` worked out (an empty tuple for a span that ends before it starts)."""
    if any(span.end_line < span.start_line for span in spans):
        return ()
    held = nested_in((span.start_line, span.end_line, p) for p, span in enumerate(spans))
    return tuple(tuple(held.get(p, ())) for p in range(len(spans)))


def nested_in(spans: Iterable[tuple[int, int, int]]) -> dict[int, list[int]]:
    """Per (start, end, position) span held by others, the positions of those whose lines
    strictly hold its lines (the very same lines do not count), by start, then end
    descending, then position: one pass over the spans by start (outer before inner), where
    a span holds the next ones while they start before it ends. Spans held by none are
    left out."""
    order = sorted([(start, -end, p) for start, end, p in spans])
    held: dict[int, list[int]] = {}
    open_spans: list[tuple[int, int, int]] = []  # (end, declaration, start), outer first
    for start, negative_end, p in order:
        end = -negative_end
        while open_spans and open_spans[-1][0] < start:
            open_spans.pop()
        around = [
            o
            for o_end, o, o_start in open_spans
            if end <= o_end and (o_start, o_end) != (start, end)
        ]
        if around:
            held[p] = around
        open_spans.append((end, p, start))
    return held


def decode_outline(data: bytes) -> Outline:
    """The spans and names of `encode_declarations` output, without making whole
    declarations (a third of the cost: the first plan on 16,000 files decoded 180 files,
    5,700 records), kept."""
    rows = json.loads(data.decode("utf-8", SURROGATES))
    spans = tuple(Span(_KINDS[v[0]], int(v[5]), int(v[6])) for v in rows)
    return Outline(spans, tuple(str(v[2]) for v in rows), kept=True)


def declaration_outline(files: Sequence[ParsedFile], file_id: int) -> Outline:
    """A file's declarations' spans and names; from the stored record alone (decoded once)
    when the files are stored columns."""
    if isinstance(files, FileTable):
        return files.outline(file_id)
    decls = files[file_id].declarations
    spans = tuple(Span(d.kind, d.start_line, d.end_line) for d in decls)
    return Outline(spans, tuple(d.qualified_name for d in decls), kept=False)


def declaration_spans(files: Sequence[ParsedFile], file_id: int) -> Sequence[Span]:
    """The spans of a file's declarations, in their order; from the stored record alone
    when the files are stored columns."""
    if isinstance(files, FileTable):
        return files.outline(file_id).spans
    return tuple(Span(d.kind, d.start_line, d.end_line) for d in files[file_id].declarations)


def encode_imports(imports: Sequence[Import]) -> bytes:
    """The stored form of a file's imports, targets included."""
    rows = [[i.raw, i.start_line, i.end_line, list(i.targets)] for i in imports]
    return _COMPACT(rows).encode("utf-8", SURROGATES)


def decode_imports(data: bytes) -> tuple[Import, ...]:
    """Read back `encode_imports`."""
    return tuple(
        Import(str(i[0]), int(i[1]), int(i[2]), tuple(str(t) for t in i[3]))
        for i in json.loads(data.decode("utf-8", SURROGATES))
    )


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_KINDS = {kind.value: kind for kind in DeclKind}


def _declaration_to_list(d: Declaration) -> list[Any]:
    return [
        d.kind.value, d.name, d.qualified_name, d.signature, d.doc, d.start_line, d.end_line,
        d.body_start_line, d.exported, d.depth, d.body_tokens, d.signature_tokens,
    ]  # fmt: skip


def _declaration_from_list(v: list[Any]) -> Declaration:
    return Declaration(
        _KINDS[v[0]], str(v[1]), str(v[2]), str(v[3]), str(v[4]), int(v[5]), int(v[6]),
        int(v[7]), bool(v[8]), int(v[9]), int(v[10]), int(v[11]),
    )  # fmt: skip


class Deferred(Sequence[Any]):
    """A tuple decoded on first use: a file's declarations or imports.

    Ranking and planning read a file's numbers on every keystroke but its declarations only
    for the few files whose declarations match or are packed; the length, when given, is
    known without decoding (`bool(file.declarations)` decodes nothing). Compares, hashes and
    pickles as the tuple it stands for.
    """

    __slots__ = ("_items", "_length", "_load")

    def __init__(self, load: Callable[[], tuple[Any, ...]], length: int | None = None) -> None:
        self._load: Callable[[], tuple[Any, ...]] | None = load
        self._length = length
        self._items: tuple[Any, ...] | None = None

    @property
    def items(self) -> tuple[Any, ...]:
        """The decoded tuple."""
        items = self._items
        if items is None:
            assert self._load is not None
            items = self._items = self._load()
            self._load = None
        return items

    def __len__(self) -> int:
        return self._length if self._length is not None else len(self.items)

    def __getitem__(self, i: Any) -> Any:
        return self.items[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Deferred, tuple)):
            return self.items == (other.items if isinstance(other, Deferred) else other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.items)

    def __repr__(self) -> str:
        return repr(self.items)

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self.items,))


class FileTable(Sequence[ParsedFile]):
    """The index's files, id -> ParsedFile, made from stored columns on first use.

    A file's numbers come from per-file arrays; its declarations and imports (JSON, one
    document per file) are decoded only when read (`Deferred`).
    """

    def __init__(
        self,
        paths: list[str],
        languages: list[str],
        arrays: Mapping[str, Any],
        source: Path | None = None,
    ) -> None:
        self.paths = paths
        """File id -> relative path."""
        self.languages = languages
        """Language code -> language key."""
        self.arrays = arrays
        """The stored per-file columns (store.SCHEMA), by name."""
        self._records = Blobs(arrays["record_blob"], arrays["record_ptr"])
        self._imports = Blobs(arrays["import_blob"], arrays["import_ptr"])
        self._uses = Blobs(arrays["uses_blob"], arrays["uses_ptr"])
        self._made: list[ParsedFile | None] = [None] * len(paths)
        self._outlines: dict[int, Outline] = {}
        self.source = source
        """The cache file the arrays are mapped from (None when built in memory)."""

    def __len__(self) -> int:
        return len(self.paths)

    def outline(self, i: int) -> Outline:
        """File i's declaration spans and names (decoded once; `declaration_outline`)."""
        found = self._outlines.get(i)
        if found is None:
            # two threads may decode the same file at once; both get equal outlines
            found = self._outlines[i] = self._decoded(decode_outline, self._records.get(i))
        return found

    @overload
    def __getitem__(self, i: int) -> ParsedFile: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[ParsedFile]: ...

    def __getitem__(self, i: int | slice) -> ParsedFile | Sequence[ParsedFile]:
        if isinstance(i, slice):
            return _sliced(self, i)
        found = self._made[i]  # a list read: the ranking asks thousands of times a query
        if found is None:
            if i < 0:
                i += len(self.paths)
            # two threads may make the same record at once; both get equal records
            found = self._made[i] = self._make(i)
        return found

    def __iter__(self) -> Iterator[ParsedFile]:
        return (self[i] for i in range(len(self.paths)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FileTable):
            return self.paths == other.paths and tuple(self) == tuple(other)
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def _make(self, i: int) -> ParsedFile:
        a = self.arrays
        flags = int(a["file_flags"][i])
        records, imports, uses = self._records, self._imports, self._uses
        return ParsedFile(
            path=self.paths[i],
            language=self.languages[int(a["file_language"][i])],
            size=int(a["file_size"][i]),
            mtime_ns=int(a["file_mtime"][i]),
            sha1=a["file_sha1"][i].tobytes().hex(),
            lines=int(a["file_lines"][i]),
            tokens=int(a["file_tokens"][i]),
            declarations=Deferred(
                lambda: self._decoded(decode_declarations, records.get(i)),
                int(a["file_declarations"][i]),
            ),
            imports=Deferred(lambda: self._decoded(decode_imports, imports.get(i))),
            partial=bool(flags & FLAG_PARTIAL),
            replaced=bool(flags & FLAG_REPLACED),
            generated=bool(flags & FLAG_GENERATED),
            too_slow=bool(flags & FLAG_TOO_SLOW),
            outline_tokens=int(a["file_outline"][i]),
            focused_tokens=int(a["file_focused"][i]),
            import_uses=Deferred(lambda: self._decoded(decode_import_uses, uses.get(i)) or ()),
        )

    def _decoded(self, decode: Callable[[bytes], T], data: bytes) -> T:
        """`decode(data)`; a record of a cache file that does not decode (the file damaged
        inside: its checks at load read the columns, not every record) removes the file and
        raises DamagedCache, so that the next run rebuilds it instead of failing again."""
        try:
            return decode(data)
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            if self.source is None:
                raise
            with contextlib.suppress(OSError):
                self.source.unlink()
            raise DamagedCache(
                f"the index cache {self.source} is damaged ({type(exc).__name__}): removed it;"
                " run again to rebuild it"
            ) from exc


FLAG_PARTIAL, FLAG_REPLACED, FLAG_GENERATED, FLAG_TOO_SLOW = 1, 2, 4, 8
"""Bits of the file_flags column: parse recovered from errors, bytes replaced, generated,
analysis past the time limit (indexed as plain text)."""


class Blobs:
    """Byte strings stored end to end in one array, with n + 1 offsets."""

    __slots__ = ("data", "offsets")

    def __init__(self, data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> None:
        self.data = data
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def get(self, i: int) -> bytes:
        """The i-th byte string."""
        start, end = int(self.offsets[i]), int(self.offsets[i + 1])
        return self.data[start:end].tobytes()


# --------------------------------------------------------------------------- vocabulary


class TermList(Sequence[str]):
    """The vocabulary in code point order: term id i is the i-th word (`Index.terms_sorted`)."""

    def __init__(self, words: Blobs) -> None:
        self._words = words
        self._cache: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._words)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...

    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        if isinstance(i, slice):
            return _sliced(self, i)
        found = self._cache.get(i)
        if found is None:
            if i < 0:
                i += len(self)
            if not 0 <= i < len(self):
                raise IndexError("term id out of range")
            found = self._words.get(i).decode("utf-8", SURROGATES)
            if len(self._cache) < WORD_CACHE:
                self._cache[i] = found
        return found

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def find(self, word: str) -> int | None:
        """Term id of `word` (binary search), or None."""
        position = bisect.bisect_left(self, word)
        if position < len(self) and self[position] == word:
            return position
        return None


WORD_CACHE = 65_536
"""Words a TermList keeps decoded (the binary searches of a session touch few)."""


class TermIds(Mapping[str, int]):
    """Word -> term id over a sorted TermList (`Index.vocab`): no dict of every word."""

    def __init__(self, terms: TermList) -> None:
        self.terms = terms

    def __getitem__(self, word: str) -> int:
        found = self.terms.find(word) if isinstance(word, str) else None
        if found is None:
            raise KeyError(word)
        return found

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.terms.find(word) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.terms)

    def __len__(self) -> int:
        return len(self.terms)


# --------------------------------------------------------------------------- graph, git


class Adjacency(Sequence[tuple[int, ...]]):
    """Neighbour lists in compressed form: row i is ids[ptr[i]:ptr[i + 1]]."""

    def __init__(self, ptr: npt.NDArray[np.int64], ids: npt.NDArray[np.int32]) -> None:
        self._ptr = ptr
        self._ids = ids
        self._rows: list[tuple[int, ...] | None] = [None] * (len(ptr) - 1)

    def __len__(self) -> int:
        return len(self._ptr) - 1

    @overload
    def __getitem__(self, i: int) -> tuple[int, ...]: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[int, ...]]: ...

    def __getitem__(self, i: int | slice) -> tuple[int, ...] | Sequence[tuple[int, ...]]:
        if isinstance(i, slice):
            return _sliced(self, i)
        row = self._rows[i]
        if row is None:
            if i < 0:
                i += len(self)
            row = self._rows[i] = tuple(
                self._ids[int(self._ptr[i]) : int(self._ptr[i + 1])].tolist()
            )
        return row

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def adjacency(rows: npt.NDArray[np.int32], columns: npt.NDArray[np.int32], n: int) -> Adjacency:
    """Neighbour lists of `n` nodes from edge rows, each list sorted."""
    import numpy as np  # deliberate: numpy loads with the index

    order = np.lexsort((columns, rows))
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=ptr[1:])
    return Adjacency(ptr, columns[order].astype(np.int32))


class GitTable(Sequence["GitSignal | None"]):
    """Git history per file id, from two columns (NaN: no history)."""

    def __init__(
        self, last_change: npt.NDArray[np.float64], changes: npt.NDArray[np.int32]
    ) -> None:
        self._last = last_change
        self._changes = changes

    def __len__(self) -> int:
        return len(self._last)

    @overload
    def __getitem__(self, i: int) -> GitSignal | None: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[GitSignal | None]: ...

    def __getitem__(self, i: int | slice) -> GitSignal | Sequence[GitSignal | None] | None:
        if isinstance(i, slice):
            return _sliced(self, i)
        last = float(self._last[i])
        if last != last:  # NaN
            return None
        return GitSignal(last, int(self._changes[i]))


# --------------------------------------------------------------------------- declarations


class DeclarationPostings(Mapping[int, tuple[tuple[int, int], ...]]):
    """Term id -> (file id, declaration position) of every declaration whose name has it."""

    def __init__(
        self,
        ptr: npt.NDArray[np.int64],
        files: npt.NDArray[np.int32],
        positions: npt.NDArray[np.int32],
    ) -> None:
        self.ptr = ptr
        self.files = files
        self.positions = positions

    def __getitem__(self, term: int) -> tuple[tuple[int, int], ...]:
        if not 0 <= term < len(self.ptr) - 1:
            raise KeyError(term)
        start, end = int(self.ptr[term]), int(self.ptr[term + 1])
        if start == end:
            raise KeyError(term)
        return tuple(
            zip(self.files[start:end].tolist(), self.positions[start:end].tolist(), strict=True)
        )

    def __iter__(self) -> Iterator[int]:
        import numpy as np  # deliberate: numpy loads with the index

        return iter(np.flatnonzero(np.diff(self.ptr)).tolist())

    def __len__(self) -> int:
        import numpy as np  # deliberate: numpy loads with the index

        return int(np.count_nonzero(np.diff(self.ptr)))

    def within(self, term: int, files: set[int]) -> list[tuple[int, int]]:
        """The (file, position) pairs of `term` whose file is in `files` (no tuple per pair
        for the thousands of declarations a common word has)."""
        import numpy as np  # deliberate: numpy loads with the index

        if not 0 <= term < len(self.ptr) - 1 or not files:
            return []
        start, end = int(self.ptr[term]), int(self.ptr[term + 1])
        owners = self.files[start:end]
        keep = np.isin(owners, np.fromiter(files, dtype=np.int32, count=len(files)))
        return list(
            zip(owners[keep].tolist(), self.positions[start:end][keep].tolist(), strict=True)
        )


def declarations_within(
    postings: Mapping[int, Sequence[tuple[int, int]]], term: int, files: set[int]
) -> list[tuple[int, int]]:
    """The (file, position) pairs of `term` whose file is in `files`, in posting order."""
    if isinstance(postings, DeclarationPostings):
        return postings.within(term, files)
    return [(f, p) for f, p in postings.get(term, ()) if f in files]
