"""The files analysed in one run, kept column by column as their analyses arrive.

A first index of 16,000 files receives 16,000 analyses; keeping each as an object with its
own half-dozen small arrays costs memory and time, and all of it would wait in memory while
the index is assembled. `Fresh` keeps plain lists of numbers per column, one array per
batch of term rows, and each file's small arrays copied into large shared chunks (`Runs`),
so each part can be consumed (and let go) by the step that needs it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.analyse import FILE_COLUMNS, Analysed
from engine.index import COUNT_CEILING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


Rows = tuple["npt.NDArray[np.int32]", "npt.NDArray[np.int32]", "npt.NDArray[np.int8]",
             "npt.NDArray[np.uint16]"]  # fmt: skip
"""(file, term, field, count) arrays; files are positions in Fresh; counts clamped to
engine.index.COUNT_CEILING."""


CHUNK_ITEMS = 1 << 18
"""Items of a `Runs` chunk (1 MB of int32): large enough that a chunk let go frees whole
pages, small enough that the last, partly filled chunk of a column costs little."""
WAIT_COMPRESSION = 1
"""zlib level of what waits for the index stage compressed (`Fresh.compress`): full `Runs`
chunks and each batch's term rows. On the 16k tree level 1 gives the runs 37.2 -> 12.0 MiB
and the term rows 18.8 -> 6.5 MiB for 1.2 s of this process's CPU (compressed and read
back); on the 5x tree this process ends its parse, where the process tree is largest (it
holds every analysis, beside its workers), at 336 MiB rather than 513 (replayed)."""
COMPRESS_FROM_FILES = 25_000
"""Files analysed at once from which what waits is compressed: above the 16k scale tree
(15,695 files, whose process tree peaks near 620 MB without it: the CPU is the dearer
there), below the 5x tree (78,475 files: 1.14 GB without it, against a 1 GB target)."""


class Packed:
    """An array compressed while it waits (WAIT_COMPRESSION), given back by `array`."""

    __slots__ = ("__weakref__", "_data", "_dtype", "_items")

    def __init__(self, values: npt.NDArray[Any]) -> None:
        import zlib  # deliberate: only a first index's parse compresses

        import numpy as np  # deliberate: numpy loads with the index

        # the array's own buffer, not a copy (it is contiguous: a chunk's head, a batch's)
        self._data = zlib.compress(np.ascontiguousarray(values).data, WAIT_COMPRESSION)
        self._dtype = values.dtype
        self._items = len(values)

    def __len__(self) -> int:
        return self._items

    def array(self) -> npt.NDArray[Any]:
        """The array again (read-only, flat)."""
        import zlib  # deliberate: see __init__

        import numpy as np  # deliberate: numpy loads with the index

        return np.frombuffer(zlib.decompress(self._data), dtype=self._dtype)


class Runs:
    """Small arrays of one dtype, kept in large chunks as they come, taken back once in
    order.

    A first index receives a few small arrays per file (16,000 files); kept each as a malloc
    of its own, they interleave on the heap with everything else a batch leaves behind, and
    copying them out and letting them go frees almost no page until the last of them goes:
    the index's arrays and all of them are in memory together (the peak of a first index).
    Copied into chunks, they free a whole chunk as they are taken, which the heap hands back.
    """

    def __init__(self, dtype: Any, width: int = 1) -> None:
        self._dtype = dtype
        self._width = width
        """Items per row: a run of n rows holds n * width items (kept flat)."""
        self._chunks: list[npt.NDArray[Any] | Packed] = []
        """The chunks; with `pack`, all but the last (the one being filled) compressed."""
        self.pack = False
        """Compress each chunk once full (Fresh.compress)."""
        self._used = 0
        """Items filled in the last chunk."""
        self._where: list[tuple[int, int, int]] = []
        """Per run: (chunk, first item, items)."""

    def __len__(self) -> int:
        return len(self._where)

    def extend(self, flat: npt.NDArray[Any], rows: list[int]) -> None:
        """Keep copies of consecutive runs given joined in `flat`, `rows[i]` rows the i-th,
        with one copy for all the runs that fit in a chunk rather than one a run. A run goes
        in the last chunk if it fits, else starts a new one (at least CHUNK_ITEMS, larger for
        a larger run): the layout is the same however the runs are split among calls."""
        import numpy as np  # deliberate: numpy loads with the index

        flat = flat.reshape(-1)
        sizes = [n * self._width for n in rows]
        at = 0  # where the next run starts in flat
        i = 0
        while i < len(sizes):
            room = len(self._chunks[-1]) - self._used if self._chunks else -1
            end, total = i, 0
            while end < len(sizes) and total + sizes[end] <= room:
                total += sizes[end]
                end += 1
            if end == i:  # the next run does not fit: a new chunk
                if self.pack and self._chunks:  # the last one is full: it waits compressed
                    full = self._chunks[-1]
                    assert not isinstance(full, Packed), "packed only once full"
                    self._chunks[-1] = Packed(full[: self._used])
                self._chunks.append(np.empty(max(CHUNK_ITEMS, sizes[i]), dtype=self._dtype))
                self._used = 0
                continue
            chunk = len(self._chunks) - 1
            last = self._chunks[chunk]
            assert not isinstance(last, Packed), "only the chunks before the last are packed"
            last[self._used : self._used + total] = flat[at : at + total]
            for size in sizes[i:end]:
                self._where.append((chunk, self._used, size))
                self._used += size
            at += total
            i = end

    def rows(self) -> list[int]:
        """Rows of each run, in order."""
        return [size // self._width for _, _, size in self._where]

    def take(self) -> Iterator[npt.NDArray[Any]]:
        """Each run in order (a view, `width` items a row), each chunk let go once passed;
        the runs are gone afterwards."""
        where, self._where = self._where, []
        chunks, self._chunks = self._chunks, []
        self._used = 0
        chunks.reverse()  # taken from the end: nothing holds a passed chunk any more
        current = -1
        for at, start, size in where:
            while current < at:
                current += 1
                held = chunks.pop()  # held while its runs are read
                chunk = held.array() if isinstance(held, Packed) else held
            run = chunk[start : start + size]
            yield run.reshape(-1, self._width) if self._width > 1 else run

    def clear(self) -> None:
        self._chunks.clear()
        self._where.clear()
        self._used = 0


@dataclass(slots=True)
class Fresh:
    """Analysed files in the order they arrived (path order), their words numbered in the
    index's vocabulary."""

    paths: list[str] = field(default_factory=list)
    """Position -> path."""
    languages: list[str] = field(default_factory=list)
    """Position -> language key."""
    columns: dict[str, list[int]] = field(default_factory=lambda: {c: [] for c in FILE_COLUMNS})
    """Column name (an Analysis attribute) -> value per position."""
    sha1: bytearray = field(default_factory=bytearray)
    """20 bytes per position."""
    body_length: list[float] = field(default_factory=list)
    """Body words per position."""
    records: list[bytes] = field(default_factory=list)
    """Stored declarations per position, compressed (engine.analyse.stored_record)."""
    imports: list[bytes] = field(default_factory=list)
    """Imports as written per position (engine.tables.encode_imports, no targets)."""
    line_prefix: Runs = field(default_factory=lambda: Runs("int32"))
    """Token prefix sums per line, per position."""
    unit_terms: Runs = field(default_factory=lambda: Runs("int32"))
    """Each declaration's words (term ids) per position ..."""
    unit_tf: Runs = field(default_factory=lambda: Runs("uint8", 3))
    """... their occurrences per field (one row of 3 a word) ..."""
    unit_rows: Runs = field(default_factory=lambda: Runs("int32"))
    """... and how many of the words belong to each declaration."""
    uses: list[bytes] = field(default_factory=list)
    """Stored import uses per position."""
    _rows: list[tuple[int, list[int], Any, Any, Any]] = field(default_factory=list)
    """Per batch: its first position, term rows per file, then terms, fields and counts
    (arrays, or Packed ones); each row's file is spelled out only when taken (4 bytes a row saved
    while files arrive: 56 MB by the end of the 5x tree's parse)."""
    _declarations: list[tuple[npt.NDArray[np.int32], ...]] = field(default_factory=list)
    compress: bool = False
    """Keep the runs' full chunks and the term rows compressed until the index stage takes
    them (COMPRESS_FROM_FILES)."""

    def __post_init__(self) -> None:
        for runs in (self.line_prefix, self.unit_terms, self.unit_tf, self.unit_rows):
            runs.pack = self.compress

    def __len__(self) -> int:
        return len(self.paths)

    def add_batch(self, analysed: Analysed, ids: npt.NDArray[np.int32]) -> None:
        """Keep a batch's analysed files, their term ids renumbered by `ids` (the analysing
        process's id -> the index's), one array lookup a column."""
        import numpy as np  # deliberate: numpy loads with the index

        first = len(self.paths)
        self.paths += analysed.paths
        self.languages += analysed.languages
        for name, values in self.columns.items():
            values += analysed.columns[name]
        self.sha1 += analysed.sha1
        self.body_length += analysed.body_length
        self.records += analysed.records
        self.imports += analysed.imports
        self.uses += analysed.uses
        self.line_prefix.extend(analysed.line_prefix, analysed.line_rows)
        self.unit_terms.extend(ids[analysed.unit_terms], analysed.unit_words)
        self.unit_tf.extend(analysed.unit_tf, analysed.unit_words)
        self.unit_rows.extend(analysed.unit_rows, analysed.unit_declarations)
        if not analysed.paths:
            return
        files = np.arange(first, len(self.paths), dtype=np.int32)
        # a count past COUNT_CEILING is clamped to it when the postings are packed, and
        # each (file, field, term) has one row, so clamping now changes no posting: 2 bytes
        # a row rather than 4 while the files arrive (28 MB by the end of the 5x tree's parse)
        counts = np.minimum(analysed.counts, COUNT_CEILING).astype(np.uint16)
        rows: tuple[Any, ...] = (ids[analysed.terms], analysed.fields, counts)
        if self.compress:
            rows = tuple(Packed(a) for a in rows)
        self._rows.append((first, analysed.term_rows, *rows))
        self._declarations.append((
            np.repeat(files, analysed.declaration_rows), analysed.declaration_positions,
            ids[analysed.declaration_terms],
        ))  # fmt: skip

    def take_rows(self) -> Iterator[Rows]:
        """The term rows, batch by batch, each let go once taken."""
        import numpy as np  # deliberate: numpy loads with the index

        while self._rows:
            first, rows, terms, fields, counts = self._rows.pop(0)
            files = np.arange(first, first + len(rows), dtype=np.int32)
            if isinstance(terms, Packed):  # and the others too (Fresh.compress)
                # writable: the index renumbers the terms in place
                terms, fields, counts = terms.array().copy(), fields.array(), counts.array()
            yield np.repeat(files, rows), terms, fields, counts

    def take_declarations(self) -> Iterator[tuple[npt.NDArray[np.int32], ...]]:
        """(file, position, term) of the declaration postings, batch by batch."""
        while self._declarations:
            yield self._declarations.pop(0)

    def release(self) -> None:
        """Let go of everything but the paths (once the index's arrays hold it all)."""
        self.languages.clear()
        self.columns = {}
        self.sha1 = bytearray()
        self.body_length.clear()
        self.records.clear()
        self.imports.clear()
        self.line_prefix.clear()
        self.unit_terms.clear()
        self.unit_tf.clear()
        self.unit_rows.clear()
        self.uses.clear()
        self._rows.clear()
        self._declarations.clear()
