"""The files a scan kept, held as four columns instead of one record each.

A warm scan of a git work tree takes most of its verdicts from the memo (engine.scan_memo),
which stores them as columns; making a `SourceFile` for each of 15,700 files, then taking the
columns back out of them to compare with the index cache's, was most of the scan's own work
(25-55 ms of the interpreter on 16,000 files). `ScannedFiles` keeps the columns and makes a
record only for the file asked for, so an unchanged tree is compared column to column.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import compress
from typing import overload

from engine.model import SkippedFile, SourceFile

Columns = tuple[list[str], list[int], list[int], list[str]]
"""Paths, sizes, mtimes (ns) and languages of files, in one order."""


class ScannedFiles(Sequence[SourceFile]):
    """Files sorted by path, as columns; reads as a tuple of `SourceFile` (and equals one)."""

    __slots__ = ("languages", "mtimes", "paths", "sizes")

    def __init__(
        self, paths: list[str], sizes: list[int], mtimes: list[int], languages: list[str]
    ) -> None:
        self.paths = paths
        """Relative paths, sorted."""
        self.sizes = sizes
        """Sizes in bytes."""
        self.mtimes = mtimes
        """Modification times in nanoseconds."""
        self.languages = languages
        """Language keys."""

    def __len__(self) -> int:
        return len(self.paths)

    @overload
    def __getitem__(self, at: int) -> SourceFile: ...

    @overload
    def __getitem__(self, at: slice) -> tuple[SourceFile, ...]: ...

    def __getitem__(self, at: int | slice) -> SourceFile | tuple[SourceFile, ...]:
        if isinstance(at, slice):
            return tuple(self)[at]
        return SourceFile(self.paths[at], self.sizes[at], self.mtimes[at], self.languages[at])

    def __iter__(self) -> Iterator[SourceFile]:
        return map(SourceFile, self.paths, self.sizes, self.mtimes, self.languages)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ScannedFiles):
            return columns_of(self) == columns_of(other)
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"ScannedFiles({tuple(self)!r})"


def columns_of(files: Sequence[SourceFile]) -> Columns:
    """The four columns of `files` (taken as they are from a ScannedFiles)."""
    if isinstance(files, ScannedFiles):
        return files.paths, files.sizes, files.mtimes, files.languages
    return (
        [f.path for f in files],
        [f.size for f in files],
        [f.mtime_ns for f in files],
        [f.language for f in files],
    )


def select(columns: Columns, keep: Iterable[bool]) -> Columns:
    """The rows of `columns` whose `keep` is true, in their order."""
    chosen = list(keep)
    paths, sizes, mtimes, languages = columns
    return (
        list(compress(paths, chosen)),
        list(compress(sizes, chosen)),
        list(compress(mtimes, chosen)),
        list(compress(languages, chosen)),
    )


def sorted_files(columns: Columns, others: Sequence[SourceFile]) -> ScannedFiles:
    """`columns` (in any order) and the files judged one by one (`others`: no path of
    `columns`), as one ScannedFiles sorted by path.

    Columns recalled from the memo come in git's order, which is already sorted but for
    paths that are not UTF-8 (git sorts bytes): checked in one pass, sorted only if needed;
    the few other files are inserted where they belong."""
    paths, sizes, mtimes, languages = (
        list(columns[0]),
        list(columns[1]),
        list(columns[2]),
        list(columns[3]),
    )
    if not all(map(str.__lt__, paths, paths[1:])):
        order = sorted(range(len(paths)), key=paths.__getitem__)
        paths = [paths[i] for i in order]
        sizes = [sizes[i] for i in order]
        mtimes = [mtimes[i] for i in order]
        languages = [languages[i] for i in order]
    for file in sorted(others, key=lambda f: f.path):
        at = bisect.bisect_left(paths, file.path)
        paths.insert(at, file.path)
        sizes.insert(at, file.size)
        mtimes.insert(at, file.mtime_ns)
        languages.insert(at, file.language)
    return ScannedFiles(paths, sizes, mtimes, languages)


Sniffed = Mapping[str, tuple[int, int, SkippedFile]]
"""Files the index left out for their content (binary, minified), by path: (size, mtime_ns,
skip), as the cache keeps them."""


def unchanged_skips(scanned: Columns, sniffed: Sniffed, stored: Columns) -> Sniffed | None:
    """Tell whether a scan found the very files an index cache holds (`stored`: paths, sizes,
    mtimes and languages, in the cache's order) and the files it left out for their content
    (`sniffed`) as they were. Returns those left-out files the scan listed (they stay left
    out), or None when anything differs: then the cache must be compared file by file.

    Shared by the index build and the numpy-free check of an unchanged tree
    (engine.unchanged), so both take the same files for unchanged."""
    is_sniffed = [path in sniffed for path in scanned[0]] if sniffed else []
    listed = select(scanned, [not s for s in is_sniffed]) if sniffed else scanned
    if listed != stored:
        return None
    left_paths, left_sizes, left_mtimes, _ = select(scanned, is_sniffed)
    left_out = zip(left_paths, left_sizes, left_mtimes, strict=True)
    if not all(sniffed[path][:2] == (size, mtime) for path, size, mtime in left_out):
        return None
    return {path: sniffed[path] for path in left_paths}
