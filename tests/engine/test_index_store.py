"""The index cache: warm reopen and incremental refresh (the file itself: test_cache_file.py).

Every assertion goes through the engine's report (parsed, reused, removed, cache_notice) or the
Index itself, never through timing. An incremental index must equal a fresh build of the same
files, word for word and count for count.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import make_repo
from index_support import SHOP as FILES
from index_support import index_content, index_repo

from engine import indexer, store
from engine.analyse import read_source
from engine.indexer import refresh_index
from engine.model import Index, SkippedFile, SourceFile
from engine.rank import rank
from engine.saved import open_saved, same_files
from engine.tables import FileTable, declaration_spans


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root: Path = make_repo(tmp_path / "repo", FILES)
    return root


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def cache_path(cache_dir: Path) -> Path:
    return store.cache_file(cache_dir, "o200k_base")


content = index_content


def fresh(repo: Path) -> Index:
    """The index of `repo` built from scratch, for comparison."""
    return index_repo(repo)[0]


def set_mtime(path: Path, shift_ns: int) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + shift_ns))


# --------------------------------------------------------------------------- warm reopen


def test_reopening_unchanged_parses_nothing_and_reuses_every_file(
    repo: Path, cache_dir: Path
) -> None:
    index_repo(repo, cache_dir=cache_dir)
    _, report = index_repo(repo, cache_dir=cache_dir)
    assert report.parsed == ()
    assert report.removed == ()
    assert report.reused == report.files == len(FILES)
    assert report.cache_notice == ""
    assert report.cache_path == str(cache_path(cache_dir))


def test_warm_index_equals_the_cold_one(repo: Path, cache_dir: Path) -> None:
    cold, _ = index_repo(repo, cache_dir=cache_dir)
    warm, _ = index_repo(repo, cache_dir=cache_dir)
    assert content(warm) == content(cold)


def test_warm_index_ranks_like_the_cold_one(repo: Path, cache_dir: Path) -> None:
    cold, _ = index_repo(repo, cache_dir=cache_dir)
    warm, _ = index_repo(repo, cache_dir=cache_dir)
    assert rank(warm, "open session token") == rank(cold, "open session token")


def test_the_saved_index_opens_alone_equal_to_the_warm_one(repo: Path, cache_dir: Path) -> None:
    assert open_saved(repo, encoding="o200k_base", cache_dir=cache_dir) is None  # no cache yet
    warm, _ = index_repo(repo, cache_dir=cache_dir)
    saved = open_saved(repo, encoding="o200k_base", cache_dir=cache_dir)
    assert saved is not None and saved.root == warm.root
    assert content(saved) == content(warm)
    assert rank(saved, "open session token") == rank(warm, "open session token")


def test_stored_declaration_spans_are_those_of_the_declarations(
    repo: Path, cache_dir: Path
) -> None:
    warm, _ = index_repo(repo, cache_dir=cache_dir)
    assert isinstance(warm.files, FileTable)
    records = tuple(warm.files)  # whole records, declarations decoded
    for file_id, parsed in enumerate(records):
        spans = [(d.kind, d.start_line, d.end_line) for d in parsed.declarations]
        assert list(declaration_spans(warm.files, file_id)) == spans
        assert list(declaration_spans(records, file_id)) == spans
    assert any(declaration_spans(warm.files, i) for i in range(len(warm.files)))


def test_the_saved_index_does_not_look_at_the_tree(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    (repo / "auth" / "login.py").write_text("def login_form(): ...\n")
    (repo / "README.md").unlink()
    saved = open_saved(repo, encoding="o200k_base", cache_dir=cache_dir)
    assert saved is not None
    assert [f.path for f in saved.files] == sorted(FILES)  # as saved: the full open sees more


def test_the_full_open_of_an_unchanged_tree_has_the_same_files_as_the_saved_index(
    repo: Path, cache_dir: Path
) -> None:
    index_repo(repo, cache_dir=cache_dir)
    saved = open_saved(repo, encoding="o200k_base", cache_dir=cache_dir)
    assert saved is not None
    assert same_files(saved, index_repo(repo, cache_dir=cache_dir)[0])


def test_an_edited_file_makes_the_full_open_differ_from_the_saved_index(
    repo: Path, cache_dir: Path
) -> None:
    index_repo(repo, cache_dir=cache_dir)
    saved = open_saved(repo, encoding="o200k_base", cache_dir=cache_dir)
    assert saved is not None
    (repo / "auth" / "login.py").write_text("def login_form(): ...\n")
    assert not same_files(saved, index_repo(repo, cache_dir=cache_dir)[0])


def test_a_touched_file_is_not_taken_as_the_saved_one(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    saved = open_saved(repo, encoding="o200k_base", cache_dir=cache_dir)
    assert saved is not None
    set_mtime(repo / "README.md", 10**9)  # same bytes, a new time: the ranking's dates moved
    assert not same_files(saved, index_repo(repo, cache_dir=cache_dir)[0])


def test_a_corrupt_cache_opens_no_saved_index_and_the_full_open_says_so(
    repo: Path, cache_dir: Path
) -> None:
    index_repo(repo, cache_dir=cache_dir)
    path = cache_path(cache_dir)
    path.write_bytes(path.read_bytes()[:100])
    assert open_saved(repo, encoding="o200k_base", cache_dir=cache_dir) is None
    assert "discarded" in index_repo(repo, cache_dir=cache_dir)[1].cache_notice


def test_without_a_cache_folder_nothing_is_written(repo: Path, tmp_path: Path) -> None:
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    _, report = index_repo(repo)
    assert report.cache_path == ""
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_each_encoding_has_its_own_cache_file(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    _, other = index_repo(repo, cache_dir=cache_dir, encoding="cl100k_base")
    _, again = index_repo(repo, cache_dir=cache_dir)
    assert other.cache_notice == "" and other.parsed == tuple(sorted(FILES))
    assert again.parsed == () and again.cache_notice == ""
    assert sorted(p.name for p in cache_dir.iterdir()) == [
        "index-cl100k_base.bin",
        "index-o200k_base.bin",
    ]


# --------------------------------------------------------------------------- incremental refresh


def test_changing_one_file_reparses_only_that_file(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    (repo / "billing/invoice.py").write_text(
        "class Invoice:\n    def refund_total(self):\n        return 0\n", encoding="utf-8"
    )
    _, report = index_repo(repo, cache_dir=cache_dir)
    assert report.parsed == ("billing/invoice.py",)
    assert report.reused == len(FILES) - 1
    assert report.removed == ()


def test_changed_file_is_ranked_by_its_new_content(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    (repo / "billing/invoice.py").write_text(
        "class Invoice:\n    def refund_total(self):\n        return 0\n", encoding="utf-8"
    )
    index, _ = index_repo(repo, cache_dir=cache_dir)
    assert [f.path for f in rank(index, "refund").files] == ["billing/invoice.py"]


def test_incremental_index_after_a_change_equals_a_fresh_build(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    (repo / "auth/tokens.py").write_text(
        "def sign_token(user, secret):\n    return secret + user\n", encoding="utf-8"
    )
    incremental, _ = index_repo(repo, cache_dir=cache_dir)
    assert content(incremental) == content(fresh(repo))


def test_adding_a_file_parses_only_it_and_ranking_finds_it(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    make_repo(repo, {"billing/coupons.py": "def apply_coupon_discount(order):\n    return order\n"})
    index, report = index_repo(repo, cache_dir=cache_dir)
    assert report.parsed == ("billing/coupons.py",)
    assert report.reused == len(FILES)
    assert rank(index, "coupon discount").files[0].path == "billing/coupons.py"
    assert content(index) == content(fresh(repo))


def test_deleting_a_file_removes_it_from_index_and_ranking(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    (repo / "billing/invoice.py").unlink()
    index, report = index_repo(repo, cache_dir=cache_dir)
    assert report.removed == ("billing/invoice.py",)
    assert report.parsed == ()
    assert "billing/invoice.py" not in index.path_ids
    assert "billing/invoice.py" not in [f.path for f in rank(index, "invoice total").files]
    assert content(index) == content(fresh(repo))


def test_words_only_a_deleted_file_had_leave_the_vocabulary(repo: Path, cache_dir: Path) -> None:
    before, _ = index_repo(repo, cache_dir=cache_dir)
    assert "invoic" in before.vocab
    (repo / "billing/invoice.py").unlink()
    (repo / "README.md").write_text("# Shop\n", encoding="utf-8")
    after, _ = index_repo(repo, cache_dir=cache_dir)
    assert "invoic" not in after.vocab
    assert "invoic" not in after.terms_sorted


def test_the_removal_is_remembered_by_the_next_reopen(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    (repo / "billing/invoice.py").unlink()
    index_repo(repo, cache_dir=cache_dir)
    _, report = index_repo(repo, cache_dir=cache_dir)
    assert (report.parsed, report.removed, report.reused) == ((), (), len(FILES) - 1)


def test_touching_a_file_without_changing_it_does_not_reparse_it(
    repo: Path, cache_dir: Path
) -> None:
    index_repo(repo, cache_dir=cache_dir)
    set_mtime(repo / "auth/session.py", 5_000_000_000)
    index, report = index_repo(repo, cache_dir=cache_dir)
    assert report.parsed == ()
    assert report.reused == len(FILES)
    assert index.files[index.path_ids["auth/session.py"]].mtime_ns == (
        (repo / "auth/session.py").stat().st_mtime_ns
    )


def test_same_size_new_content_and_new_mtime_is_reparsed(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    path = repo / "auth/tokens.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("signed:", "SIGNED:"), encoding="utf-8")
    set_mtime(path, 5_000_000_000)
    _, report = index_repo(repo, cache_dir=cache_dir)
    assert report.parsed == ("auth/tokens.py",)


def test_a_touched_file_is_hashed_once_not_on_every_reopen(
    repo: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index_repo(repo, cache_dir=cache_dir)
    set_mtime(repo / "auth/session.py", 5_000_000_000)
    index_repo(repo, cache_dir=cache_dir)  # confirms by hash: unchanged
    reads: list[str] = []

    def counting_read(root: str, source: SourceFile) -> bytes | SkippedFile:
        reads.append(source.path)
        return read_source(root, source)

    monkeypatch.setattr(indexer, "read_source", counting_read)
    index_repo(repo, cache_dir=cache_dir)
    assert reads == []


def test_refresh_index_returns_none_when_nothing_changed(repo: Path, cache_dir: Path) -> None:
    index, _ = index_repo(repo, cache_dir=cache_dir)
    assert refresh_index(index, cache_dir=cache_dir) is None


def test_refresh_index_picks_up_a_changed_file(repo: Path, cache_dir: Path) -> None:
    index, _ = index_repo(repo, cache_dir=cache_dir)
    (repo / "auth/tokens.py").write_text("def verify_token(t):\n    return t\n", encoding="utf-8")
    refreshed = refresh_index(index, cache_dir=cache_dir)
    assert refreshed is not None
    new_index, report = refreshed
    assert report.parsed == ("auth/tokens.py",)
    assert rank(new_index, "verify").files[0].path == "auth/tokens.py"


def test_a_binary_file_found_by_its_content_is_not_read_again_on_reopen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n", "blob.dat": b"\x00\x01" * 100})
    cache = tmp_path / "cache"
    _, first = index_repo(repo, cache_dir=cache)
    assert [s.path for s in first.skipped] == ["blob.dat"]
    import engine.analyse

    read: list[str] = []
    real = engine.analyse.analyse_file
    monkeypatch.setattr(
        engine.analyse, "analyse_file", lambda root, s, a: read.append(s.path) or real(root, s, a)
    )
    _, second = index_repo(repo, cache_dir=cache)
    assert read == []
    assert [s.path for s in second.skipped] == ["blob.dat"]


def test_a_file_left_out_for_its_content_does_not_count_as_a_change(tmp_path: Path) -> None:
    from engine.indexer import has_changed

    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n", "blob.dat": b"\x00\x01" * 100})
    index, _ = index_repo(repo)
    assert not has_changed(index)
    (repo / "b.py").write_text("y = 2\n")
    assert has_changed(index)


@pytest.mark.parametrize("with_cache", [False, True])
def test_a_file_left_out_for_its_content_that_becomes_text_is_picked_up(
    tmp_path: Path, with_cache: bool
) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n", "b.py": "def login(): pass\n"})
    cache = tmp_path / "cache" if with_cache else None
    index, _ = index_repo(repo, cache_dir=cache)
    (repo / "b.py").write_bytes(b"\x00\x01binary")
    refreshed = refresh_index(index, cache_dir=cache)
    assert refreshed is not None
    index = refreshed[0]
    assert "b.py" not in index.path_ids
    (repo / "b.py").write_text("def login(): pass\n")
    refreshed = refresh_index(index, cache_dir=cache)
    assert refreshed is not None, "the file came back as text: the refresh must see it"
    assert "b.py" in refreshed[0].path_ids


def test_a_tracked_file_deleted_then_restored_is_picked_up(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n", "b.py": "def login(): pass\n"}, git=True)
    cache = tmp_path / "cache"
    index, _ = index_repo(repo, cache_dir=cache)
    (repo / "b.py").unlink()  # git still lists it: the scan skips it as vanished
    refreshed = refresh_index(index, cache_dir=cache)
    assert refreshed is not None
    index = refreshed[0]
    assert "b.py" not in index.path_ids
    (repo / "b.py").write_text("def login(): pass\n")  # `git checkout b.py`
    refreshed = refresh_index(index, cache_dir=cache)
    assert refreshed is not None, "the file is back: the refresh must see it"
    assert "b.py" in refreshed[0].path_ids


def test_reopening_an_unchanged_tree_rebuilds_nothing_and_decodes_no_record(
    repo: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engine.indexer
    import engine.tables

    index_repo(repo, cache_dir=cache_dir)

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("a warm reopen must map the cache, not rebuild it")

    decoded: list[bytes] = []  # records decoded, whole or their outline (spans and names)
    real_decode, real_outline = engine.tables.decode_declarations, engine.tables.decode_outline
    monkeypatch.setattr(engine.indexer, "assemble", forbidden)
    monkeypatch.setattr(engine.indexer.store, "save", forbidden)
    monkeypatch.setattr(
        engine.tables, "decode_declarations", lambda data: decoded.append(data) or real_decode(data)
    )
    monkeypatch.setattr(
        engine.tables, "decode_outline", lambda data: decoded.append(data) or real_outline(data)
    )
    index, report = index_repo(repo, cache_dir=cache_dir)
    assert (report.parsed, report.reused) == ((), len(FILES))
    assert decoded == []
    ranking = rank(index, "invoice total")
    assert ranking.files[0].path == "billing/invoice.py"
    assert decoded == []  # a ranking works out its evidence when it is read
    assert ranking.files[0].reasons
    assert 0 < len(decoded) < len(FILES)  # only files whose declarations match the question


def test_a_record_damaged_inside_the_cache_removes_it_and_the_next_open_rebuilds(
    tmp_path: Path,
) -> None:
    from engine.errors import DamagedCache

    files = {"pkg/a.py": "from pkg.b import helper\n", "pkg/b.py": "def helper():\n    pass\n"}
    repo = make_repo(tmp_path / "r", files)
    cache = tmp_path / "cache"
    index_repo(repo, cache_dir=cache)
    path = cache_path(cache)
    data = path.read_bytes()
    assert data.count(b'[["pkg.b') == 1  # a.py's imports, one JSON document
    path.write_bytes(data.replace(b'[["pkg.b', b"[[xpkg.b"))  # the same size: it loads
    index, _ = index_repo(repo, cache_dir=cache)
    with pytest.raises(DamagedCache, match="damaged"):
        tuple(index.files[index.path_ids["pkg/a.py"]].imports)
    assert not path.exists()
    index, report = index_repo(repo, cache_dir=cache)
    assert set(report.parsed) == set(files)
    assert [i.targets for i in index.files[index.path_ids["pkg/a.py"]].imports] == [("pkg/b.py",)]
