"""The on-disk index cache: one `.npz` file per repository and encoding, no pickle.

Everything lives in a single file so that writing it is atomic (temp file + rename): numpy
arrays for the term rows and line token counts, and the per-file records as JSON stored in a
byte array. `np.load(allow_pickle=False)` reads it back, so a hostile cache cannot run code.
A file that is corrupt, truncated, of another format version, or made for another folder or
encoding raises `StaleCache` with a one-line reason; the caller rebuilds.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import CacheError
from engine.index import TermRows
from engine.model import (
    Declaration,
    DeclKind,
    GitSignal,
    Import,
    ParsedFile,
    SkippedFile,
    SkipReason,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

FORMAT = "ctxtui-index"
VERSION = 5
"""Bump when the layout or the meaning of any stored number changes."""


class StaleCache(Exception):
    """The cache file cannot be used; the message says why in a few words."""


@dataclass(slots=True)
class CachedIndex:
    """What a cache file holds: enough to rebuild the Index without re-parsing."""

    root: str
    """Folder the cache was made for."""
    encoding: str
    """Encoding of its token counts."""
    files: list[ParsedFile]
    """Parsed files, sorted by path."""
    vocab: list[str]
    """Term id -> word."""
    rows: TermRows
    """Term frequency rows over `files` and `vocab`."""
    line_tokens: npt.NDArray[np.int64]
    """Per-file prefix sums of tokens per line (see Index.line_tokens)."""
    line_tokens_ptr: npt.NDArray[np.int64]
    """Start of each file's run in line_tokens."""
    skipped: list[SkippedFile]
    """Files left out, with reasons."""
    sniffed: dict[str, tuple[int, int, SkippedFile]]
    """Files left out for their content (binary, minified), by path: (size, mtime_ns, skip),
    so an unchanged one is not read again on every reopen."""
    git_head: str | None
    """HEAD commit the git signals were read at."""
    git: dict[str, GitSignal]
    """Git history per path."""


def cache_file(cache_dir: Path, encoding: str) -> Path:
    """Return the cache file for one encoding inside a repository's cache folder."""
    return cache_dir / f"index-{encoding}.npz"


def _declaration_to_list(d: Declaration) -> list[Any]:
    return [
        d.kind.value,
        d.name,
        d.qualified_name,
        d.signature,
        d.doc,
        d.start_line,
        d.end_line,
        d.body_start_line,
        d.exported,
        d.depth,
        d.body_tokens,
        d.signature_tokens,
    ]


def _declaration_from_list(v: list[Any]) -> Declaration:
    return Declaration(
        DeclKind(v[0]),
        str(v[1]),
        str(v[2]),
        str(v[3]),
        str(v[4]),
        int(v[5]),
        int(v[6]),
        int(v[7]),
        bool(v[8]),
        int(v[9]),
        int(v[10]),
        int(v[11]),
    )


def _file_to_dict(f: ParsedFile) -> dict[str, Any]:
    return {
        "p": f.path,
        "l": f.language,
        "s": f.size,
        "m": f.mtime_ns,
        "h": f.sha1,
        "n": f.lines,
        "t": f.tokens,
        "e": [f.partial, f.replaced, f.generated, f.too_slow],
        "c": [f.outline_tokens, f.focused_tokens],
        "d": [_declaration_to_list(d) for d in f.declarations],
        "i": [[i.raw, i.start_line, i.end_line, list(i.targets)] for i in f.imports],
    }


def _file_from_dict(v: dict[str, Any]) -> ParsedFile:
    flags = v["e"]
    return ParsedFile(
        path=str(v["p"]),
        language=str(v["l"]),
        size=int(v["s"]),
        mtime_ns=int(v["m"]),
        sha1=str(v["h"]),
        lines=int(v["n"]),
        tokens=int(v["t"]),
        declarations=tuple(_declaration_from_list(d) for d in v["d"]),
        imports=tuple(Import(str(i[0]), int(i[1]), int(i[2]), tuple(i[3])) for i in v["i"]),
        partial=bool(flags[0]),
        replaced=bool(flags[1]),
        generated=bool(flags[2]),
        too_slow=len(flags) > 3 and bool(flags[3]),
        outline_tokens=int(v["c"][0]),
        focused_tokens=int(v["c"][1]),
    )


def save(path: Path, cached: CachedIndex) -> None:
    """Write the cache atomically: a temporary file in the same folder, then a rename.

    Raises:
        CacheError: the folder cannot be created or written.
    """
    import numpy as np  # deliberate: numpy loads only when an index is saved or loaded

    compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "root": cached.root,
        "encoding": cached.encoding,
        "files": None,  # written below, one file at a time
        "vocab": cached.vocab,
        "skipped": [[s.path, s.reason.value, s.detail] for s in cached.skipped],
        "sniffed": [
            [path, size, mtime, skip.reason.value, skip.detail]
            for path, (size, mtime, skip) in cached.sniffed.items()
        ],
        "git_head": cached.git_head,
        "git": {p: [g.last_change, g.changes] for p, g in cached.git.items()},
    }
    before, _, after = compact(meta).partition('"files":null')
    # The metadata goes out as UTF-8 pieces, one per file record, streamed into its .npy
    # entry: neither the whole JSON text nor a joined copy of it is ever held (10,000 files
    # made a peak of ~90 MB that way). surrogateescape: a file name that is not UTF-8
    # round-trips to the same bytes.
    pieces = [(before + '"files":[').encode("utf-8", "surrogateescape")]
    for number, parsed in enumerate(cached.files):
        record = compact(_file_to_dict(parsed))
        pieces.append((("," if number else "") + record).encode("utf-8", "surrogateescape"))
    pieces.append(("]" + after).encode("utf-8", "surrogateescape"))
    arrays = {
        "docs": cached.rows.docs,
        "terms": cached.rows.terms,
        "fields": cached.rows.fields,
        "counts": cached.rows.counts,
        "line_tokens": cached.line_tokens,
        "line_tokens_ptr": cached.line_tokens_ptr,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".index-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", allowZip64=True) as archive:
                with archive.open("meta.npy", "w", force_zip64=True) as out:
                    header = {
                        "descr": "|u1",
                        "fortran_order": False,
                        "shape": (sum(map(len, pieces)),),
                    }
                    np.lib.format.write_array_header_1_0(out, header)
                    for piece in pieces:
                        out.write(piece)
                for name, array in arrays.items():
                    with archive.open(f"{name}.npy", "w", force_zip64=True) as out:
                        np.lib.format.write_array(
                            out, np.ascontiguousarray(array), allow_pickle=False
                        )
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise CacheError(f"cannot write the index cache at {path.parent}: {exc.strerror}") from exc


def load(path: Path, root: str, encoding: str) -> CachedIndex:
    """Read a cache file made for `root` and `encoding`.

    Raises:
        FileNotFoundError: there is no cache yet.
        StaleCache: the file is corrupt, truncated, foreign or of an older version.
    """
    import numpy as np  # deliberate: see save()

    try:
        _check_array_headers(path)
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode("utf-8", "surrogateescape"))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise StaleCache("not a ctxtui index")
            if meta.get("version") != VERSION:
                raise StaleCache(f"made by another version (format {meta.get('version')})")
            if meta.get("root") != root or meta.get("encoding") != encoding:
                raise StaleCache("made for another folder or encoding")
            rows = TermRows(
                data["docs"].astype(np.int32),
                data["terms"].astype(np.int32),
                data["fields"].astype(np.int8),
                data["counts"].astype(np.int32),
            )
            line_tokens = data["line_tokens"].astype(np.int64)
            line_tokens_ptr = data["line_tokens_ptr"].astype(np.int64)
        files = [_file_from_dict(f) for f in meta["files"]]
        vocab = [str(t) for t in meta["vocab"]]
        _check_shapes(rows, len(files), len(vocab), line_tokens, line_tokens_ptr)
        return CachedIndex(
            root=root,
            encoding=encoding,
            files=files,
            vocab=vocab,
            rows=rows,
            line_tokens=line_tokens,
            line_tokens_ptr=line_tokens_ptr,
            skipped=[SkippedFile(str(s[0]), SkipReason(s[1]), str(s[2])) for s in meta["skipped"]],
            sniffed={
                str(v[0]): (
                    int(v[1]),
                    int(v[2]),
                    SkippedFile(str(v[0]), SkipReason(v[3]), str(v[4])),
                )
                for v in meta["sniffed"]
            },
            git_head=meta["git_head"],
            git={str(p): GitSignal(float(g[0]), int(g[1])) for p, g in meta["git"].items()},
        )
    except FileNotFoundError:
        raise
    except StaleCache:
        raise
    except (
        OSError,
        ValueError,
        KeyError,
        TypeError,
        IndexError,
        AttributeError,
        EOFError,
        zipfile.BadZipFile,
    ) as exc:
        raise StaleCache(f"unreadable ({type(exc).__name__})") from exc


ARRAY_NAMES = ("meta", "docs", "terms", "fields", "counts", "line_tokens", "line_tokens_ptr")
"""The members of a cache file, each one flat array of plain numbers."""


def _check_array_headers(path: Path) -> None:
    """Reject a file whose arrays claim more bytes than it holds, before numpy allocates.

    numpy sizes an array from its .npy header alone, so a crafted header ("a trillion
    rows") would make every load fail with MemoryError until the file is deleted. Each
    member must be stored uncompressed, fit in the file, and be exactly as long as its
    header's shape says.
    """
    import numpy as np  # deliberate: see save()

    file_size = path.stat().st_size
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: info for info in archive.infolist()}
        if sorted(members) != sorted(f"{name}.npy" for name in ARRAY_NAMES):
            raise StaleCache("not a ctxtui index")
        for info in members.values():
            if info.compress_type != zipfile.ZIP_STORED or info.compress_size > file_size:
                raise StaleCache("arrays of the wrong shape")
            if info.file_size != info.compress_size:
                raise StaleCache("arrays of the wrong shape")
            with archive.open(info) as member:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_1_0(member)
                elif version == (2, 0):
                    shape, fortran, dtype = np.lib.format.read_array_header_2_0(member)
                else:
                    raise StaleCache("arrays of the wrong shape")
                header_bytes = member.tell()
            if dtype.hasobject or dtype.kind not in "iu" or fortran or len(shape) != 1:
                raise StaleCache("arrays of the wrong shape")
            if header_bytes + shape[0] * dtype.itemsize != info.file_size:
                raise StaleCache("arrays of the wrong shape")


def _check_shapes(
    rows: TermRows,
    n_files: int,
    n_terms: int,
    line_tokens: npt.NDArray[np.int64],
    line_tokens_ptr: npt.NDArray[np.int64],
) -> None:
    """Reject arrays that do not fit together (a truncated or edited cache)."""
    arrays = (rows.docs, rows.terms, rows.fields, rows.counts, line_tokens, line_tokens_ptr)
    if any(a.ndim != 1 for a in arrays):
        raise StaleCache("arrays of the wrong shape")
    n = len(rows.docs)
    if not (len(rows.terms) == len(rows.fields) == len(rows.counts) == n):
        raise StaleCache("term rows of different lengths")
    if n and (int(rows.docs.max()) >= n_files or int(rows.terms.max()) >= n_terms):
        raise StaleCache("term rows point past the file list")
    if n and (int(rows.docs.min()) < 0 or int(rows.terms.min()) < 0):
        raise StaleCache("negative ids in term rows")
    if len(line_tokens_ptr) != n_files + 1 or int(line_tokens_ptr[-1]) != len(line_tokens):
        raise StaleCache("line token table does not match the file list")
