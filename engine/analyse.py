"""Read and analyse one file: sniff, decode, parse, collect index words, count tokens.

This is the unit of work of the first index, run in worker processes (tree-sitter holds the
GIL, so threads do not help); each worker keeps one parser and one tokenizer for its life.
Forked workers inherit the tokenizer the main process loaded before the fork, so its 0.4 s
load is paid once; only the words' term ids are given in the main process (`encode`), where
the vocabulary lives.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from engine.model import FIELDS, Declaration, ParsedFile, SkippedFile, SkipReason, SourceFile
from engine.words import count_words, path_words, words

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engine.index import Vocabulary
    from engine.parse.extract import SourceParser
    from engine.tokens import Tokenizer


WORD_CACHE_LIMIT = 300_000
"""Identifiers remembered per process before the cache starts again (bounds memory)."""
ANALYSIS_TIME_LIMIT = 2.0
"""CPU seconds the parser may spend on one file's declarations before the file is indexed as
plain text. The slowest of the 60,364 source files of the DEV checkouts (clap's 223 KB
CHANGELOG.md, 905 sections) takes 0.18 s; a hostile file (thousands of nested functions, or a
grammar's worst case) must not hold a worker, or the app, for minutes."""


@dataclass(frozen=True, slots=True)
class Analysis:
    """One analysed file: its record, its term rows, its tokens per line."""

    file: ParsedFile
    """The parsed record, token counts filled in."""
    terms: npt.NDArray[np.int32]
    """Term ids (in the Vocabulary the file was encoded with) of its index words."""
    fields: npt.NDArray[np.int8]
    """Field column of each term row."""
    counts: npt.NDArray[np.int32]
    """Occurrences of each term row."""
    line_prefix: npt.NDArray[np.int64]
    """Prefix sums of tokens per line, starting with 0."""


@dataclass(frozen=True, slots=True)
class Parsed:
    """A file parsed and counted, its words not yet numbered: what a worker sends back."""

    file: ParsedFile
    """The parsed record, token counts filled in."""
    field_words: tuple[tuple[tuple[str, int], ...], ...]
    """For each field in FIELDS order, (word, count) pairs."""
    line_prefix: npt.NDArray[np.int64]
    """Prefix sums of tokens per line, starting with 0."""

    def encode(self, vocabulary: Vocabulary) -> Analysis:
        """Number the words in the index's vocabulary (main process only)."""
        return Analysis(self.file, *vocabulary.encode(self.field_words), self.line_prefix)


@dataclass(slots=True)
class Analyser:
    """What one process keeps between files: a parser, a tokenizer, the identifier cache."""

    parser: SourceParser
    """Keeps compiled tree-sitter queries between files."""
    tokenizer: Tokenizer
    """Counts tokens in the index's encoding."""
    word_cache: dict[str, list[str]] = field(default_factory=dict)
    """Identifier -> index words, shared by every file this process analyses."""
    time_limit: float | None = ANALYSIS_TIME_LIMIT
    """CPU seconds the parser may spend on one file (None: no limit)."""

    @classmethod
    def create(cls, tokenizer: Tokenizer) -> Analyser:
        """Load the parser table (tree-sitter and its grammars load lazily per language)."""
        from engine.parse.extract import SourceParser  # deliberate: tree-sitter loads here

        return cls(SourceParser(), tokenizer, time_limit=ANALYSIS_TIME_LIMIT)


class WorkerState:
    """Per-process state of pool workers, as class attributes so it is visible and named.

    `inherited` is set by the main process just before it forks its workers, so they start
    with its loaded tokenizer; `analyser` is set in each worker by `start_worker`.
    """

    inherited: Tokenizer | None = None
    analyser: Analyser | None = None


PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal the kernel sends this process when its parent dies."""
PARENT_CHECK_SECONDS = 1.0
"""Where prctl is missing, how often a worker looks whether its parent is still there."""


def start_worker(encoding: str, parent: int | None = None) -> None:
    """Pool initializer: tie this worker's life to its parent's, then build its analyser.

    Args:
        encoding: the index's tokenizer encoding.
        parent: the process id the worker was forked from, when known (not through a
            forkserver), to catch a parent that died before the worker was ready.
    """
    exit_with_parent(parent)
    tokenizer = WorkerState.inherited
    if tokenizer is None or tokenizer.name != encoding:
        from engine.tokens import load_tokenizer  # deliberate: tiktoken loads here

        tokenizer = load_tokenizer(encoding)
    WorkerState.analyser = Analyser.create(tokenizer)


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


def analyse_in_worker(root: str, sources: list[SourceFile]) -> list[Parsed | SkippedFile]:
    """Analyse a batch of files inside a pool worker."""
    analyser = WorkerState.analyser
    assert analyser is not None, "start_worker must run first"
    return [analyse_file(root, source, analyser) for source in sources]


def read_source(root: str, source: SourceFile) -> bytes | SkippedFile:
    """Read a file's bytes, or say why it cannot be read."""
    try:
        with open(os.path.join(root, source.path), "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return SkippedFile(source.path, SkipReason.VANISHED)
    except IsADirectoryError:
        return SkippedFile(source.path, SkipReason.UNREADABLE, "a folder")
    except OSError as exc:
        return SkippedFile(source.path, SkipReason.UNREADABLE, exc.strerror or type(exc).__name__)


def sha1_of(data: bytes) -> str:
    """Content hash used to confirm a change that size and mtime suggest."""
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def analyse_file(root: str, source: SourceFile, analyser: Analyser) -> Parsed | SkippedFile:
    """Read, sniff, decode and parse one file, and collect its words. Never raises for a
    bad file."""
    from engine.skip_rules import is_generated, sniff_content  # deliberate: keeps import light

    data = read_source(root, source)
    if isinstance(data, SkippedFile):
        return data
    reason = sniff_content(data, source.path)
    if reason is not None:
        return SkippedFile(source.path, reason)
    text = data.decode("utf-8", errors="replace")
    replaced = "\ufffd" in text and b"\xef\xbf\xbd" not in data
    structure = analyser.parser.parse(
        text, source.language, source.path, time_limit=analyser.time_limit
    )
    prefix = analyser.tokenizer.line_prefix_counts(text)
    parsed = ParsedFile(
        path=source.path,
        language=source.language,
        size=len(data),
        mtime_ns=source.mtime_ns,
        sha1=sha1_of(data),
        lines=len(prefix) - 1,
        tokens=int(prefix[-1]),
        declarations=tuple(_with_tokens(d, prefix) for d in structure.declarations),
        imports=structure.imports,
        partial=structure.partial,
        replaced=replaced,
        generated=is_generated(text[:2000]),
        too_slow=structure.timed_out,
    )
    parsed = _with_level_costs(parsed, prefix)
    if len(analyser.word_cache) > WORD_CACHE_LIMIT:
        analyser.word_cache.clear()
    return Parsed(parsed, collect_field_words(parsed, text, analyser.word_cache), prefix)


def _with_level_costs(parsed: ParsedFile, prefix: npt.NDArray[np.int64]) -> ParsedFile:
    """Fill in the question-independent level costs, so planning never recomputes them."""
    from engine.levels import focused_tokens, outline_tokens  # deliberate: levels loads parse

    return replace(
        parsed,
        outline_tokens=outline_tokens(parsed),
        focused_tokens=focused_tokens(parsed, prefix, 0, len(prefix) - 1),
    )


def _with_tokens(decl: Declaration, prefix: npt.NDArray[np.int64]) -> Declaration:
    """Fill a declaration's token counts from the file's per-line prefix sums."""
    last = len(prefix) - 1
    start = min(max(decl.start_line, 1), last) if last else 0
    end = min(max(decl.end_line, start), last)
    body_start = min(max(decl.body_start_line, start), end)
    body = int(prefix[end] - prefix[start - 1]) if start else 0
    signature = int(prefix[body_start] - prefix[start - 1]) if start else 0
    # the outline shows the doc sentence beside the signature; ~4 characters per token
    signature += (len(decl.doc) + 3) // 4 if decl.doc else 0
    return replace(decl, body_tokens=body, signature_tokens=signature)


def collect_field_words(
    parsed: ParsedFile, text: str, cache: dict[str, list[str]] | None = None
) -> tuple[tuple[tuple[str, int], ...], ...]:
    """Count the index words of each field of a parsed file."""
    cache = {} if cache is None else cache
    name_words, folder_words = path_words(parsed.path)
    exported: list[str] = []
    other: list[str] = []
    docs: list[str] = []
    for decl in parsed.declarations:
        target = exported if decl.exported else other
        target.extend(words(decl.name, cache))
        if decl.doc:
            docs.extend(words(decl.doc, cache))
    fields: dict[str, Counter[str]] = {
        "name": Counter(name_words),
        "folders": Counter(folder_words),
        "exported": Counter(exported),
        "declarations": Counter(other),
        "docs": Counter(docs),
        "body": count_words(text, cache),
    }
    return tuple(tuple(sorted(fields[name].items())) for name in FIELDS)


def read_text(root: str | Path, path: str) -> str:
    """Read a file of the repository as text, replacing undecodable bytes."""
    with open(os.path.join(root, path), "rb") as fh:
        return fh.read().decode("utf-8", errors="replace")
