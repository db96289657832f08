"""A folder the user may not read, inside a git work tree or not: left out with one notice,
counted among the skipped, never a traceback.

Root reads every folder whatever its mode, so the real thing runs the command line as a
process that has lost that power (`setpriv` drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
from the process it starts); the scan's reading of git's warning is also tested in-process
with the warning git gives put in its mouth."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import make_repo

from engine.model import ScanOptions, SkipReason
from engine.scan import scan

scan_module = importlib.import_module("engine.scan")  # `engine.scan` is also a function

FILES = {"src/app.py": "def handle_login(user):\n    return user\n"}


def without_reading_power() -> list[str]:
    """The command prefix that runs a process refused a mode-000 folder: none for a user,
    setpriv for root (skip where neither works)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"] if setpriv else []
    probe = subprocess.run([*prefix, "true"], capture_output=True, check=False) if prefix else None
    if probe is None or probe.returncode != 0:
        pytest.skip("this process reads every folder (root) and cannot give that up here")
    return prefix


@pytest.fixture
def locked_repo(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    root = make_repo(tmp_path / "repo", FILES, git=request.param)
    locked = root / "locked"
    locked.mkdir()
    (locked / "notes.py").write_text("def notes():\n    return 1\n")
    locked.chmod(0)
    yield root
    locked.chmod(0o755)  # so that pytest can remove it


def run_cli(prefix: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "ctxtui", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize("locked_repo", [True, False], ids=["git", "walk"], indirect=True)
def test_an_unreadable_folder_is_counted_and_named_in_a_git_work_tree_as_outside(
    locked_repo: Path,
) -> None:
    prefix = without_reading_power()
    done = run_cli(prefix, "index", "--verbose", str(locked_repo))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stdout.splitlines()
    assert any(line.split()[:3] == ["skipped", "1", "unreadable"] for line in lines), done.stdout
    assert "  locked  (unreadable, Permission denied)" in lines
    packed = run_cli(prefix, "pack", "handle login", str(locked_repo), "--no-semantic")
    assert packed.returncode == 0, packed.stderr
    told = [line for line in packed.stderr.splitlines() if "locked" in line]
    assert told == ["ctxtui: left out 1 unreadable file or folder (locked: Permission denied)"]


def test_the_scan_reads_gits_warning_of_a_folder_it_could_not_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as root git opens every folder: its warning (stderr, exit status 0) is acted
    top = make_repo(tmp_path / "top", {"sub/src/app.py": "x = 1\n", "sub/keep/a.py": "y\n"})
    subprocess.run(["git", "init", "-q"], cwd=top, check=True)
    (top / "sub" / "locked").mkdir()
    (top / "sub" / "node_modules").mkdir()
    real = scan_module.finish_git_told

    def told(process: subprocess.Popen[bytes]) -> tuple[bytes | None, bytes]:
        stdout, stderr = real(process)
        warnings = b"".join(
            b"warning: could not open directory '%s/': Permission denied\n" % path
            for path in (b"sub/locked", b"sub/node_modules", b"elsewhere")
        )
        return stdout, stderr + warnings

    monkeypatch.setattr(scan_module, "finish_git_told", told)
    report = scan(top / "sub")
    assert report.is_git
    assert {(s.path, s.reason, s.detail) for s in report.skipped} == {
        ("locked", SkipReason.UNREADABLE, "Permission denied"),
        ("node_modules", SkipReason.DEPENDENCY_DIR, "folder"),  # left out by its name first
    }
    walked = scan(top / "sub", ScanOptions(use_git=False))
    assert [f.path for f in walked.files] == [f.path for f in report.files]


@pytest.mark.parametrize(
    "argv",
    [
        ["rank", "login", "{root}"],
        ["index", "{root}"],
        ["config", "{root}"],
        ["mcp", "{root}"],
        ["{root}"],  # the app
        ["rank", "login", "{root}/src"],  # a folder inside one that may not be entered
    ],
)
def test_a_repository_the_user_may_not_read_is_exit_1_with_one_line(
    tmp_path: Path, argv: list[str]
) -> None:
    # session 33: a traceback (PermissionError from Path.exists of ROOT/.git while the
    # settings were looked for; of Path.is_dir in config, mcp and the app)
    prefix = without_reading_power()
    root = make_repo(tmp_path / "repo", FILES)
    root.chmod(0)
    try:
        done = run_cli(prefix, *[a.replace("{root}", str(root)) for a in argv])
    finally:
        root.chmod(0o755)
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("ctxtui: cannot ") and "(Permission denied)" in done.stderr
