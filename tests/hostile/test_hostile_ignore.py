"""A bad ignore pattern (git accepts `[z-a]` and it matches nothing) is reported once and
skipped, never a crash: in .gitignore outside git, in .ctxtuiignore, in --exclude."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from app.support import notices, settle, wait_until
from conftest import make_repo

from ctxtui.app import CtxtuiApp
from ctxtui.cli import main
from engine import scan
from engine.ignore import IgnoreMatcher, parse_rules
from engine.model import ScanOptions

FILES = {
    "app.py": "def cart_total(items):\n    return sum(items)\n",
    "notes.txt": "cart notes\n",
    "build.log": "cart log\n",
}


@pytest.mark.parametrize(("ignore_file", "git"), [(".gitignore", False), (".ctxtuiignore", True)])
@pytest.mark.parametrize("command", ["index", "rank", "pack"])
def test_a_bad_pattern_is_reported_once_and_the_rest_of_the_file_applies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ignore_file: str, git: bool, command: str
) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, ignore_file: "[z-a]\n*.log\n"}, git=git)
    argv = [command, str(repo)] if command == "index" else [command, "cart", str(repo)]
    assert main([*argv, "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert err.count(f"{ignore_file}:1: ignored the bad pattern '[z-a]'") == 1
    assert "Traceback" not in err
    listed = {f.path for f in scan(repo).files}
    assert "build.log" not in listed and "app.py" in listed  # the good rule still applies


def test_a_bad_exclude_is_reported_and_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    assert main(["pack", "cart", str(repo), "--no-cache", "--exclude", "[z-a]"]) == 0
    assert "--exclude: ignored the bad pattern '[z-a]'" in capsys.readouterr().err
    report = scan(repo, ScanOptions(exclude=("[z-a]", "*.txt")))
    assert report.notes == ("--exclude: ignored the bad pattern '[z-a]' (bad character range z-a)",)
    assert "notes.txt" not in {f.path for f in report.files}


def test_repeated_double_stars_match_like_one(tmp_path: Path) -> None:
    # "**/" thirty times compiled to thirty nested optional groups: slow on deep paths
    rules = parse_rules("a/" + "**/" * 30 + "z.py\n")
    matcher = IgnoreMatcher(rules)
    deep = "a/" + "/".join(f"d{i}" for i in range(40)) + "/z.py"
    assert matcher.is_ignored(deep) and not matcher.is_ignored(deep + "x")
    assert rules[0].regex.pattern.count("(?:.*/)?") == 1


async def test_the_app_opens_and_says_so(
    tmp_path: Path, app_factory: Callable[..., CtxtuiApp]
) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, ".ctxtuiignore": "[z-a]\n"}, git=True)
    app = app_factory(repo)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: any("bad pattern" in n for n in notices(app)))
        await pilot.press(*"cart")
        await settle(pilot, "cart")
        assert sum("bad pattern" in n for n in notices(app)) == 1


def test_a_pattern_of_many_stars_is_matched_without_backtracking(tmp_path: Path) -> None:
    # as a regex, `*a*a...*b` backtracks exponentially: 44 s for 4 stars and a 200-letter name
    long_name = "a" * 200 + "c.py"
    files = {long_name: "x = 1\n", "a" * 40 + "b": "y\n", ".ctxtuiignore": "*a" * 14 + "*b\n"}
    repo = make_repo(tmp_path / "repo", files)
    listed = {f.path for f in scan(repo).files}
    assert long_name in listed and "a" * 40 + "b" not in listed


def test_a_bad_include_secret_pattern_is_named_as_that_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # review: `--include-secret '[z-a]'` was reported as "--exclude: ignored the bad pattern"
    repo = make_repo(tmp_path / "repo", {"app.py": "def alpha():\n    pass\n"})
    assert main(["pack", "alpha", str(repo), "--include-secret", "[z-a]"]) == 0
    err = capsys.readouterr().err
    assert "--include-secret: ignored the bad pattern '[z-a]'" in err
    assert "--exclude" not in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("git", [False, True])
def test_an_ignore_file_that_is_a_fifo_is_read_as_empty_not_waited_on(
    tmp_path: Path, git: bool
) -> None:
    # review: `mkfifo .ctxtuiignore` made `ctxtui index` wait for a writer for good
    root = make_repo(tmp_path / "repo", {"a.py": "def a():\n    return 1\n"}, git=git)
    os.mkfifo(root / ".ctxtuiignore")
    (root / "sub").mkdir()
    os.mkfifo(root / "sub" / ".ctxtuiignore")
    done = subprocess.run(
        [sys.executable, "-m", "ctxtui", "index", str(root), "--no-cache"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "files               1" in done.stdout


def test_an_ignore_file_with_crlf_line_ends_still_applies(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.log": "x\n", "gen/c.py": "y = 2\n"})
    (root / ".ctxtuiignore").write_bytes(b"*.log\r\ngen/\r")
    assert [f.path for f in scan(root).files] == [".ctxtuiignore", "a.py"]
