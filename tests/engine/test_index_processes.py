"""What a first index does across processes: it resolves its imports in a process of its own
while it builds the postings (the same cache as resolving them in the indexing process), and
its workers send declaration records compressed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from conftest import make_repo
from index_support import shared_tokenizer

import engine.assemble
from engine import store
from engine.indexer import build_index
from engine.pool import Aside

needs_fork = pytest.mark.skipif(
    not hasattr(os, "fork") or threading.active_count() != 1,
    reason="the aside process is forked from a single-threaded process",
)


def answer_only_here(parent: int) -> str:
    """Dies at once in any process but `parent`: an aside process lost mid-work."""
    if os.getpid() != parent:
        os._exit(1)
    return "answered here"


@needs_fork
def test_aside_work_runs_in_another_process() -> None:
    assert Aside(os.getpid).result() != os.getpid()


def test_aside_work_not_enabled_runs_here_when_asked_for() -> None:
    assert Aside(os.getpid, enabled=False).result() == os.getpid()


@needs_fork
def test_aside_work_whose_process_dies_is_done_here() -> None:
    assert Aside(answer_only_here, os.getpid()).result() == "answered here"


@needs_fork
def test_imports_resolved_aside_give_the_same_cache_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files: dict[str, str | bytes] = {"pkg/__init__.py": "", "go.mod": "module example.com/m\n"}
    for i in range(30):
        py = f"from pkg.mod{(i + 1) % 30} import f\nimport os\n\ndef f():\n    pass\n"
        ts = f"import {{ g }} from './part{(i + 7) % 30}';\nexport const g = 1;\n"
        go = f'package s{i % 3}\n\nimport "example.com/m/svc/s{(i + 1) % 3}"\n'
        files[f"pkg/mod{i}.py"], files[f"web/part{i}.ts"] = py, ts
        files[f"svc/s{i % 3}/x{i}.go"] = go
    repo = make_repo(tmp_path / "repo", files)
    resolve = engine.assemble.resolved_imports
    resolvers = tmp_path / "resolved-by"

    def resolved_imports(*args: object) -> object:
        with resolvers.open("a") as out:
            out.write(f"{os.getpid()}\n")
        return resolve(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(engine.assemble, "resolved_imports", resolved_imports)
    caches = []
    # resolved here (too few files), aside, then here again (too many: a fork of a process
    # holding a huge tree's analyses would copy much of it)
    for aside_from, aside_to in ((10**9, 10**9), (0, 10**9), (0, 10)):
        monkeypatch.setattr(engine.assemble, "ASIDE_MIN_FILES", aside_from)
        monkeypatch.setattr(engine.assemble, "ASIDE_MAX_FILES", aside_to)
        cache_dir = tmp_path / f"cache-{aside_from}-{aside_to}"
        index, _ = build_index(repo, cache_dir=cache_dir, workers=1, tokenizer=shared_tokenizer())
        assert len(index.edges) > 60
        caches.append(store.cache_file(cache_dir, "o200k_base").read_bytes())
    assert caches[0] == caches[1] == caches[2]
    here, aside, here_again = map(int, resolvers.read_text().split())
    assert here == here_again == os.getpid() != aside


def test_declaration_records_travel_compressed_and_are_stored_as_encoded(tmp_path: Path) -> None:
    from engine.analyse import Analyser, analyse_batch, stored_record
    from engine.model import SourceFile
    from engine.tables import decode_declarations

    text = "".join(f"def handler_{i}(request):\n    return {i}\n\n\n" for i in range(200))
    repo = make_repo(tmp_path / "repo", {"app.py": text})
    source = SourceFile("app.py", len(text), os.stat(repo / "app.py").st_mtime_ns, "python")
    batch = analyse_batch(str(repo), [source], Analyser.create(shared_tokenizer()))
    travelling = batch.analysed.records[0]
    record = stored_record(travelling)
    assert len(travelling) * 3 < len(record)
    assert [d.name for d in decode_declarations(record)] == [f"handler_{i}" for i in range(200)]


@needs_fork
def test_a_failed_postings_build_stops_the_resolution_and_raises_its_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While imports resolve aside, an error building the postings (out of memory, Ctrl-C)
    reaches the caller as itself, and the aside process is stopped."""
    files = {f"pkg/mod{i}.py": f"from pkg.mod{(i + 1) % 20} import f\n" for i in range(20)}
    repo = make_repo(tmp_path / "repo", files)
    closed: list[bool] = []
    close = Aside.close

    def recording_close(self: Aside[object]) -> None:
        closed.append(True)
        close(self)

    def failing(*args: object) -> None:
        raise MemoryError("postings")

    monkeypatch.setattr(engine.assemble, "ASIDE_MIN_FILES", 0)
    monkeypatch.setattr(engine.assemble, "_word_arrays", failing)
    monkeypatch.setattr(Aside, "close", recording_close)
    with pytest.raises(MemoryError, match="postings"):
        build_index(repo, workers=1, tokenizer=shared_tokenizer())
    assert closed
