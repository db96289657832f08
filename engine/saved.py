"""Open a repository's saved index as it was saved, without looking at the tree.

A warm reopen spends most of its time listing and stat-ing the tree to find what changed
(engine.indexer). The app need not wait for that to show a first ranking: this maps the
cache file alone (a few tens of milliseconds), and the full open, run right after, replaces
it. Only the files left out for their content (kept in the cache) are known here; the scan's
own skips come with the full open.
"""

from __future__ import annotations

from pathlib import Path

from engine import store
from engine.assemble import open_index
from engine.model import Index


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
