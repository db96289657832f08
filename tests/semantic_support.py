"""A deterministic stand-in for the embedding model: words hashed into a small vector.

Texts that share words point the same way, so "similar meaning" is predictable in a test; it
counts the texts it embeds, so a test can prove what was (not) embedded again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

SYNONYMS = {"reimburse": "refund", "repay": "refund", "refunds": "refund", "money": "refund",
            "returned": "refund"}  # fmt: skip
"""The fake's "meaning": words that say the same thing land on the same axis."""


class FakeEmbedder:
    """Bag of lower-cased words (synonyms merged), each hashed to one of `dim` axes, then
    normalised."""

    def __init__(self, dim: int = 64, model_id: str = "fake-words-64") -> None:
        self.dim = dim
        self.model_id = model_id
        """A stand-in for the real model's id, so a workspace test uses its cache file."""
        self.texts: list[str] = []
        """Every text embedded, in order."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for found in re.findall(r"[a-z]{3,}", text.lower()):
                word = SYNONYMS.get(found, found)
                axis = hashlib.sha1(word.encode(), usedforsecurity=False).digest()[0] % self.dim
                out[row, axis] += 1.0
            norm = float(np.linalg.norm(out[row]))
            out[row] = out[row] / norm if norm else out[row]
        return out


SHOP: dict[str, str | bytes] = {
    "shop/ledger.py": "def compute_total(cart):\n    return sum(cart)\n",
    "shop/refunds.py": (
        "def reverse_charge(order):\n"
        "    # reimburse the buyer: repay the card\n"
        "    return compute(order.total)\n"
    ),
    "shop/report.py": "def compute_report(cart):\n    return compute_total(cart)\n",
    "docs/notes.md": "# Notes\n\nNothing to compute here.\n",
}
"""A shop where the words put the report first but the meaning (refunds) says refunds.py."""
SHOP_QUESTION = "compute the money returned"
