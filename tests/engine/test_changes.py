"""Reading the work tree's changes from real git repositories, and fitting their diff."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import make_repo

from engine import UsageError
from engine.changes import ChangeStatus, read_changes
from engine.diff_section import fit_changes
from engine.errors import GitError


class CharCounter:
    """Counts a token per four characters: enough to test fitting without the tokenizer."""

    name = "chars"

    def count(self, text: str) -> int:
        return -(-len(text) // 4)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def worked_on(tmp_path: Path) -> Path:
    """A repository with one change of every kind in its work tree."""
    files: dict[str, str | bytes] = {
        "src/app.py": "".join(f"line {n}\n" for n in range(1, 41)),
        "src/old_name.py": "def kept():\n    return 'same content'\n" * 3,
        "notes.txt": "to be deleted\n",
        "logo.png": b"\x89PNG\x00\x01\x02",
    }
    root = make_repo(tmp_path / "repo", files, git=True)
    lines = [f"line {n}\n" for n in range(1, 41)]
    lines[2] = "line three, changed\n"
    lines[35] = "line thirty-six, changed\n"
    (root / "src" / "app.py").write_text("".join(lines))  # modified: two hunks
    git(root, "mv", "src/old_name.py", "src/new_name.py")  # renamed
    (root / "notes.txt").unlink()  # deleted
    (root / "logo.png").write_bytes(b"\x89PNG\x00\x09\x09\x09")  # binary change
    (root / "src" / "added.py").write_text("def added():\n    pass\n")
    git(root, "add", "src/added.py")  # added (staged)
    (root / "scratch.py").write_text("print('untracked')\n")  # untracked
    (root / ".gitignore").write_text("*.log\n")
    (root / "debug.log").write_text("ignored\n")
    return root


def test_every_kind_of_change_is_read_with_its_status(worked_on: Path) -> None:
    changes = read_changes(worked_on)
    assert changes is not None
    statuses = {f.path: f.status for f in changes.files}
    assert statuses == {
        ".gitignore": ChangeStatus.UNTRACKED,
        "logo.png": ChangeStatus.MODIFIED,
        "notes.txt": ChangeStatus.DELETED,
        "scratch.py": ChangeStatus.UNTRACKED,
        "src/added.py": ChangeStatus.ADDED,
        "src/app.py": ChangeStatus.MODIFIED,
        "src/new_name.py": ChangeStatus.RENAMED,
    }
    by_path = {f.path: f for f in changes.files}
    assert by_path["src/new_name.py"].old_path == "src/old_name.py"
    assert by_path["logo.png"].binary and not by_path["logo.png"].hunks
    assert len(by_path["src/app.py"].hunks) == 2
    assert "+line three, changed" in by_path["src/app.py"].hunks[0]
    assert by_path["scratch.py"].hunks == ("@@ -0,0 +1,1 @@\n+print('untracked')\n",)
    assert "-to be deleted" in by_path["notes.txt"].hunks[0]
    assert "debug.log" not in statuses  # ignored files are not changes
    assert "notes.txt" not in changes.present and "scratch.py" in changes.present


def test_a_clean_work_tree_has_no_changes(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "clean", {"a.py": "x = 1\n"}, git=True)
    changes = read_changes(root)
    assert changes is not None and changes.files == ()


def test_outside_git_there_are_no_changes_to_read(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "plain", {"a.py": "x = 1\n"})
    assert read_changes(root) is None


def test_a_repository_without_commits_shows_everything_as_new(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "fresh", {"a.py": "x = 1\n"})
    git(root, "init", "-q")
    changes = read_changes(root)
    assert changes is not None
    assert [(f.path, f.status) for f in changes.files] == [("a.py", ChangeStatus.UNTRACKED)]


def test_a_base_branch_diffs_from_the_merge_base(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "branches", {"a.py": "x = 1\n", "b.py": "y = 1\n"}, git=True)
    git(root, "checkout", "-q", "-b", "feature")
    (root / "a.py").write_text("x = 2\n")
    git(root, "commit", "-qam", "feature work")
    git(root, "checkout", "-q", "main")
    (root / "b.py").write_text("y = 2\n")
    git(root, "commit", "-qam", "main moved on")
    git(root, "checkout", "-q", "feature")
    changes = read_changes(root, "main")
    assert changes is not None and changes.base == "main"
    assert [f.path for f in changes.files] == ["a.py"]  # not b.py: main's own later work


def test_an_unknown_base_is_a_usage_error(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x = 1\n"}, git=True)
    with pytest.raises(UsageError, match="unknown base 'no-such-branch'"):
        read_changes(root, "no-such-branch")
    with pytest.raises(UsageError, match="unknown base"):
        read_changes(root, "--output=/tmp/x")


def test_a_git_that_fails_in_the_work_tree_is_an_error_not_no_changes(worked_on: Path) -> None:
    # session 33: a damaged index made `git diff` fail and read_changes answer "no changes"
    (worked_on / ".git" / "index").write_bytes(b"garbage")
    with pytest.raises(GitError) as raised:
        read_changes(worked_on)
    assert str(raised.value) == (
        "git diff failed, so the changes are unknown: .git/index: index file smaller than expected"
    )


def test_a_head_whose_commit_is_missing_is_an_error_not_every_file_added(tmp_path: Path) -> None:
    # session 33: HEAD naming a commit git cannot read was taken for "no commit yet": the
    # diff against the empty tree listed every file as added
    root = make_repo(tmp_path / "r", {"a.py": "x = 1\n", "b.py": "y = 1\n"}, git=True)
    branch = subprocess.run(
        ["git", "symbolic-ref", "--short", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    (root / ".git" / "refs" / "heads" / branch).write_text("0123456789" * 4 + "\n")
    with pytest.raises(GitError) as raised:
        read_changes(root)
    assert str(raised.value) == (
        "git cannot read HEAD's commit 012345678901 (missing or damaged), so the changes are"
        " unknown"
    )
    unborn = tmp_path / "unborn"
    unborn.mkdir()
    git(unborn, "init", "-q")
    (unborn / "a.py").write_text("x = 1\n")
    changes = read_changes(unborn)  # no commit yet: every file is new, rightly
    assert changes is not None and [f.path for f in changes.files] == ["a.py"]


def test_a_repository_git_refuses_is_an_error_not_outside_git(tmp_path: Path) -> None:
    # session 33: a repository git refuses to read (a broken .git/config here; one owned by
    # another user, "dubious ownership", alike) was said to be "not in a git work tree"
    root = make_repo(tmp_path / "r", {"a.py": "x = 1\n"}, git=True)
    (root / ".git" / "config").write_text("[core\nbroken")
    with pytest.raises(GitError) as raised:
        read_changes(root)
    assert str(raised.value) == (
        "git rev-parse failed, so the changes are unknown: bad config line 1 in file .git/config"
    )
    assert read_changes(make_repo(tmp_path / "plain", {"a.py": "x = 1\n"})) is None
    sound = make_repo(tmp_path / "sound", {"a.py": "x = 1\n"}, git=True)
    assert read_changes(sound / ".git") is None  # inside .git: no work tree


def test_a_subfolder_root_sees_only_its_own_changes_with_relative_paths(
    worked_on: Path,
) -> None:
    changes = read_changes(worked_on / "src")
    assert changes is not None
    assert {f.path for f in changes.files} == {"added.py", "app.py", "new_name.py"}


def test_a_file_turned_into_a_symlink_keeps_the_diffs_of_the_files_after_it(
    tmp_path: Path,
) -> None:
    # review: git writes a type change as two diffs (deletion, creation) where --name-status
    # has one line, so every later file was given the diff of the one before it
    files = {"a.py": "x = 1\n", "b.py": "y = 1\n", "c.py": "z = 1\n"}
    root = make_repo(tmp_path / "typechange", files, git=True)
    (root / "b.py").unlink()
    (root / "b.py").symlink_to("a.py")
    (root / "c.py").write_text("z = 2\n")
    changes = read_changes(root)
    assert changes is not None
    by_path = {f.path: f for f in changes.files}
    assert set(by_path) == {"b.py", "c.py"}
    assert by_path["c.py"].header.startswith("diff --git a/c.py b/c.py")
    assert by_path["c.py"].hunks == ("@@ -1 +1 @@\n-z = 1\n+z = 2\n",)
    b_diff = by_path["b.py"].header + "".join(by_path["b.py"].hunks)
    assert "-y = 1" in b_diff and "+a.py" in b_diff and "new file mode 120000" in b_diff
    assert b_diff.count("diff --git a/b.py b/b.py") == 2


def test_a_submodule_is_one_line_of_the_diff_whatever_diff_submodule_says(
    tmp_path: Path,
) -> None:
    # review: with `diff.submodule = diff` set, git wrote "Submodule lib contains modified
    # content" (and the submodule's own diffs) into the diff of the file before it
    root = make_repo(tmp_path / "outer", {"c.py": "z = 1\n"}, git=True)
    make_repo(root / "lib", {"a.py": "x = 1\n"}, git=True)
    git(root, "add", "lib")
    git(root, "commit", "-qm", "a submodule")
    git(root, "config", "diff.submodule", "diff")
    (root / "lib" / "a.py").write_text("x = 2\n")
    (root / "c.py").write_text("z = 2\n")
    changes = read_changes(root)
    assert changes is not None
    by_path = {f.path: f for f in changes.files}
    assert by_path["c.py"].hunks == ("@@ -1 +1 @@\n-z = 1\n+z = 2\n",)
    assert by_path["lib"].header.startswith("diff --git a/lib b/lib")
    assert "-dirty" in "".join(by_path["lib"].hunks)


def test_hunks_start_at_lines_that_start_with_at_signs_only(tmp_path: Path) -> None:
    """A line holding a carriage return then "@@" is one line of its hunk, not a new hunk
    (str.splitlines broke lines at the carriage return), and a big rewrite keeps its one hunk."""
    body = "".join(f"row {n}\n" for n in range(2000))
    root = make_repo(tmp_path / "repo", {"a.txt": "first\n", "big.txt": body}, git=True)
    (root / "a.txt").write_bytes(b"first\r@@ -9 +9 @@ not a hunk\n")
    (root / "big.txt").write_text(body.replace("row", "line"))
    changes = read_changes(root)
    assert changes is not None
    text, big = changes.files
    assert len(text.hunks) == 1 and "+first\r@@ -9 +9 @@ not a hunk\n" in text.hunks[0]
    assert text.header.startswith("diff --git a/a.txt b/a.txt\n")
    assert text.header.endswith("+++ b/a.txt\n") and text.hunks[0].startswith("@@ -1 +1 @@")
    assert len(big.hunks) == 1 and big.hunks[0].count("\n") == 4001  # "@@" line + 4,000


def test_the_whole_diff_fits_when_there_is_room(worked_on: Path) -> None:
    changes = read_changes(worked_on)
    assert changes is not None
    section = fit_changes(changes, 100_000, CharCounter())
    assert section.hunks_left_out == 0 and section.hunks == changes.hunk_count
    assert "left out" not in section.diff
    assert section.tokens == CharCounter().count(section.diff)


def test_a_diff_over_its_share_is_trimmed_hunk_wise_with_a_marker(worked_on: Path) -> None:
    changes = read_changes(worked_on)
    assert changes is not None
    whole = fit_changes(changes, 100_000, CharCounter())
    cap = whole.tokens - 20
    section = fit_changes(changes, cap, CharCounter())
    assert section.tokens <= cap
    assert section.hunks_left_out >= 1
    assert section.hunks + section.hunks_left_out == changes.hunk_count
    assert "left out to fit the budget" in section.diff
    for changed in changes.files:  # every file is still named
        assert changed.header.splitlines()[0] in section.diff
    kept_hunks = [h for f in changes.files for h in f.hunks if h in section.diff]
    assert len(kept_hunks) == section.hunks  # hunks are kept whole or not at all


def test_a_tiny_share_keeps_only_the_list_of_changed_files(worked_on: Path) -> None:
    changes = read_changes(worked_on)
    assert changes is not None
    section = fit_changes(changes, 10, CharCounter())
    assert section.hunks == 0 and section.hunks_left_out == changes.hunk_count
    assert "renamed src/new_name.py" in section.diff
