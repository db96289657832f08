"""The scan's memo of tracked files: a warm scan trusts git for unchanged files, and still
notices every edit, addition, deletion, rename, new ignore rule and broken git."""

from __future__ import annotations

import importlib
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import make_repo

from engine.gitcmd import finish_git
from engine.indexer import build_index
from engine.model import ScanOptions, SkipReason
from engine.scan import scan
from engine.scan_memo import MEMO_FILE

scan_module = importlib.import_module("engine.scan")  # `engine.scan` is also a function
scan_memo_module = importlib.import_module("engine.scan_memo")

TREE: dict[str, str | bytes] = {
    ".gitignore": "*.log\n",
    "app.py": "def main():\n    return 1\n",
    "lib/util.py": "def helper():\n    return 2\n",
    "lib/data.py": "VALUE = 3\n",
    "docs/guide.md": "# Guide\n\nWords.\n",
    "node_modules/dep/index.js": "module.exports = 1\n",
    "package-lock.json": "{}\n",
    ".env": "TOKEN=x\n",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "r", TREE, git=True)


def later(path: Path) -> None:
    """Give a file an mtime two seconds on, as an edit a moment later would."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def lstat_counter(monkeypatch: pytest.MonkeyPatch, root: Path) -> list[str]:
    """Note every lstat of a path under `root` (the root's own, resolving it, is not noted)."""
    seen: list[str] = []
    real = os.lstat
    inside = str(root) + os.sep

    def counting(path: str | os.PathLike[str]) -> os.stat_result:
        if os.fspath(path).startswith(inside):
            seen.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "lstat", counting)
    return seen


def assert_same_as_a_full_scan(
    root: Path, memo: Path, options: ScanOptions = ScanOptions()
) -> None:
    remembered = scan(root, options, memo_file=memo)
    full = scan(root, options)
    assert remembered == full


def test_a_second_scan_stats_no_unchanged_tracked_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    first = scan(root, memo_file=memo)
    assert memo.is_file()
    seen = lstat_counter(monkeypatch, root)
    second = scan(root, memo_file=memo)
    assert seen == []
    assert second == first == scan(root)


def edit_same_size(root: Path) -> None:
    (root / "app.py").write_text("def mine():\n    return 1\n", encoding="utf-8")
    later(root / "app.py")


def edit_new_size(root: Path) -> None:
    (root / "lib/util.py").write_text("def helper():\n    return 22222\n", encoding="utf-8")


def add_untracked(root: Path) -> None:
    (root / "lib/new.py").write_text("NEW = 1\n", encoding="utf-8")


def delete_tracked(root: Path) -> None:
    (root / "lib/data.py").unlink()


def rename_by_hand(root: Path) -> None:
    (root / "lib/data.py").rename(root / "lib/values.py")


def rename_with_git(root: Path) -> None:
    git(root, "mv", "lib/data.py", "lib/values.py")


def stage_an_edit(root: Path) -> None:
    (root / "app.py").write_text("def staged():\n    return 1\n", encoding="utf-8")
    later(root / "app.py")
    git(root, "add", "app.py")


def commit_a_new_file(root: Path) -> None:
    (root / "lib/more.py").write_text("MORE = 1\n", encoding="utf-8")
    git(root, "add", "lib/more.py")
    git(root, "commit", "-q", "-m", "more")


def ignore_a_tracked_file_with_ctxtuiignore(root: Path) -> None:
    (root / ".ctxtuiignore").write_text("lib/data.py\n", encoding="utf-8")


def ignore_an_untracked_file_with_gitignore(root: Path) -> None:
    (root / "notes.txt").write_text("x\n", encoding="utf-8")
    scan(root, memo_file=root.parent / "cache" / MEMO_FILE)  # remembered while listed
    (root / ".gitignore").write_text("*.log\nnotes.txt\n", encoding="utf-8")


def grow_past_the_size_limit(root: Path) -> None:
    (root / "lib/data.py").write_text("V = 1\n" * 400_000, encoding="utf-8")


def replace_a_file_with_a_link(root: Path) -> None:
    (root / "lib/data.py").unlink()
    (root / "lib/data.py").symlink_to("../app.py")


CHANGES: dict[str, Callable[[Path], None]] = {
    "edited, same size": edit_same_size,
    "edited, new size": edit_new_size,
    "added, untracked": add_untracked,
    "deleted": delete_tracked,
    "renamed by hand": rename_by_hand,
    "renamed with git": rename_with_git,
    "edited and staged": stage_an_edit,
    "added and committed": commit_a_new_file,
    "newly ignored by .ctxtuiignore": ignore_a_tracked_file_with_ctxtuiignore,
    "newly ignored by .gitignore": ignore_an_untracked_file_with_gitignore,
    "grown too large": grow_past_the_size_limit,
    "replaced by a link": replace_a_file_with_a_link,
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_every_change_is_noticed_as_a_full_scan_would(
    tmp_path: Path, change: Callable[[Path], None]
) -> None:
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    before = scan(root, memo_file=memo)
    change(root)
    assert_same_as_a_full_scan(root, memo)
    assert scan(root, memo_file=memo) != before
    assert_same_as_a_full_scan(root, memo)  # and the memo it left holds too


def test_a_file_added_in_a_left_out_folder_changes_nothing(tmp_path: Path) -> None:
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    before = scan(root, memo_file=memo)
    (root / "node_modules/dep/more.js").write_text("x\n", encoding="utf-8")
    (root / "vendor/lib.go").parent.mkdir()
    (root / "vendor/lib.go").write_text("package lib\n", encoding="utf-8")
    assert_same_as_a_full_scan(root, memo)
    after = scan(root, memo_file=memo)
    assert after.files == before.files
    assert {s.path: s.reason for s in after.skipped}["vendor"] is SkipReason.DEPENDENCY_DIR


def test_an_edit_the_memo_saw_is_judged_again_once_reverted(tmp_path: Path) -> None:
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    scan(root, memo_file=memo)
    path = root / "lib/util.py"
    original = path.read_bytes()
    path.write_text("# edited, not committed\n", encoding="utf-8")
    git(root, "add", "-A")  # a new git index: the memo is made again with this edit seen
    git(root, "reset", "-q")
    scan(root, memo_file=memo)
    path.write_bytes(original)
    later(path)
    assert_same_as_a_full_scan(root, memo)


def test_changed_options_do_not_use_the_memo_of_others(tmp_path: Path) -> None:
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    scan(root, memo_file=memo)
    options = ScanOptions(max_bytes=10, exclude=("docs/",))
    assert_same_as_a_full_scan(root, memo, options)
    report = scan(root, options, memo_file=memo)
    assert {s.path: s.reason for s in report.skipped}["docs"] is SkipReason.EXCLUDED


def test_a_link_whose_target_changes_is_judged_again(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "link.py").symlink_to("app.py")
    git(root, "add", "link.py")
    git(root, "commit", "-q", "-m", "link")
    memo = tmp_path / "cache" / MEMO_FILE
    scan(root, memo_file=memo)
    (root / "app.py").write_text("def main():\n    return 'a longer body'\n", encoding="utf-8")
    git(root, "add", "app.py")  # the link itself stays clean in git's eyes
    git(root, "commit", "-q", "-m", "longer")
    scan(root, memo_file=memo)
    (root / "app.py").write_text("x\n", encoding="utf-8")
    assert_same_as_a_full_scan(root, memo)


@pytest.mark.parametrize("content", [b"", b"{not json", b'{"version": 1}', b"\xff\xfe"])
def test_a_corrupt_memo_is_ignored_and_replaced(tmp_path: Path, content: bytes) -> None:
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    memo.parent.mkdir()
    memo.write_bytes(content)
    assert_same_as_a_full_scan(root, memo)
    assert memo.read_bytes() != content


@pytest.mark.parametrize("damage", ["truncated", "labels out of range", "unknown kinds"])
def test_a_damaged_memo_is_ignored_and_replaced(tmp_path: Path, damage: str) -> None:
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    scan(root, memo_file=memo)
    data = bytearray(memo.read_bytes())
    tracked = len(TREE)
    if damage == "truncated":
        del data[-3:]
    elif damage == "labels out of range":  # the last column: one unsigned long a file
        data[-8 * tracked :] = b"\xff" * (8 * tracked)
    else:  # the first column, after the header and the paths: one byte a file
        labels, mtimes, numbers = 8 * tracked, 8 * tracked, 8 * tracked
        start = len(data) - labels - mtimes - numbers - tracked
        data[start : start + tracked] = b"\x07" * tracked
    memo.write_bytes(bytes(data))
    assert_same_as_a_full_scan(root, memo)
    assert memo.read_bytes() != bytes(data)


def test_a_corrupt_git_index_falls_back_to_the_walk(tmp_path: Path) -> None:
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    scan(root, memo_file=memo)
    (root / ".git/index").write_bytes(b"DIRC garbage")
    report = scan(root, memo_file=memo)
    assert not report.is_git
    assert report.files == scan(root, ScanOptions(use_git=False)).files


def test_missing_git_falls_back_to_the_walk_with_a_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    scan(root, memo_file=memo)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    report = scan(root, memo_file=memo)
    assert not report.is_git
    assert [f.path for f in report.files] == [
        ".gitignore",
        "app.py",
        "docs/guide.md",
        "lib/data.py",
        "lib/util.py",
    ]


def test_a_sub_folder_root_keeps_its_own_paths(tmp_path: Path) -> None:
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    scan(root / "lib", memo_file=memo)
    (root / "lib/util.py").write_text("changed = True\n", encoding="utf-8")
    (root / "app.py").write_text("outside = True\n", encoding="utf-8")
    assert_same_as_a_full_scan(root / "lib", memo)


def test_build_index_keeps_the_memo_in_the_cache_folder_and_sees_edits(tmp_path: Path) -> None:
    root = repo(tmp_path)
    cache = tmp_path / "cache"
    build_index(root, cache_dir=cache, workers=1)
    assert (cache / MEMO_FILE).is_file()
    (root / "lib/util.py").write_text("def renamed_helper():\n    return 2\n", encoding="utf-8")
    index, report = build_index(root, cache_dir=cache, workers=1)
    assert report.parsed == ("lib/util.py",)
    names = [d.name for d in index.files[index.path_ids["lib/util.py"]].declarations]
    assert names == ["renamed_helper"]


def memo_then_edit(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A repository scanned with a memo, then lib/util.py edited (new size, a moment later)."""
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    scan(root, memo_file=memo)
    edited = root / "lib/util.py"
    edited.write_text("def helper():\n    return 'a longer body now'\n", encoding="utf-8")
    later(edited)
    return root, memo, edited


def test_a_git_command_that_rewrites_the_index_mid_scan_leaves_no_stale_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, memo, edited = memo_then_edit(tmp_path)
    real = scan_module.start_git

    def add_first(where: str | Path, *args: str) -> Any:
        # `git add` lands just before diff-files reads the index: it then finds the edited
        # file clean, though the memo was made for the index before the edit
        if "diff-files" in args:
            git(root, "add", "lib/util.py")
        return real(where, *args)

    monkeypatch.setattr(scan_module, "start_git", add_first)
    remembered = scan(root, memo_file=memo)
    monkeypatch.setattr(scan_module, "start_git", real)
    assert remembered == scan(root)
    size = {f.path: f.size for f in remembered.files}["lib/util.py"]
    assert size == edited.stat().st_size


def test_a_file_diff_files_could_not_stat_is_judged_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, memo, _edited = memo_then_edit(tmp_path)
    real = scan_module.finish_git

    def as_if_unreadable(process: Any, *, silent: bool = False) -> bytes | None:
        # git's answer for a folder it may not enter (root may enter any, so it is acted):
        # "lib/util.py: Permission denied" on stderr, the path left out, exit status 0
        stdout = real(process)
        if stdout is None or "diff-files" not in process.args:
            return stdout
        return None if silent else stdout.replace(b"lib/util.py\0", b"")

    monkeypatch.setattr(scan_module, "finish_git", as_if_unreadable)
    remembered = scan(root, memo_file=memo)
    monkeypatch.setattr(scan_module, "finish_git", real)
    assert remembered == scan(root)


def test_a_memo_made_by_other_code_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    memo = tmp_path / "cache" / MEMO_FILE
    scan(root, memo_file=memo)
    # another release (or another installed copy sharing the cache) judges files its own way
    monkeypatch.setattr(scan_memo_module, "code_identity", lambda: b"other code")
    seen = lstat_counter(monkeypatch, root)
    assert scan(root, memo_file=memo) == scan(root)
    assert "app.py" in {Path(p).name for p in seen}  # judged anew, not taken from the memo


def test_finish_git_when_silent_refuses_an_answer_with_complaints() -> None:
    def run() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            ["sh", "-c", "printf 'a.py\\0'; echo 'b.py: Permission denied' >&2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    assert finish_git(run()) == b"a.py\0"
    assert finish_git(run(), silent=True) is None


def git_answer(root: Path) -> str:
    """Where `git rev-parse` says the git index of `root` is."""
    found = subprocess.run(
        ["git", "rev-parse", "--git-path", "index"], cwd=root, check=True, capture_output=True
    )
    return os.path.join(root, found.stdout.decode().strip())


def test_the_index_of_a_plain_clone_is_found_without_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = repo(tmp_path)
    expected = git_answer(root)
    monkeypatch.setattr(scan_memo_module, "git_output", lambda *a: pytest.fail("git asked"))
    found = scan_memo_module.index_path(str(root))
    assert found is not None and os.path.samefile(found, expected)


def test_a_git_folder_git_passes_over_is_left_to_git(tmp_path: Path) -> None:
    # an empty `.git` folder (or one with a HEAD but no objects) is not a repository: git
    # goes on up to the parent's, and so must the memo, or it would vouch by the wrong index
    root = repo(tmp_path)
    inner = root / "lib"
    (inner / ".git").mkdir()
    assert scan_memo_module.index_path(str(inner)) == git_answer(inner)
    (inner / ".git/HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    assert scan_memo_module.index_path(str(inner)) == git_answer(inner)
    assert git_answer(inner) == os.path.join(inner, "../.git/index")
    memo = tmp_path / "cache" / MEMO_FILE
    scan(inner, memo_file=memo)
    edited = inner / "util.py"
    edited.write_text("changed = True\n", encoding="utf-8")
    later(edited)
    git(root, "add", "lib/util.py")  # the parent's index changes; the memo's must not stand
    assert_same_as_a_full_scan(inner, memo)


def test_a_worktree_s_index_is_the_one_git_names(tmp_path: Path) -> None:
    root = repo(tmp_path)
    git(root, "commit", "-q", "--allow-empty", "-m", "base")
    git(root, "worktree", "add", "-q", str(tmp_path / "wt"))
    found = scan_memo_module.index_path(str(tmp_path / "wt"))
    assert found is not None and os.path.samefile(found, root / ".git/worktrees/wt/index")
