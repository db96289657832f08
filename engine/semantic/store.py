"""Chunk vectors kept by content: one file per model, no pickle, written atomically.

A file's vectors are found by a key made of its path, the SHA-1 of its bytes and the chunking
settings, so an unchanged file is never embedded twice: not after a refresh, not in another
checkout of the same repository sharing the folder. Vectors are stored as float16 (768 bytes a
chunk; cosines move by < 1e-3). The layout is the index cache's (engine.store): a JSON header, then
flat arrays at aligned offsets. A file that is corrupt, of another version or made by another
model raises `StaleCache`; the caller starts empty and says so in one line.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
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
VERSION = 1
"""Bump when the layout or the meaning of a stored number changes."""
MAGIC = b"CTXVEC\x00\x01"
"""First bytes of a vector cache file."""
ALIGN = 64
"""Every array starts at a multiple of this many bytes (as in the index cache)."""
SCHEMA: dict[str, tuple[str, str]] = {
    "keys": ("|u1", "20 bytes a file"),
    "ptr": ("<i8", "files + 1: each file's first chunk"),
    "lines": ("<i4", "2 a chunk: first and last line"),
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


@dataclass(slots=True)
class VectorStore:
    """Vectors by file key; filled by the embedding stage, saved and loaded whole."""

    model_id: str
    """The model every vector was made by."""
    dim: int
    """Length of every vector."""
    entries: dict[bytes, FileVectors] = field(default_factory=dict)
    """File key -> its chunks' vectors."""


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
    arrays = {
        "keys": np.frombuffer(b"".join(keys), dtype=np.uint8),
        "ptr": np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype("<i8"),
        "lines": np.concatenate([np.zeros(0, "<i4"), *(e.lines.reshape(-1) for e in entries)]),
        "vectors": np.concatenate([np.zeros(0, "<f2"), *(e.vectors.reshape(-1) for e in entries)]),
    }
    directory, offset = {}, 0
    for name, (dtype, _) in SCHEMA.items():
        arrays[name] = np.ascontiguousarray(arrays[name], dtype=dtype)
        directory[name] = [len(arrays[name]), offset]
        offset += _padded(arrays[name].nbytes)
    meta = {"format": FORMAT, "version": VERSION, "model": store.model_id, "dim": store.dim}
    header = json.dumps({**meta, "arrays": directory}).encode("ascii")
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
        raise StaleCache(f"unreadable ({type(exc).__name__})") from exc
    keys, ptr = bytes(arrays["keys"]), arrays["ptr"]
    lines, vectors = arrays["lines"], arrays["vectors"]
    files = len(keys) // KEY_BYTES
    chunks = len(vectors) // dim if dim else 0
    if len(keys) % KEY_BYTES or len(ptr) != files + 1 or (files and int(ptr[0]) != 0):
        raise StaleCache("arrays of the wrong shape")
    if len(vectors) % dim or len(lines) != 2 * chunks or (files and int(ptr[-1]) != chunks):
        raise StaleCache("arrays of the wrong shape")
    if (np.diff(ptr) < 0).any() or not np.isfinite(vectors).all():
        raise StaleCache("arrays of the wrong shape")
    lines, vectors = lines.reshape(-1, 2), vectors.reshape(-1, dim)
    store = VectorStore(model_id, dim)
    for number in range(files):
        a, b = int(ptr[number]), int(ptr[number + 1])
        key = keys[number * KEY_BYTES : (number + 1) * KEY_BYTES]
        store.entries[key] = FileVectors(lines[a:b], vectors[a:b])
    return store
