"""The numpy-free answer for an unchanged tree: it says what a warm `build_index` says, and it
never answers for a tree that changed (an edited file is always read again by the full open)."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import make_repo

from engine.indexer import build_index
from engine.model import IndexReport, ScanOptions
from engine.store import cache_file
from engine.unchanged import Unchanged, unchanged_index

TREE: dict[str, str | bytes] = {
    ".gitignore": "*.log\n",
    "app.py": "import lib.util\n\ndef main():\n    return lib.util.helper()\n",
    "lib/util.py": "def helper():\n    return 2\n",
    "lib/broken.py": "def fine():\n    pass\n\ndef broken(:\n",
    "legacy.py": "# café\ndef order():\n    return 'crème'\n".encode("latin-1"),
    "docs/guide.md": "# Guide\n\nWords.\n",
    "static/app.js": "var a=1;" * 2000,  # left out for its content: minified
    "payload.dat": b"head\0tail" * 20,  # binary
    "node_modules/dep/index.js": "module.exports = 1\n",
    ".env": "TOKEN=x\n",
}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def later(path: Path) -> None:
    """Give a file an mtime two seconds on, as an edit a moment later would."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def warm(root: Path, cache: Path) -> tuple[int, IndexReport]:
    """A warm `build_index`: its edge count and report (the first build saves the cache)."""
    build_index(root, cache_dir=cache, workers=1)
    index, report = build_index(root, cache_dir=cache, workers=1)
    return len(index.edges), report


def quick(root: Path, cache: Path) -> Unchanged | None:
    return unchanged_index(root, options=ScanOptions(), encoding="o200k_base", cache_dir=cache)


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "folder"])
def test_an_unchanged_tree_gets_the_report_a_warm_build_gives(tmp_path: Path, in_git: bool) -> None:
    root = make_repo(tmp_path / "r", TREE, git=in_git)
    cache = tmp_path / "cache"
    edges, report = warm(root, cache)
    answer = quick(root, cache)
    assert answer is not None
    assert (answer.root, answer.encoding, answer.edges) == (str(root), "o200k_base", edges)
    assert replace(answer.report, times=()) == replace(report, times=())
    assert report.replaced == ("legacy.py",) and report.partial == ("lib/broken.py",)
    assert {s.path for s in report.skipped} >= {"static/app.js", "payload.dat", ".env"}
    assert edges == 1


def test_a_file_edited_to_the_same_size_is_never_taken_for_unchanged(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", TREE, git=True)
    cache = tmp_path / "cache"
    warm(root, cache)
    (root / "lib/util.py").write_text("def helpex():\n    return 3\n", encoding="utf-8")
    later(root / "lib/util.py")
    assert quick(root, cache) is None
    _, report = build_index(root, cache_dir=cache, workers=1)
    assert report.parsed == ("lib/util.py",)
    assert quick(root, cache) is not None  # saved again: unchanged from now on


@pytest.mark.parametrize(
    "change",
    [
        lambda root: (root / "new.py").write_text("x = 1\n", encoding="utf-8"),
        lambda root: (root / "docs/guide.md").unlink(),
        lambda root: later(root / "static/app.js"),
        lambda root: (root / ".ctxtuiignore").write_text("docs/\n", encoding="utf-8"),
    ],
    ids=["added", "removed", "left-out-file-touched", "new-ignore-rule"],
)
def test_any_change_to_the_files_sends_the_caller_to_the_full_open(
    tmp_path: Path, change: object
) -> None:
    root = make_repo(tmp_path / "r", TREE, git=True)
    cache = tmp_path / "cache"
    warm(root, cache)
    change(root)  # type: ignore[operator]
    assert quick(root, cache) is None


def test_a_new_commit_sends_the_caller_to_the_full_open(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", TREE, git=True)
    cache = tmp_path / "cache"
    warm(root, cache)
    git(root, "commit", "-q", "--allow-empty", "-m", "later")
    assert quick(root, cache) is None  # the git columns are read again


def test_other_scan_options_send_the_caller_to_the_full_open(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", TREE, git=True)
    cache = tmp_path / "cache"
    warm(root, cache)
    options = ScanOptions(exclude=("docs/**",))
    assert unchanged_index(root, options=options, encoding="o200k_base", cache_dir=cache) is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"garbage",
        lambda data: data[: len(data) // 2],
        lambda data: b"",
    ],
    ids=["garbage", "truncated", "empty"],
)
def test_a_damaged_or_missing_cache_gets_no_answer(tmp_path: Path, damage: object) -> None:
    root = make_repo(tmp_path / "r", TREE, git=True)
    cache = tmp_path / "cache"
    assert quick(root, cache) is None  # no cache yet
    warm(root, cache)
    path = cache_file(cache, "o200k_base")
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    assert quick(root, cache) is None
    assert quick(root, tmp_path / "elsewhere") is None


def test_the_answer_never_loads_numpy(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", TREE, git=True)
    cache = tmp_path / "cache"
    warm(root, cache)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from engine.model import ScanOptions\n"
        "from engine.unchanged import unchanged_index\n"
        f"answer = unchanged_index({str(root)!r}, options=ScanOptions(),"
        f" encoding='o200k_base', cache_dir=Path({str(cache)!r}))\n"
        "assert answer is not None\n"
        "print('numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_without_a_usable_cache_the_tree_is_not_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first `ctxtui index` (or one whose cache is discarded) scans the tree once, in the
    full open, not a second time here only to find there is nothing to compare with."""
    root = make_repo(tmp_path / "r", TREE, git=True)
    cache = tmp_path / "cache"
    scans: list[object] = []
    module = importlib.import_module("engine.scan")  # `engine.scan` is also the function
    real = module.scan

    def counted(*args: object, **kwargs: object) -> object:
        scans.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "scan", counted)
    assert quick(root, cache) is None  # no cache yet
    assert scans == []
    warm(root, cache)
    scans.clear()
    cache_file(cache, "o200k_base").write_bytes(b"garbage")
    assert quick(root, cache) is None
    assert scans == []
    warm(root, cache)
    scans.clear()
    assert quick(root, cache) is not None  # a usable cache: the tree is compared with it
    assert len(scans) == 1
