"""The cache file: plain arrays under a JSON header, written atomically, and every damaged,
foreign, old or crafted file discarded with a one-line notice and rebuilt, never a crash.
"""

from __future__ import annotations

import io
import json
import shutil
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import make_repo
from index_support import SHOP as FILES
from index_support import index_content, index_repo

from engine import store
from engine.assemble import open_index
from engine.model import FIELDS, Index


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root: Path = make_repo(tmp_path / "repo", FILES)
    return root


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def cache_path(cache_dir: Path) -> Path:
    return store.cache_file(cache_dir, "o200k_base")


def fresh(repo: Path) -> Index:
    return index_repo(repo)[0]


# --------------------------------------------------------------------------- damage


def _split(raw: bytes) -> tuple[dict[str, object], bytes]:
    """A cache file's header and the bytes of its arrays (offsets count from their start)."""
    (size,) = struct.unpack("<Q", raw[len(store.MAGIC) : len(store.MAGIC) + 8])
    header = json.loads(raw[len(store.MAGIC) + 8 : len(store.MAGIC) + 8 + size])
    start = -(-(len(store.MAGIC) + 8 + size) // store.ALIGN) * store.ALIGN
    return header, raw[start:]


def _join(header: dict[str, object], body: bytes) -> bytes:
    text = json.dumps(header).encode("ascii")
    head = store.MAGIC + struct.pack("<Q", len(text)) + text
    return head + b"\0" * (-len(head) % store.ALIGN) + body


def _edit_header(cache: Path, edit: Callable[[dict[str, object]], None]) -> bytes:
    header, body = _split(cache.read_bytes())
    edit(header)
    return _join(header, body)


def _edit_arrays(cache: Path, edit: Callable[[dict[str, np.ndarray]], None]) -> bytes:
    """The bytes of a well-formed file whose arrays were changed by `edit`."""
    header, body = _split(cache.read_bytes())
    directory = header["arrays"]
    assert isinstance(directory, dict)
    arrays = {}
    for name, (dtype, _, _) in store.SCHEMA.items():
        shape, offset = directory[name]
        count = int(np.prod(shape))
        arrays[name] = np.frombuffer(body, dtype=dtype, count=count, offset=offset).reshape(shape)
    arrays = {name: array.copy() for name, array in arrays.items()}
    edit(arrays)
    offset = 0
    out = io.BytesIO()
    for name, array in arrays.items():
        directory[name] = [list(array.shape), offset]
        data = np.ascontiguousarray(array, dtype=store.SCHEMA[name][0]).tobytes()
        out.write(data + b"\0" * (-len(data) % store.ALIGN))
        offset += len(data) + (-len(data) % store.ALIGN)
    return _join(header, out.getvalue())


def _garbage(cache: Path) -> bytes:
    return b"this is not an index at all\n" * 40


def _truncated(cache: Path) -> bytes:
    return cache.read_bytes()[: cache.stat().st_size // 2]


def _empty(cache: Path) -> bytes:
    return b""


def _old_npz_format(cache: Path) -> bytes:
    out = io.BytesIO()
    np.savez(out, meta=np.frombuffer(b'{"format": "ctxtui-index"}', np.uint8))
    return out.getvalue()


def _other_version(cache: Path) -> bytes:
    return _edit_header(cache, lambda h: h.update(version=store.VERSION - 1))


def _other_format(cache: Path) -> bytes:
    return _edit_header(cache, lambda h: h.update(format="something-else"))


def _header_not_json(cache: Path) -> bytes:
    raw = cache.read_bytes()
    return raw[: len(store.MAGIC) + 8] + b"\xff{" + raw[len(store.MAGIC) + 10 :]


def _array_missing(cache: Path) -> bytes:
    return _edit_header(cache, lambda h: h["arrays"].pop("post_docs"))  # type: ignore[attr-defined]


def _array_past_the_end(cache: Path) -> bytes:
    def edit(header: dict[str, object]) -> None:
        header["arrays"]["post_tf"][1] += 1 << 30  # type: ignore[index]

    return _edit_header(cache, edit)


def _unaligned_array(cache: Path) -> bytes:
    def edit(header: dict[str, object]) -> None:
        header["arrays"]["edges"][1] += 4  # type: ignore[index]

    return _edit_header(cache, edit)


def _rows_past_the_file_list(cache: Path) -> bytes:
    return _edit_arrays(cache, lambda a: a.update(post_docs=a["post_docs"] + 1000))


def _line_table_mismatch(cache: Path) -> bytes:
    return _edit_arrays(cache, lambda a: a.update(line_tokens=a["line_tokens"][:-3]))


def _offsets_out_of_order(cache: Path) -> bytes:
    return _edit_arrays(cache, lambda a: a.update(vocab_ptr=a["vocab_ptr"][::-1].copy()))


def _declaration_past_its_file(cache: Path) -> bytes:
    return _edit_arrays(cache, lambda a: a.update(decl_positions=a["decl_positions"] + 50))


def _negative_row(cache: Path) -> bytes:
    def edit(arrays: dict[str, np.ndarray]) -> None:
        docs = arrays["post_docs"].copy()
        docs[len(docs) // 2] = -1  # read unsigned by the check: past every file
        arrays["post_docs"] = docs

    return _edit_arrays(cache, edit)


def _negative_declaration_position(cache: Path) -> bytes:
    def edit(arrays: dict[str, np.ndarray]) -> None:
        positions = arrays["decl_positions"].copy()
        positions[-1] = -(1 << 31)
        arrays["decl_positions"] = positions

    return _edit_arrays(cache, edit)


def _negative_declaration_word(cache: Path) -> bytes:
    return _edit_arrays(cache, lambda a: a.update(unit_terms=a["unit_terms"] - 1 - a["unit_terms"]))


def _role_out_of_range(cache: Path) -> bytes:
    return _edit_arrays(cache, lambda a: a.update(roles=a["roles"] + 100))


def _metadata_of_the_wrong_shape(cache: Path) -> bytes:
    return _edit_header(cache, lambda h: h.update(sniffed=7))


DAMAGES = [
    _garbage, _truncated, _empty, _old_npz_format, _other_version, _other_format,
    _header_not_json, _array_missing, _array_past_the_end, _unaligned_array,
    _rows_past_the_file_list, _line_table_mismatch, _offsets_out_of_order,
    _declaration_past_its_file, _role_out_of_range, _metadata_of_the_wrong_shape,
    _negative_row, _negative_declaration_position, _negative_declaration_word,
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
    if damage is _header_not_json:  # bytes that do not decode: no matter of permissions
        assert "(damaged: " in report.cache_notice and "unreadable" not in report.cache_notice
    assert report.parsed == tuple(sorted(FILES))
    assert index_content(index) == index_content(fresh(repo))


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


def test_cache_claiming_a_trillion_rows_is_discarded_without_allocating(
    repo: Path, cache_dir: Path
) -> None:
    """A crafted header once made numpy allocate terabytes (MemoryError on every run)."""
    index_repo(repo, cache_dir=cache_dir)
    cache = cache_path(cache_dir)

    def edit(header: dict[str, object]) -> None:
        header["arrays"]["post_docs"][0] = [10**12]  # type: ignore[index]

    cache.write_bytes(_edit_header(cache, edit))
    index, report = index_repo(repo, cache_dir=cache_dir)
    assert report.cache_notice == "index cache discarded (truncated); rebuilt from scratch"
    assert index_content(index) == index_content(fresh(repo))


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


# --------------------------------------------------------------------------- the format


def test_cache_file_is_plain_arrays_under_a_json_header(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    raw = cache_path(cache_dir).read_bytes()
    assert raw.startswith(store.MAGIC)
    header, _ = _split(raw)
    assert (header["format"], header["version"]) == (store.FORMAT, store.VERSION)
    assert sorted(header["arrays"]) == sorted(store.SCHEMA)  # type: ignore[arg-type]
    assert all(np.dtype(dtype).kind in "iuf" for dtype, _, _ in store.SCHEMA.values())


def test_arrays_of_a_loaded_cache_are_read_only_maps_of_the_file(
    repo: Path, cache_dir: Path
) -> None:
    index, _ = index_repo(repo, cache_dir=cache_dir)
    stored = store.load(cache_path(cache_dir), index.root, "o200k_base")
    assert not stored.arrays["post_docs"].flags.writeable
    assert index_content(open_index(stored, index.skipped)) == index_content(index)


def test_save_then_load_round_trips_every_array(
    repo: Path, cache_dir: Path, tmp_path: Path
) -> None:
    index, _ = index_repo(repo, cache_dir=cache_dir)
    stored = store.load(cache_path(cache_dir), index.root, "o200k_base")
    copy = tmp_path / "copy" / "index.bin"
    store.save(copy, stored)
    again = store.load(copy, index.root, "o200k_base")
    assert (again.languages, again.sniffed, again.git_head) == (
        stored.languages, stored.sniffed, stored.git_head
    )  # fmt: skip
    for name in store.SCHEMA:
        assert np.array_equal(
            again.arrays[name], stored.arrays[name], equal_nan=name == "git_last"
        ), name


def test_saving_leaves_no_temporary_files(repo: Path, cache_dir: Path) -> None:
    index_repo(repo, cache_dir=cache_dir)
    (repo / "auth/tokens.py").write_text("def other():\n    pass\n", encoding="utf-8")
    index_repo(repo, cache_dir=cache_dir)
    assert [p.name for p in cache_dir.iterdir()] == ["index-o200k_base.bin"]


def test_a_cache_of_the_old_format_is_replaced_and_removed(repo: Path, cache_dir: Path) -> None:
    cache_dir.mkdir()
    (cache_dir / "index-o200k_base.npz").write_bytes(_old_npz_format(cache_dir))
    index_repo(repo, cache_dir=cache_dir)
    assert [p.name for p in cache_dir.iterdir()] == ["index-o200k_base.bin"]


def test_store_load_of_a_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        store.load(tmp_path / "none.bin", str(tmp_path), "o200k_base")


def test_a_cache_loaded_by_a_thread_gives_what_load_gives_or_raises_it(
    repo: Path, cache_dir: Path, tmp_path: Path
) -> None:
    index, _ = index_repo(repo, cache_dir=cache_dir)
    loaded = store.Loading(cache_path(cache_dir), index.root, "o200k_base").result()
    assert index_content(open_index(loaded, index.skipped)) == index_content(index)
    with pytest.raises(FileNotFoundError):
        store.Loading(tmp_path / "none.bin", index.root, "o200k_base").result()
    (tmp_path / "bad.bin").write_bytes(b"not a cache")
    with pytest.raises(store.StaleCache, match="not a ctxtui index"):
        store.Loading(tmp_path / "bad.bin", index.root, "o200k_base").result()


def test_fields_are_stored_in_the_documented_column_order(repo: Path, cache_dir: Path) -> None:
    index, _ = index_repo(repo, cache_dir=cache_dir)
    stored = store.load(cache_path(cache_dir), index.root, "o200k_base")
    assert stored.arrays["post_tf"].shape[1] == len(FIELDS)
    body = stored.arrays["post_tf"][:, FIELDS.index("body")]
    assert int(body.sum()) == int(index.body_length.sum())
