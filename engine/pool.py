"""Analyse files on every core: a process pool whose workers never outlive it.

tree-sitter holds the GIL, so files are analysed in worker processes, a batch of files per
task; each worker keeps one Analyser (parser, tokenizer, word numbering) for its life. Forked
workers inherit the tokenizer the main process loaded; under threads (the app indexes from a
worker thread) a forkserver starts clean ones. A worker dies with its parent, even a killed
one; a pool interrupted by an error, Ctrl-C or SIGTERM kills its workers at once; a pool that
cannot start or breaks leaves the rest of the work to this process. `Aside` runs one more
piece of work (a first index's import resolution) in a process of its own, the same way,
while this process goes on with another.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from engine.analyse import Analyser, Batch, analyse_batch

if TYPE_CHECKING:
    from engine.model import SourceFile
    from engine.tokens import Tokenizer

PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal the kernel sends this process when its parent dies."""
PARENT_CHECK_SECONDS = 1.0
"""Where prctl is missing, how often a worker looks whether its parent is still there."""
Result = TypeVar("Result")
"""What the function run by an `Aside` returns."""
WORKER_YOUNG_COLLECTION = 20_000
"""Tracked objects a pool worker allocates (net of those freed) before Python collects its
youngest generation (Python's default: 700). A worker's objects die with the file or batch
that made them, by their reference counts: at 700 a quarter of the 16k tree met 381
collections (0.38 s of 23.5 s of CPU, all of them finding next to nothing); at 20,000 none
ran, and cyclic garbage, should a file make some, still cannot grow past that many objects
before one does (`/tmp/cold/s27/gctime.py`, session 27)."""


class WorkerState:
    """Per-process state of pool workers, as class attributes so it is visible and named.

    `inherited` is set by the main process just before it forks its workers, so they start
    with its loaded tokenizer; `analyser` is set in each worker by `start_worker`.
    """

    inherited: Tokenizer | None = None
    analyser: Analyser | None = None
    aside: tuple[Callable[..., Any], tuple[Any, ...]] | None = None
    """The function and arguments a forked `Aside` process runs: inherited, not pickled."""


def analyse_batches(
    root: str,
    batches: Sequence[list[SourceFile]],
    workers: int,
    encoding: str,
    tokenizer: Callable[[], Tokenizer],
    loaded: Tokenizer | None = None,
) -> Iterator[Batch]:
    """Analyse `batches` in order, in `workers` processes (1: in this one).

    `tokenizer` gives the tokenizer of `encoding` when this process analyses; `loaded` is
    one already in memory, which forked workers share. Without it each worker loads its own
    (in parallel, as long as one load here): the tables cost this process 80 MB it would
    keep for nothing.

    Results come back in the order of `batches` and each is let go once taken, so the words
    of 10,000 files never wait in memory together.
    """
    if workers <= 1 or len(batches) <= 1:
        yield from _in_process(root, batches, tokenizer)
        return
    # fork is fast, and the workers inherit a tokenizer loaded here; but forking a process
    # with other threads could copy a lock another thread holds, so there a forkserver
    # starts clean workers that load their own tokenizer
    forking = threading.active_count() == 1
    WorkerState.inherited = loaded if forking else None
    context = multiprocessing.get_context("fork" if forking else "forkserver")
    parent = os.getpid() if forking else None  # through a forkserver it is not us
    taken = 0
    try:
        pool = ProcessPoolExecutor(
            workers, mp_context=context, initializer=start_worker, initargs=(encoding, parent)
        )
        try:
            # not pool.map: when the caller stops, map's iterator cancels the batches still
            # waiting, and before Python 3.12 the pool's manager thread then fails on them
            # with a traceback as the killed pool breaks (CPython gh-107219)
            waiting = deque(pool.submit(analyse_in_worker, root, batch) for batch in batches)
            while waiting:
                yield waiting.popleft().result()
                taken += 1
        except BaseException:
            stop_pool(pool)
            raise
        pool.shutdown()
    except (BrokenProcessPool, OSError):
        # workers could not start or died (a forkserver that cannot re-import the caller's
        # main module, a process limit): finish here, slower but complete
        yield from _in_process(root, batches[taken:], tokenizer)
    finally:
        WorkerState.inherited = None


def _in_process(
    root: str, batches: Sequence[list[SourceFile]], tokenizer: Callable[[], Tokenizer]
) -> Iterator[Batch]:
    analyser = Analyser.create(tokenizer())
    for batch in batches:
        yield analyse_batch(root, batch, analyser)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool at once (SIGTERM, Ctrl-C, an error, a broken worker): drop the waiting
    batches and kill the workers, rather than wait for the batches they are analysing."""
    stop = getattr(pool, "kill_workers", None)
    if callable(stop):  # Python 3.14 and later
        stop()
        return
    # before 3.14 there is no public way to stop running workers; the pool's process table
    # has been `_processes` since 3.2 (taken before shutdown, which forgets it)
    processes = list((getattr(pool, "_processes", None) or {}).values())
    results = getattr(pool, "_result_queue", None)
    for process in processes:
        process.kill()
    # A worker killed while it sent a batch leaves half a message in the result pipe: the
    # pool's manager thread would wait for the rest for ever, and the interpreter joins that
    # thread at exit (`ctxtui index` hung after SIGTERM). The workers' ends of the pipe died
    # with them; closing this process's own writing end lets that read end (EOF), so the
    # thread marks the pool broken and returns.
    writer = getattr(results, "_writer", None)
    if writer is not None:
        writer.close()
    pool.shutdown(wait=False)


def start_worker(encoding: str, parent: int | None = None) -> None:
    """Pool initializer: tie this worker's life to its parent's, then build its analyser.

    Args:
        encoding: the index's tokenizer encoding.
        parent: the process id the worker was forked from, when known (not through a
            forkserver), to catch a parent that died before the worker was ready.
    """
    exit_with_parent(parent)
    from engine.tokens import fast_tokenizer, load_tokenizer  # deliberate: loads here

    # toktok's encoder, ten times tiktoken's speed with the same ids, even beside an
    # inherited tiktoken: the encoder was a sixth of a worker's time
    tokenizer = fast_tokenizer(encoding) or WorkerState.inherited
    if tokenizer is None or tokenizer.name != encoding:
        tokenizer = load_tokenizer(encoding)
    WorkerState.analyser = Analyser.create(tokenizer)
    settle_collector()


def settle_collector() -> None:
    """In a pool worker: what it keeps for its life (modules, tokenizer, parser) is out of
    every collection, and young collections wait for WORKER_YOUNG_COLLECTION objects."""
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, WORKER_YOUNG_COLLECTION), middle, old)


def analyse_in_worker(root: str, sources: list[SourceFile]) -> Batch:
    """Analyse a batch of files inside a pool worker."""
    analyser = WorkerState.analyser
    assert analyser is not None, "start_worker must run first"
    return analyse_batch(root, sources, analyser)


def exit_with_parent(parent: int | None) -> None:
    """Make this pool worker end when its parent ends, even by SIGKILL.

    A killed `ctxtui index` must not leave its workers (~110 MB each) behind, and a pool
    gets no chance to stop them when its process is killed. On Linux the kernel sends
    SIGKILL to the worker when its parent dies (PR_SET_PDEATHSIG); elsewhere a thread
    looks every second. Ctrl-C and SIGTERM are the parent's to handle: it stops the pool.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not a handler inherited through fork
    if not _parent_death_signal(signal.SIGKILL):
        watched = os.getppid()
        threading.Thread(target=_watch_parent, args=(watched,), daemon=True).start()
    if parent is not None and os.getppid() != parent:
        os._exit(0)  # the parent died before the signal was armed


def _parent_death_signal(signum: int) -> bool:
    """Ask the kernel for `signum` when the parent dies; False where that cannot be done."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # deliberate: only pool workers on Linux need it

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(0)


class Aside(Generic[Result]):
    """`function(*args)` run in a process of its own while this one goes on; `result()`
    waits for it. Not `enabled`, or where no process can be had (it cannot start, or dies),
    the function runs here, when its result is asked for.

    A process forked from a single-threaded one inherits the arguments (nothing is pickled);
    with other threads running (the app) a forkserver starts it and the arguments travel.
    Its result always travels back pickled. Like a pool worker, it dies with its parent.
    """

    def __init__(self, function: Callable[..., Result], *args: Any, enabled: bool = True) -> None:
        self._work = (function, args)
        self._pool: ProcessPoolExecutor | None = None
        self._future: Future[Result] | None = None
        if enabled:
            self._start()

    def _start(self) -> None:
        forking = threading.active_count() == 1  # see analyse_batches
        context = multiprocessing.get_context("fork" if forking else "forkserver")
        parent = os.getpid() if forking else None
        try:
            self._pool = ProcessPoolExecutor(
                1, mp_context=context, initializer=exit_with_parent, initargs=(parent,)
            )
            if not forking:
                function, args = self._work
                self._future = self._pool.submit(function, *args)
                return
            # a forking pool forks in submit: the process inherits `aside` as it is here; and
            # objects frozen out of the collector stay shared pages (a collection in the child
            # would write to every object it holds, copying the whole heap)
            WorkerState.aside = self._work
            gc.freeze()
            try:
                self._future = self._pool.submit(_run_aside)
            finally:
                gc.unfreeze()
                WorkerState.aside = None
        except OSError:
            self.close()

    def result(self) -> Result:
        """The function's result, from the other process or computed now."""
        if self._future is not None and self._pool is not None:
            try:
                done = self._future.result()
            except (BrokenProcessPool, OSError):
                self.close()  # the process died: the work is done here
            except BaseException:
                self.close()  # Ctrl-C, SIGTERM, or the function failed there
                raise
            else:
                pool, self._pool, self._future = self._pool, None, None
                pool.shutdown()  # an idle process: it exits at once
                return done
        function, args = self._work
        return function(*args)

    def close(self) -> None:
        """Stop the other process if it still runs (the result is not wanted any more)."""
        pool, self._pool, self._future = self._pool, None, None
        if pool is not None:
            stop_pool(pool)


def _run_aside() -> Any:
    """What a forked Aside process runs: the work it inherited."""
    work = WorkerState.aside
    assert work is not None, "an Aside forks with its work set"
    function, args = work
    return function(*args)
