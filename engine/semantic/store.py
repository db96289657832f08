"""Chunk vectors kept by content: one file per model, no pickle, written atomically.

Vectors belong to chunk texts: each distinct chunk (the SHA-1 of its text, which starts with
the file's path) is embedded once and stored once, and each file maps to its chunks. A file's
chunk list is found by a key made of its path, the SHA-1 of its bytes and the chunking
settings, so an unchanged file is never embedded twice: not after a refresh, not in another
checkout of the same repository sharing the folder; and a file edited in one function gets new
vectors for the chunks whose text changed only (the others are looked up by their text). Vectors
are stored as float16 (768 bytes a chunk; cosines move by < 1e-3). The layout is the index
cache's (engine.store): a JSON header, then flat arrays at aligned offsets. The header holds
the CRC-32 of everything after it, so a flipped byte among the vectors, which would still be a
finite number and so rank quietly wrong, is caught (12 ms for 40 MB of vectors, read whole
anyway). A file that is corrupt, of another version or made by another model raises
`StaleCache`; the caller starts empty and says so in one line.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import CacheError
from engine.store import StaleCache

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

FORMAT = "ctxtui-vectors"
VERSION = 2
"""Bump when the layout or the meaning of a stored number changes. 2: vectors by chunk text
(1 kept them by file, so an edited file was embedded whole again)."""
MAGIC = b"CTXVEC\x00\x01"
"""First bytes of a vector cache file."""
ALIGN = 64
"""Every array starts at a multiple of this many bytes (as in the index cache)."""
SCHEMA: dict[str, tuple[str, str]] = {
    "keys": ("|u1", "20 bytes a file: its file_key"),
    "paths": ("|u1", "20 bytes a file: its path_key"),
    "ptr": ("<i8", "files + 1: each file's first chunk reference"),
    "lines": ("<i4", "2 a reference: first and last line of the file's chunk"),
    "refs": ("<i4", "a reference: the chunk's row"),
    "chunks": ("|u1", "20 bytes a chunk: chunk_key of its text"),
    "vectors": ("<f2", "dim a chunk"),
}
"""Every array of the file: its dtype and what its length counts (all stored flat)."""
KEY_BYTES = 20


@dataclass(frozen=True, slots=True)
class FileVectors:
    """The vectors of one file's chunks."""

    lines: npt.NDArray[np.int32]
    """Shape (chunks, 2): first and last line of each chunk, 1-based, inclusive."""
    vectors: npt.NDArray[np.float16]
    """Shape (chunks, dim): unit vectors, one per chunk; no rows for a blank file."""
    chunks: bytes
    """The chunk_key of each chunk's text, 20 bytes each, in order."""
    path: bytes
    """The path_key of the file: a changed file's old chunks are kept (and reused) until its
    new version has vectors."""


@dataclass(slots=True)
class VectorStore:
    """Vectors by file key; filled by the embedding stage, saved and loaded whole."""

    model_id: str
    """The model every vector was made by."""
    dim: int
    """Length of every vector."""
    entries: dict[bytes, FileVectors] = field(default_factory=dict)
    """File key -> its chunks' vectors."""
    _by_chunk: dict[bytes, npt.NDArray[np.float16]] = field(default_factory=dict, repr=False)
    """chunk_key -> its vector, over `entries` (built on first use, then kept up by `add`)."""
    _indexed: int = field(default=0, repr=False)
    """How many entries `_by_chunk` was built from (a direct write to `entries` rebuilds it)."""

    def add(self, key: bytes, entry: FileVectors) -> None:
        """Keep a file's vectors, and its chunks for lookup by text."""
        self.chunk_vectors()
        fresh = key not in self.entries
        self.entries[key] = entry
        self._indexed += fresh
        self._by_chunk.update(_chunk_rows(entry))

    def chunk_vectors(self) -> dict[bytes, npt.NDArray[np.float16]]:
        """chunk_key -> vector for every chunk of every entry. Only grows: a vector belongs to
        its text for good, so a caller may keep reading the dict while others `add`."""
        if self._indexed != len(self.entries):
            by_chunk: dict[bytes, npt.NDArray[np.float16]] = {}
            for entry in list(self.entries.values()):
                by_chunk.update(_chunk_rows(entry))
            self._by_chunk, self._indexed = by_chunk, len(self.entries)
        return self._by_chunk


def _chunk_rows(entry: FileVectors) -> dict[bytes, npt.NDArray[np.float16]]:
    """chunk_key -> vector of one file's chunks."""
    keys, vectors = entry.chunks, entry.vectors
    return {keys[KEY_BYTES * i : KEY_BYTES * (i + 1)]: vectors[i] for i in range(len(vectors))}


def chunk_key(text: str) -> bytes:
    """The key of one chunk's vector: the SHA-1 of its text (which begins with the path)."""
    return hashlib.sha1(text.encode("utf-8", "surrogateescape"), usedforsecurity=False).digest()


def path_key(path: str) -> bytes:
    """The key that ties a file's versions together: the SHA-1 of its path."""
    return hashlib.sha1(path.encode("utf-8", "surrogateescape"), usedforsecurity=False).digest()


def file_key(path: str, sha1: str, chunking: tuple[int, ...]) -> bytes:
    """The key of one file's vectors: its path (the path heads each chunk), its content and
    the chunking settings, hashed to 20 bytes."""
    text = "\0".join((path, sha1, *map(str, chunking)))
    digest = hashlib.sha1(text.encode("utf-8", "surrogateescape"), usedforsecurity=False)
    return digest.digest()


def vectors_file(cache_dir: Path, model_id: str) -> Path:
    """The vector cache file for one model inside a cache folder."""
    return cache_dir / f"vectors-{model_id}.bin"


def save(path: Path, store: VectorStore, keep: Iterable[bytes] | None = None) -> None:
    """Write the store atomically (temp file, then rename); only `keep` keys if given.

    Raises:
        CacheError: the folder cannot be created or written.
    """
    import numpy as np  # deliberate: numpy loads only when vectors are saved or loaded

    keys = sorted(store.entries if keep is None else set(keep) & store.entries.keys())
    entries = [store.entries[k] for k in keys]
    counts = [len(e.vectors) for e in entries]
    rows: dict[bytes, int] = {}  # chunk_key -> its row, in order of first use
    refs: list[int] = []
    vectors = []
    for entry in entries:
        for chunk, row in _chunk_rows(entry).items():
            if chunk not in rows:
                rows[chunk] = len(rows)
                vectors.append(row)
        refs.extend(rows[entry.chunks[KEY_BYTES * i : KEY_BYTES * (i + 1)]]
                    for i in range(len(entry.vectors)))  # fmt: skip
    arrays = {
        "keys": np.frombuffer(b"".join(keys), dtype=np.uint8),
        "paths": np.frombuffer(b"".join(e.path for e in entries), dtype=np.uint8),
        "ptr": np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype("<i8"),
        "lines": np.concatenate([np.zeros(0, "<i4"), *(e.lines.reshape(-1) for e in entries)]),
        "refs": np.array(refs, dtype="<i4"),
        "chunks": np.frombuffer(b"".join(rows), dtype=np.uint8),
        "vectors": np.concatenate([np.zeros(0, "<f2"), *(v.reshape(-1) for v in vectors)]),
    }
    directory, offset = {}, 0
    for name, (dtype, _) in SCHEMA.items():
        arrays[name] = np.ascontiguousarray(arrays[name], dtype=dtype)
        directory[name] = [len(arrays[name]), offset]
        offset += _padded(arrays[name].nbytes)
    checksum = 0  # of the bytes after the header, as written below (no copy of the arrays)
    for array in arrays.values():
        checksum = zlib.crc32(array.data.cast("B"), checksum)
        checksum = zlib.crc32(b"\0" * (_padded(array.nbytes) - array.nbytes), checksum)
    meta = {"format": FORMAT, "version": VERSION, "model": store.model_id, "dim": store.dim}
    header = json.dumps({**meta, "crc32": checksum, "arrays": directory}).encode("ascii")
    start = _padded(len(MAGIC) + 8 + len(header))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".vectors-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(MAGIC + struct.pack("<Q", len(header)) + header)
                out.write(b"\0" * (start - out.tell()))
                for array in arrays.values():
                    out.write(array.tobytes())
                    out.write(b"\0" * (_padded(array.nbytes) - array.nbytes))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise CacheError(f"cannot write the vector cache at {path.parent}: {exc.strerror}") from exc


def _padded(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def load(path: Path, model_id: str, dim: int) -> VectorStore:
    """Read a vector cache made by `model_id`. Every array's place is checked against the
    file's real size before it is sliced, so a crafted header cannot allocate memory.

    Raises:
        FileNotFoundError: there is no cache yet.
        StaleCache: the file is corrupt, truncated, of another version or another model.
    """
    import numpy as np  # deliberate: see save()

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise StaleCache(f"unreadable ({exc.strerror})") from exc
    try:
        if data[: len(MAGIC)] != MAGIC:
            raise StaleCache("not a ctxtui vector cache")
        (length,) = struct.unpack("<Q", data[len(MAGIC) : len(MAGIC) + 8])
        if length > len(data):
            raise StaleCache("truncated")
        header = json.loads(data[len(MAGIC) + 8 : len(MAGIC) + 8 + length].decode("ascii"))
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise StaleCache("not a ctxtui vector cache")
        if header.get("version") != VERSION:
            raise StaleCache(f"made by another version (format {header.get('version')})")
        if header.get("model") != model_id or header.get("dim") != dim:
            raise StaleCache("made by another model")
        start = _padded(len(MAGIC) + 8 + length)
        stored = header.get("crc32")  # absent in caches written before session 30: not checked
        if stored is not None and zlib.crc32(memoryview(data)[start:]) != stored:
            raise StaleCache("corrupt (its checksum does not match)")
        arrays = {}
        for name, (dtype, _) in SCHEMA.items():
            count, offset = (int(v) for v in header["arrays"][name])
            kind = np.dtype(dtype)
            if count < 0 or offset < 0 or start + offset + count * kind.itemsize > len(data):
                raise StaleCache("truncated")
            arrays[name] = np.frombuffer(data, dtype=kind, count=count, offset=start + offset)
    except StaleCache:
        raise
    except (ValueError, KeyError, TypeError, IndexError, struct.error) as exc:
        # its bytes do not decode: "damaged", as the index cache says (engine.store)
        raise StaleCache(f"damaged: {type(exc).__name__}") from exc
    keys, paths, ptr = bytes(arrays["keys"]), bytes(arrays["paths"]), arrays["ptr"]
    lines, refs, vectors = arrays["lines"], arrays["refs"], arrays["vectors"]
    chunk_keys = bytes(arrays["chunks"])
    files = len(keys) // KEY_BYTES
    chunks = len(vectors) // dim if dim else 0
    if len(keys) % KEY_BYTES or len(paths) != len(keys) or len(ptr) != files + 1:
        raise StaleCache("arrays of the wrong shape")
    if len(vectors) % dim or len(chunk_keys) != KEY_BYTES * chunks or len(lines) != 2 * len(refs):
        raise StaleCache("arrays of the wrong shape")
    if files and (int(ptr[0]) != 0 or int(ptr[-1]) != len(refs)):
        raise StaleCache("arrays of the wrong shape")
    if (np.diff(ptr) < 0).any() or not np.isfinite(vectors).all():
        raise StaleCache("arrays of the wrong shape")
    if len(refs) and (int(refs.min()) < 0 or int(refs.max()) >= chunks):
        raise StaleCache("arrays of the wrong shape")
    lines, vectors = lines.reshape(-1, 2), vectors.reshape(-1, dim)
    store = VectorStore(model_id, dim)
    # the usual file: its chunks are rows ptr[i]..ptr[i+1] in order (no chunk shared), a view
    plain = len(refs) == chunks and bool((refs == np.arange(chunks)).all())
    for number in range(files):
        a, b = int(ptr[number]), int(ptr[number + 1])
        first = int(refs[a]) if b > a else 0
        if plain or b == a or (refs[a:b] == np.arange(first, first + b - a)).all():
            rows = vectors[first : first + b - a]
            own = chunk_keys[KEY_BYTES * first : KEY_BYTES * (first + b - a)]
        else:  # chunks shared with an earlier file
            rows = vectors[refs[a:b]]
            shared = refs[a:b].tolist()
            own = b"".join(chunk_keys[KEY_BYTES * r : KEY_BYTES * (r + 1)] for r in shared)
        key = keys[number * KEY_BYTES : (number + 1) * KEY_BYTES]
        path_key = paths[number * KEY_BYTES : (number + 1) * KEY_BYTES]
        store.entries[key] = FileVectors(lines[a:b], rows, own, path_key)
    return store
