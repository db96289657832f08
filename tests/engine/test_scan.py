"""The scan: what is listed, what is skipped and why, in git mode and in walk mode."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import make_repo

from engine.errors import ScanError
from engine.model import Progress, ScanOptions, ScanReport, SkipReason
from engine.scan import scan

WALK = ScanOptions(use_git=False)


def paths(report: ScanReport) -> list[str]:
    return [f.path for f in report.files]


def skipped(report: ScanReport) -> dict[str, SkipReason]:
    return {s.path: s.reason for s in report.skipped}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


IGNORE_TREE: dict[str, str | bytes] = {
    ".gitignore": "*.log\n!keep.log\n/secret.txt\nbuild-out/\ndocs/**/draft.md\ntmp*/\n",
    "app.py": "print('hi')\n",
    "debug.log": "x\n",
    "keep.log": "x\n",
    "secret.txt": "x\n",
    "lib/secret.txt": "kept: the root pattern is anchored\n",
    "sub/.gitignore": "*.txt\n!important.txt\n",
    "sub/notes.txt": "x\n",
    "sub/important.txt": "x\n",
    "sub/deep/more.txt": "x\n",
    "build-out/gen.py": "x\n",
    "docs/a/b/draft.md": "x\n",
    "docs/draft.md": "x\n",
    "docs/final.md": "x\n",
    "tmp1/file.py": "x\n",
}
IGNORE_TREE_KEPT = [
    ".gitignore",
    "app.py",
    "docs/final.md",
    "keep.log",
    "lib/secret.txt",
    "sub/.gitignore",
    "sub/important.txt",
]


# --------------------------------------------------------------------------- ignore rules


def test_git_mode_applies_nested_gitignore_negation_and_anchoring(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", IGNORE_TREE, git=True)
    report = scan(root)
    assert report.is_git
    assert paths(report) == IGNORE_TREE_KEPT


def test_walk_applies_gitignore_files_like_git(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", IGNORE_TREE)
    report = scan(root)
    assert not report.is_git
    assert paths(report) == IGNORE_TREE_KEPT


def test_walk_of_a_git_checkout_gives_the_same_list_as_git(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        **IGNORE_TREE,
        "node_modules/lib/index.js": "x\n",
        "src/package-lock.json": "{}\n",
        "web/app.min.js": "x\n",
        "img/logo.png": b"\x89PNG",
        ".ctxtuiignore": "fixtures/\n",
        "fixtures/big.json": "{}\n",
    }
    root = make_repo(tmp_path / "r", files, git=True)
    by_git = scan(root)
    by_walk = scan(root, WALK)
    assert by_git.is_git and not by_walk.is_git
    assert by_git.files == by_walk.files
    assert by_git.skipped == by_walk.skipped
    assert not any(p.startswith(".git/") for p in paths(by_walk))


def test_untracked_files_that_are_not_ignored_are_listed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n", ".gitignore": "*.tmp\n"}, git=True)
    (root / "new.py").write_text("y\n")
    (root / "scratch.tmp").write_text("y\n")
    assert paths(scan(root)) == [".gitignore", "a.py", "new.py"]


def test_git_info_exclude_is_honoured_in_git_mode(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n"}, git=True)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("local.py\n")
    (root / "local.py").write_text("mine\n")
    assert paths(scan(root)) == ["a.py"]


def test_root_may_be_a_sub_folder_of_the_work_tree(tmp_path: Path) -> None:
    files = {"top.py": "x\n", "pkg/mod.py": "x\n", "pkg/.gitignore": "*.gen\n", "pkg/a.gen": ""}
    root = make_repo(tmp_path / "r", files, git=True)
    report = scan(root / "pkg")
    assert report.is_git
    assert paths(report) == [".gitignore", "mod.py"]


def test_ctxtuiignore_excludes_in_git_mode_and_in_walk_mode(tmp_path: Path) -> None:
    files = {
        ".ctxtuiignore": "fixtures/\n*.golden\n",
        "a.py": "x\n",
        "fixtures/data.py": "x\n",
        "t/x.golden": "x\n",
        "t/.ctxtuiignore": "!keep.golden\nlocal.py\n",
        "t/keep.golden": "x\n",
        "t/local.py": "x\n",
        "local.py": "kept: the nested rule applies under t/ only\n",
    }
    root = make_repo(tmp_path / "r", files, git=True)
    for options in (ScanOptions(), WALK):
        report = scan(root, options)
        assert paths(report) == [
            ".ctxtuiignore",
            "a.py",
            "local.py",
            "t/.ctxtuiignore",
            "t/keep.golden",
        ]
        assert skipped(report) == {
            "fixtures": SkipReason.EXCLUDED,
            "t/local.py": SkipReason.EXCLUDED,
            "t/x.golden": SkipReason.EXCLUDED,
        }


def test_root_ctxtuiignore_counts_even_when_git_ignores_it(tmp_path: Path) -> None:
    files = {".gitignore": ".ctxtuiignore\n", "a.py": "x\n", "b.py": "x\n"}
    root = make_repo(tmp_path / "r", files, git=True)
    (root / ".ctxtuiignore").write_text("b.py\n")
    report = scan(root)
    assert paths(report) == [".gitignore", "a.py"]
    assert skipped(report) == {"b.py": SkipReason.EXCLUDED}


def test_an_untracked_nested_ctxtuiignore_rules_over_tracked_files_too(tmp_path: Path) -> None:
    # Tracked files are judged while git still lists the untracked ones; a rule file that
    # turns up among those must still apply to them (and to the untracked files).
    files = {"a.py": "x\n", "t/local.py": "x\n", "t/kept.py": "x\n", "node_modules/m.js": ""}
    root = make_repo(tmp_path / "r", files, git=True)
    (root / "t" / ".ctxtuiignore").write_text("local.py\nnew_local.py\n")
    (root / "t" / "new_local.py").write_text("x\n")
    (root / "t" / "new.py").write_text("x\n")
    (root / "node_modules" / "n.js").write_text("x\n")
    report, walked = scan(root), scan(root, WALK)
    assert (report.files, report.skipped) == (walked.files, walked.skipped)
    assert paths(report) == ["a.py", "t/.ctxtuiignore", "t/kept.py", "t/new.py"]
    assert skipped(report) == {
        "node_modules": SkipReason.DEPENDENCY_DIR,
        "t/local.py": SkipReason.EXCLUDED,
        "t/new_local.py": SkipReason.EXCLUDED,
    }


def test_exclude_globs_leave_files_out(tmp_path: Path) -> None:
    files = {"a.py": "x\n", "docs/guide.md": "x\n", "README.md": "x\n", "src/b.py": "x\n"}
    root = make_repo(tmp_path / "r", files, git=True)
    for use_git in (True, False):
        report = scan(root, ScanOptions(exclude=("docs/", "*.md", "!README.md"), use_git=use_git))
        assert paths(report) == ["README.md", "a.py", "src/b.py"]
        assert skipped(report) == {"docs": SkipReason.EXCLUDED}


def test_exclude_globs_win_over_ctxtuiignore(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {".ctxtuiignore": "!*.py\n", "a.py": "x\n", "b.md": "x\n"})
    report = scan(root, ScanOptions(exclude=("*.py",)))
    assert paths(report) == [".ctxtuiignore", "b.md"]


# --------------------------------------------------------------------------- skip rules


@pytest.mark.parametrize("use_git", [True, False])
def test_dependency_and_build_folders_are_skipped_once_per_folder(
    tmp_path: Path, use_git: bool
) -> None:
    files = {
        "src/app.js": "x\n",
        "node_modules/left-pad/index.js": "x\n",
        "node_modules/left-pad/package.json": "{}\n",
        "web/node_modules/react/index.js": "x\n",
        "dist/bundle.txt": "x\n",
        ".venv/lib/site.py": "x\n",
        "pkg/__pycache__/mod.cpython-311.txt": "x\n",
        "pkg/mod.egg-info/PKG-INFO": "x\n",
        "out/kept.py": "x\n",
    }
    root = make_repo(tmp_path / "r", files, git=use_git)
    report = scan(root, ScanOptions(use_git=use_git))
    assert paths(report) == ["out/kept.py", "src/app.js"]
    assert skipped(report) == {
        ".venv": SkipReason.DEPENDENCY_DIR,
        "dist": SkipReason.DEPENDENCY_DIR,
        "node_modules": SkipReason.DEPENDENCY_DIR,
        "pkg/__pycache__": SkipReason.DEPENDENCY_DIR,
        "pkg/mod.egg-info": SkipReason.DEPENDENCY_DIR,
        "web/node_modules": SkipReason.DEPENDENCY_DIR,
    }


def test_tracked_build_folder_is_source_and_untracked_one_is_output(tmp_path: Path) -> None:
    # clap keeps its core in src/build/; a build run writes pkg/build/ and target/ beside it
    tracked = {"src/build/app.rs": "x\n", "coverage/control.py": "x\n", "src/lib.rs": "x\n"}
    root = make_repo(tmp_path / "r", tracked, git=True)
    for rel in ("pkg/build/out.js", "target/debug/main.rs", "src/build/new.rs"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n", encoding="utf-8")
    report = scan(root)
    assert report.is_git
    assert paths(report) == [
        "coverage/control.py",
        "src/build/app.rs",
        "src/build/new.rs",  # untracked, in a folder git tracks: part of the sources
        "src/lib.rs",
    ]
    assert skipped(report) == {
        "pkg/build": SkipReason.DEPENDENCY_DIR,
        "target": SkipReason.DEPENDENCY_DIR,
    }


def test_tracked_dist_and_vendor_folders_stay_skipped(tmp_path: Path) -> None:
    files = {"dist/index.js": "x\n", "vendor/lib/x.go": "x\n", "main.go": "x\n"}
    report = scan(make_repo(tmp_path / "r", files, git=True))
    assert paths(report) == ["main.go"]
    assert set(skipped(report)) == {"dist", "vendor"}


def test_build_folder_without_git_follows_the_trees_ignore_files(tmp_path: Path) -> None:
    files = {"src/build/app.rs": "x\n", "target/debug/main.rs": "x\n", "build/gen.py": "x\n"}
    bare = scan(make_repo(tmp_path / "bare", files), WALK)  # no ignore files: output
    assert paths(bare) == []
    assert set(skipped(bare)) == {"build", "src/build", "target"}
    # an exported git tree: its .gitignore names the build output, so the rest is source
    exported = make_repo(tmp_path / "exported", {**files, ".gitignore": "/target\n"})
    report = scan(exported, WALK)
    assert paths(report) == [".gitignore", "build/gen.py", "src/build/app.rs"]
    assert skipped(report) == {}


def test_lock_files_are_skipped(tmp_path: Path) -> None:
    names = ["package-lock.json", "yarn.lock", "poetry.lock", "Cargo.lock", "go.sum", "x.lock"]
    root = make_repo(tmp_path / "r", {**{n: "x\n" for n in names}, "go.mod": "module x\n"})
    report = scan(root)
    assert paths(report) == ["go.mod"]
    assert set(skipped(report).values()) == {SkipReason.LOCK_FILE}


def test_minified_and_generated_names_are_skipped(tmp_path: Path) -> None:
    files = {
        "app.min.js": "x",
        "site.min.css": "x",
        "app.js.map": "{}",
        "main.bundle.js": "x",
        "api_pb2.py": "x",
        "api.pb.go": "x",
        "schema.generated.ts": "x",
        "app.js": "x",
    }
    report = scan(make_repo(tmp_path / "r", files))
    assert paths(report) == ["app.js"]
    assert skipped(report) == {
        "app.js.map": SkipReason.MINIFIED,
        "app.min.js": SkipReason.MINIFIED,
        "main.bundle.js": SkipReason.MINIFIED,
        "site.min.css": SkipReason.MINIFIED,
        "api.pb.go": SkipReason.GENERATED,
        "api_pb2.py": SkipReason.GENERATED,
        "schema.generated.ts": SkipReason.GENERATED,
    }


def test_binary_files_are_skipped_by_extension(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "logo.PNG": b"\x89PNG\r\n",
        "lib.so": b"\x7fELF",
        "data.sqlite": b"SQLite",
        "font.woff2": b"wOF2",
        "mod.pyc": b"\x00",
        "a.py": "x\n",
    }
    report = scan(make_repo(tmp_path / "r", files))
    assert paths(report) == ["a.py"]
    assert set(skipped(report).values()) == {SkipReason.BINARY}


def test_huge_file_is_skipped_with_its_size(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"big.py": "x" * 2000, "small.py": "x"})
    report = scan(root, ScanOptions(max_bytes=1000))
    assert paths(report) == ["small.py"]
    [big] = report.skipped
    assert (big.path, big.reason, big.detail) == ("big.py", SkipReason.TOO_LARGE, "2,000 bytes")


def test_empty_and_non_utf8_files_are_kept(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"empty.py": "", "latin1.txt": b"caf\xe9 cr\xe8me\n"}
    report = scan(make_repo(tmp_path / "r", files))
    assert paths(report) == ["empty.py", "latin1.txt"]
    assert report.files[0].size == 0


def test_kept_files_carry_size_mtime_and_language(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"pkg/mod.py": "abc\n", "notes": "x"})
    report = scan(root)
    mod = report.files[1]
    assert (mod.path, mod.size, mod.language) == ("pkg/mod.py", 4, "python")
    assert mod.mtime_ns == os.stat(root / "pkg/mod.py").st_mtime_ns
    assert report.files[0].language == "text"
    assert report.root == str(root)


# --------------------------------------------------------------------------- links


@pytest.mark.parametrize("use_git", [True, False])
def test_symlink_to_a_file_inside_the_root_is_kept_under_its_link_path(
    tmp_path: Path, use_git: bool
) -> None:
    root = make_repo(tmp_path / "r", {"real.py": "x = 1\n"}, git=use_git)
    (root / "alias.py").symlink_to("real.py")
    report = scan(root, ScanOptions(use_git=use_git))
    assert paths(report) == ["alias.py", "real.py"]
    assert report.files[0].size == 6


@pytest.mark.parametrize("use_git", [True, False])
def test_symlink_escaping_the_root_is_skipped(tmp_path: Path, use_git: bool) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text("x\n")
    root = make_repo(tmp_path / "r", {"a.py": "x\n"}, git=use_git)
    (root / "leak.py").symlink_to(tmp_path / "outside" / "secret.py")
    (root / "leakdir").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "dotdot").symlink_to("../outside/secret.py")
    report = scan(root, ScanOptions(use_git=use_git))
    assert paths(report) == ["a.py"]
    assert skipped(report) == {
        "dotdot": SkipReason.SYMLINK_OUTSIDE,
        "leak.py": SkipReason.SYMLINK_OUTSIDE,
        "leakdir": SkipReason.SYMLINK_OUTSIDE,
    }


@pytest.mark.parametrize("use_git", [True, False])
def test_symlink_loops_are_skipped(tmp_path: Path, use_git: bool) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n", "sub/b.py": "x\n"}, git=use_git)
    (root / "loop_a").symlink_to("loop_b")
    (root / "loop_b").symlink_to("loop_a")
    (root / "sub" / "up").symlink_to("..", target_is_directory=True)
    report = scan(root, ScanOptions(use_git=use_git))
    assert paths(report) == ["a.py", "sub/b.py"]
    assert skipped(report) == {
        "loop_a": SkipReason.SYMLINK_LOOP,
        "loop_b": SkipReason.SYMLINK_LOOP,
        "sub/up": SkipReason.SYMLINK_LOOP,
    }


def test_linked_folder_inside_the_root_is_not_walked_twice(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"pkg/mod.py": "x\n"})
    (root / "alias").symlink_to("pkg", target_is_directory=True)
    report = scan(root, WALK)
    assert paths(report) == ["pkg/mod.py"]
    assert report.skipped == ()


def test_broken_symlink_is_reported_as_vanished(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n"})
    (root / "gone.py").symlink_to("nowhere.py")
    assert skipped(scan(root)) == {"gone.py": SkipReason.VANISHED}


# --------------------------------------------------------------------------- failures


def test_tracked_file_deleted_from_disk_is_vanished(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n", "b.py": "x\n"}, git=True)
    (root / "b.py").unlink()
    report = scan(root)
    assert paths(report) == ["a.py"]
    assert skipped(report) == {"b.py": SkipReason.VANISHED}


def permissions_enforced(folder: Path) -> bool:
    """Tell whether this process is refused a mode-000 file (root with its capabilities is not)."""
    probe = folder / "probe"
    probe.write_text("x")
    probe.chmod(0)
    try:
        probe.read_text()
    except PermissionError:
        return True
    finally:
        probe.unlink()
    return False


def test_unreadable_folder_is_reported_for_real(tmp_path: Path) -> None:
    if not permissions_enforced(tmp_path):
        pytest.skip("this process reads files whatever their mode (root)")
    root = make_repo(tmp_path / "r", {"a.py": "x\n", "locked/b.py": "x\n"})
    (root / "locked").chmod(0)
    try:
        report = scan(root)
    finally:
        (root / "locked").chmod(0o755)
    assert skipped(report) == {"locked": SkipReason.UNREADABLE}


@pytest.mark.parametrize("use_git", [True, False])
def test_unreadable_file_is_reported_for_real(tmp_path: Path, use_git: bool) -> None:
    if not permissions_enforced(tmp_path):
        pytest.skip("this process reads files whatever their mode (root)")
    root = make_repo(tmp_path / "r", {"a.py": "x\n", "secret.py": "x\n"}, git=use_git)
    (root / "secret.py").chmod(0)
    report = scan(root, ScanOptions(use_git=use_git))
    assert paths(report) == ["a.py"]
    assert skipped(report) == {"secret.py": SkipReason.UNREADABLE}


@pytest.mark.parametrize("use_git", [True, False])
def test_file_without_read_permission_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, use_git: bool
) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n", "secret.py": "x\n"}, git=use_git)
    (root / "secret.py").chmod(0)
    real_access = os.access

    def access(path: str, mode: int) -> bool:
        return False if os.fspath(path).endswith("secret.py") else real_access(path, mode)

    monkeypatch.setattr(os, "access", access)  # what a non-root user would be told
    report = scan(root, ScanOptions(use_git=use_git))
    assert paths(report) == ["a.py"]
    assert skipped(report) == {"secret.py": SkipReason.UNREADABLE}


def test_stat_failing_with_permission_error_is_reported_in_git_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n", "secret.py": "x\n"}, git=True)
    real_lstat = os.lstat

    def lstat(path: str | os.PathLike[str], *args: object, **kwargs: object) -> os.stat_result:
        if os.fspath(path).endswith("secret.py"):
            raise PermissionError(13, "Permission denied")
        return real_lstat(path)

    monkeypatch.setattr(os, "lstat", lstat)
    report = scan(root)
    assert paths(report) == ["a.py"]
    [secret] = report.skipped
    assert (secret.path, secret.reason, secret.detail) == (
        "secret.py",
        SkipReason.UNREADABLE,
        "Permission denied",
    )


def test_unreadable_folder_is_reported_in_walk_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n", "locked/b.py": "x\n"})
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    report = scan(root)
    assert paths(report) == ["a.py"]
    assert skipped(report) == {"locked": SkipReason.UNREADABLE}


def test_fifo_is_not_listed_as_a_file(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n"})
    os.mkfifo(root / "pipe")
    assert skipped(scan(root)) == {"pipe": SkipReason.UNREADABLE}


def test_empty_folder_gives_an_empty_report(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    report = scan(tmp_path / "empty")
    assert report.files == () and report.skipped == ()


def test_git_repository_without_commits_or_files_gives_an_empty_report(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {})
    git(root, "init", "-q")
    assert scan(root).files == ()


def test_missing_path_is_a_scan_error(tmp_path: Path) -> None:
    with pytest.raises(ScanError, match=r"^no such folder: .*nope$"):
        scan(tmp_path / "nope")


def test_file_instead_of_folder_is_a_scan_error(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x\n")
    with pytest.raises(ScanError, match=r"^not a folder: "):
        scan(tmp_path / "f.py")


def test_unreadable_root_is_a_scan_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def scandir(path: str) -> object:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(ScanError, match=r"^cannot read folder: .* \(Permission denied\)$"):
        scan(tmp_path)


def test_missing_git_falls_back_to_the_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "x\n", ".gitignore": "b.py\n", "b.py": ""}, git=True)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    report = scan(root)
    assert not report.is_git
    assert paths(report) == [".gitignore", "a.py"]


# --------------------------------------------------------------------------- progress


@pytest.mark.parametrize("use_git", [True, False])
def test_progress_is_reported_and_ends_with_the_total(tmp_path: Path, use_git: bool) -> None:
    files = {f"m{i:03}.py": "x\n" for i in range(600)}
    root = make_repo(tmp_path / "r", files, git=use_git)
    seen: list[Progress] = []
    scan(root, ScanOptions(use_git=use_git), on_progress=seen.append)
    assert all(p.stage == "scan" for p in seen)
    assert len(seen) >= 3
    assert seen[-1].done == 600
    assert [p.done for p in seen] == sorted(p.done for p in seen)
