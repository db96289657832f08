"""A warm scan keeps the files it takes from the memo as columns: they read, compare and index
exactly as the tuple of records a full scan returns."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import make_repo

from engine.indexer import build_index, has_changed
from engine.model import ScanOptions, SkippedFile, SkipReason, SourceFile
from engine.scan import scan
from engine.scan_files import ScannedFiles, columns_of, sorted_files
from engine.scan_memo import MEMO_FILE, make_memo

TREE = {
    "app.py": "def main():\n    return 1\n",
    "lib/util.py": "def helper():\n    return 2\n",
    "lib/data.py": "VALUE = 3\n",
    "docs/guide.md": "# Guide\n\nWords.\n",
    "package-lock.json": "{}\n",
}


def test_a_warm_scan_reads_as_the_tuple_a_full_scan_returns(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", TREE, git=True)
    memo = tmp_path / "cache" / MEMO_FILE
    scan(root, memo_file=memo)
    warm = scan(root, memo_file=memo).files
    full = scan(root).files
    assert isinstance(warm, ScannedFiles) and isinstance(full, tuple)
    assert warm == full and full == warm and hash(warm) == hash(full)
    assert tuple(warm) == full and list(warm) == list(full) and len(warm) == len(full)
    assert warm[0] == full[0] and warm[-1] == full[-1] and warm[1:3] == full[1:3]
    assert [f.path for f in warm] == ["app.py", "docs/guide.md", "lib/data.py", "lib/util.py"]
    assert columns_of(warm) == columns_of(full)


def test_a_warm_scan_still_sees_an_edit_and_an_untracked_file_in_their_places(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "r", TREE, git=True)
    memo = tmp_path / "cache" / MEMO_FILE
    scan(root, memo_file=memo)
    (root / "lib/util.py").write_text("def helper():\n    return 22222\n", encoding="utf-8")
    (root / "docs/new.md").write_text("# New\n", encoding="utf-8")
    warm = scan(root, memo_file=memo).files
    assert warm == scan(root).files
    assert [f.path for f in warm] == [
        "app.py",
        "docs/guide.md",
        "docs/new.md",
        "lib/data.py",
        "lib/util.py",
    ]
    assert warm[-1].size == len("def helper():\n    return 22222\n")


def test_an_unchanged_tree_reopens_from_the_columns_and_an_edit_is_read_again(
    tmp_path: Path,
) -> None:
    root = make_repo(tmp_path / "r", TREE, git=True)
    cache = tmp_path / "cache"
    build_index(root, cache_dir=cache, workers=1)
    index, report = build_index(root, cache_dir=cache, workers=1)
    assert report.parsed == () and report.reused == 4
    assert not has_changed(index, cache_dir=cache)
    (root / "lib/data.py").write_text("VALUE = 333\n", encoding="utf-8")
    assert has_changed(index, cache_dir=cache)
    _, report = build_index(root, cache_dir=cache, workers=1)
    assert report.parsed == ("lib/data.py",)


def test_files_judged_one_by_one_join_the_columns_in_path_order() -> None:
    columns = (["a.py", "c.py", "e.py"], [1, 3, 5], [10, 30, 50], ["python"] * 3)
    others = [SourceFile("f.py", 6, 60, "python"), SourceFile("b.md", 2, 20, "markdown")]
    merged = sorted_files(columns, others)
    assert merged.paths == ["a.py", "b.md", "c.py", "e.py", "f.py"]
    assert merged.sizes == [1, 2, 3, 5, 6] and merged.mtimes == [10, 20, 30, 50, 60]
    assert merged.languages == ["python", "markdown", "python", "python", "python"]
    assert columns == (["a.py", "c.py", "e.py"], [1, 3, 5], [10, 30, 50], ["python"] * 3)


def test_columns_out_of_path_order_are_sorted() -> None:
    # git lists names by their bytes: one that is not UTF-8 (kept as surrogates) sorts by
    # them, before a name Python puts first
    odd = os.fsdecode(b"\xff.txt")
    columns = ([odd, "\ue000.txt"], [1, 2], [10, 20], ["text", "text"])
    merged = sorted_files(columns, [SourceFile("a.txt", 3, 30, "text")])
    assert merged.paths == sorted([odd, "\ue000.txt", "a.txt"])
    assert merged.sizes == [3, 1, 2]


def test_a_memo_recalls_the_sure_paths_whatever_their_order() -> None:
    tracked = ["z.py", "a.py", "m.py", "lock.json", "dep/x.js"]  # not in path order
    verdicts: dict[str, SourceFile | SkippedFile] = {
        "z.py": SourceFile("z.py", 1, 10, "python"),
        "a.py": SourceFile("a.py", 2, 20, "python"),
        "m.py": SourceFile("m.py", 3, 30, "python"),
        "lock.json": SkippedFile("lock.json", SkipReason.LOCK_FILE),
    }
    unsure = frozenset({"a.py"})
    memo = make_memo("/r", "index", "rules", (), tracked, unsure, verdicts)
    recalled = memo.recall()
    assert recalled is not None
    files, skipped, nothing = recalled
    assert files == (["z.py", "m.py"], [1, 3], [10, 30], ["python", "python"])
    assert skipped == [SkippedFile("lock.json", SkipReason.LOCK_FILE)]
    assert nothing == ["dep/x.js"]


def test_a_memo_with_a_kind_it_cannot_have_written_recalls_nothing() -> None:
    verdicts: dict[str, SourceFile | SkippedFile] = {"a.py": SourceFile("a.py", 1, 1, "python")}
    memo = make_memo("/r", "index", "rules", (), ["a.py"], frozenset(), verdicts)
    memo.kinds[0] = 7  # type: ignore[index]
    assert memo.recall() is None


def test_scan_options_that_leave_files_out_give_the_same_columns(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", TREE, git=True)
    memo = tmp_path / "cache" / MEMO_FILE
    options = ScanOptions(exclude=("docs/**",))
    scan(root, options, memo_file=memo)
    warm = scan(root, options, memo_file=memo)
    assert isinstance(warm.files, ScannedFiles)
    assert warm == scan(root, options)
    assert "docs/guide.md" not in warm.files.paths
