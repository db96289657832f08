"""Build or refresh the index of a repository: scan, reuse the cache, analyse what changed.

A warm reopen of an unchanged tree maps the cache file and rebuilds nothing: one scan (stat
of every file), one comparison with the stored stat columns, one `git rev-parse`. A first
index analyses every file on every core (engine.pool); a refresh analyses only added or
changed files (size and mtime, confirmed by content hash) and assembles new arrays from the
stored ones and theirs (engine.assemble). The stages are timed and reported (`IndexReport`)
so `ctxtui index` can show where time goes.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from engine import store
from engine.analyse import read_source, sha1_of
from engine.assemble import Plan, assemble, git_columns, open_index
from engine.errors import CacheError
from engine.fresh import COMPRESS_FROM_FILES, Fresh
from engine.index import Vocabulary
from engine.model import (
    Index,
    IndexReport,
    Progress,
    ScanOptions,
    SkippedFile,
    SourceFile,
    StageTime,
)
from engine.scan_files import columns_of, select, unchanged_skips
from engine.tables import FLAG_PARTIAL, FLAG_REPLACED, FLAG_TOO_SLOW, FileTable, split_strings

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engine.tokens import Tokenizer

    TokenizerSource = Tokenizer | Callable[[], Tokenizer] | None
    """A tokenizer, a function that loads one when first needed, or None to load here."""

DEFAULT_ENCODING = "o200k_base"
POOL_MIN_FILES = 48
"""Below this many files to parse, worker processes cost more than they save."""
BATCH = 16
"""Files per task sent to a worker: large enough to amortise the round trip."""
MAX_WORKERS = 8
"""Most worker processes a cold index starts by default. Parsing scales with cores, but each
worker holds its own parser, tokenizer and word numbering (about 185 MB on the 16k scale tree),
so a 64-core machine does not get 64 of them; `workers` (or CTXTUI_WORKERS) says otherwise."""


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS says, else the count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def default_workers() -> int:
    """Worker processes for a cold index: every usable core, at most `MAX_WORKERS`."""
    return min(usable_cores(), MAX_WORKERS)


ProgressCallback = Callable[[Progress], None]
Sniffed = dict[str, tuple[int, int, SkippedFile]]


@dataclass(slots=True)
class _Timer:
    times: list[StageTime] = field(default_factory=list)
    on_progress: ProgressCallback | None = None
    """Told when each stage starts (done = total = 0), so a status line never lags behind."""

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        if self.on_progress is not None:
            self.on_progress(Progress(name, 0, 0))
        start = time.perf_counter()
        try:
            yield
        finally:
            self.times.append(StageTime(name, time.perf_counter() - start))


@dataclass(slots=True)
class _Changes:
    """How the scanned tree differs from the cache."""

    kept: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Path -> (id in the cache, mtime now) of files whose record is still valid."""
    to_parse: list[SourceFile] = field(default_factory=list)
    """Files to analyse (new, changed, or no cache)."""
    touched: bool = False
    """A file kept its record with a new mtime (same content): the cache needs saving."""
    unchanged: list[int] | None = None
    """Every file is the cached one, in the cache's order (the usual warm reopen): their
    mtimes, in that order; `kept` is then left empty. None otherwise."""
    known_skips: Sniffed = field(default_factory=dict)
    """Files already found binary or minified, unchanged since: not read again."""


def build_index(
    root: str | Path,
    *,
    options: ScanOptions = ScanOptions(),
    encoding: str = DEFAULT_ENCODING,
    cache_dir: Path | None = None,
    on_progress: ProgressCallback | None = None,
    workers: int | None = None,
    tokenizer: TokenizerSource = None,
) -> tuple[Index, IndexReport]:
    """Index a folder, reusing and refreshing the cache in `cache_dir` when one is given.

    Args:
        root: the repository folder.
        options: what the scan lists and skips.
        encoding: tokenizer encoding of every token count.
        cache_dir: this repository's cache folder; None indexes from scratch and saves nothing.
        on_progress: called with progress of the long stages.
        workers: processes for analysing files; 1 keeps everything in this process; None
            (the default) one per usable core, at most `MAX_WORKERS`.
        tokenizer: a loaded tokenizer for `encoding`, or a function giving one (called only
            if a file needs counting), reused here and by forked workers.

    Raises:
        ScanError: the root is missing, not a folder or unreadable.
        CacheError: the cache folder cannot be written.
    """
    from engine.scan import scan  # deliberate: keep `import engine.indexer` light

    timer = _Timer(on_progress=on_progress)
    root_path = Path(root).expanduser().resolve()
    root_str = str(root_path)
    stored: store.Stored | None = None
    notice = ""
    cache_path = store.cache_file(cache_dir, encoding) if cache_dir is not None else None
    # the cache is mapped while the tree is scanned; "load cache" is what is left to wait
    loading = store.Loading(cache_path, root_str, encoding) if cache_path is not None else None
    memo_file = _memo_file(cache_dir)
    with timer.stage("scan"):
        scanned = scan(root_path, options, on_progress, memo_file)
    with timer.stage("load cache"):
        if loading is not None:
            try:
                stored = loading.result()
            except FileNotFoundError:
                pass
            except store.StaleCache as exc:
                notice = f"index cache discarded ({exc}); rebuilt from scratch"
        old_paths = _stored_paths(stored)  # decoded once: compare, removed, git, open
        changes = _compare(root_str, scanned.files, stored, old_paths)
    with timer.stage("parse"):
        vocabulary = Vocabulary.of(_stored_words(stored) if changes.to_parse else [])
        processes = default_workers() if workers is None else workers
        fresh, new_skips = _analyse_all(
            root_str, changes.to_parse, encoding, processes, tokenizer, on_progress, vocabulary
        )
    stats = {s.path: s for s in changes.to_parse}
    sniffed = {
        **changes.known_skips,
        **{k.path: (stats[k.path].size, stats[k.path].mtime_ns, k) for k in new_skips},
    }
    skipped = tuple(
        sorted((*scanned.skipped, *(skip for _, _, skip in sniffed.values())), key=lambda s: s.path)
    )
    plan = _plan(changes, fresh, old_paths)
    removed = sorted(set(old_paths) - set(plan.paths)) if stored else []
    with timer.stage("git"):
        git_head, git = _git_signals(root_path, plan, stored, scanned.is_git, old_paths)
    rebuilt = stored is None or bool(len(fresh)) or bool(removed)
    stale = rebuilt or changes.touched or bool(new_skips)
    stale = stale or (stored is not None and git_head != stored.git_head)
    with timer.stage("index"):
        if rebuilt:
            if stored is not None and not changes.to_parse:  # files removed, none added
                vocabulary = Vocabulary.of(_stored_words(stored))
            words = vocabulary.words
            del vocabulary  # its word -> id map is not needed any more (10 MB on 16k files)
            stored = assemble(root_path, encoding, plan, stored, words, git)
            del words
            plan.fresh.release()  # all of it is in the arrays now
        elif stale:
            assert stored is not None
            arrays = dict(stored.arrays)  # same files: only times and history are new
            arrays["file_mtime"] = _array(plan.mtimes)
            arrays["git_last"], arrays["git_changes"] = git
            stored = store.Stored(root_str, encoding, arrays, stored.languages)
        assert stored is not None
        stored.sniffed, stored.git_head = sniffed, git_head
    if cache_path is not None and stale:
        with timer.stage("save cache"):
            notice, stored = _save_or_say(cache_path, notice, stored)
    with timer.stage("open"):
        index = open_index(stored, skipped, plan.paths)  # the stored paths, in their order
    report = _report(index, stored, plan, removed, skipped, timer, notice, cache_path)
    return index, replace(report, notes=scanned.notes)


def _report(
    index: Index,
    stored: store.Stored,
    plan: Plan,
    removed: list[str],
    skipped: tuple[SkippedFile, ...],
    timer: _Timer,
    notice: str,
    cache_path: Path | None,
) -> IndexReport:
    """What this run did, from the stored columns (no file record is decoded)."""
    a = stored.arrays
    flags = a["file_flags"].tolist()
    paths = plan.paths
    languages = Counter(stored.languages[code] for code in a["file_language"].tolist())
    return IndexReport(
        files=len(paths),
        parsed=tuple(plan.fresh.paths),
        removed=tuple(removed),
        reused=len(paths) - len(plan.fresh),
        skipped=skipped,
        replaced=tuple(p for p, f in zip(paths, flags, strict=True) if f & FLAG_REPLACED),
        partial=tuple(p for p, f in zip(paths, flags, strict=True) if f & FLAG_PARTIAL),
        too_slow=tuple(p for p, f in zip(paths, flags, strict=True) if f & FLAG_TOO_SLOW),
        times=tuple(timer.times),
        cache_notice=notice,
        cache_path=str(cache_path) if cache_path is not None else "",
        languages=tuple(sorted(languages.items(), key=lambda x: (-x[1], x[0]))),
        declarations=int(a["file_declarations"].sum()),
        tokens=int(a["file_tokens"].sum()),
    )


def _save_or_say(path: Path, notice: str, stored: store.Stored) -> tuple[str, store.Stored]:
    """Save the cache and continue on the mapped file, so the built arrays can go; an
    unwritable cache folder costs speed next time, not this answer."""
    try:
        return notice, store.save(path, stored)
    except CacheError as exc:
        return f"{exc}; continuing without a cache", stored


def has_changed(
    index: Index, options: ScanOptions = ScanOptions(), cache_dir: Path | None = None
) -> bool:
    """Cheap check (one scan, no reads) whether files were added, removed or touched.

    With the repository's `cache_dir`, the scan trusts git for the tracked files it finds
    unchanged (engine.scan_memo).

    Files the index left out for their content (binary, minified) are listed by the scan
    but not indexed; they count as unchanged here while their size and time are those they
    were judged with, or every check would re-index. Any other listed file the index lacks (one
    that was binary and is text again, one restored after the scan found it vanished) is new.
    """
    from engine.scan import scan  # deliberate: see build_index

    scanned = scan(index.root, options, memo_file=_memo_file(cache_dir))
    left_out, known = index.left_out, index.path_ids
    scanned_columns = columns_of(scanned.files)  # no record is made on a warm scan
    paths, sizes, mtimes = scanned_columns[:3]
    listed = [
        p in known or left_out.get(p) != (size, mtime)
        for p, size, mtime in zip(paths, sizes, mtimes, strict=True)
    ]
    current = select(scanned_columns, listed)[:3]
    if len(current[0]) != len(index.files):
        return True
    files = index.files
    if isinstance(files, FileTable):  # from the stored columns: no record is made
        paths = files.paths
        sizes, mtimes = files.arrays["file_size"].tolist(), files.arrays["file_mtime"].tolist()
    else:
        paths = [f.path for f in files]
        sizes = [f.size for f in files]
        mtimes = [f.mtime_ns for f in files]
    return current != (list(paths), sizes, mtimes)


def refresh_index(
    index: Index,
    *,
    options: ScanOptions = ScanOptions(),
    cache_dir: Path | None = None,
    tokenizer: TokenizerSource = None,
) -> tuple[Index, IndexReport] | None:
    """Re-index a folder if anything changed on disk since `index` was built; else None."""
    if not has_changed(index, options, cache_dir):
        return None
    return build_index(
        index.root,
        options=options,
        encoding=index.encoding,
        cache_dir=cache_dir,
        workers=1,
        tokenizer=tokenizer,
    )


def _memo_file(cache_dir: Path | None) -> Path | None:
    from engine.scan_memo import MEMO_FILE  # deliberate: it loads with the scan

    return cache_dir / MEMO_FILE if cache_dir is not None else None


def _stored_paths(stored: store.Stored | None) -> list[str]:
    if stored is None:
        return []
    return split_strings(stored.arrays["path_blob"], stored.arrays["path_ptr"])


def _stored_words(stored: store.Stored | None) -> list[str]:
    if stored is None:
        return []
    return split_strings(stored.arrays["vocab_blob"], stored.arrays["vocab_ptr"])


def _compare(
    root: str, sources: Sequence[SourceFile], stored: store.Stored | None, old_paths: list[str]
) -> _Changes:
    """Split scanned files into cached records still valid, known content skips, and files
    to analyse. A file with a new mtime but the same size is hashed: if its content is the
    same, its record is kept with the new mtime (the cache is saved, so it is hashed once)."""
    changes = _Changes()
    if stored is None:
        changes.to_parse = list(sources)
        return changes
    a = stored.arrays
    languages = [stored.languages[code] for code in a["file_language"].tolist()]
    sizes, mtimes = a["file_size"].tolist(), a["file_mtime"].tolist()
    # Compared column by column (a warm scan hands its columns over: no record is made), but
    # the files left out for their content, which the stored columns do not hold.
    stored_columns = (old_paths, sizes, mtimes, languages)
    known_skips = unchanged_skips(columns_of(sources), stored.sniffed, stored_columns)
    if known_skips is not None:
        changes.known_skips = dict(known_skips)
        changes.unchanged = mtimes
        return changes
    previous = {path: i for i, path in enumerate(old_paths)}
    digests = a["file_sha1"]
    for source in sources:
        old = previous.get(source.path)
        if old is None or languages[old] != source.language or sizes[old] != source.size:
            changes.to_parse.append(source)
        elif mtimes[old] == source.mtime_ns:
            changes.kept[source.path] = (old, source.mtime_ns)
        else:
            data = read_source(root, source)  # touched: confirm by content hash
            if isinstance(data, bytes) and sha1_of(data) == digests[old].tobytes().hex():
                changes.kept[source.path] = (old, source.mtime_ns)
                changes.touched = True
            else:
                changes.to_parse.append(source)
    if stored.sniffed:
        rest: list[SourceFile] = []
        for source in changes.to_parse:
            seen = stored.sniffed.get(source.path)
            if seen is not None and seen[0] == source.size and seen[1] == source.mtime_ns:
                changes.known_skips[source.path] = seen
            else:
                rest.append(source)
        changes.to_parse = rest
    return changes


def _plan(changes: _Changes, fresh: Fresh, old_paths: list[str]) -> Plan:
    """The new index's files in path order, each from the cache or from its analysis."""
    if changes.unchanged is not None:  # the cached files as they are; nothing analysed
        return Plan(list(old_paths), list(range(len(old_paths))), changes.unchanged, fresh, [])
    position = {path: k for k, path in enumerate(fresh.paths)}
    paths = sorted({*changes.kept, *fresh.paths})
    plan = Plan(paths, [], [], fresh, [])
    mtimes = fresh.columns["mtime_ns"]
    for new_id, path in enumerate(paths):
        k = position.get(path)
        if k is not None:
            # assemble takes the analysed files in path order, one after another
            assert k == len(plan.fresh_ids), "analyses arrive in path order"
            plan.old_ids.append(-1)
            plan.mtimes.append(mtimes[k])
            plan.fresh_ids.append(new_id)
        else:
            old_id, mtime = changes.kept[path]
            plan.old_ids.append(old_id)
            plan.mtimes.append(mtime)
    return plan


def _analyse_all(
    root: str,
    sources: list[SourceFile],
    encoding: str,
    workers: int,
    tokenizer: TokenizerSource,
    on_progress: ProgressCallback | None,
    vocabulary: Vocabulary,
) -> tuple[Fresh, list[SkippedFile]]:
    """Analyse files (in worker processes when there are many) and renumber their words in
    the index's vocabulary: one array lookup a file."""
    fresh = Fresh(compress=len(sources) >= COMPRESS_FROM_FILES)
    skips: list[SkippedFile] = []
    if not sources:
        return fresh, skips  # a warm reopen: multiprocessing and the parsers never load
    from engine.pool import analyse_batches  # deliberate: multiprocessing loads here

    numberings: dict[str, _IdMap] = {}
    done = 0
    batches = [sources[i : i + BATCH] for i in range(0, len(sources), BATCH)]
    processes = workers if len(sources) >= POOL_MIN_FILES else 1

    def ready() -> Tokenizer:
        return _ready_tokenizer(encoding, tokenizer)

    loaded = tokenizer if not callable(tokenizer) and tokenizer is not None else None
    batched = analyse_batches(root, batches, processes, encoding, ready, loaded)
    for batch in batched:
        ids = numberings.get(batch.numbering)
        if ids is None:
            ids = numberings[batch.numbering] = _IdMap()
        ids.extend(vocabulary.add_all(batch.words))
        fresh.add_batch(batch.analysed, ids.array)
        skips += batch.skipped
        done += len(batch.analysed.paths) + len(batch.skipped)
        if on_progress is not None:
            on_progress(Progress("parse", done, len(sources)))
    return fresh, skips


class _IdMap:
    """A growing array: a worker's word id -> the index's term id."""

    def __init__(self) -> None:
        import numpy as np  # deliberate: numpy loads with the index

        self._ids = np.zeros(1024, dtype=np.int32)
        self._size = 0

    def extend(self, ids: list[int]) -> None:
        import numpy as np  # deliberate: see __init__

        end = self._size + len(ids)
        if end > len(self._ids):
            grown = np.zeros(max(end, 2 * len(self._ids)), dtype=np.int32)
            grown[: self._size] = self._ids[: self._size]
            self._ids = grown
        self._ids[self._size : end] = ids
        self._size = end

    @property
    def array(self) -> npt.NDArray[np.int32]:
        return self._ids[: self._size]


def _array(values: list[int]) -> npt.NDArray[np.int64]:
    import numpy as np  # deliberate: numpy loads with the index

    return np.array(values, dtype=np.int64)


def _ready_tokenizer(encoding: str, tokenizer: TokenizerSource) -> Tokenizer:
    """The given tokenizer (or the one its loader gives) if it fits the encoding, else a
    freshly loaded one."""
    if callable(tokenizer):
        tokenizer = tokenizer()
    if tokenizer is not None and tokenizer.name == encoding:
        return tokenizer
    from engine.tokens import load_tokenizer  # deliberate: tiktoken loads here

    return load_tokenizer(encoding)


def _git_signals(
    root: Path, plan: Plan, stored: store.Stored | None, is_git: bool, old_paths: list[str]
) -> tuple[str | None, tuple[npt.NDArray[np.float64], npt.NDArray[np.int32]]]:
    """Reuse the stored history (by path) while HEAD is unchanged; else read it in one pass.

    `old_paths` are the stored files' paths, in their order."""
    import numpy as np  # deliberate: numpy loads with the index

    if not is_git:
        return None, git_columns(plan.paths, {})
    from engine.git_signals import git_head, read_git_signals  # deliberate: lazy

    head = git_head(root)
    if stored is not None and head is not None and head == stored.git_head:
        if plan.paths == old_paths:  # the same files (a warm reopen): the same columns
            last_stored, changes_stored = stored.arrays["git_last"], stored.arrays["git_changes"]
            return head, (last_stored.astype(np.float64), changes_stored.astype(np.int32))
        previous = {path: i for i, path in enumerate(old_paths)}
        where = np.array([previous.get(p, -1) for p in plan.paths], dtype=np.int64)
        found = where >= 0
        last = np.full(len(plan.paths), np.nan)
        changes = np.zeros(len(plan.paths), dtype=np.int32)
        last[found] = stored.arrays["git_last"][where[found]]
        changes[found] = stored.arrays["git_changes"][where[found]]
        return head, (last, changes)
    signals = read_git_signals(root, plan.paths) if head is not None else {}
    return head, git_columns(plan.paths, signals)
