"""Opening an untrusted repository runs none of its programs: git is called with its
fsmonitor, hooks, filter drivers, external diff, textconv and signature programs off."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import make_repo

from ctxtui.cli import main
from engine.git_signals import git_head, read_git_signals

CART = "def cart_total(items):\n    return sum(items)\n"


@pytest.fixture
def trap_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose config runs `touch <marks>/<name>` from every hook it can name."""
    marks = tmp_path / "marks"
    marks.mkdir()
    files = {"cart.py": CART, ".gitattributes": "*.py filter=trap diff=trap\n"}
    repo = make_repo(tmp_path / "repo", files, git=True)
    (repo / "cart.py").write_text(CART.replace("sum(items)", "sum(items) + 1"))
    (repo / "new.py").write_text("x = 1\n")

    def config(key: str, command: str) -> None:
        subprocess.run(["git", "config", key, command], cwd=repo, check=True)

    config("core.fsmonitor", f"touch {marks}/fsmonitor; echo")
    config("filter.trap.clean", f"sh -c 'touch {marks}/clean; cat'")
    config("filter.trap.required", "true")
    config("diff.trap.textconv", f"sh -c 'touch {marks}/textconv; cat $0'")
    config("diff.trap.command", f"sh -c 'touch {marks}/diffcommand'")
    config("diff.external", f"sh -c 'touch {marks}/external'")
    config("log.showSignature", "true")
    config("gpg.program", f"sh -c 'touch {marks}/gpg'")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-index-change", "post-checkout", "reference-transaction"):
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {marks}/hook-{name}\n")
        hook.chmod(0o755)
    config("core.hooksPath", str(hooks))
    return repo, marks


def test_the_trap_repository_really_runs_programs_under_plain_git(
    trap_repo: tuple[Path, Path],
) -> None:
    repo, marks = trap_repo  # the probe itself: plain git falls into the traps
    subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=repo, capture_output=True)
    subprocess.run(["git", "diff"], cwd=repo, capture_output=True)
    assert {"fsmonitor", "clean"} <= {p.name for p in marks.iterdir()}


def test_index_rank_and_pack_with_changes_run_nothing(
    trap_repo: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, marks = trap_repo
    assert main(["index", str(repo), "--no-cache"]) == 0
    assert main(["rank", "cart", str(repo), "--no-cache"]) == 0
    assert main(["pack", "cart", str(repo), "--no-cache", "--changed"]) == 0
    out = capsys.readouterr().out
    assert "sum(items) + 1" in out  # the diff was read, through no filter
    assert sorted(p.name for p in marks.iterdir()) == []
    assert git_head(repo) is not None
    assert "cart.py" in read_git_signals(repo, ["cart.py"])
    assert sorted(p.name for p in marks.iterdir()) == []


def test_an_index_checking_files_with_git_runs_nothing(
    trap_repo: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, marks = trap_repo
    (repo / "other.py").write_text(CART)
    off = ["-c", "filter.trap.clean=", "-c", "filter.trap.required=false"]
    subprocess.run(["git", *off, "add", "other.py"], cwd=repo, check=True)
    # racily clean (the index no newer than the file): `git diff-files`, which the scan runs
    # to trust its memo, reads other.py through the filter to see whether it changed
    st = (repo / "other.py").stat()
    os.utime(repo / ".git/index", ns=(st.st_atime_ns, st.st_mtime_ns))
    for mark in marks.iterdir():  # left by the `git add` above
        mark.unlink()
    assert main(["index", str(repo)]) == 0
    assert main(["index", str(repo)]) == 0
    assert sorted(p.name for p in marks.iterdir()) == []
