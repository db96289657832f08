"""Open a repository's saved index as it was saved, without looking at the tree.

A warm reopen spends most of its time listing and stat-ing the tree to find what changed
(engine.indexer). The app need not wait for that to show a first ranking: this maps the
cache file alone (a few tens of milliseconds), and the full open, run right after, replaces
it. Only the files left out for their content (kept in the cache) are known here; the scan's
own skips come with the full open. `same_files` tells whether the full open found the tree as
saved, so that the first answer can stay.
"""

from __future__ import annotations

from pathlib import Path

from engine import store
from engine.assemble import open_index
from engine.model import Index
from engine.tables import FileTable

SAME_COLUMNS = ("file_size", "file_mtime", "file_sha1", "git_last", "git_changes")
"""The stored per-file columns that say a file is the one indexed before: the cache's own rule
(size and mtime, content hash) plus the git history, which the ranking reads too."""


def open_saved(root: str | Path, *, encoding: str, cache_dir: Path) -> Index | None:
    """The index saved for `root` in `cache_dir`, as it was saved; None when there is no
    usable cache (none yet, or corrupt, foreign or of an older version: the full open says
    so and rebuilds)."""
    root_str = str(Path(root).expanduser().resolve())
    try:
        stored = store.load(store.cache_file(cache_dir, encoding), root_str, encoding)
    except (FileNotFoundError, store.StaleCache):
        return None
    skipped = sorted((skip for _, _, skip in stored.sniffed.values()), key=lambda s: s.path)
    return open_index(stored, skipped)


def same_files(saved: Index, checked: Index) -> bool:
    """Tell whether `checked` (the full open) indexes the very files `saved` does: the same
    folder, encoding, paths in the same order, sizes, times, hashes and git history. Every
    number an index holds follows from those (as the cache decides what to re-parse), so the
    two rank and plan every question alike and an answer from one stands for the other."""
    import numpy as np  # deliberate: numpy loads with the index

    a, b = saved.files, checked.files
    if not isinstance(a, FileTable) or not isinstance(b, FileTable):
        return False  # only stored columns compare cheaply
    if (saved.root, saved.encoding, a.paths) != (checked.root, checked.encoding, b.paths):
        return False
    return all(
        np.array_equal(a.arrays[name], b.arrays[name], equal_nan=name == "git_last")
        for name in SAME_COLUMNS
    )
