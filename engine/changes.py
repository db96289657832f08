"""The work tree's changes against a base, from git: which files changed and their unified diff.

`read_changes` asks git three things (the base commit, the changed files, the patch) and lists
untracked files itself, so the diff shows "the code I am working on" whole: modified, added,
deleted, renamed, untracked and binary files. Git runs with the repository's own hooks,
helpers and filter drivers switched off (engine.gitcmd): a repository's configuration must not
run programs when all we do is read it. Nothing here prints; outside git the answer is None,
and a git that fails inside a work tree raises GitError (the changes are unknown, not none).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

from engine.errors import GitError, UsageError
from engine.file_open import open_regular
from engine.gitcmd import DIFF_SAFETY, filter_safety, git_output, run_git
from engine.model import printable
from engine.skip_rules import OWN_HEADER_WITHIN, is_own_pack, is_secret_name

EMPTY_TREE_SHA1 = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""The empty tree: the base of a repository with no commit yet (sha1 repositories)."""
UNTRACKED_MAX_BYTES = 1_000_000
"""An untracked file larger than this is listed, its content left out (as the scan does)."""
BINARY_SNIFF = 8192
"""Bytes read to decide whether an untracked file is binary (a NUL byte among them)."""
SECRET_DIFF_HINT = "--include-secret NAME packs it"
"""How the command line's user packs a secret file, said in the note written under the
header of a secret file's diff in place of its hunks (`without_secret_diffs`)."""
PACK_DIFF_NOTE = "… a pack ctxtui wrote: its diff left out, as the pack leaves the file out\n"
"""Written under the header of the diff of a pack written into the repository (`pack -o`):
its hunks would put an old pack, old copies of files and all, into the new one."""
PACK_SNIFF_BYTES = OWN_HEADER_WITHIN + 4096
"""Bytes of a changed file read to tell a pack (its header starts within OWN_HEADER_WITHIN)."""


class ChangeStatus(str, Enum):
    """How a file changed; the values are shown to the user and written in JSON."""

    MODIFIED = "modified"
    ADDED = "added"
    DELETED = "deleted"
    RENAMED = "renamed"
    UNTRACKED = "untracked"


_STATUS_LETTERS = {
    "M": ChangeStatus.MODIFIED,
    "T": ChangeStatus.MODIFIED,
    "A": ChangeStatus.ADDED,
    "C": ChangeStatus.ADDED,
    "D": ChangeStatus.DELETED,
    "R": ChangeStatus.RENAMED,
}


@dataclass(frozen=True, slots=True)
class ChangedFile:
    """One changed file and its part of the diff."""

    path: str
    """Relative POSIX path from the root (the new path of a rename)."""
    status: ChangeStatus
    """How it changed."""
    old_path: str = ""
    """The path before a rename; empty otherwise."""
    binary: bool = False
    """Git (or the sniff of an untracked file) found binary content: no text hunks."""
    header: str = ""
    """The diff's lines before the first hunk ("diff --git", modes, ---/+++)."""
    hunks: tuple[str, ...] = ()
    """Each hunk's text, from its "@@" line, in file order."""


@dataclass(frozen=True, slots=True)
class Changes:
    """The work tree against a base: every changed file with its diff."""

    base: str
    """The base as asked ("HEAD" by default, else the branch or commit given)."""
    base_commit: str
    """The commit compared with (the merge base for a branch); the empty tree before the
    first commit."""
    files: tuple[ChangedFile, ...]
    """Changed files sorted by path; empty when nothing changed."""
    no_merge_base: bool = False
    """A base was given and git found no merge base of it and HEAD (unrelated histories, a
    shallow clone cut before it): `base_commit` is the base itself, and the diff holds what
    HEAD lacks of the base as well as the work since."""

    @property
    def present(self) -> tuple[str, ...]:
        """Paths that exist in the work tree now (everything but deletions)."""
        return tuple(f.path for f in self.files if f.status is not ChangeStatus.DELETED)

    @property
    def hunk_count(self) -> int:
        """Hunks in the whole diff."""
        return sum(len(f.hunks) for f in self.files)


def read_changes(root: str | Path, base: str | None = None) -> Changes | None:
    """Read the work tree's changes against `base` (default HEAD); None outside git.

    With a branch or commit as `base`, the diff starts at its merge base with HEAD, so a
    feature branch shows its own work and not what the base branch gained meanwhile.
    Untracked files that git does not ignore count as added.

    A git command that fails once the work tree is found (a damaged or truncated index, a
    missing object, a folder git may not enter) raises GitError: its answer is unknown, and
    an empty list would say "no changes". Callers say the error (the command line: one line
    and exit 1; MCP: a tool error; the app: its worker's error notification).

    Raises:
        UsageError: `base` names no commit.
        GitError: git failed to list the changes, the diff or the untracked files.
    """
    root = os.fspath(root)
    if not _in_work_tree(root):
        return None
    base_commit, no_merge_base = _base_commit(root, base)
    # --submodule=short: one "Subproject commit" block per submodule, whatever the user's
    # diff.submodule says (its "log" and "diff" forms write lines outside any block)
    diff_args = ("--submodule=short", "-M", "--relative", base_commit, "--", ".")
    # a diff reads work tree files through the repository's filter drivers: empty them all
    filters = filter_safety(root)
    listed = _read(root, *filters, "diff", *DIFF_SAFETY, "--name-status", "-z", *diff_args)
    patch = _read(root, *filters, "diff", *DIFF_SAFETY, "--no-color", "--unified=3", *diff_args)
    untracked = _read(root, "ls-files", "--others", "--exclude-standard", "-z", "--", ".")
    files = [_unless_own_pack(root, f) for f in _tracked_changes(listed, patch)]
    files += [_untracked(root, os.fsdecode(raw)) for raw in untracked.split(b"\0") if raw]
    return Changes(
        base=base or "HEAD",
        base_commit=base_commit,
        files=tuple(sorted(files, key=_by_path)),
        no_merge_base=no_merge_base,
    )


def without_secret_diffs(
    changes: Changes, indexed: Callable[[str], bool], hint: str = SECRET_DIFF_HINT
) -> Changes:
    """The changes with the hunks of each secret file (`.env`, `*.pem`... by name, old or new)
    that is not `indexed` (the index leaves secret files out unless the user asked for them)
    replaced by a note saying how to pack it (`hint`, in the words of the front-end: an
    agent or the app cannot pass --include-secret): the secrets it keeps out of the pack
    must not come back in the diff, where a changed key's lines stand without the BEGIN line
    the redaction looks for."""
    note = f"… secret file: its diff left out ({hint})\n"
    files = tuple(
        replace(f, hunks=(), header=f.header + note, binary=False)
        if _secret_name(f) and not indexed(f.path)
        else f
        for f in changes.files
    )
    return replace(changes, files=files) if files != changes.files else changes


def _secret_name(changed: ChangedFile) -> bool:
    return any(
        is_secret_name(path.rpartition("/")[2]) for path in (changed.path, changed.old_path) if path
    )


def _by_path(changed: ChangedFile) -> str:
    return changed.path


def _git(root: str, *args: str) -> bytes | None:
    """Run git in root (engine.gitcmd's safety flags); its stdout, or None when it fails."""
    return git_output(root, *args)


def _in_work_tree(root: str) -> bool:
    """Whether root is in a git work tree (False too when git is not installed).

    Raises:
        GitError: git refuses the repository it found (one owned by another user, "dubious
            ownership"; a damaged .git): saying "not in a git work tree" would hide why.
    """
    done = run_git(root, "rev-parse", "--is-inside-work-tree")
    if done is None:
        return False
    if done.returncode != 0 and b"not a git repository" not in done.stderr:
        raise GitError(f"git rev-parse failed, so the changes are unknown: {_reason(done.stderr)}")
    return done.returncode == 0 and done.stdout.strip() == b"true"


def _read(root: str, *args: str) -> bytes:
    """Stdout of a git command the changes cannot do without.

    Raises:
        GitError: it failed, or git could not be started (the folder went), with git's reason.
    """
    done = run_git(root, *args)
    if done is not None and done.returncode == 0:
        return done.stdout
    command = next((arg for arg in args if not arg.startswith("-") and "=" not in arg), "git")
    reason = _reason(done.stderr) if done is not None else "git could not be started"
    raise GitError(f"git {command} failed, so the changes are unknown: {reason}")


def _reason(stderr: bytes) -> str:
    """git's own words on one line: its first `fatal:` or `error:` line (else its first line),
    without that prefix."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines()]
    lines = [line for line in lines if line]
    for line in lines:
        prefix, colon, rest = line.partition(":")
        if colon and prefix in ("fatal", "error") and rest.strip():
            return rest.strip()
    return lines[0] if lines else "it gave no reason"


def _base_commit(root: str, base: str | None) -> tuple[str, bool]:
    """The commit to diff against: HEAD, the merge base of `base` and HEAD, or the empty tree;
    and whether `base` itself stands in for a merge base git could not find.

    Raises:
        UsageError: `base` names no commit.
        GitError: HEAD names a commit git cannot read (missing or damaged): taking it for a
            repository with no commit yet would show every file as added.
    """
    head = _git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    if head is None:
        named = _git(root, "rev-parse", "--verify", "-q", "HEAD")  # none on an unborn branch
        if named is not None:
            raise GitError(
                f"git cannot read HEAD's commit {named.decode().strip()[:12]} (missing or"
                " damaged), so the changes are unknown"
            )
    if base is None:
        if head is None:  # no commit yet: everything is new
            empty = _git(root, "hash-object", "-t", "tree", "/dev/null")
            return (empty.decode().strip() if empty else EMPTY_TREE_SHA1), False
        return head.decode().strip(), False
    if base.startswith("-"):
        raise UsageError(f"unknown base {base!r}: not a branch or commit")
    resolved = _git(root, "rev-parse", "--verify", "-q", "--end-of-options", f"{base}^{{commit}}")
    if resolved is None:
        raise UsageError(f"unknown base {base!r}: not a branch or commit")
    commit = resolved.decode().strip()
    if head is None:
        return commit, False
    merge_base = _git(root, "merge-base", commit, "HEAD")
    return (merge_base.decode().strip(), False) if merge_base else (commit, True)


def _tracked_changes(listed: bytes, patch: bytes) -> list[ChangedFile]:
    """Pair `--name-status -z` entries with their blocks of the patch (same order)."""
    entries = _name_status(listed)
    blocks = _split_patch(patch.decode("utf-8", "replace"))
    files = []
    position = 0
    for status, path, old_path, count in entries:
        header, hunks = _joined(blocks[position : position + count])
        position += count
        files.append(
            ChangedFile(
                path=path,
                status=status,
                old_path=old_path,
                binary=_is_binary_header(header),
                header=header,
                hunks=hunks,
            )
        )
    return files


def _joined(blocks: Sequence[tuple[str, tuple[str, ...]]]) -> tuple[str, tuple[str, ...]]:
    """One file's (header, hunks) from its blocks of the patch: a type change has two, the
    deletion then the creation, the second's header kept before its first hunk."""
    if not blocks:
        return "", ()
    header, first_hunks = blocks[0]
    hunks = list(first_hunks)
    for next_header, next_hunks in blocks[1:]:
        if not hunks:
            header += next_header
            hunks = list(next_hunks)
        elif next_hunks:
            hunks += [next_header + next_hunks[0], *next_hunks[1:]]
        else:
            hunks[-1] += next_header
    return header, tuple(hunks)


def _name_status(listed: bytes) -> list[tuple[ChangeStatus, str, str, int]]:
    """Parse `git diff --name-status -z`: "R100\\0old\\0new\\0M\\0path\\0...", each entry
    with the number of blocks git writes for it in the patch (2 for a type change, file to
    symlink or submodule and back: git shows it as a deletion and a creation)."""
    fields = [os.fsdecode(raw) for raw in listed.split(b"\0")]
    entries: list[tuple[ChangeStatus, str, str, int]] = []
    position = 0
    while position < len(fields) and fields[position]:
        letter = fields[position][0]
        status = _STATUS_LETTERS.get(letter, ChangeStatus.MODIFIED)
        if letter in "RC":
            old, new = fields[position + 1], fields[position + 2]
            entries.append((status, new, old if letter == "R" else "", 1))
            position += 3
        else:
            entries.append((status, fields[position + 1], "", 2 if letter == "T" else 1))
            position += 2
    return entries


def _split_patch(patch: str) -> list[tuple[str, tuple[str, ...]]]:
    """Split a unified patch into (header, hunks) per file, in order: a hunk starts at each
    line that starts with "@@". Sliced out where "\n@@" is found, not split into lines (a
    regenerated 19 MB data file's 38 MB diff: 600,000 line strings, 206 MB at its peak), and
    only a line feed ends a line (a carriage return inside a line starts no hunk)."""
    blocks: list[tuple[str, tuple[str, ...]]] = []
    for block in _file_blocks(patch):
        starts = []
        position = block.find("\n@@")
        while position >= 0:
            starts.append(position + 1)
            position = block.find("\n@@", position + 1)
        ends = [*starts[1:], len(block)][: len(starts)]
        hunks = tuple(block[start:end] for start, end in zip(starts, ends, strict=True))
        blocks.append((block[: starts[0]] if starts else block, hunks))
    return blocks


def _file_blocks(patch: str) -> Sequence[str]:
    starts = [0] if patch.startswith("diff --git ") else []
    position = patch.find("\ndiff --git ")
    while position >= 0:
        starts.append(position + 1)
        position = patch.find("\ndiff --git ", position + 1)
    ends = [*starts[1:], len(patch)]
    return [patch[start:end] for start, end in zip(starts, ends[: len(starts)], strict=True)]


def _unless_own_pack(root: str, changed: ChangedFile) -> ChangedFile:
    """The changed file, or its header and a note in place of its hunks when the work tree
    holds a pack ctxtui wrote under its name (as the scan, which leaves such files out)."""
    if changed.status is ChangeStatus.DELETED or not changed.hunks:
        return changed
    try:
        with open_regular(os.path.join(root, changed.path)) as stream:
            head = stream.read(PACK_SNIFF_BYTES)
    except OSError:
        return changed
    return _pack_noted(changed) if is_own_pack(head) else changed


def _pack_noted(changed: ChangedFile) -> ChangedFile:
    return replace(changed, hunks=(), header=changed.header + PACK_DIFF_NOTE, binary=False)


def _is_binary_header(header: str) -> bool:
    return any(
        line.startswith(("Binary files ", "GIT binary patch")) for line in header.splitlines()
    )


def _untracked(root: str, path: str) -> ChangedFile:
    """An untracked file as an added file, with a diff written the way git writes one."""
    full = os.path.join(root, path)
    shown = printable(path)  # the diff is text to read: a name's stray bytes become U+FFFD
    head = f"diff --git a/{shown} b/{shown}\n"
    try:
        stat = os.stat(full)
        mode = "100755" if stat.st_mode & 0o111 else "100644"
        head += f"new file mode {mode}\n"
        size = stat.st_size
        with open(full, "rb") as stream:
            data = stream.read(UNTRACKED_MAX_BYTES + 1)
    except OSError as error:
        note = f"… untracked file could not be read: {error.strerror or error}\n"
        return ChangedFile(path, ChangeStatus.UNTRACKED, header=head + note)
    if b"\0" in data[:BINARY_SNIFF]:
        binary = f"Binary files /dev/null and b/{shown} differ\n"
        return ChangedFile(path, ChangeStatus.UNTRACKED, binary=True, header=head + binary)
    if size > UNTRACKED_MAX_BYTES:
        note = f"… untracked file of {size:,} bytes: content left out\n"
        return ChangedFile(path, ChangeStatus.UNTRACKED, header=head + note)
    lines = data.decode("utf-8", "replace").splitlines()
    header = f"{head}--- /dev/null\n+++ b/{shown}\n"
    if not lines:
        return ChangedFile(path, ChangeStatus.UNTRACKED, header=header)
    hunk = f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines)
    changed = ChangedFile(path, ChangeStatus.UNTRACKED, header=header, hunks=(hunk,))
    return _pack_noted(changed) if is_own_pack(data) else changed
