"""Remember the scan's verdict on every tracked file, so the next scan can trust git for them.

A warm scan used to lstat and judge every listed file in Python (0.6 s on 16,000 files, 4 s
on 88,000). Git already knows which tracked files changed: `git diff-files` compares each one
with the stat data of the git index, in C, on every core. So a scan saves what it decided for
each tracked file beside the identity of the git index it saw (its size, inode, mtime and
checksum, which cover every entry's stat data and blob id). While the git index is the same
and the rules are the same (options, `.ctxtuiignore` texts and the code that judges a file),
a tracked file git finds stat-clean has the very stat it had then, so its verdict stands; the
others (stat-dirty, untracked, links, submodules, unmerged or flagged entries) are judged
again. The memo is one small binary file in the repository's cache folder (a JSON header, then
the paths and four number columns, read in milliseconds), written atomically; one that cannot
be read is ignored (the scan then judges everything, as before).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import tempfile
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec
from itertools import compress
from pathlib import Path

from engine.gitcmd import git_output
from engine.model import ScanOptions, SkippedFile, SkipReason, SourceFile
from engine.scan_files import Columns

MEMO_FILE = "scan-memo.bin"
"""The memo's name inside a repository's cache folder (one for every encoding)."""
MAGIC = b"CTXSCAN\x02"
"""First bytes of a memo; the last one is the version: change it when the layout or the
meaning of a verdict changes. Then a JSON header's length (8 bytes, little-endian), the
header, the tracked paths joined by NUL, and the columns (COLUMNS), native byte order."""
COLUMNS = ("B", "q", "q", "L")
"""`array` type codes of the kinds, numbers, mtimes and labels columns."""
SURE_MODES = (b"100644", b"100755")
"""Git modes of plain files: a link (120000) or a submodule (160000) is always judged again,
since what it points at can change while its own entry stays clean."""

_KEPT, _SKIPPED, _NOTHING = 1, 2, 0
_UNSURE = 3
"""A kind the recall gives unsure paths: none of the three masks below takes them."""
_KINDS = bytes((_KEPT, _SKIPPED, _NOTHING))
_MASKS = {kind: bytes(int(code == kind) for code in range(256)) for kind in _KINDS}
"""bytes.translate tables: a kind's byte becomes 1, every other byte 0."""


def index_path(root: str) -> str | None:
    """Where the git index of the repository at `root` is; None outside git.

    Read without git when `root/.git` is a folder git would take for its repository (the
    usual clone: 10-40 ms of a warm scan saved); else (a worktree's or submodule's `.git`
    file, a sub-folder of a repository, an odd `.git`) `git rev-parse` says."""
    git_dir = os.path.join(root, ".git")
    if _is_git_dir(git_dir):
        return os.path.join(git_dir, "index")
    found = git_output(root, "rev-parse", "--git-path", "index")
    return os.path.join(root, os.fsdecode(found.strip())) if found else None


def _is_git_dir(path: str) -> bool:
    """Tell whether git's discovery stops at folder `path` (git's own test: a HEAD that is a
    symbolic ref or an object id, and `objects` and `refs` folders). Git keeps the index of
    such a folder in it whatever its config says (the environment variables that would move
    it are not passed to git: engine.gitcmd). Any doubt says no, and git is asked."""
    try:
        with open(os.path.join(path, "HEAD"), "rb") as handle:
            head = handle.read(200).strip()
    except OSError:
        return False
    is_ref = head.startswith(b"ref: refs/")
    is_id = len(head) in (40, 64) and all(c in b"0123456789abcdef" for c in head)
    return (is_ref or is_id) and all(
        os.path.isdir(os.path.join(path, name)) for name in ("objects", "refs")
    )


def index_identity(path: str) -> str | None:
    """The identity of the git index at `path` (`index_path`): its size, inode, mtime and
    trailing checksum (git renames a new index into place, so any change shows). None when it
    cannot be read (no index yet)."""
    try:
        with open(path, "rb") as handle:
            st = os.fstat(handle.fileno())
            if st.st_size < 32:
                return None
            handle.seek(-20, os.SEEK_END)
            tail = handle.read(20)
            if not tail.strip(b"\0"):  # index.skipHash: no checksum, hash the whole file
                handle.seek(0)
                tail = hashlib.sha1(handle.read()).digest()
    except OSError:
        return None
    return f"{st.st_size}:{st.st_ino}:{st.st_mtime_ns}:{tail.hex()}"


JUDGING_MODULES = (
    "engine.scan",
    "engine.scan_memo",
    "engine.skip_rules",
    "engine.ignore",
    "engine.parse.languages",
)
"""The modules whose code decides a file's verdict (skip rules, languages, ignore syntax)."""


@cache
def code_identity() -> bytes:
    """A digest of the source of JUDGING_MODULES: a memo saved by other code (an upgrade, or
    two installed versions sharing one cache) never lends its verdicts, though the git index
    may not change for days. Read once a process (five files, well under a millisecond)."""
    digest = hashlib.sha1()
    for name in JUDGING_MODULES:
        spec = find_spec(name)
        where = spec.origin if spec is not None else None
        try:
            digest.update(Path(where).read_bytes() if where else name.encode())
        except OSError:
            digest.update(b"unreadable " + name.encode())
    return digest.digest()


def rules_identity(options: ScanOptions, ignore_texts: Sequence[tuple[str, str]]) -> str:
    """A digest of everything besides a file's own stat that decides its verdict: the code
    that judges (code_identity), the scan options and each `.ctxtuiignore` (path and
    text)."""
    digest = hashlib.sha1(code_identity())
    digest.update(repr(options).encode("utf-8", "surrogateescape"))
    for path, text in ignore_texts:
        digest.update(b"\0" + path.encode("utf-8", "surrogateescape"))
        digest.update(b"\0" + text.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class ScanMemo:
    """The verdicts of one scan on the tracked files, and the state they hold for."""

    root: str
    """Absolute path of the scanned folder."""
    git_index: str
    """`index_identity` when the scan started."""
    rules: str
    """`rules_identity` of the scan."""
    ignore_files: tuple[str, ...]
    """The `.ctxtuiignore` files whose texts `rules` covers."""
    tracked: tuple[str, ...]
    """The tracked paths, as git listed them."""
    unsure: frozenset[str]
    """Tracked paths judged again every time: stat-dirty when saved, or not plain files."""
    kinds: Sequence[int]
    """Per tracked path: 1 kept, 2 left out, 0 nothing."""
    numbers: Sequence[int]
    """Per tracked path: the size (kept) or 0."""
    mtimes: Sequence[int]
    """Per tracked path: the mtime in nanoseconds (kept) or 0."""
    labels: Sequence[int]
    """Per tracked path: an index into `texts`: the language (kept), the reason and the
    detail (left out, two entries from there)."""
    texts: list[str]
    """The strings `labels` points into."""

    def recall(self) -> tuple[Columns, list[SkippedFile], list[str]] | None:
        """The verdicts on the tracked files but the unsure ones: the files kept (as columns:
        engine.scan_files), the files left out, and the paths left out with their folder;
        None if the memo is corrupt."""
        try:
            return self._recall()
        except (IndexError, ValueError):  # a label or a reason the memo cannot have written
            return None

    def _recall(self) -> tuple[Columns, list[SkippedFile], list[str]] | None:
        # One byte per tracked path, its kind, turned into masks by bytes.translate: no Python
        # step per path (15,700 of them on a warm scan of 16,000 files), but for the few unsure.
        kinds = bytearray(self.kinds)
        if kinds.translate(None, _KINDS):
            return None  # a kind the memo cannot have written
        for at in self._places(self.unsure):
            kinds[at] = _UNSURE
        texts, tracked, labels = self.texts, self.tracked, self.labels
        kept = kinds.translate(_MASKS[_KEPT])
        files: Columns = (
            list(compress(tracked, kept)),
            list(compress(self.numbers, kept)),
            list(compress(self.mtimes, kept)),
            list(map(texts.__getitem__, compress(labels, kept))),
        )
        skipped: list[SkippedFile] = []
        reasons: dict[int, SkipReason] = {}
        left_out = kinds.translate(_MASKS[_SKIPPED])
        for path, label in compress(zip(tracked, labels, strict=True), left_out):
            reason = reasons.get(label)
            if reason is None:
                reason = reasons[label] = SkipReason(texts[label])
            skipped.append(SkippedFile(path, reason, texts[label + 1]))
        nothing = list(compress(tracked, kinds.translate(_MASKS[_NOTHING])))
        return files, skipped, nothing

    def _places(self, paths: frozenset[str]) -> list[int]:
        """Where `paths` are in `tracked`: found by bisection, as git lists paths sorted (by
        bytes, which is Python's order for UTF-8 names); by a pass over all if one is not."""
        tracked = self.tracked
        places = [bisect.bisect_left(tracked, path) for path in paths]
        if all(
            at < len(tracked) and tracked[at] == path
            for at, path in zip(places, paths, strict=True)
        ):
            return places
        return [at for at, path in enumerate(tracked) if path in paths]


def make_memo(
    root: str,
    git_index: str,
    rules: str,
    ignore_files: tuple[str, ...],
    tracked: Sequence[str],
    unsure: frozenset[str],
    verdicts: dict[str, SourceFile | SkippedFile],
) -> ScanMemo:
    """Gather the verdicts on `tracked` (those missing from `verdicts` were nothing)."""
    kinds: list[int] = []
    numbers: list[int] = []
    mtimes: list[int] = []
    labels: list[int] = []
    texts: list[str] = []
    codes: dict[tuple[str, ...], int] = {}
    for path in tracked:
        found = verdicts.get(path)
        if isinstance(found, SourceFile):
            key: tuple[str, ...] = (found.language,)
            kinds.append(_KEPT)
            numbers.append(found.size)
            mtimes.append(found.mtime_ns)
        elif isinstance(found, SkippedFile):
            key = (found.reason.value, found.detail)
            kinds.append(_SKIPPED)
            numbers.append(0)
            mtimes.append(0)
        else:
            kinds.append(_NOTHING)
            numbers.append(0)
            mtimes.append(0)
            labels.append(0)
            continue
        code = codes.get(key)
        if code is None:
            code = codes[key] = len(texts)
            texts.extend(key)
        labels.append(code)
    return ScanMemo(
        root,
        git_index,
        rules,
        ignore_files,
        tuple(tracked),
        unsure,
        kinds,
        numbers,
        mtimes,
        labels,
        texts,
    )


def load_memo(path: Path, root: str, git_index: str) -> ScanMemo | None:
    """The memo saved in `path` if it was made for `root` at this git index; else None."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        if not data.startswith(MAGIC):
            return None
        header_size = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
        start = len(MAGIC) + 8
        header = json.loads(data[start : start + header_size])
        if (header["root"], header["git_index"]) != (root, git_index):
            return None
        count, blob_size = int(header["count"]), int(header["paths"])
        position = start + header_size
        blob = data[position : position + blob_size].decode("utf-8", "surrogateescape")
        tracked = tuple(blob.split("\0")) if count else ()
        position += blob_size
        columns: list[array[int]] = []
        for code in COLUMNS:
            column = array(code)
            end = position + count * column.itemsize
            column.frombytes(data[position:end])
            columns.append(column)
            position = end
        if len(tracked) != count or position != len(data):
            return None
        kinds, numbers, mtimes, labels = columns
        memo = ScanMemo(
            root,
            git_index,
            str(header["rules"]),
            tuple(str(p) for p in header["ignore_files"]),
            tracked,
            frozenset(str(p) for p in header["unsure"]),
            kinds,
            numbers,
            mtimes,
            labels,
            [str(t) for t in header["texts"]],
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None  # none yet, or unreadable: the scan judges everything
    return memo


def save_memo(path: Path, memo: ScanMemo) -> None:
    """Write the memo atomically (temporary file, then rename); a folder that cannot be
    written costs the next scan its speed, nothing else."""
    blob = "\0".join(memo.tracked).encode("utf-8", "surrogateescape")
    header = json.dumps(
        {
            "root": memo.root,
            "git_index": memo.git_index,
            "rules": memo.rules,
            "ignore_files": list(memo.ignore_files),
            "unsure": sorted(memo.unsure),
            "texts": memo.texts,
            "count": len(memo.tracked),
            "paths": len(blob),
        }
    ).encode("ascii")  # names that are not UTF-8 survive as \udcXX escapes
    parts = [MAGIC, len(header).to_bytes(8, "little"), header, blob]
    columns = (memo.kinds, memo.numbers, memo.mtimes, memo.labels)
    for code, values in zip(COLUMNS, columns, strict=True):
        parts.append(array(code, values).tobytes())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".scan-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(b"".join(parts))
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass
