"""Say what an index holds when the tree has not changed since it was saved, without opening it.

A warm `ctxtui index` of an unchanged tree mapped the whole cache (importing numpy: 0.1-0.2 s
of a 0.5 s run on 16,000 files) only to print counts. When the scan (git and its memo, engine
.scan_memo) lists the very files the cache holds, with their sizes and mtimes, and HEAD is the
commit the git columns were read at, `build_index` would analyse, rebuild and save nothing:
then the few columns the report needs are read from the cache file (engine.store.glance) and
the report is made from them. Anything else (a file edited, added or removed, a new HEAD, a
cache that cannot be read) answers None, and the caller opens the index as before, which
re-reads what changed and says why a cache was discarded.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from engine import store
from engine.model import IndexReport, ScanOptions, StageTime
from engine.scan_files import columns_of, unchanged_skips
from engine.scan_memo import MEMO_FILE
from engine.tables import FLAG_PARTIAL, FLAG_REPLACED, FLAG_TOO_SLOW, SURROGATES

COLUMNS = (
    "path_blob",
    "path_ptr",
    "file_size",
    "file_mtime",
    "file_language",
    "file_flags",
    "file_tokens",
    "file_declarations",
)
"""The stored columns the comparison and the report read."""


@dataclass(frozen=True, slots=True)
class Unchanged:
    """The report `build_index` would give for an unchanged tree, and the index's sizes."""

    report: IndexReport
    """As `build_index` reports a warm reopen that changed nothing (but its stage times)."""
    root: str
    """The indexed folder (absolute)."""
    encoding: str
    """Encoding of the token counts."""
    edges: int
    """Import edges between the indexed files."""


def unchanged_index(
    root: str | Path, *, options: ScanOptions, encoding: str, cache_dir: Path
) -> Unchanged | None:
    """What the index saved in `cache_dir` holds, if the tree is still the one it was made
    from; None when anything changed or the cache cannot be read (open it then)."""
    from engine.git_signals import git_head  # deliberate: as engine.indexer
    from engine.scan import scan  # deliberate: as engine.indexer

    root_str = str(Path(root).expanduser().resolve())
    times: list[StageTime] = []
    # the cache first: without one (a first index) or with one the full open discards, the
    # tree is not scanned twice (16,000 files: 0.2-0.4 s of a cold `ctxtui index`)
    started = time.perf_counter()
    cache_path = store.cache_file(cache_dir, encoding)
    try:
        saved = store.glance(cache_path, root_str, encoding, COLUMNS)
    except (FileNotFoundError, store.StaleCache):
        return None
    glanced = time.perf_counter() - started
    started = time.perf_counter()
    scanned = scan(root_str, options, memo_file=cache_dir / MEMO_FILE)
    times.append(StageTime("scan", time.perf_counter() - started))
    started = time.perf_counter() - glanced
    c = saved.columns
    text, bounds = c["path_blob"].tobytes(), c["path_ptr"].tolist()
    files = saved.rows["file_size"]
    if len(bounds) != files + 1 or bounds[0] != 0 or bounds[-1] != len(text):
        return None  # the full open discards this cache, and says so
    if sorted(bounds) != bounds:
        return None
    paths = [text[a:b].decode("utf-8", SURROGATES) for a, b in pairwise(bounds)]
    codes = c["file_language"].tolist()
    if codes and max(codes) >= len(saved.languages):
        return None
    languages = [saved.languages[code] for code in codes]
    stored = (paths, c["file_size"].tolist(), c["file_mtime"].tolist(), languages)
    known_skips = unchanged_skips(columns_of(scanned.files), saved.sniffed, stored)
    times.append(StageTime("load cache", time.perf_counter() - started))
    if known_skips is None:
        return None
    started = time.perf_counter()
    head = git_head(Path(root_str)) if scanned.is_git else None
    times.append(StageTime("git", time.perf_counter() - started))
    if head != saved.git_head:
        return None  # the git columns are read again, and the cache saved
    skipped = sorted(
        (*scanned.skipped, *(skip for _, _, skip in known_skips.values())), key=lambda s: s.path
    )
    flags = c["file_flags"].tolist()
    counts = Counter(languages)
    report = IndexReport(
        files=len(paths),
        parsed=(),
        removed=(),
        reused=len(paths),
        skipped=tuple(skipped),
        replaced=tuple(p for p, f in zip(paths, flags, strict=True) if f & FLAG_REPLACED),
        partial=tuple(p for p, f in zip(paths, flags, strict=True) if f & FLAG_PARTIAL),
        too_slow=tuple(p for p, f in zip(paths, flags, strict=True) if f & FLAG_TOO_SLOW),
        times=tuple(times),
        cache_path=str(cache_path),
        notes=scanned.notes,
        languages=tuple(sorted(counts.items(), key=lambda x: (-x[1], x[0]))),
        declarations=sum(c["file_declarations"]),
        tokens=sum(c["file_tokens"]),
    )
    return Unchanged(report, root_str, encoding, saved.rows["edges"])
