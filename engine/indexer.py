"""Build or refresh the index of a repository: scan, reuse the cache, analyse what changed.

The stages are timed and reported (`IndexReport`) so `ctxtui index` can show where time goes.
A first index analyses files in worker processes (tree-sitter holds the GIL); a refresh parses
only added or changed files (size and mtime, confirmed by content hash) and rebuilds the
arrays from the cached term rows, which is a few vectorised passes.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING

from engine import store
from engine.analyse import (
    Analyser,
    Analysis,
    Parsed,
    WorkerState,
    analyse_file,
    analyse_in_worker,
    read_source,
    sha1_of,
    start_worker,
)
from engine.assemble import assemble_index, merge_line_tokens, merge_term_rows
from engine.errors import CacheError
from engine.index import Vocabulary
from engine.model import (
    GitSignal,
    Index,
    IndexReport,
    ParsedFile,
    Progress,
    ScanOptions,
    SkippedFile,
    SourceFile,
    StageTime,
)

if TYPE_CHECKING:
    from engine.tokens import Tokenizer

    TokenizerSource = Tokenizer | Callable[[], Tokenizer] | None
    """A tokenizer, a function that loads one when first needed, or None to load here."""

DEFAULT_ENCODING = "o200k_base"
POOL_MIN_FILES = 48
"""Below this many files to parse, worker processes cost more than they save."""
BATCH = 16
"""Files per task sent to a worker: large enough to amortise the round trip."""

ProgressCallback = Callable[[Progress], None]


@dataclass(slots=True)
class _Timer:
    times: list[StageTime] = field(default_factory=list)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.times.append(StageTime(name, time.perf_counter() - start))


def build_index(
    root: str | Path,
    *,
    options: ScanOptions = ScanOptions(),
    encoding: str = DEFAULT_ENCODING,
    cache_dir: Path | None = None,
    on_progress: ProgressCallback | None = None,
    workers: int = 2,
    tokenizer: TokenizerSource = None,
) -> tuple[Index, IndexReport]:
    """Index a folder, reusing and refreshing the cache in `cache_dir` when one is given.

    Args:
        root: the repository folder.
        options: what the scan lists and skips.
        encoding: tokenizer encoding of every token count.
        cache_dir: this repository's cache folder; None indexes from scratch and saves nothing.
        on_progress: called with progress of the long stages.
        workers: processes for a first index; 1 keeps everything in this process.
        tokenizer: a loaded tokenizer for `encoding`, or a function giving one (called only
            if a file needs counting), reused here and by forked workers.

    Raises:
        ScanError: the root is missing, not a folder or unreadable.
        CacheError: the cache folder cannot be written.
    """
    from engine.scan import scan  # deliberate: keep `import engine.indexer` light

    timer = _Timer()
    root_path = Path(root).expanduser().resolve()
    root_str = str(root_path)
    with timer.stage("scan"):
        scanned = scan(root_path, options, on_progress)
    cached: store.CachedIndex | None = None
    notice = ""
    cache_path = store.cache_file(cache_dir, encoding) if cache_dir is not None else None
    with timer.stage("load cache"):
        if cache_path is not None:
            try:
                cached = store.load(cache_path, root_str, encoding)
            except FileNotFoundError:
                pass
            except store.StaleCache as exc:
                notice = f"index cache discarded ({exc}); rebuilt from scratch"
    reused, to_parse, touched = _split_by_change(root_str, scanned.files, cached)
    known_skips, to_parse = _known_content_skips(to_parse, cached)
    vocabulary = Vocabulary.of(cached.vocab if cached is not None else [])
    with timer.stage("parse"):
        analyses, new_skips = _analyse_all(
            root_str, to_parse, encoding, workers, tokenizer, on_progress, vocabulary
        )
    stats = {s.path: s for s in to_parse}
    sniffed = {
        **known_skips,
        **{k.path: (stats[k.path].size, stats[k.path].mtime_ns, k) for k in new_skips},
    }
    content_skips = [skip for _, _, skip in sniffed.values()]
    by_path: dict[str, ParsedFile] = {f.path: f for f in reused}
    by_path.update((a.file.path, a.file) for a in analyses)
    paths = sorted(by_path)
    removed = sorted({f.path for f in cached.files} - set(paths) if cached is not None else set())
    changed = cached is None or bool(analyses) or bool(removed)
    files = [by_path[p] for p in paths]
    with timer.stage("resolve imports"):
        if changed:
            from engine.parse.resolve import resolve_imports  # deliberate: lazy

            files = list(resolve_imports(files, root_path))
    with timer.stage("git"):
        git_head, git = _git_signals(root_path, paths, cached, scanned.is_git)
    with timer.stage("index"):
        vocab, rows = merge_term_rows(paths, cached, analyses, vocabulary)
        line_tokens, line_ptr = merge_line_tokens(paths, cached, analyses)
        skipped = tuple(sorted((*scanned.skipped, *content_skips), key=lambda s: s.path))
        index = assemble_index(
            root_str, encoding, files, vocab, rows, line_tokens, line_ptr, git, skipped
        )
    stale = changed or touched or bool(new_skips)
    stale = stale or (cached is not None and git_head != cached.git_head)
    if cache_path is not None and stale:
        with timer.stage("save cache"):
            notice = _save_or_say(
                cache_path,
                notice,
                store.CachedIndex(
                    root_str,
                    encoding,
                    files,
                    vocab,
                    rows,
                    line_tokens,
                    line_ptr,
                    list(skipped),
                    sniffed,
                    git_head,
                    git,
                ),
            )
    report = IndexReport(
        files=len(files),
        parsed=tuple(sorted(a.file.path for a in analyses)),
        removed=tuple(removed),
        reused=len(reused),
        skipped=skipped,
        replaced=tuple(f.path for f in files if f.replaced),
        partial=tuple(f.path for f in files if f.partial),
        times=tuple(timer.times),
        cache_notice=notice,
        cache_path=str(cache_path) if cache_path is not None else "",
        too_slow=tuple(f.path for f in files if f.too_slow),
        notes=scanned.notes,
    )
    return index, report


def _save_or_say(path: Path, notice: str, cached: store.CachedIndex) -> str:
    """Save the cache; an unwritable cache folder costs speed next time, not this answer."""
    try:
        store.save(path, cached)
    except CacheError as exc:
        return f"{exc}; continuing without a cache"
    return notice


def has_changed(index: Index, options: ScanOptions = ScanOptions()) -> bool:
    """Cheap check (one scan, no reads) whether files were added, removed or touched.

    Files the index left out for their content (binary, minified) are listed by the scan
    but not indexed; they count as unchanged here, or every check would re-index.
    """
    from engine.scan import scan  # deliberate: see build_index

    scanned = scan(index.root, options)
    left_out = {s.path for s in index.skipped}
    current = [s for s in scanned.files if s.path not in left_out or s.path in index.path_ids]
    if len(current) != len(index.files):
        return True
    for source, parsed in zip(current, index.files, strict=True):
        if source.path != parsed.path or source.size != parsed.size:
            return True
        if source.mtime_ns != parsed.mtime_ns:
            return True
    return False


def refresh_index(
    index: Index,
    *,
    options: ScanOptions = ScanOptions(),
    cache_dir: Path | None = None,
    tokenizer: TokenizerSource = None,
) -> tuple[Index, IndexReport] | None:
    """Re-index a folder if anything changed on disk since `index` was built; else None."""
    if not has_changed(index, options):
        return None
    return build_index(
        index.root,
        options=options,
        encoding=index.encoding,
        cache_dir=cache_dir,
        workers=1,
        tokenizer=tokenizer,
    )


def _split_by_change(
    root: str, sources: Sequence[SourceFile], cached: store.CachedIndex | None
) -> tuple[list[ParsedFile], list[SourceFile], bool]:
    """Split scanned files into cached records still valid and files to parse again; the
    flag says whether a record was kept with a new mtime (touched, same content), so the
    cache is saved and the file is not hashed again on every reopen."""
    previous = {f.path: f for f in cached.files} if cached is not None else {}
    reused: list[ParsedFile] = []
    to_parse: list[SourceFile] = []
    touched = False
    for source in sources:
        old = previous.get(source.path)
        if old is None or old.language != source.language or old.size != source.size:
            to_parse.append(source)
        elif old.mtime_ns == source.mtime_ns:
            reused.append(old)
        else:
            data = read_source(root, source)  # touched: confirm by content hash
            if isinstance(data, bytes) and sha1_of(data) == old.sha1:
                reused.append(replace(old, mtime_ns=source.mtime_ns))
                touched = True
            else:
                to_parse.append(source)
    return reused, to_parse, touched


def _known_content_skips(
    sources: list[SourceFile], cached: store.CachedIndex | None
) -> tuple[dict[str, tuple[int, int, SkippedFile]], list[SourceFile]]:
    """Files already found binary or minified, unchanged since: no need to read them again."""
    if cached is None or not cached.sniffed:
        return {}, sources
    known: dict[str, tuple[int, int, SkippedFile]] = {}
    rest: list[SourceFile] = []
    for source in sources:
        seen = cached.sniffed.get(source.path)
        if seen is not None and seen[0] == source.size and seen[1] == source.mtime_ns:
            known[source.path] = seen
        else:
            rest.append(source)
    return known, rest


def _analyse_all(
    root: str,
    sources: list[SourceFile],
    encoding: str,
    workers: int,
    tokenizer: TokenizerSource,
    on_progress: ProgressCallback | None,
    vocabulary: Vocabulary,
) -> tuple[list[Analysis], list[SkippedFile]]:
    """Analyse files, in worker processes when there are many, numbering their words here."""
    analyses: list[Analysis] = []
    skips: list[SkippedFile] = []
    total = len(sources)
    if not sources:
        return analyses, skips
    done = 0

    def collect(results: list[Parsed | SkippedFile]) -> None:
        nonlocal done
        for result in results:
            if isinstance(result, SkippedFile):
                skips.append(result)
            else:
                analyses.append(result.encode(vocabulary))
        done += len(results)
        if on_progress is not None:
            on_progress(Progress("parse", done, total))

    batches = [sources[i : i + BATCH] for i in range(0, total, BATCH)]
    if workers > 1 and total >= POOL_MIN_FILES:
        # fork is fast, and the workers inherit the tokenizer loaded here; but forking a
        # process with other threads (the app indexes from a worker thread) could copy a
        # lock another thread holds, so there a forkserver starts clean workers that load
        # their own tokenizer
        forking = threading.active_count() == 1
        WorkerState.inherited = _ready_tokenizer(encoding, tokenizer) if forking else None
        context = multiprocessing.get_context("fork" if forking else "forkserver")
        parent = os.getpid() if forking else None  # through a forkserver it is not us
        taken = 0
        try:
            pool = ProcessPoolExecutor(
                workers, mp_context=context, initializer=start_worker, initargs=(encoding, parent)
            )
            try:
                # map() lets go of each batch's result once it is taken, so the words of
                # 10,000 files never wait in memory together (as_completed would keep them)
                for results in pool.map(analyse_in_worker, repeat(root), batches):
                    collect(results)
                    taken += 1
            except BaseException:
                _stop_pool(pool)
                raise
            pool.shutdown()
        except (BrokenProcessPool, OSError):
            # workers could not start or died (a forkserver that cannot re-import the
            # caller's main module, a process limit): finish here, slower but complete
            analyser = Analyser.create(_ready_tokenizer(encoding, tokenizer))
            for batch in batches[taken:]:
                collect([analyse_file(root, source, analyser) for source in batch])
        finally:
            WorkerState.inherited = None
    else:
        analyser = Analyser.create(_ready_tokenizer(encoding, tokenizer))
        for batch in batches:
            collect([analyse_file(root, source, analyser) for source in batch])
    return analyses, skips


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool at once (SIGTERM, Ctrl-C, an error, a broken worker): drop the waiting
    batches and kill the workers, rather than wait for the batches they are analysing."""
    stop = getattr(pool, "kill_workers", None)
    if callable(stop):  # Python 3.14 and later
        stop()
        return
    # before 3.14 there is no public way to stop running workers; the pool's process table
    # has been `_processes` since 3.2 (taken before shutdown, which forgets it)
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.kill()


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
    root: Path, paths: list[str], cached: store.CachedIndex | None, is_git: bool
) -> tuple[str | None, dict[str, GitSignal]]:
    """Reuse the cached history while HEAD is unchanged; else read it in one pass."""
    if not is_git:
        return None, {}
    from engine.git_signals import git_head, read_git_signals  # deliberate: lazy

    head = git_head(root)
    if cached is not None and head is not None and head == cached.git_head:
        return head, cached.git
    return head, read_git_signals(root, paths) if head is not None else {}
