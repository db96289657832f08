"""The semantic stage's engine parts with a deterministic fake model: chunks, the vector cache,
incremental embedding, and the fusion of similarity into a finished lexical ranking."""

from __future__ import annotations

import json
import os
import struct
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import make_repo
from index_support import index_repo
from semantic_support import FakeEmbedder

from engine.analyse import read_text
from engine.model import (
    Declaration,
    DeclKind,
    Intent,
    RankedFile,
    Ranking,
    ReasonKind,
    Session,
)
from engine.rank import rank
from engine.semantic import store as vector_store
from engine.semantic.chunks import chunk_file
from engine.semantic.fuse import fuse
from engine.semantic.vectors import ChunkMatch, SemanticWeights, best_chunks, embed_files, missing
from engine.store import StaleCache

WEIGHTS = SemanticWeights()


def _declaration(start: int, end: int, depth: int = 0) -> Declaration:
    return Declaration(DeclKind.FUNCTION, "f", "f", "def f():", "", start, end, start, True, depth)


def test_chunks_hold_at_most_the_line_limit_and_start_with_the_path() -> None:
    text = "\n".join(f"x{i} = {i}" for i in range(1, 101))
    chunks = chunk_file("pkg/data.py", text, lines=40)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 40), (41, 80), (81, 100)]
    assert all(c.text.startswith("pkg/data.py\n") for c in chunks)
    assert chunks[1].text.splitlines()[1] == "x41 = 41"


def test_a_name_that_is_not_utf8_heads_its_chunks_as_valid_unicode() -> None:
    # the model's tokenizer refuses a lone surrogate ("TextEncodeInput must be Union[...]"):
    # a repository with one Latin-1 file name crashed rank, pack and index --semantic
    name = os.fsdecode(b"caf\xe9/menu.py")
    chunks = chunk_file(name, "def price():\n    return 1\n")
    assert chunks[0].text.startswith("caf\ufffd/menu.py\n")
    assert all(c.text.encode("utf-8") for c in chunks)  # no surrogate left


def test_a_chunk_ends_before_a_declaration_late_in_its_window() -> None:
    text = "\n".join(f"line {i}" for i in range(1, 81))
    chunks = chunk_file("a.py", text, (_declaration(1, 30), _declaration(31, 80)), lines=40)
    assert (chunks[0].start_line, chunks[0].end_line) == (1, 30)
    assert chunks[1].start_line == 31


def test_blank_stretches_make_no_chunk_and_long_files_are_capped() -> None:
    assert chunk_file("a.py", "\n\n   \n") == ()
    text = "\n".join(f"v{i}" for i in range(1000))
    assert len(chunk_file("a.py", text, lines=10, max_chunks=5)) == 5


SHOP: dict[str, str | bytes] = {
    "shop/ledger.py": "def compute_total(cart):\n    return sum(cart)\n",
    "shop/refunds.py": (
        "def reverse_charge(order):\n"
        "    # money goes back to the customer's card when an order is returned\n"
        "    return order.total\n"
    ),
    "shop/report.py": "def compute_report(cart):\n    return compute_total(cart)\n",
}


def _ranking(paths_scores: list[tuple[str, float]], **flags: bool) -> Ranking:
    files = tuple(
        RankedFile(path, number, score, (), pinned=flags.get(path, False))
        for number, (path, score) in enumerate(paths_scores)
    )
    return Ranking("q", (), Intent.GENERAL, files)


def test_fusion_lifts_the_file_most_similar_in_meaning() -> None:
    ranking = _ranking([("a.py", 10.0), ("b.py", 9.0), ("c.py", 2.0)])
    matches = {0: ChunkMatch(0.1, 1, 5), 1: ChunkMatch(0.2, 1, 5), 2: ChunkMatch(0.9, 3, 9)}
    fused = fuse(ranking, matches, replace(WEIGHTS, mix=0.6))
    assert [f.path for f in fused.files] == ["c.py", "b.py", "a.py"]
    scores = [f.score for f in fused.files]
    assert scores == sorted(scores, reverse=True)
    reason = fused.files[0].reasons[-1]
    assert reason.kind is ReasonKind.SEMANTIC and reason.detail == "lines 3-9 (0.90)"


def test_a_best_chunk_no_nearer_than_unrelated_text_is_no_reason() -> None:
    """App review, session 31: "meaning lines 1-5 (-0.02)" stood among a file's reasons,
    though a cosine at or below 0 adds nothing to its place."""
    ranking = _ranking([("a.py", 10.0), ("b.py", 9.0)])
    matches = {0: ChunkMatch(-0.02, 1, 5), 1: ChunkMatch(0.4, 2, 6)}
    fused = fuse(ranking, matches, WEIGHTS)
    kinds = {f.path: [r.kind for r in f.reasons] for f in fused.files}
    assert kinds == {"a.py": [], "b.py": [ReasonKind.SEMANTIC]}


def test_fusion_with_no_weight_keeps_the_lexical_order() -> None:
    ranking = _ranking([("a.py", 10.0), ("b.py", 9.0), ("c.py", 2.0)])
    matches = {0: ChunkMatch(0.1, 1, 5), 1: ChunkMatch(0.2, 1, 5), 2: ChunkMatch(0.9, 3, 9)}
    fused = fuse(ranking, matches, replace(WEIGHTS, mix=0.0))
    assert [f.path for f in fused.files] == ["a.py", "b.py", "c.py"]


def test_fusion_keeps_pinned_files_first_and_files_past_the_rerank_after() -> None:
    ranking = _ranking(
        [("pin.py", 1.0), ("a.py", 10.0), ("b.py", 9.0), ("c.py", 1.0)], **{"pin.py": True}
    )
    matches = {1: ChunkMatch(0.0, 1, 2), 2: ChunkMatch(0.9, 1, 2)}
    fused = fuse(ranking, matches, replace(WEIGHTS, rerank=2, mix=0.9))
    assert [f.path for f in fused.files] == ["pin.py", "b.py", "a.py", "c.py"]
    assert fused.files[-1] == ranking.files[-1]


def _entry(lines: list[list[int]], texts: list[str]) -> vector_store.FileVectors:
    vectors = FakeEmbedder().embed(texts).astype(np.float16)
    chunks = b"".join(vector_store.chunk_key(t) for t in texts)
    return vector_store.FileVectors(
        np.array(lines, np.int32).reshape(-1, 2), vectors, chunks, vector_store.path_key("a.py")
    )


def test_vector_cache_round_trips_and_is_written_atomically(tmp_path: Path) -> None:
    store = vector_store.VectorStore("fake-words-64", 64)
    key = vector_store.file_key("a.py", "abc", WEIGHTS.chunking)
    store.add(key, entry := _entry([[1, 40], [41, 60]], ["hello world", "refund money"]))
    path = vector_store.vectors_file(tmp_path, store.model_id)
    vector_store.save(path, store)
    loaded = vector_store.load(path, "fake-words-64", 64)
    assert list(loaded.entries) == [key]
    assert np.array_equal(loaded.entries[key].vectors, entry.vectors)
    assert loaded.entries[key].lines.tolist() == [[1, 40], [41, 60]]
    assert loaded.entries[key].chunks == entry.chunks and loaded.entries[key].path == entry.path
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_a_chunk_shared_by_two_files_is_stored_once(tmp_path: Path) -> None:
    store = vector_store.VectorStore("fake-words-64", 64)
    old = vector_store.file_key("a.py", "v1", WEIGHTS.chunking)
    new = vector_store.file_key("a.py", "v2", WEIGHTS.chunking)
    store.add(old, _entry([[1, 40], [41, 60]], ["same start", "old end"]))
    store.add(new, _entry([[1, 40], [41, 70], [71, 80]], ["same start", "new end", "old end"]))
    path = vector_store.vectors_file(tmp_path, store.model_id)
    vector_store.save(path, store)
    loaded = vector_store.load(path, "fake-words-64", 64)
    sizes = {e.path for e in loaded.entries.values()}, len(loaded.chunk_vectors())
    assert sizes == ({vector_store.path_key("a.py")}, 3)  # 5 chunks by file, 3 texts
    for key in (old, new):
        assert np.array_equal(loaded.entries[key].vectors, store.entries[key].vectors)
        assert loaded.entries[key].lines.tolist() == store.entries[key].lines.tolist()


@pytest.mark.parametrize(
    "damage",
    ["garbage", "truncated", "other model", "huge header", "bad reference", "version 1",
     "a flipped vector"],
)  # fmt: skip
def test_a_damaged_or_foreign_vector_cache_is_refused(tmp_path: Path, damage: str) -> None:
    store = vector_store.VectorStore("fake-words-64", 64)
    key = vector_store.file_key("a.py", "abc", WEIGHTS.chunking)
    store.add(key, _entry([[1, 2]], ["hello"]))
    path = vector_store.vectors_file(tmp_path, store.model_id)
    vector_store.save(path, store)
    model = "fake-words-64"
    if damage == "garbage":
        path.write_bytes(b"not a zip file at all")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:300])
    elif damage == "other model":
        model = "another-model"
    elif damage == "a flipped vector":  # still a finite float16: only the checksum tells
        data = bytearray(path.read_bytes())
        data[-100] ^= 0x01  # the last 128 bytes are the one chunk's 64 float16s
        path.write_bytes(bytes(data))
    else:
        data = path.read_bytes()
        (length,) = struct.unpack("<Q", data[8:16])
        header = json.loads(data[16 : 16 + length])
        if damage == "huge header":  # a header that claims a trillion vectors
            header["arrays"]["vectors"][0] = 10**12
        elif damage == "version 1":  # a cache of the layout by file (before chunk sharing)
            header["version"] = 1
        else:  # a chunk reference past the last chunk
            _, offset = header["arrays"]["refs"]
            start = -(-(16 + length) // vector_store.ALIGN) * vector_store.ALIGN + offset
            data = data[:start] + struct.pack("<i", 7) + data[start + 4 :]
        text = json.dumps(header).encode().ljust(length)
        path.write_bytes(data[:8] + struct.pack("<Q", len(text)) + text + data[16 + length :])
    with pytest.raises(StaleCache):
        vector_store.load(path, model, 64)


def test_a_vector_cache_written_before_its_checksum_still_loads(tmp_path: Path) -> None:
    store = vector_store.VectorStore("fake-words-64", 64)
    key = vector_store.file_key("a.py", "abc", WEIGHTS.chunking)
    store.add(key, entry := _entry([[1, 2]], ["hello"]))
    path = vector_store.vectors_file(tmp_path, store.model_id)
    vector_store.save(path, store)
    data = path.read_bytes()
    (length,) = struct.unpack("<Q", data[8:16])
    header = json.loads(data[16 : 16 + length])
    del header["crc32"]  # as session 29's code wrote it: no re-embedding for that alone
    text = json.dumps(header).encode().ljust(length)
    path.write_bytes(data[:16] + text + data[16 + length :])
    loaded = vector_store.load(path, "fake-words-64", 64)
    assert np.array_equal(loaded.entries[key].vectors, entry.vectors)


def test_embedding_is_incremental_by_file_content(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", SHOP)
    index, _ = index_repo(root)
    store = vector_store.VectorStore("fake-words-64", 64)
    embedder = FakeEmbedder()
    everything = list(range(len(index.files)))

    def read(path: str) -> str:
        return read_text(root, path)

    first = embed_files(index, everything, store, embedder, read, WEIGHTS)
    assert first == 3 and missing(index, everything, store, WEIGHTS) == []
    assert embed_files(index, everything, store, embedder, read, WEIGHTS) == 0
    (root / "shop/report.py").write_text("def compute_report(cart):\n    return 0\n")
    index, _ = index_repo(root)
    embedder.texts.clear()
    again = embed_files(index, everything, store, embedder, read, WEIGHTS)
    assert again == 1 and embedder.texts[0].startswith("shop/report.py\n")


def test_a_file_edited_after_indexing_waits_for_the_new_index(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", SHOP)
    index, _ = index_repo(root)
    (root / "shop/refunds.py").write_text("def reverse_charge(order):\n    return 0\n")
    store, embedder = vector_store.VectorStore("fake-words-64", 64), FakeEmbedder()
    ids = list(range(len(index.files)))
    assert embed_files(index, ids, store, embedder, lambda p: read_text(root, p), WEIGHTS) == 2
    waiting = missing(index, ids, store, WEIGHTS)
    assert [index.files[i].path for i in waiting] == ["shop/refunds.py"]
    index, _ = index_repo(root)
    assert embed_files(index, ids, store, embedder, lambda p: read_text(root, p), WEIGHTS) == 1
    assert missing(index, ids, store, WEIGHTS) == []
    assert "return 0" in embedder.texts[-1]


def test_a_file_with_a_literal_replacement_character_and_a_bad_byte_gets_vectors(
    tmp_path: Path,
) -> None:
    # its text holds U+FFFD already, so it cannot be compared with the bytes read: taken as read
    odd = "s = '\ufffd'  # refund\n".encode() + b"t = '\xff'\ndef refund_odd():\n    pass\n"
    root = make_repo(tmp_path / "repo", {**SHOP, "shop/odd.py": odd})
    index, _ = index_repo(root)
    store = vector_store.VectorStore("fake-words-64", 64)
    ids = list(range(len(index.files)))
    embed_files(index, ids, store, FakeEmbedder(), lambda p: read_text(root, p), WEIGHTS)
    assert missing(index, ids, store, WEIGHTS) == []


def test_an_edited_file_embeds_only_its_changed_chunks(tmp_path: Path) -> None:
    body = "".join(f"    x += {j}\n" for j in range(8))
    functions = [f"def step_{i}(x):\n{body}" for i in range(6)]
    root = make_repo(tmp_path / "repo", {"steps.py": "\n".join(functions)})
    weights = replace(WEIGHTS, chunk_lines=10)
    store, embedder = vector_store.VectorStore("fake-words-64", 64), FakeEmbedder()
    index, _ = index_repo(root)
    assert embed_files(index, [0], store, embedder, lambda p: read_text(root, p), weights) == 6
    functions[3] = functions[3].replace("x += 5", "x -= 5")  # one line of one function
    (root / "steps.py").write_text("\n".join(functions))
    index, _ = index_repo(root)
    embedder.texts.clear()
    assert embed_files(index, [0], store, embedder, lambda p: read_text(root, p), weights) == 1
    assert "def step_3" in embedder.texts[0] and "x -= 5" in embedder.texts[0]
    fresh = vector_store.VectorStore("fake-words-64", 64)
    embed_files(index, [0], fresh, FakeEmbedder(), lambda p: read_text(root, p), weights)
    key = vector_store.file_key("steps.py", index.files[0].sha1, weights.chunking)
    assert np.array_equal(store.entries[key].vectors, fresh.entries[key].vectors)


def test_embedding_stops_between_groups_and_keeps_whole_files(tmp_path: Path) -> None:
    files = {f"m{i}.py": "\n".join(f"x{j} = {j}" for j in range(200)) for i in range(4)}
    root = make_repo(tmp_path / "repo", files)
    index, _ = index_repo(root)
    store = vector_store.VectorStore("fake-words-64", 64)
    asked = iter([False, True])
    weights = replace(WEIGHTS, chunk_lines=10)
    done = embed_files(index, range(4), store, FakeEmbedder(), lambda p: read_text(root, p),
                       weights, should_stop=lambda: next(asked, True))  # fmt: skip
    assert done == 20  # one file of 20 chunks (a group), then the stop
    assert len(store.entries) == 1 and len(next(iter(store.entries.values())).vectors) == 20


def test_best_chunks_needs_every_file_and_finds_the_closest(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", SHOP)
    index, _ = index_repo(root)
    store = vector_store.VectorStore("fake-words-64", 64)
    embedder = FakeEmbedder()
    question = embedder.embed(["money back to the customer card when returned"])[0]
    ids = list(range(len(index.files)))
    assert best_chunks(index, ids, store, question, WEIGHTS) is None
    embed_files(index, ids, store, embedder, lambda p: read_text(root, p), WEIGHTS)
    matches = best_chunks(index, ids, store, question, WEIGHTS)
    assert matches is not None
    best = max(matches, key=lambda i: matches[i].similarity)
    assert index.files[best].path == "shop/refunds.py"


def test_fusion_reorders_a_real_lexical_ranking_without_touching_rank(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", SHOP)
    index, _ = index_repo(root)
    lexical = rank(index, "compute the money returned to the customer", Session())
    again = rank(index, "compute the money returned to the customer", Session())
    assert lexical == again  # the lexical stage is a pure function: fusion never feeds back
    store = vector_store.VectorStore("fake-words-64", 64)
    embedder = FakeEmbedder()
    ids = [f.file_id for f in lexical.files]
    embed_files(index, ids, store, embedder, lambda p: read_text(root, p), WEIGHTS)
    question = embedder.embed([lexical.query])[0]
    matches = best_chunks(index, ids, store, question, WEIGHTS)
    assert matches is not None
    fused = fuse(lexical, matches, replace(WEIGHTS, mix=0.8))
    assert fused.files[0].path == "shop/refunds.py"
    assert {f.path for f in fused.files} == {f.path for f in lexical.files}


def test_reciprocal_rank_fusion_weighs_the_lexical_list_as_asked() -> None:
    ranking = _ranking([("a.py", 10.0), ("b.py", 9.0), ("c.py", 8.0)])
    matches = {0: ChunkMatch(0.1, 1, 5), 1: ChunkMatch(0.9, 1, 5), 2: ChunkMatch(0.5, 1, 5)}
    lexical_first = fuse(ranking, matches, replace(WEIGHTS, rrf=1 / 3))
    assert [f.path for f in lexical_first.files] == ["a.py", "b.py", "c.py"]
    even = fuse(ranking, matches, replace(WEIGHTS, rrf=1.0))
    assert [f.path for f in even.files][:1] == ["b.py"]
