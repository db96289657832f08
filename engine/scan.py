"""List the files of a folder worth indexing, and say why every other file was left out.

Inside a git work tree `git ls-files` (tracked, then others not ignored) gives the list, so
`.gitignore` files, negation and `.git/info/exclude` behave exactly as git; elsewhere (or when
git fails) an `os.scandir` walk applies `.gitignore` files with `engine.ignore`. Both paths
then apply the same rules: `.ctxtuiignore` and `--exclude` globs, dependency and build
folders (a `build/`, `target/` or `coverage/` folder the project keeps, tracked by git or not
ignored by the `.gitignore` of a tree without `.git`, is source and stays), lock, minified,
generated and binary names, the size limit, and symbolic links, which are never followed out
of the root. The scan only stats: reading and sniffing contents
(`sniff_content`, `is_generated`) is the indexer's job, done while it reads each file anyway.
The rules themselves (name tables, content sniffs) live in engine.skip_rules; the verdicts
kept between scans of a git work tree (trusting git for the files it finds unchanged) in
engine.scan_memo. The module stays whole past 400 lines: the git listing, the memo's
verdicts and the walk share every rule of `_Collector`.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
import subprocess
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path

from engine.errors import ScanError
from engine.file_open import open_regular
from engine.gitcmd import (
    FILTER_LISTING,
    filter_flags,
    finish_git,
    finish_git_told,
    git_output,
    start_git,
    unreadable_folders,
)
from engine.ignore import BadPattern, IgnoreMatcher, IgnoreRule, compile_rule, parse_rules
from engine.model import Progress, ScanOptions, ScanReport, SkippedFile, SkipReason, SourceFile
from engine.parse.languages import language_for_path
from engine.scan_files import Columns, ScannedFiles, select, sorted_files
from engine.scan_memo import (
    SURE_MODES,
    ScanMemo,
    index_identity,
    index_path,
    load_memo,
    make_memo,
    rules_identity,
    save_memo,
)
from engine.skip_rules import (
    IGNORE_FILE,
    PLAIN_TEXT_SHARE,
    PROGRESS_EVERY,
    VCS_DIRS,
    classify_name,
    is_dependency_dir,
    is_output_dir,
    is_secret_name,
)

ProgressCallback = Callable[[Progress], None]

SECRET_HINT = "--include-secret NAME or !NAME in .ctxtuiignore packs it"
"""How a user brings a secret file back, said where the file is listed as skipped."""


def scan(
    root: str | Path,
    options: ScanOptions = ScanOptions(),
    on_progress: ProgressCallback | None = None,
    memo_file: Path | None = None,
) -> ScanReport:
    """List the files under `root` to index, and the ones left out with their reasons.

    `memo_file` (in the repository's cache folder) keeps the verdicts on tracked files
    between scans of a git work tree, so that the files git finds unchanged are not stat-ed
    and judged again (engine.scan_memo); None judges every file.

    Raises:
        ScanError: `root` is missing, not a folder, or cannot be read.
    """
    root_abs = os.path.abspath(os.fspath(root))
    check_root(root_abs)
    collector = _Collector(root_abs, options, on_progress)
    listed = _scan_git(collector, memo_file) if options.use_git else None
    if not listed:
        # Also taken when git lists nothing: the root may sit in a folder a parent repo ignores.
        collector = _Collector(root_abs, options, on_progress)
        collector.walk()
    if collector.recalled is not None:  # a warm scan: most files come from the memo's columns
        files: Sequence[SourceFile] = sorted_files(collector.recalled, collector.files)
    else:
        files = tuple(sorted(collector.files, key=lambda f: f.path))
    skipped = tuple(sorted(collector.skipped, key=lambda s: s.path))
    unmatched = _unmatched(options.secret_files, files, skipped)
    return ScanReport(
        root=root_abs,
        files=files,
        skipped=skipped,
        is_git=bool(listed),
        notes=tuple(dict.fromkeys([*collector.problems, *unmatched])),
    )


def _unmatched(
    patterns: Sequence[str], files: Sequence[SourceFile], skipped: Sequence[SkippedFile]
) -> list[str]:
    """A note for each --include-secret pattern no file matches (a typo indexes nothing
    and would say nothing); a bad pattern is named where it is compiled."""
    notes = []
    for pattern in patterns:
        try:
            rule = compile_rule(pattern)
        except BadPattern:
            continue
        if rule is None:  # blank
            continue
        paths = itertools.chain((f.path for f in files), (s.path for s in skipped))
        if not any(rule.matches(path, False) for path in paths):
            notes.append(f"--include-secret: no file matches {pattern!r}")
    return notes


def check_root(root: str) -> None:
    """Raise ScanError with one line (naming `root` as given) unless it is a readable folder:
    missing, not a folder, a name too long, a parent or the folder itself the user may not
    open, an empty name (a script's unset variable: `.` names the current folder). The
    front-ends ask it, with the folder as given, before reading a folder's settings."""
    if not root:
        raise ScanError("no such folder: '' (an empty name; . is the current folder)")
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


def _scan_git(collector: _Collector, memo_file: Path | None) -> list[str] | None:
    """Judge what git would index under the root; return it (relative paths), or None
    outside git (then nothing was judged).

    `git ls-files -o` walks the whole tree for untracked files (0.15 s on 16,000 files) and
    `git diff-files` stats every tracked file against the git index, both in the background
    (diff-files once the filter drivers are listed, side by side with finding the index).
    Meanwhile the tracked files are judged: from the memo of an earlier scan (engine.scan_memo)
    while the git index and the rules are those it was made with, then again for the ones git
    finds changed; else all of them, listed by `git ls-files -s` (the index alone). The
    untracked ones are judged after. Judging the tracked files early gives the same verdicts
    unless an untracked nested `.ctxtuiignore` turns up: then all are judged again. Through
    engine.gitcmd: a repository's `core.fsmonitor` would otherwise run on ls-files.
    """
    root = collector.root
    walking = start_git(root, "ls-files", "-o", "--exclude-standard", "-z")
    if walking is None:
        return None
    # the filter drivers diff-files must not run are listed while the index is found
    listing = start_git(root, *FILTER_LISTING) if memo_file is not None else None
    checking: subprocess.Popen[bytes] | None = None
    tracked: list[str] | None
    odd: Collection[str]  # tracked paths judged again whatever git says (see _tracked)
    try:
        where = index_path(root) if memo_file is not None else None
        git_index = index_identity(where) if where is not None else None
        filters = filter_flags(finish_git(listing)) if listing is not None else ()
        if git_index is not None:
            checking = start_git(root, *filters, *STAT_CHECK)
        memo = load_memo(memo_file, root, git_index) if memo_file and git_index else None
        if memo is not None and collector.recall(memo):
            tracked, odd = list(memo.tracked), memo.unsure
        else:
            memo = None
            tracked, odd = _tracked(git_output(root, "ls-files", "-s", "-v", "-z"))
            if tracked:
                collector.judge_listed(tracked, collector.read_listed_ignore_files(tracked))
        walked, told = finish_git_told(walking)
        untracked = _paths(walked)
        # a file diff-files could not stat is missing from its list: then it vouches for none
        dirty = _paths(finish_git(checking, silent=True)) if checking is not None else None
    finally:
        for process in (walking, listing, checking):
            if process is not None and process.poll() is None:  # judging failed: no git left
                process.kill()
                process.wait()
    moved = where is not None and git_index is not None and index_identity(where) != git_index
    if moved:
        # A git command (checkout, add, commit, stash) rewrote the index during the scan: the
        # memo, the listing and diff-files may each have seen another one. Judge everything
        # from a fresh listing, and save no memo.
        tracked, odd = _tracked(git_output(root, "ls-files", "-s", "-v", "-z"))
        memo, dirty, git_index = None, None, None
    if untracked is None or tracked is None:
        return None
    known = set(tracked)
    others = [p for p in untracked if p not in known]
    listed = tracked + others
    if not listed:
        return listed
    if (
        moved
        or any(p.endswith("/" + IGNORE_FILE) for p in others)
        or (memo is not None and dirty is None)
    ):
        collector.reset()
        collector.judge_listed(listed, collector.read_listed_ignore_files(listed))
    elif memo is not None and dirty is not None:
        changed = [p for p in dirty if p not in odd]
        collector.forget(changed)
        collector.judge_listed([*odd, *changed, *others], collector.ctxtui)
    else:
        collector.judge_listed(others, collector.ctxtui)
        if git_index is not None and dirty is not None:
            assert memo_file is not None
            _remember(collector, memo_file, git_index, tracked, frozenset(odd) | frozenset(dirty))
    unreadable = unreadable_folders(told)
    if unreadable:
        collector.skip_unreadable(_from_top(root, unreadable))
    collector.finish_progress(len(listed))
    return listed


def _from_top(root: str, folders: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Folders git named from the top of its work tree, as paths under `root` (a folder
    in it, maybe); asked of git only when it named any."""
    told = git_output(root, "rev-parse", "--show-prefix")
    prefix = os.fsdecode(told).strip() if told is not None else ""
    return [(path[len(prefix) :], why) for path, why in folders if path.startswith(prefix)]


STAT_CHECK = (
    "-c",
    "core.checkStat=default",
    "-c",
    "core.trustctime=true",
    "diff-files",
    "--name-only",
    "--relative",
    "-z",
)
"""The tracked files whose stat differs from the git index, with git's full stat check
whatever the repository's config says (size, mtime, ctime, inode, owner, mode)."""


def _tracked(listed: bytes | None) -> tuple[list[str] | None, set[str]]:
    """The paths of `git ls-files -s -v -z` output (None for a failed command), and those
    the memo cannot vouch for: links, submodules, unmerged, assume-unchanged or skip-worktree
    entries (tag other than "H")."""
    if listed is None:
        return None, set()
    paths: dict[str, None] = {}
    odd: set[str] = set()
    for entry in listed.split(b"\0"):
        meta, _, raw = entry.partition(b"\t")
        if not raw:
            continue
        path = os.fsdecode(raw)
        paths[path] = None  # unmerged paths appear once per stage
        if meta[:2] != b"H " or meta[2:8] not in SURE_MODES or not meta.endswith(b" 0"):
            odd.add(path)
    return list(paths), odd


def _remember(
    collector: _Collector,
    memo_file: Path,
    git_index: str,
    tracked: list[str],
    unsure: frozenset[str],
) -> None:
    """Save the verdicts on the tracked files for the next scan (engine.scan_memo)."""
    verdicts: dict[str, SourceFile | SkippedFile] = {s.path: s for s in collector.skipped}
    verdicts.update((f.path, f) for f in collector.files)
    if collector.recalled is not None:
        verdicts.update((f.path, f) for f in ScannedFiles(*collector.recalled))
    rules = rules_identity(collector.options, collector.ignore_texts)
    ignore_files = tuple(path for path, _ in collector.ignore_texts)
    memo = make_memo(collector.root, git_index, rules, ignore_files, tracked, unsure, verdicts)
    save_memo(memo_file, memo)


def _paths(listed: bytes | None) -> list[str] | None:
    """The paths of `git ls-files -z` output; None for a failed command."""
    if listed is None:
        return None
    # dict.fromkeys: drop duplicates (unmerged paths appear once per stage) keeping order;
    # a trailing "/" marks a nested repository git does not look into.
    raw = dict.fromkeys(p for p in listed.split(b"\0") if p and not p.endswith(b"/"))
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
        """Files kept, judged one by one."""
        self.recalled: Columns | None = None
        """Files kept on the memo's word (engine.scan_memo), as columns; None: no memo."""
        self.skipped: list[SkippedFile] = []
        self.problems: list[str] = []
        """Bad ignore patterns met, one line each (the patterns themselves are left out)."""
        self.excludes = IgnoreMatcher.from_patterns(options.exclude, problems=self.problems)
        self.includes = IgnoreMatcher.from_patterns(
            options.include, problems=self.problems, source="include"
        )
        self.admitted = IgnoreMatcher.from_patterns(
            options.secret_files, problems=self.problems, source="--include-secret"
        )
        """Secret files the user asked for (--include-secret)."""
        self.seen = 0
        self.ctxtui = IgnoreMatcher()
        """The `.ctxtuiignore` rules of a git listing (the walk keeps one matcher a folder)."""
        self.folder_verdicts: dict[str, bool] = {}
        """Listed folder -> whether its files are left out (computed once a folder)."""
        self.ignore_texts: list[tuple[str, str]] = []
        """The `.ctxtuiignore` files read for a git listing (path, text): part of the rules."""
        self._option_problems = len(self.problems)

    def reset(self) -> None:
        """Forget every verdict, to judge a listing again from the start."""
        self.files.clear()
        self.recalled = None
        self.skipped.clear()
        del self.problems[self._option_problems :]
        self.seen = 0
        self.folder_verdicts.clear()

    # ------------------------------------------------------------------ shared rules

    def skip(self, path: str, reason: SkipReason, detail: str = "") -> None:
        self.skipped.append(SkippedFile(path, reason, detail))

    def is_excluded(self, ctxtui: IgnoreMatcher, path: str, is_dir: bool) -> bool:
        """Apply --exclude globs over `.ctxtuiignore` rules (the command line wins); with
        include patterns, a file none of them matches is left out too."""
        if self.includes and not is_dir and not self.includes.is_ignored(path):
            return True
        verdict = self.excludes.verdict(path, is_dir) if self.excludes else None
        if verdict is None and ctxtui:
            verdict = ctxtui.verdict(path, is_dir)
        return bool(verdict)

    def is_secret(self, ctxtui: IgnoreMatcher, rel: str, name: str) -> bool:
        """A secret file by its name, unless the user asked for it: --include-secret, or a
        `!pattern` in `.ctxtuiignore` (checked only for the rare secret name)."""
        if not is_secret_name(name):
            return False
        if self.admitted and self.admitted.verdict(rel, False):
            return False
        return not (ctxtui and ctxtui.verdict(rel, False) is False)

    def rules_of(self, text: str, base: str, source: str) -> tuple[IgnoreRule, ...]:
        """Compile an ignore file's patterns, noting bad ones (left out, as git does)."""
        return parse_rules(text, base, source=source, problems=self.problems)

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

    def judge_listed(self, listed: list[str], ctxtui: IgnoreMatcher) -> None:
        """Judge paths git listed: one lstat each, folder verdicts computed once.

        Called once per part of a listing (tracked files, then the others); the caller
        reports the end of the progress.
        """
        self.ctxtui = ctxtui
        total = self.seen + len(listed)
        root_prefix = self.root + os.sep
        for rel in listed:
            self.tick(total)
            parent, _, name = rel.rpartition("/")
            if parent and self.folder_skipped(parent):
                continue
            if self.is_excluded(ctxtui, rel, False):
                self.skip(rel, SkipReason.EXCLUDED)
                continue
            if self.is_secret(ctxtui, rel, name):
                self.skip(rel, SkipReason.SECRET_FILE, SECRET_HINT)
                continue
            self.judge_file(rel, name, root_prefix + rel)

    def folder_skipped(self, folder: str) -> bool:
        """Tell whether a listed folder's files are left out (noting why, once)."""
        known = self.folder_verdicts.get(folder)
        if known is not None:
            return known
        parent, _, name = folder.rpartition("/")
        if (parent and self.folder_skipped(parent)) or name in VCS_DIRS:
            verdict = True
        elif is_dependency_dir(name) or (is_output_dir(name) and not self.tracked(folder)):
            self.skip(folder, SkipReason.DEPENDENCY_DIR, "folder")
            verdict = True
        elif self.is_excluded(self.ctxtui, folder, True):
            self.skip(folder, SkipReason.EXCLUDED, "folder")
            verdict = True
        else:
            verdict = False
        self.folder_verdicts[folder] = verdict
        return verdict

    def skip_unreadable(self, folders: list[tuple[str, str]]) -> None:
        """Note the folders git could not list (`git ls-files -o` warns and goes on), as
        the walk notes a folder it cannot list: unless the rules leave the folder out anyway,
        or the tracked files in it were each noted unreadable already."""
        for folder, why in folders:
            if not folder or self.folder_skipped(folder):
                continue
            under = folder + "/"
            if not any(s.path.startswith(under) for s in self.skipped):
                self.skip(folder, SkipReason.UNREADABLE, why)

    def tracked(self, folder: str) -> bool:
        """Tell whether git tracks a file under `folder`; asked only of a listed folder with an
        output name (`build`...), which is rare: an ignored one is never listed."""
        found = git_output(self.root, "ls-files", "-c", "-z", "--", f":(literal){folder}/")
        return bool(found)

    def recall(self, memo: ScanMemo) -> bool:
        """Take the memo's verdicts on the tracked files it is sure of, if the rules are the
        memo's and it is whole (else judge nothing and return False)."""
        ctxtui = self.read_ignore_files(memo.ignore_files)
        if rules_identity(self.options, self.ignore_texts) != memo.rules:
            self.reset()
            return False
        recalled = memo.recall()
        if recalled is None:
            self.reset()
            return False
        self.ctxtui = ctxtui
        files, skipped, nothing = recalled
        self.recalled = files
        self.skipped.extend(skipped)
        for rel in nothing:  # its folder is left out: the folder's record is made once
            self.folder_skipped(rel.rpartition("/")[0])
        self.seen += len(memo.tracked) - len(memo.unsure)
        return True

    def forget(self, paths: Iterable[str]) -> None:
        """Drop the verdicts on `paths`, to judge them again."""
        gone = set(paths)
        if gone:
            self.files = [f for f in self.files if f.path not in gone]
            if self.recalled is not None:
                self.recalled = select(self.recalled, [p not in gone for p in self.recalled[0]])
            self.skipped = [s for s in self.skipped if s.path not in gone]
            self.seen -= len(gone)

    def read_listed_ignore_files(self, listed: Iterable[str]) -> IgnoreMatcher:
        """Compile the `.ctxtuiignore` files among the listed paths, shallowest first.

        The root one is read even when git ignores it: a personal, uncommitted ignore file
        is a natural thing to keep out of the repository.
        """
        found = {p for p in listed if p.endswith("/" + IGNORE_FILE)}
        found.add(IGNORE_FILE)
        return self.read_ignore_files(found)

    def read_ignore_files(self, found: Iterable[str]) -> IgnoreMatcher:
        """Compile the given `.ctxtuiignore` files, shallowest first, noting their texts."""
        ordered = sorted(found, key=lambda p: (p.count("/"), p))
        matcher = IgnoreMatcher()
        self.ignore_texts = []
        for rel in ordered:
            base = rel.rpartition("/")[0]
            text = _read_text(os.path.join(self.root, rel))
            self.ignore_texts.append((rel, text))
            if text:
                matcher = matcher.extended(self.rules_of(text, base, rel))
        return matcher

    # ------------------------------------------------------------------ walk mode

    def walk(self) -> None:
        """Walk the folder with os.scandir, applying ignore files found on the way."""
        gitignore = IgnoreMatcher()
        info_exclude = _read_text(os.path.join(self.root, ".git", "info", "exclude"))
        if info_exclude:
            gitignore = gitignore.extended(self.rules_of(info_exclude, "", ".git/info/exclude"))
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
            for name in (".gitignore", IGNORE_FILE):
                if name in names:
                    source = f"{rel_dir}/{name}" if rel_dir else name
                    rules = self.rules_of(_read_text(os.path.join(path, name)), rel_dir, source)
                    if name == IGNORE_FILE:
                        ctxtui = ctxtui.extended(rules)
                    else:
                        gitignore = gitignore.extended(rules)
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
            # an output name is the project's source when its ignore rules do not ignore it
            if is_dependency_dir(entry.name) or (is_output_dir(entry.name) and not gitignore):
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
        if self.is_secret(ctxtui, rel, entry.name):
            self.skip(rel, SkipReason.SECRET_FILE, SECRET_HINT)
            return
        self.judge_file(rel, entry.name, entry.path, entry)


def _is_within(path: str, folder: str) -> bool:
    """Tell whether real path `path` is `folder` or lies under it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _read_text(path: str) -> str:
    """Read an ignore file; one that cannot be read (or is no file: a FIFO would hold the scan
    until written to) counts as empty (the file is still listed)."""
    try:
        with open_regular(path) as handle:
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads it
