"""build_index end to end: what a small repository's Index holds, and awkward files on the way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import make_repo
from index_support import index_repo, shared_tokenizer

from engine.model import FIELDS, DeclKind, Level, Session, SkipReason
from engine.plan import plan
from engine.rank import rank
from engine.roles import Role
from engine.words import words

SMALL_REPO: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        "from pkg.helpers import slugify\n"
        "\n"
        "\n"
        "class Router:\n"
        '    """Route incoming requests to handlers."""\n'
        "\n"
        "    def add_route(self, path):\n"
        "        return slugify(path)\n"
    ),
    "pkg/helpers.py": "def slugify(text):\n    return text.lower().replace(' ', '-')\n",
    "tests/test_core.py": (
        "from pkg.core import Router\n\n\n"
        "def test_add_route():\n    assert Router().add_route('A B')\n"
    ),
    "README.md": "# Router\n\nA tiny router.\n",
}


@pytest.fixture
def small_repo(tmp_path: Path) -> Path:
    root: Path = make_repo(tmp_path / "repo", SMALL_REPO)
    return root


def test_every_kept_file_is_indexed_sorted_by_path_with_its_id(small_repo: Path) -> None:
    index, report = index_repo(small_repo)
    paths = [f.path for f in index.files]
    assert paths == sorted(SMALL_REPO)
    assert index.path_ids == {p: i for i, p in enumerate(paths)}
    assert report.files == len(paths)
    assert report.parsed == tuple(paths)
    assert (report.reused, report.removed, report.cache_notice, report.cache_path) == (
        0,
        (),
        "",
        "",
    )


def test_index_root_is_the_resolved_absolute_folder(small_repo: Path, tmp_path: Path) -> None:
    os.symlink(small_repo, tmp_path / "alias")
    index, _ = index_repo(tmp_path / "alias")
    assert index.root == str(small_repo.resolve())


def test_file_token_counts_are_the_tokenizers_counts(small_repo: Path) -> None:
    index, _ = index_repo(small_repo)
    tokenizer = shared_tokenizer()
    for file_id, parsed in enumerate(index.files):
        text = (small_repo / parsed.path).read_text(encoding="utf-8")
        assert parsed.tokens == tokenizer.count(text), parsed.path
        assert index.tokens_of_lines(file_id, 1, parsed.lines) == parsed.tokens


def test_declaration_token_counts_come_from_their_lines(small_repo: Path) -> None:
    index, _ = index_repo(small_repo)
    file_id = index.path_ids["pkg/core.py"]
    router = next(d for d in index.files[file_id].declarations if d.name == "Router")
    assert router.kind is DeclKind.CLASS
    assert router.body_tokens == index.tokens_of_lines(file_id, router.start_line, router.end_line)


def test_resolved_imports_become_a_two_way_graph(small_repo: Path) -> None:
    index, _ = index_repo(small_repo)
    ids = index.path_ids
    core, helpers, test = ids["pkg/core.py"], ids["pkg/helpers.py"], ids["tests/test_core.py"]
    assert index.imports[core] == (helpers,)
    assert index.importers[helpers] == (core,)
    assert index.importers[core] == (test,)
    assert sorted(map(tuple, index.edges.tolist())) == sorted([(core, helpers), (test, core)])


def test_roles_tell_code_tests_and_docs_apart(small_repo: Path) -> None:
    index, _ = index_repo(small_repo)
    role = {f.path: Role(int(index.roles[i])) for i, f in enumerate(index.files)}
    assert role["pkg/core.py"] is Role.CODE
    assert role["tests/test_core.py"] is Role.TEST
    assert role["README.md"] is Role.DOC


def test_postings_hold_each_words_count_per_field(small_repo: Path) -> None:
    index, _ = index_repo(small_repo)
    term = index.vocab[words("slugify")[0]]
    start, end = int(index.postings.ptr[term]), int(index.postings.ptr[term + 1])
    by_path = {
        index.files[int(d)].path: dict(zip(FIELDS, row.tolist(), strict=True))
        for d, row in zip(index.postings.docs[start:end], index.postings.tf[start:end], strict=True)
    }
    assert set(by_path) == {"pkg/core.py", "pkg/helpers.py"}
    assert by_path["pkg/helpers.py"]["exported"] == 1
    assert by_path["pkg/helpers.py"]["body"] == 1
    assert by_path["pkg/core.py"]["body"] == 2
    assert by_path["pkg/core.py"]["exported"] == 0


def test_body_length_is_the_number_of_body_words(small_repo: Path) -> None:
    index, _ = index_repo(small_repo)
    for file_id, parsed in enumerate(index.files):
        text = (small_repo / parsed.path).read_text(encoding="utf-8")
        assert index.body_length[file_id] == len(words(text)), parsed.path


def test_terms_sorted_is_the_vocabulary_in_order(small_repo: Path) -> None:
    index, _ = index_repo(small_repo)
    assert list(index.terms_sorted) == sorted(index.vocab)
    assert sorted(index.vocab.values()) == list(range(len(index.vocab)))


def test_declaration_postings_find_declarations_by_a_word_of_their_name(small_repo: Path) -> None:
    index, _ = index_repo(small_repo)
    found = {
        index.files[f].declarations[d].qualified_name
        for f, d in index.declaration_postings[index.vocab[words("router")[0]]]
    }
    assert found == {"Router", "Router.add_route", "test_add_route"}


def test_empty_folder_gives_an_empty_index_that_ranks_and_plans_nothing(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    index, report = index_repo(root)
    assert (len(index.files), report.files, report.parsed, len(index.vocab)) == (0, 0, (), 0)
    ranking = rank(index, "where is the session handled?")
    assert ranking.files == ()
    assert plan(ranking, index, 8000).entries == ()


def test_binary_content_with_a_harmless_name_is_skipped_as_binary(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"ok.py": "x = 1\n", "payload.dat": b"head\0tail" * 20})
    index, report = index_repo(root)
    assert [f.path for f in index.files] == ["ok.py"]
    assert [(s.path, s.reason) for s in report.skipped] == [("payload.dat", SkipReason.BINARY)]


def test_minified_content_is_skipped_as_minified(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"ok.py": "x = 1\n", "static/app.js": "var a=1;" * 2000})
    index, report = index_repo(root)
    assert [f.path for f in index.files] == ["ok.py"]
    assert [(s.path, s.reason) for s in report.skipped] == [("static/app.js", SkipReason.MINIFIED)]


def test_non_utf8_file_is_kept_decoded_with_replacement_and_reported(tmp_path: Path) -> None:
    latin1 = "# café menu\ndef order_croissant():\n    return 'crème'\n".encode("latin-1")
    root = make_repo(tmp_path / "repo", {"legacy.py": latin1, "ok.py": "x = 1\n"})
    index, report = index_repo(root)
    assert report.replaced == ("legacy.py",)
    parsed = index.files[index.path_ids["legacy.py"]]
    assert parsed.replaced
    assert [d.name for d in parsed.declarations] == ["order_croissant"]
    assert rank(index, "order croissant").files[0].path == "legacy.py"


def test_valid_utf8_holding_a_replacement_character_is_not_reported(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"marks.py": "BAD = '\ufffd'\n"})
    index, report = index_repo(root)
    assert report.replaced == ()
    assert not index.files[0].replaced


def test_symlink_loop_is_skipped_and_the_rest_is_indexed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"ok.py": "x = 1\n"})
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    index, report = index_repo(root)
    assert [f.path for f in index.files] == ["ok.py"]
    assert {(s.path, s.reason) for s in report.skipped} == {
        ("loop_a", SkipReason.SYMLINK_LOOP),
        ("loop_b", SkipReason.SYMLINK_LOOP),
    }


def test_file_with_a_generated_header_is_kept_and_marked_generated(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo", {"api.py": "# Code generated by protoc. DO NOT EDIT.\nX = 1\n"}
    )
    index, _ = index_repo(root)
    assert index.files[0].generated
    assert Role(int(index.roles[0])) is Role.GENERATED


def test_syntax_errors_are_reported_as_partial_and_declarations_survive(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"broken.py": "def fine():\n    pass\n\ndef broken(:\n"})
    index, report = index_repo(root)
    assert report.partial == ("broken.py",)
    assert "fine" in [d.name for d in index.files[0].declarations]


def test_skipped_files_are_kept_on_the_index_too(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"ok.py": "x = 1\n", "logo.png": b"\x89PNG\0"})
    index, report = index_repo(root)
    assert index.skipped == report.skipped
    assert [(s.path, s.reason) for s in index.skipped] == [("logo.png", SkipReason.BINARY)]


def test_every_stage_is_timed(small_repo: Path) -> None:
    _, report = index_repo(small_repo)
    stages = [t.stage for t in report.times]
    assert {"scan", "parse", "index"} <= set(stages)
    assert all(t.seconds >= 0 for t in report.times)


def test_plan_of_an_indexed_repository_has_a_level_for_the_top_file(small_repo: Path) -> None:
    index, _ = index_repo(small_repo)
    ranking = rank(index, "add route")
    packed = plan(ranking, index, 8000, Session())
    assert packed.entries[0].path == "pkg/core.py"
    assert packed.entries[0].level in (Level.FULL, Level.FOCUSED)


def test_a_broken_worker_pool_falls_back_to_indexing_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures.process import BrokenProcessPool

    import engine.indexer

    class BrokenPool:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def __enter__(self) -> BrokenPool:
            return self

        def __exit__(self, *args: object) -> None:
            return None

        def submit(self, *args: object) -> object:
            raise BrokenProcessPool("workers died")

        def shutdown(self, *args: object, **kwargs: object) -> None:
            return None

    files = {f"pkg/mod{i}.py": f"def function_{i}():\n    return {i}\n" for i in range(60)}
    repo = make_repo(tmp_path / "repo", files)
    monkeypatch.setattr(engine.pool, "ProcessPoolExecutor", BrokenPool)
    index, report = engine.indexer.build_index(repo, workers=2)
    assert len(index.files) == 60
    assert len(report.parsed) == 60


def test_pool_workers_save_the_cache_one_process_saves(tmp_path: Path) -> None:
    """Workers count tokens with toktok where it is installed, this process with tiktoken:
    the stored index is the same to the byte."""
    import engine.indexer
    from engine import store

    files: dict[str, str | bytes] = {
        f"pkg/mod{i}.py": f"def function_{i}(value):\n    return value * {i}  # café 漢字\n"
        for i in range(60)
    }
    files["odd/latin1.txt"] = "caf\xe9 cr\xe8me\n".encode("latin-1")
    files["odd/bom_crlf.md"] = "\ufeff# Title\r\n\r\nSome text\r\n".encode()
    files["odd/special.md"] = "# Tokens\n\n<|endoftext|> is text here\n"
    files["odd/empty.py"] = ""
    files["odd/long.txt"] = "word " * 40_000 + "\n"
    repo = make_repo(tmp_path / "repo", files)
    saved = []
    for workers in (1, 2):
        cache = tmp_path / f"cache{workers}"
        engine.indexer.build_index(repo, cache_dir=cache, workers=workers)
        saved.append(store.cache_file(cache, "o200k_base").read_bytes())
    assert saved[0] == saved[1]


@pytest.mark.parametrize(
    ("cores", "expected"), [({0}, 1), ({0, 1, 2}, 3), (set(range(8)), 8), (set(range(64)), 8)]
)
def test_a_cold_index_uses_every_usable_core_up_to_the_cap(
    monkeypatch: pytest.MonkeyPatch, cores: set[int], expected: int
) -> None:
    """The default is the cores this process may run on (its affinity, not the machine's
    count), capped: each worker holds its own parser and tokenizer."""
    import engine.indexer

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: cores, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 128)
    assert engine.indexer.default_workers() == expected


def test_without_an_affinity_call_the_core_count_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    import engine.indexer

    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert engine.indexer.default_workers() == 4
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert engine.indexer.default_workers() == 1


@pytest.mark.parametrize(("workers", "expected"), [(None, 3), (1, 1), (5, 5)])
def test_the_pool_gets_the_default_worker_count_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int | None, expected: int
) -> None:
    import engine.indexer
    import engine.pool

    asked: list[int] = []
    analyse = engine.pool.analyse_batches

    def counting(root: str, batches: object, processes: int, *args: object) -> object:
        asked.append(processes)
        return analyse(root, batches, 1, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(engine.pool, "analyse_batches", counting)
    monkeypatch.setattr(engine.indexer, "usable_cores", lambda: 3)
    files = {f"pkg/mod{i}.py": f"def function_{i}():\n    return {i}\n" for i in range(60)}
    index, _ = engine.indexer.build_index(make_repo(tmp_path / "repo", files), workers=workers)
    assert asked == [expected]
    assert len(index.files) == 60
