"""The embedding stage: which files still need vectors, embedding them, and the best chunk of
each file for a question.

Slow (tens of chunks a second on two cores), so it is built to be run in the background and
stopped at any time: files are embedded a group at a time into the `VectorStore` passed in,
so what was done is kept. The ranking reads the store only; see engine.semantic.fuse.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.analyse import sha1_of
from engine.model import Index, Progress
from engine.semantic.chunks import CHUNKER_VERSION, chunk_file
from engine.semantic.embedder import Embedder
from engine.semantic.store import FileVectors, VectorStore, chunk_key, file_key, path_key

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

GROUP_CHUNKS = 64
"""Chunks sent to the model between two checks of `should_stop` and two progress reports
(files whose every chunk is known already cost no model call)."""


@dataclass(frozen=True, slots=True)
class SemanticWeights:
    """Every number of the semantic stage, named. Chosen on DEV by scripts/semantic_eval.py
    (115 cases: 16 per case file, round-robin; 51 TUNED, 64 HELD; each case's lexical top 10
    embedded): every number picked on TUNED, then judged on HELD.
    TUNED MRR 0.851 (lexical) -> 0.864 for top 5 or 10 with mix 0.1-0.3 raw, or mix 0.1
    scaled; R@5 and R@10 move on neither group. HELD MRR 0.785 -> 0.789 for the choice.

    Session 7 re-judged them leave-one-repository-out (`semantic_eval.py loo`, a setting
    chosen for each case file on the other seven) with every distinct chunk text of a
    balanced sample's lexical top 20 embedded (12 cases a case file: 88 cases with the whole
    top 20, 92 with the top 15, 111 with the top 5). No fold chose anything wider than 5; six
    chose top 5 with mix 0.2-0.3 scaled, flask's and clap's rrf 1:3 at top 5. Out of fold:
    express MRR 0.888 -> 0.849, flask 0.814 -> 0.750, the other six identical. Tuned on TUNED:
    these defaults. Then all 227 cases' top 5: no fold chose these defaults (mix 0.3 raw or
    scaled, 0.5), but out of fold every choice was worse or level: MRR cobra 0.912 -> 0.883,
    express 0.900 -> 0.887, gin 0.721 -> 0.709, hono 0.875 -> 0.865, textual 0.863 -> 0.856,
    flask 0.828 -> 0.831, clap level. So the numbers stay. Against words only (all 227, Pack@8k
    from real packs): TUNED MRR 0.865 -> 0.877, HELD 0.798 -> 0.805 (flask 0.792 -> 0.828,
    textual 0.845 -> 0.863); R@5, R@10 and Pack identical on every case file."""

    rerank: int = 5
    """How many of the lexical ranking's best files are re-ranked (and must have vectors).
    5 and 10 tie on TUNED; 5 costs half the cold-cache embedding. (The side study's 50
    was not measured on DEV: embedding 50 files a case did not fit the session.) Session 6
    measured the cost of a wider re-rank on all 227 DEV cases: each case's top 20 is 47.5k
    chunks by file (27.9k distinct chunk texts: checkouts of one repository share most
    chunks), the top 50 74.6k (41.1k); one thread at nice 19 beside the team's jobs (load
    5-9) embedded 1.4-5 chunks a second, so the top 20 needs hours: 16 cases were done, too
    few to choose on (scripts/semantic_eval.py loo). Session 7 embedded each distinct chunk
    text once, in rank order across cases (scripts/semantic_eval.py embed), 2-5 chunks a
    second: a balanced sample of 88 cases' top 20 (about 14k texts) fit. Wider is worse there,
    mix 0.2 raw, words only -> top 5 / 10 / 15 / 20: HELD R@5 0.933 -> 0.933 / 0.923 / 0.923 /
    0.923, TUNED R@10 0.964 -> 0.964 / 0.964 / 0.950 / 0.950 (clap at top 20: R@5 0.923 ->
    0.885, R@10 0.949 -> 0.923; TUNED Pack 0.964 -> 0.950); scaled or with a larger mix,
    HELD R@5 falls to 0.904. The misses a wider re-rank could reach are few: of the ten
    cases missed on DEV, three have their first gold file within the top 20.
    Session 25 tried to choose it on the repositories no number was chosen on (TRAIN,
    TRAIN2) and could not: their top 20 is 44.8k and 39.8k distinct chunk texts (DEV's
    26.2k), every case's first file alone 7.5k over the three sets, and the shared machine
    gave 3.8-5 chunks a second (one thread; two were slower, 5.5 against 9 chunks a CPU
    second) until the 11:40 stop, 12.9k texts in all. A balanced sample (one case a case
    file, in rank order) reached the top 4 on 49 unseen cases and the top 5 on 21 of
    TRAIN2's: there these defaults changed one case (MRR 0.767 -> 0.743; R@5 0.810 either
    way), scaled cosines two (0.727), mix 0.1 none; at a window of 4 on the 49, one up and
    one down (MRR 0.713 both). Chosen leave-one-repository-out on the 60 cases with the top
    4 (56 folds), MRR +0.017 [-0.017, +0.050] out of fold (55 folds: window 2, mix 0.1
    scaled); apart for questions of 20+ words, -0.056. No window beyond 5 could be judged:
    unchanged. (scripts/semantic_eval.py embed --samples 1:10,2:10; choose --min-embedded.)"""
    mix: float = 0.2
    """fused = (1 - mix) x lexical / best lexical + mix x the best chunk's cosine. 0.1, 0.2
    and 0.3 tie on TUNED (MRR 0.864); 0.2 is their middle (HELD 0.789, 0.789, 0.795);
    0.4 and above lose MRR on TUNED (0.861 ... 0.827)."""
    scaled: bool = False
    """Min-max scale the cosines over the re-ranked files first. Scaled, mix 0.2 gave TUNED
    MRR 0.851 (no gain) though HELD 0.819: TUNED decides, so raw cosines."""
    rrf: float = 0.0
    """When > 0, fuse by reciprocal ranks instead of the mix: 1 / (60 + lexical rank) +
    rrf / (60 + semantic rank). The side study's 3:1 (rrf 1/3): TUNED MRR 0.858, below the
    mix, so off."""
    chunk_lines: int = 40
    """Lines per chunk at most (the side study's size; not swept: each try re-embeds DEV)."""
    max_chunks: int = 64
    """Chunks per file at most; longer files keep their first ones."""

    @property
    def chunking(self) -> tuple[int, ...]:
        """What the cached vectors depend on besides the model and the file."""
        return (CHUNKER_VERSION, self.chunk_lines, self.max_chunks)


DEFAULT_SEMANTIC = SemanticWeights()


@dataclass(frozen=True, slots=True)
class ChunkMatch:
    """A file's best chunk for a question."""

    similarity: float
    """Cosine similarity of the chunk and the question, -1..1."""
    start_line: int
    """First line of the chunk, 1-based."""
    end_line: int
    """Last line of the chunk, 1-based."""


def file_keys(index: Index, file_ids: Sequence[int], weights: SemanticWeights) -> list[bytes]:
    """The vector store keys of some files of the index."""
    chunking = weights.chunking
    return [file_key(index.files[i].path, index.files[i].sha1, chunking) for i in file_ids]


def missing(
    index: Index, file_ids: Sequence[int], store: VectorStore, weights: SemanticWeights
) -> list[int]:
    """The files among `file_ids` that have no vectors yet, in the order given."""
    keys = file_keys(index, file_ids, weights)
    return [i for i, key in zip(file_ids, keys, strict=True) if key not in store.entries]


def embed_files(
    index: Index,
    file_ids: Sequence[int],
    store: VectorStore,
    embedder: Embedder,
    read_text: Callable[[str], str],
    weights: SemanticWeights,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    known: Mapping[bytes, npt.NDArray[np.float16]] | None = None,
) -> int:
    """Give the files among `file_ids` that have no vectors yet their vectors, in `store`.

    Only chunk texts without a vector go to the model: a chunk found in `known` (chunk_key ->
    vector; default: the store's own chunks) or met earlier in this call is reused, so an
    edited file costs its changed chunks only. A file that vanished, cannot be read or
    changed since it was indexed gets no vectors (it is tried again next time: vectors are
    kept under the indexed content's hash, so they must be of that content). Text holding a
    U+FFFD may not encode back to the bytes read (a byte that was not UTF-8 was replaced), so
    it cannot be checked this way and is taken as read; any other text decoded losslessly.
    Returns the number of chunks embedded; stops early when `should_stop()` says so.
    """
    import numpy as np  # deliberate: numpy loads with the index

    todo = missing(index, file_ids, store, weights)
    keys = dict(zip(todo, file_keys(index, todo, weights), strict=True))
    lookup = store.chunk_vectors() if known is None else known
    done_chunks = 0
    files: list[tuple[int, list[tuple[int, int]], list[bytes]]] = []  # id, lines, chunk keys
    texts: dict[bytes, str] = {}  # the chunks this group sends to the model
    made: dict[bytes, npt.NDArray[np.float16]] = {}  # embedded in this call

    def flush() -> None:
        nonlocal done_chunks
        if texts:
            vectors = embedder.embed(list(texts.values())).astype(np.float16)
            made.update(zip(texts, vectors, strict=True))
        for file_id, lines, chunk_keys in files:
            rows = [made[k] if k in made else lookup[k] for k in chunk_keys]
            entry = FileVectors(
                np.array(lines, dtype=np.int32).reshape(-1, 2),
                np.stack(rows) if rows else np.zeros((0, embedder.dim), dtype=np.float16),
                b"".join(chunk_keys),
                path_key(index.files[file_id].path),
            )
            store.add(keys[file_id], entry)
        done_chunks += len(texts)
        files.clear()
        texts.clear()

    for number, file_id in enumerate(todo, 1):
        if should_stop is not None and should_stop():
            break
        parsed = index.files[file_id]
        try:
            text = read_text(parsed.path)
        except OSError:
            continue
        if "\ufffd" not in text and sha1_of(text.encode("utf-8")) != parsed.sha1:
            continue  # edited since it was indexed: its vectors wait for the new index's key
        chunks = chunk_file(
            parsed.path,
            text,
            parsed.declarations,
            lines=weights.chunk_lines,
            max_chunks=weights.max_chunks,
        )
        chunk_keys = [chunk_key(c.text) for c in chunks]
        for key, chunk in zip(chunk_keys, chunks, strict=True):
            if key not in made and key not in lookup:
                texts[key] = chunk.text
        files.append((file_id, [(c.start_line, c.end_line) for c in chunks], chunk_keys))
        if len(texts) >= GROUP_CHUNKS or number == len(todo):
            flush()  # a file's chunks always land in one group, so a file is whole or absent
            if on_progress is not None:
                on_progress(Progress("embed", number, len(todo)))
    if files:
        flush()
    return done_chunks


def best_chunks(
    index: Index,
    file_ids: Sequence[int],
    store: VectorStore,
    question: npt.NDArray[np.float32],
    weights: SemanticWeights,
) -> dict[int, ChunkMatch] | None:
    """Each file's most similar chunk to the question vector; None when any file among
    `file_ids` has no vectors yet (a partial answer would favour the embedded files)."""
    import numpy as np  # deliberate: see embed_files

    q = np.asarray(question, dtype=np.float32)
    result: dict[int, ChunkMatch] = {}
    for file_id, key in zip(file_ids, file_keys(index, file_ids, weights), strict=True):
        entry = store.entries.get(key)
        if entry is None:
            return None
        if len(entry.vectors) == 0:
            continue  # a blank file: no evidence either way
        similarities = entry.vectors.astype(np.float32) @ q
        best = int(similarities.argmax())
        first, last = (int(v) for v in entry.lines[best])
        result[file_id] = ChunkMatch(float(similarities[best]), first, last)
    return result
