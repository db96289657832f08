"""The index cache: warm reopen, incremental refresh, damaged caches, and no pickle on disk.

Every assertion goes through the engine's report (parsed, reused, removed, cache_notice) or the
Index itself, never through timing. An incremental index must equal a fresh build of the same
files, word for word and count for count.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import make_repo
from index_support import index_repo

from engine import indexer, store
from engine.analyse import read_source
from engine.indexer import refresh_index
from engine.model import FIELDS, Index, SkippedFile, SourceFile
from engine.rank import rank

FILES: dict[str, str | bytes] = {
    "auth/session.py": (
        "from auth.tokens import sign_token\n"
        "\n"
        "\n"
        "def open_session(user):\n"
        '    """Open a login session for a user."""\n'
        "    return sign_token(user)\n"
    ),
    "auth/tokens.py": "def sign_token(user):\n    return 'signed:' + user\n",
    "billing/invoice.py": "class Invoice:\n    def total(self):\n        return 42\n",
    "README.md": "# Shop\n\nSessions and invoices.\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root: Path = make_repo(tmp_path / "repo", FILES)
    return root


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def cache_path(cache_dir: Path) -> Path:
    return store.cache_file(cache_dir, "o200k_base")


def content(index: Index) -> dict[str, object]:
    """Everything an index says about its files, keyed by path and word (not by ids)."""
    paths = [f.path for f in index.files]
    words = {term: word for word, term in index.vocab.items()}
    postings: dict[tuple[str, str], tuple[float, ...]] = {}
    ptr = index.postings.ptr
    for term in range(len(words)):
        for k in range(int(ptr[term]), int(ptr[term + 1])):
            doc = int(index.postings.docs[k])
            postings[(words[term], paths[doc])] = tuple(index.postings.tf[k].tolist())
    lines = {
        p: index.line_tokens[index.line_tokens_ptr[i] : index.line_tokens_ptr[i + 1]].tolist()
        for i, p in enumerate(paths)
    }
    return {
        "files": index.files,
        "postings": postings,
        "body_length": dict(zip(paths, index.body_length.tolist(), strict=True)),
        "line_tokens": lines,
        "imports": {p: [paths[t] for t in index.imports[i]] for i, p in enumerate(paths)},
        "declarations": {
            (words[t], paths[f], d)
            for t, pairs in index.declaration_postings.items()
            for f, d in pairs
        },
        "roles": dict(zip(paths, index.roles.tolist(), strict=True)),
        "terms_sorted": index.terms_sorted,
    }


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
        "index-cl100k_base.npz",
        "index-o200k_base.npz",
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


# --------------------------------------------------------------------------- damaged caches


def _rewrite(
    cache: Path, edit: Callable[[dict[str, object], dict[str, np.ndarray]], None]
) -> bytes:
    """The bytes of a valid npz made from `cache` after `edit(meta, arrays)`."""
    with np.load(cache, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    meta = json.loads(bytes(arrays["meta"]).decode("utf-8"))
    edit(meta, arrays)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def _garbage(cache: Path) -> bytes:
    return b"this is not a zip file at all\n" * 40


def _truncated(cache: Path) -> bytes:
    return cache.read_bytes()[: cache.stat().st_size // 2]


def _empty(cache: Path) -> bytes:
    return b""


def _npy_not_npz(cache: Path) -> bytes:
    out = io.BytesIO()
    np.save(out, np.arange(10))
    return out.getvalue()


def _other_version(cache: Path) -> bytes:
    return _rewrite(cache, lambda meta, arrays: meta.update(version=store.VERSION - 1))


def _other_format(cache: Path) -> bytes:
    return _rewrite(cache, lambda meta, arrays: meta.update(format="something-else"))


def _pickled_array(cache: Path) -> bytes:
    def edit(meta: dict[str, object], arrays: dict[str, np.ndarray]) -> None:
        arrays["docs"] = np.array([{"evil": 1}], dtype=object)

    return _rewrite(cache, edit)


def _rows_past_the_file_list(cache: Path) -> bytes:
    def edit(meta: dict[str, object], arrays: dict[str, np.ndarray]) -> None:
        arrays["docs"] = arrays["docs"] + 1000

    return _rewrite(cache, edit)


def _line_table_mismatch(cache: Path) -> bytes:
    def edit(meta: dict[str, object], arrays: dict[str, np.ndarray]) -> None:
        arrays["line_tokens"] = arrays["line_tokens"][:-3]

    return _rewrite(cache, edit)


DAMAGES = [
    _garbage, _truncated, _empty, _npy_not_npz, _other_version, _other_format, _pickled_array,
    _rows_past_the_file_list, _line_table_mismatch,
]  # fmt: skip


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda f: f.__name__.strip("_"))
def test_damaged_cache_is_discarded_with_one_line_and_rebuilt(
    repo: Path, cache_dir: Path, damage: Callable[[Path], bytes]
) -> None:
    index_repo(repo, cache_dir=cache_dir)
    cache = cache_path(cache_dir)
    cache.write_bytes(damage(cache))
    index, report = index_repo(repo, cache_dir=cache_dir)
    assert report.cache_notice.startswith("index cache discarded")
    assert "\n" not in report.cache_notice
    assert report.parsed == tuple(sorted(FILES))
    assert content(index) == content(fresh(repo))


@pytest.mark.parametrize("damage", DAMAGES[:2], ids=lambda f: f.__name__.strip("_"))
def test_cache_rebuilt_after_damage_is_whole_again(
    repo: Path, cache_dir: Path, damage: Callable[[Path], bytes]
) -> None:
    index_repo(repo, cache_dir=cache_dir)
    cache = cache_path(cache_dir)
    cache.write_bytes(damage(cache))
    index_repo(repo, cache_dir=cache_dir)
    _, report = index_repo(repo, cache_dir=cache_dir)
    assert (report.cache_notice, report.parsed, report.reused) == ("", (), len(FILES))


def test_cache_made_for_another_folder_is_discarded(tmp_path: Path, cache_dir: Path) -> None:
    other = make_repo(tmp_path / "other", {"x.py": "def other_thing():\n    pass\n"})
    mine = make_repo(tmp_path / "mine", FILES)
    index_repo(other, cache_dir=cache_dir)  # the other folder's cache, in my cache folder
    index, report = index_repo(mine, cache_dir=cache_dir)
    assert "another folder" in report.cache_notice
    assert "\n" not in report.cache_notice
    assert [f.path for f in index.files] == sorted(FILES)
    assert "x.py" not in index.path_ids


def test_cache_copied_from_another_folder_is_discarded(tmp_path: Path) -> None:
    other = make_repo(tmp_path / "other", FILES)
    mine = make_repo(tmp_path / "mine", FILES)
    index_repo(other, cache_dir=tmp_path / "c1")
    shutil.copytree(tmp_path / "c1", tmp_path / "c2")
    index, report = index_repo(mine, cache_dir=tmp_path / "c2")
    assert "another folder" in report.cache_notice
    assert index.root == str(mine.resolve())
    assert report.parsed == tuple(sorted(FILES))


def test_cache_whose_metadata_has_the_wrong_shape_is_discarded(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    cache = cache_path(cache_dir)
    cache.write_bytes(_rewrite(cache, lambda meta, arrays: meta.update(git=[])))
    _, report = index_repo(repo, cache_dir=cache_dir)
    assert report.cache_notice.startswith("index cache discarded")


def test_cache_file_holds_no_pickle(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    with np.load(cache_path(cache_dir), allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    assert all(a.dtype != object for a in arrays.values())
    meta = json.loads(bytes(arrays["meta"]).decode("utf-8"))
    assert (meta["format"], meta["version"]) == (store.FORMAT, store.VERSION)


def test_store_load_reads_back_what_build_index_saved(repo: Path, cache_dir: Path) -> None:
    index, _ = index_repo(repo, cache_dir=cache_dir)
    cached = store.load(cache_path(cache_dir), index.root, "o200k_base")
    assert tuple(cached.files) == index.files
    assert sorted(cached.vocab) == sorted(index.vocab)
    assert np.array_equal(cached.line_tokens, index.line_tokens)
    assert np.array_equal(cached.line_tokens_ptr, index.line_tokens_ptr)
    assert len(cached.rows.docs) == len(cached.rows.terms) == len(cached.rows.counts)


def test_save_then_load_round_trips_every_field(
    repo: Path, cache_dir: Path, tmp_path: Path
) -> None:
    index, _ = index_repo(repo, cache_dir=cache_dir)
    cached = store.load(cache_path(cache_dir), index.root, "o200k_base")
    copy = tmp_path / "copy" / "index.npz"
    store.save(copy, cached)
    again = store.load(copy, index.root, "o200k_base")
    assert (again.files, again.vocab, again.skipped, again.git_head, again.git) == (
        cached.files, cached.vocab, cached.skipped, cached.git_head, cached.git,
    )  # fmt: skip
    for name in ("docs", "terms", "fields", "counts"):
        assert np.array_equal(getattr(again.rows, name), getattr(cached.rows, name))


def test_saving_leaves_no_temporary_files(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    (repo / "auth/tokens.py").write_text("def other():\n    pass\n", encoding="utf-8")
    index_repo(repo, cache_dir=cache_dir)
    assert [p.name for p in cache_dir.iterdir()] == ["index-o200k_base.npz"]


def test_store_load_of_a_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        store.load(tmp_path / "none.npz", str(tmp_path), "o200k_base")


def test_fields_are_stored_in_the_documented_column_order(repo: Path, cache_dir: Path) -> None:
    index, _ = index_repo(repo, cache_dir=cache_dir)
    assert index.postings.tf.shape[1] == len(FIELDS)
    cached = store.load(cache_path(cache_dir), index.root, "o200k_base")
    assert int(cached.rows.fields.max()) < len(FIELDS)


def test_a_binary_file_found_by_its_content_is_not_read_again_on_reopen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n", "blob.dat": b"\x00\x01" * 100})
    cache = tmp_path / "cache"
    _, first = index_repo(repo, cache_dir=cache)
    assert [s.path for s in first.skipped] == ["blob.dat"]
    import engine.indexer

    read: list[str] = []
    real = engine.indexer.analyse_file
    monkeypatch.setattr(
        engine.indexer, "analyse_file", lambda root, s, a: read.append(s.path) or real(root, s, a)
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


def _crafted_array_header(cache: Path) -> bytes:
    """A well-formed npz whose docs array claims a trillion rows in its .npy header, with
    the real rows after it: loading it as written asks for terabytes (a MemoryError on
    every run until the file is deleted)."""
    with np.load(cache, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w") as member:
                if name == "docs":
                    header = {"descr": "<i4", "fortran_order": False, "shape": (10**12,)}
                    np.lib.format.write_array_header_1_0(member, header)
                    member.write(array.astype("<i4").tobytes())
                else:
                    np.lib.format.write_array(member, array, allow_pickle=False)
    return out.getvalue()


def test_cache_with_a_crafted_array_header_is_discarded_not_allocated(
    repo: Path, cache_dir: Path
) -> None:
    index_repo(repo, cache_dir=cache_dir)
    cache = cache_path(cache_dir)
    cache.write_bytes(_crafted_array_header(cache))
    index, report = index_repo(repo, cache_dir=cache_dir)
    assert report.cache_notice.startswith("index cache discarded")
    assert report.parsed == tuple(sorted(FILES))
    assert content(index) == content(fresh(repo))
