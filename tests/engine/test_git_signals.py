"""Git signals from one `git log` pass: counts, recency, and absence where history is missing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import make_repo

from engine.git_signals import git_head, read_git_signals
from engine.model import GitSignal

FIRST = 1_600_000_000
SECOND = 1_700_000_000


def git(root: Path, *args: str, when: int | None = None) -> str:
    env = dict(os.environ)
    if when is not None:
        env["GIT_COMMITTER_DATE"] = env["GIT_AUTHOR_DATE"] = f"@{when} +0000"
    proc = subprocess.run(
        ["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True
    )
    return proc.stdout.strip()


@pytest.fixture
def two_commits(tmp_path: Path) -> Path:
    """A repo where a.py and pkg/b.py change in the first commit and a.py again in the second."""
    root = make_repo(tmp_path / "r", {})
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "T")
    (root / "pkg").mkdir()
    (root / "a.py").write_text("a = 1\n")
    (root / "pkg" / "b.py").write_text("b = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first", when=FIRST)
    (root / "a.py").write_text("a = 2\n")
    git(root, "commit", "-q", "-am", "second", when=SECOND)
    (root / "untracked.py").write_text("u = 1\n")
    return root


def test_counts_and_last_change_per_file(two_commits: Path) -> None:
    signals = read_git_signals(two_commits, ["a.py", "pkg/b.py", "untracked.py"])
    assert signals == {
        "a.py": GitSignal(last_change=float(SECOND), changes=2),
        "pkg/b.py": GitSignal(last_change=float(FIRST), changes=1),
    }


def test_only_the_paths_asked_for_are_returned(two_commits: Path) -> None:
    assert set(read_git_signals(two_commits, ["pkg/b.py"])) == {"pkg/b.py"}


def test_paths_are_relative_to_a_sub_folder_root(two_commits: Path) -> None:
    signals = read_git_signals(two_commits / "pkg", ["b.py", "a.py"])
    assert signals == {"b.py": GitSignal(last_change=float(FIRST), changes=1)}


def test_the_commit_window_caps_the_history(two_commits: Path) -> None:
    signals = read_git_signals(two_commits, ["a.py", "pkg/b.py"], max_commits=1)
    assert signals == {"a.py": GitSignal(last_change=float(SECOND), changes=1)}


def test_odd_file_names_survive_the_log(tmp_path: Path) -> None:
    names = ["café.py", 'quote".py', "space name.py", "123"]
    root = make_repo(tmp_path / "r", {name: "x\n" for name in names}, git=True)
    assert set(read_git_signals(root, names)) == set(names)


def test_outside_git_there_are_no_signals(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n"})
    assert read_git_signals(root, ["a.py"]) == {}
    assert git_head(root) is None


def test_repository_without_commits_has_no_signals(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n"})
    git(root, "init", "-q")
    assert read_git_signals(root, ["a.py"]) == {}
    assert git_head(root) is None


def test_shallow_clone_has_no_signals(two_commits: Path, tmp_path: Path) -> None:
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{two_commits}", str(clone))
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    assert read_git_signals(clone, ["a.py", "pkg/b.py"]) == {}


def test_git_head_names_the_current_commit(two_commits: Path) -> None:
    assert git_head(two_commits) == git(two_commits, "rev-parse", "HEAD")
    assert git_head(two_commits / "pkg") == git(two_commits, "rev-parse", "HEAD")
