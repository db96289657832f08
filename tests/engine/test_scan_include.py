"""`ScanOptions.include`: only files matching a pattern (or inside a matching folder) are listed."""

from __future__ import annotations

from pathlib import Path

from conftest import make_repo

from engine.model import ScanOptions, SkipReason
from engine.scan import scan

FILES = {
    "src/app.py": "x = 1\n",
    "src/deep/util.py": "y = 2\n",
    "docs/guide.md": "# Guide\n",
    "README.md": "# Read me\n",
    "setup.cfg": "[metadata]\n",
}


def test_include_keeps_matching_files_and_folders_only(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", FILES)
    report = scan(root, ScanOptions(include=("src/", "*.md")))
    assert [f.path for f in report.files] == [
        "README.md",
        "docs/guide.md",
        "src/app.py",
        "src/deep/util.py",
    ]
    assert {s.path: s.reason for s in report.skipped}["setup.cfg"] is SkipReason.EXCLUDED


def test_excludes_still_apply_inside_included_folders(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", FILES, git=True)
    report = scan(root, ScanOptions(include=("src/",), exclude=("deep/",)))
    assert [f.path for f in report.files] == ["src/app.py"]
