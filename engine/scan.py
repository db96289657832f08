"""List the files of a folder worth indexing, and say why every other file was left out.

Inside a git work tree one `git ls-files -co --exclude-standard` call gives the list, so
`.gitignore` files, negation and `.git/info/exclude` behave exactly as git; elsewhere (or when
git fails) an `os.scandir` walk applies `.gitignore` files with `engine.ignore`. Both paths
then apply the same rules: `.ctxtuiignore` and `--exclude` globs, dependency and build
folders, lock, minified, generated and binary names, the size limit, and symbolic links, which
are never followed out of the root. The scan only stats: reading and sniffing contents
(`sniff_content`, `is_generated`) is the indexer's job, done while it reads each file anyway.
It stays one module past 400 lines because the two listing modes must apply one set of rules
in one order (tested for equality), and a quarter of it is the name tables.
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

from engine.errors import ScanError
from engine.ignore import IgnoreMatcher, parse_rules
from engine.model import Progress, ScanOptions, ScanReport, SkippedFile, SkipReason, SourceFile
from engine.parse.languages import language_for_path

DEPENDENCY_DIRS: frozenset[str] = frozenset(
    {
        "node_modules",
        "bower_components",
        "jspm_packages",
        "dist",
        "build",
        ".venv",
        "venv",
        "vendor",
        "target",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".parcel-cache",
        ".cache",
        "coverage",
        "htmlcov",
        "site-packages",
        ".gradle",
        ".idea",
        "Pods",
        ".terraform",
        ".eggs",
    }
)
"""Folder names that hold installed dependencies, build output or tool caches, at any depth.
`out`, `env`, `third_party` and `.vscode` are left out on purpose: too often real sources."""

VCS_DIRS: frozenset[str] = frozenset({".git", ".hg", ".svn"})
"""Version-control folders: never entered and not reported (git never lists them either)."""

IGNORE_FILE = ".ctxtuiignore"
"""ctxtui's own ignore file (gitignore syntax), honoured at any level, with or without git."""

LOCK_FILES: frozenset[str] = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "poetry.lock",
        "pipfile.lock",
        "uv.lock",
        "cargo.lock",
        "gemfile.lock",
        "composer.lock",
        "go.sum",
        "flake.lock",
    }
)
"""Lock file names, lower-cased; any other `*.lock` name counts too."""

MINIFIED_SUFFIXES: tuple[str, ...] = (
    ".min.js",
    ".min.css",
    ".map",
    ".bundle.js",
    "-bundle.js",
    ".chunk.js",
)
"""Name endings of minified or bundled output."""

GENERATED_SUFFIXES: tuple[str, ...] = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", ".pb.go")
"""Generated code by name; Jest's `.snap` snapshot files are checked separately."""
PLAIN_TEXT_SHARE = 0.25
"""A plain-text file (no parser) over this share of the size limit is skipped as data."""
"""Name endings of code generators' output (protobuf); `*.generated.*` counts too."""

BINARY_EXTENSIONS: frozenset[str] = frozenset(
    {
        # images and fonts ("svg" is XML text, but an image: its path data is noise to a
        # search and costly in tokens; textual's 435 snapshot SVGs were 70 % of its tokens)
        "svg",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "bmp",
        "ico",
        "icns",
        "tif",
        "tiff",
        "webp",
        "avif",
        "heic",
        "psd",
        "xcf",
        "eot",
        "otf",
        "ttf",
        "woff",
        "woff2",
        # archives and packages
        "zip",
        "gz",
        "tgz",
        "bz2",
        "xz",
        "zst",
        "7z",
        "rar",
        "tar",
        "jar",
        "war",
        "ear",
        "whl",
        "egg",
        "deb",
        "rpm",
        "dmg",
        "iso",
        "apk",
        "nupkg",
        "gem",
        # audio and video
        "mp3",
        "mp4",
        "m4a",
        "m4v",
        "wav",
        "flac",
        "ogg",
        "oga",
        "ogv",
        "opus",
        "avi",
        "mov",
        "mkv",
        "webm",
        "wmv",
        "mid",
        "midi",
        # compiled code and objects
        "so",
        "dll",
        "dylib",
        "exe",
        "o",
        "obj",
        "a",
        "lib",
        "class",
        "pyc",
        "pyo",
        "pyd",
        "wasm",
        "bin",
        "elc",
        "beam",
        "node",
        "pdb",
        # documents and data stores
        "pdf",
        "doc",
        "docx",
        "xls",
        "xlsx",
        "ppt",
        "pptx",
        "odt",
        "ods",
        "odp",
        "sqlite",
        "sqlite3",
        "db",
        "mdb",
        "parquet",
        "feather",
        "npy",
        "npz",
        "pkl",
        "pickle",
        "h5",
        "hdf5",
        "onnx",
        "pt",
        "pth",
        "ckpt",
        "safetensors",
    }
)
"""Extensions (lower-case, no dot) of files that are binary by name; saves reading them."""

PROGRESS_EVERY = 256
"""Report progress after this many entries; often enough for a bar, rare enough to be free."""

SNIFF_BYTES = 8192
"""A NUL byte in this many leading bytes marks a file as binary (git's own heuristic)."""

MINIFIED_AVERAGE_LINE = 300
"""Average characters per line above which a file is treated as minified."""

MINIFIED_LONG_LINE = 5000
"""A line this long in a short file of a web-asset type marks it as minified."""

MINIFIED_FEW_LINES = 20
"""'Short file' for the long-line rule: at most this many lines."""

LONG_LINE_EXTENSIONS: tuple[str, ...] = (".js", ".mjs", ".cjs", ".css", ".json", ".svg")
"""Web-asset types the long-line rule applies to."""

GENERATED_MARKERS: tuple[str, ...] = (
    "@generated",
    "do not edit",
    "code generated",
    "auto-generated",
    "autogenerated",
)
"""Lower-cased header phrases that mark a file as generated."""

GENERATED_HEAD_LINES = 5
"""How many leading lines `is_generated` looks at."""

_GIT_ENV_OVERRIDES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX")
"""Set by git hooks; they would point `git ls-files` at another repository than the root."""

ProgressCallback = Callable[[Progress], None]


def classify_name(name: str) -> SkipReason | None:
    """Return why a file is left out by its name alone, or None to keep it."""
    lower = name.lower()
    if lower in LOCK_FILES or lower.endswith(".lock"):
        return SkipReason.LOCK_FILE
    _, dot, ext = lower.rpartition(".")
    if dot and ext in BINARY_EXTENSIONS:
        return SkipReason.BINARY
    if lower.endswith(MINIFIED_SUFFIXES):
        return SkipReason.MINIFIED
    if lower.endswith(GENERATED_SUFFIXES) or ".generated." in lower or lower.endswith(".snap"):
        return SkipReason.GENERATED
    return None


def is_dependency_dir(name: str) -> bool:
    """Tell whether a folder name is a dependency, build or cache folder."""
    return name in DEPENDENCY_DIRS or name.endswith(".egg-info")


def sniff_content(data: bytes, path: str) -> SkipReason | None:
    """Judge a file by its bytes: BINARY (a NUL early on), MINIFIED (very long lines), or None.

    Called by the indexer on the bytes it has read anyway, so the scan never opens files.
    """
    if b"\0" in data[:SNIFF_BYTES]:
        return SkipReason.BINARY
    if not data:
        return None
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    # Bytes first (cheap); confirm in characters so non-Latin text is not taken for minified.
    if len(data) / lines > MINIFIED_AVERAGE_LINE:
        chars = len(data.decode("utf-8", errors="replace"))
        if chars / lines > MINIFIED_AVERAGE_LINE:
            return SkipReason.MINIFIED
    if (
        lines <= MINIFIED_FEW_LINES
        and path.lower().endswith(LONG_LINE_EXTENSIONS)
        and len(data) > MINIFIED_LONG_LINE
        and max(len(line) for line in data.split(b"\n")) > MINIFIED_LONG_LINE
    ):
        return SkipReason.MINIFIED
    return None


def is_generated(head: str) -> bool:
    """Tell whether a file's first lines say it was generated ("@generated", "DO NOT EDIT", ...).

    Such files are kept but ranked lower.
    """
    first = "\n".join(head.split("\n", GENERATED_HEAD_LINES)[:GENERATED_HEAD_LINES]).lower()
    return any(marker in first for marker in GENERATED_MARKERS)


def scan(
    root: str | Path,
    options: ScanOptions = ScanOptions(),
    on_progress: ProgressCallback | None = None,
) -> ScanReport:
    """List the files under `root` to index, and the ones left out with their reasons.

    Raises:
        ScanError: `root` is missing, not a folder, or cannot be read.
    """
    root_abs = os.path.abspath(os.fspath(root))
    _check_root(root_abs)
    collector = _Collector(root_abs, options, on_progress)
    listed = _git_list(root_abs) if options.use_git else None
    if listed:
        collector.scan_listed(listed)
    else:
        # Also taken when git lists nothing: the root may sit in a folder a parent repo ignores.
        collector.walk()
    return ScanReport(
        root=root_abs,
        files=tuple(sorted(collector.files, key=lambda f: f.path)),
        skipped=tuple(sorted(collector.skipped, key=lambda s: s.path)),
        is_git=bool(listed),
    )


def _check_root(root: str) -> None:
    """Raise ScanError with one line unless `root` is a readable folder."""
    try:
        st = os.stat(root)
    except FileNotFoundError:
        raise ScanError(f"no such folder: {root}") from None
    except OSError as error:
        raise ScanError(f"cannot open folder: {root} ({error.strerror})") from None
    if not stat.S_ISDIR(st.st_mode):
        raise ScanError(f"not a folder: {root}")
    try:
        with os.scandir(root):
            pass
    except OSError as error:
        raise ScanError(f"cannot read folder: {root} ({error.strerror})") from None


def _git_list(root: str) -> list[str] | None:
    """Return what git would index under `root` (relative paths), or None outside git."""
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_OVERRIDES}
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=root,
            env=env,
            capture_output=True,
            check=False,
        )
    except OSError:  # git is not installed, or cannot be started
        return None
    if proc.returncode != 0:
        return None
    # dict.fromkeys: drop duplicates (unmerged paths appear once per stage) keeping order;
    # a trailing "/" marks a nested repository git does not look into.
    raw = dict.fromkeys(p for p in proc.stdout.split(b"\0") if p and not p.endswith(b"/"))
    return [os.fsdecode(p) for p in raw]


def _size_detail(size: int) -> str:
    return f"{size:,} bytes"


def _error_detail(error: OSError) -> str:
    return error.strerror or type(error).__name__


class _Collector:
    """The state of one scan: the rules in force and the files found so far."""

    def __init__(
        self, root: str, options: ScanOptions, on_progress: ProgressCallback | None
    ) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.options = options
        self.on_progress = on_progress
        self.files: list[SourceFile] = []
        self.skipped: list[SkippedFile] = []
        self.excludes = IgnoreMatcher.from_patterns(options.exclude)
        self.seen = 0

    # ------------------------------------------------------------------ shared rules

    def skip(self, path: str, reason: SkipReason, detail: str = "") -> None:
        self.skipped.append(SkippedFile(path, reason, detail))

    def is_excluded(self, ctxtui: IgnoreMatcher, path: str, is_dir: bool) -> bool:
        """Apply --exclude globs over `.ctxtuiignore` rules (the command line wins)."""
        verdict = self.excludes.verdict(path, is_dir) if self.excludes else None
        if verdict is None and ctxtui:
            verdict = ctxtui.verdict(path, is_dir)
        return bool(verdict)

    def tick(self, total: int) -> None:
        self.seen += 1
        if self.on_progress is not None and self.seen % PROGRESS_EVERY == 0:
            self.on_progress(Progress("scan", self.seen, total))

    def finish_progress(self, total: int) -> None:
        if self.on_progress is not None:
            self.on_progress(Progress("scan", self.seen, total))

    def judge_file(
        self, rel: str, name: str, path: str, entry: os.DirEntry[str] | None = None
    ) -> None:
        """Keep or skip one file that passed the folder and ignore rules.

        Stats it once (without following links), through `entry` when the walk has one.
        """
        reason = classify_name(name)
        if reason is not None:
            self.skip(rel, reason)
            return
        try:
            st = entry.stat(follow_symlinks=False) if entry is not None else os.lstat(path)
        except OSError as error:
            self.skip_error(rel, error)
            return
        if stat.S_ISLNK(st.st_mode):
            followed = self.follow_link(rel, path)
            if followed is None:
                return
            st = followed
        if not stat.S_ISREG(st.st_mode):
            if not stat.S_ISDIR(st.st_mode):  # a FIFO or device: reading it could block
                self.skip(rel, SkipReason.UNREADABLE, "not a regular file")
            return  # a folder here is a git submodule or a linked folder: not descended
        if st.st_size > self.options.max_bytes:
            self.skip(rel, SkipReason.TOO_LARGE, _size_detail(st.st_size))
            return
        language = language_for_path(rel)
        if language == "text" and st.st_size > self.options.max_bytes * PLAIN_TEXT_SHARE:
            # a big file no parser knows is data (a font source, a dump, a fixture), not code
            self.skip(rel, SkipReason.TOO_LARGE, _size_detail(st.st_size) + ", plain text")
            return
        # Ask the kernel only when the mode bits leave doubt: one syscall saved per usual file.
        if not st.st_mode & stat.S_IROTH and not os.access(path, os.R_OK):
            self.skip(rel, SkipReason.UNREADABLE, "Permission denied")
            return
        self.files.append(SourceFile(rel, st.st_size, st.st_mtime_ns, language))

    def skip_error(self, rel: str, error: OSError) -> None:
        if isinstance(error, FileNotFoundError):
            self.skip(rel, SkipReason.VANISHED)
        elif error.errno == errno.ELOOP:
            self.skip(rel, SkipReason.SYMLINK_LOOP)
        else:
            self.skip(rel, SkipReason.UNREADABLE, _error_detail(error))

    def follow_link(self, rel: str, path: str) -> os.stat_result | None:
        """Stat a symbolic link's target if it stays inside the root; else record why not."""
        target = os.path.realpath(path)
        if not _is_within(target, self.real_root):
            self.skip(rel, SkipReason.SYMLINK_OUTSIDE, target)
            return None
        try:
            st = os.stat(path)
        except FileNotFoundError:
            self.skip(rel, SkipReason.VANISHED, "broken link")
            return None
        except OSError as error:
            self.skip_error(rel, error)
            return None
        if stat.S_ISDIR(st.st_mode):
            # Its contents are listed under their real path already; a link to a folder that
            # holds the link itself is a loop.
            if _is_within(os.path.realpath(os.path.dirname(path)), target):
                self.skip(rel, SkipReason.SYMLINK_LOOP, "links to a folder above it")
            return None
        return st

    # ------------------------------------------------------------------ git mode

    def scan_listed(self, listed: list[str]) -> None:
        """Judge the paths git listed: one lstat each, folder verdicts computed once."""
        ctxtui = self.read_listed_ignore_files(listed)
        folder_verdicts: dict[str, bool] = {}
        total = len(listed)

        def folder_skipped(folder: str) -> bool:
            known = folder_verdicts.get(folder)
            if known is not None:
                return known
            parent, _, name = folder.rpartition("/")
            if (parent and folder_skipped(parent)) or name in VCS_DIRS:
                verdict = True
            elif is_dependency_dir(name):
                self.skip(folder, SkipReason.DEPENDENCY_DIR, "folder")
                verdict = True
            elif self.is_excluded(ctxtui, folder, True):
                self.skip(folder, SkipReason.EXCLUDED, "folder")
                verdict = True
            else:
                verdict = False
            folder_verdicts[folder] = verdict
            return verdict

        root_prefix = self.root + os.sep
        for rel in listed:
            self.tick(total)
            parent, _, name = rel.rpartition("/")
            if parent and folder_skipped(parent):
                continue
            if self.is_excluded(ctxtui, rel, False):
                self.skip(rel, SkipReason.EXCLUDED)
                continue
            self.judge_file(rel, name, root_prefix + rel)
        self.finish_progress(total)

    def read_listed_ignore_files(self, listed: Iterable[str]) -> IgnoreMatcher:
        """Compile the `.ctxtuiignore` files among the listed paths, shallowest first.

        The root one is read even when git ignores it: a personal, uncommitted ignore file
        is a natural thing to keep out of the repository.
        """
        found = {p for p in listed if p.endswith("/" + IGNORE_FILE)}
        found.add(IGNORE_FILE)
        ordered = sorted(found, key=lambda p: (p.count("/"), p))
        matcher = IgnoreMatcher()
        for rel in ordered:
            base = rel.rpartition("/")[0]
            text = _read_text(os.path.join(self.root, rel))
            if text:
                matcher = matcher.extended(parse_rules(text, base))
        return matcher

    # ------------------------------------------------------------------ walk mode

    def walk(self) -> None:
        """Walk the folder with os.scandir, applying ignore files found on the way."""
        gitignore = IgnoreMatcher()
        info_exclude = _read_text(os.path.join(self.root, ".git", "info", "exclude"))
        if info_exclude:
            gitignore = gitignore.extended(parse_rules(info_exclude))
        stack: list[tuple[str, str, IgnoreMatcher, IgnoreMatcher]] = [
            ("", self.root, gitignore, IgnoreMatcher())
        ]
        while stack:
            rel_dir, path, gitignore, ctxtui = stack.pop()
            try:
                with os.scandir(path) as listing:
                    entries = list(listing)
            except OSError as error:
                self.skip_error(rel_dir, error)
                continue
            names = {entry.name for entry in entries}
            if ".gitignore" in names:
                rules = parse_rules(_read_text(os.path.join(path, ".gitignore")), rel_dir)
                gitignore = gitignore.extended(rules)
            if IGNORE_FILE in names:
                rules = parse_rules(_read_text(os.path.join(path, IGNORE_FILE)), rel_dir)
                ctxtui = ctxtui.extended(rules)
            for entry in entries:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                self.walk_entry(entry, rel, gitignore, ctxtui, stack)
        self.finish_progress(0)

    def walk_entry(
        self,
        entry: os.DirEntry[str],
        rel: str,
        gitignore: IgnoreMatcher,
        ctxtui: IgnoreMatcher,
        stack: list[tuple[str, str, IgnoreMatcher, IgnoreMatcher]],
    ) -> None:
        """Descend into a folder, or judge a file, applying the rules in git's order."""
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError as error:
            self.skip_error(rel, error)
            return
        if is_dir:
            if entry.name in VCS_DIRS or gitignore.verdict(rel, True):
                return
            if is_dependency_dir(entry.name):
                self.skip(rel, SkipReason.DEPENDENCY_DIR, "folder")
            elif self.is_excluded(ctxtui, rel, True):
                self.skip(rel, SkipReason.EXCLUDED, "folder")
            else:
                stack.append((rel, entry.path, gitignore, ctxtui))
            return
        if entry.name == ".git" or gitignore.verdict(rel, False):
            return  # a .git file marks a worktree or submodule; never part of the sources
        self.tick(0)
        if self.is_excluded(ctxtui, rel, False):
            self.skip(rel, SkipReason.EXCLUDED)
            return
        self.judge_file(rel, entry.name, entry.path, entry)


def _is_within(path: str, folder: str) -> bool:
    """Tell whether real path `path` is `folder` or lies under it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _read_text(path: str) -> str:
    """Read an ignore file; one that cannot be read counts as empty (the file is still listed)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""
