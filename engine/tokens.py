"""Exact token counts with tiktoken, from tables shipped in engine/data and never downloaded.

`tiktoken.get_encoding` fetches its tables over the network on first use. ctxtui ships both
tables (gzipped), checks each against tiktoken's published sha256 on load, parses the ranks
itself and hands them to tiktoken's own constructor, so the pattern and special tokens stay
tiktoken's: no network, no environment variables, no cache writes. Loading takes most of a
second, so callers do it off the UI thread; `estimate_tokens` is the placeholder until then.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import math
import types
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from engine.errors import TokenizerError

if TYPE_CHECKING:  # imported inside the functions that use them: import cost (deliberate)
    import numpy as np
    import numpy.typing as npt

ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
"""Encodings ctxtui ships; the first is the default."""

TABLE_SHA256: dict[str, str] = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
"""sha256 of each uncompressed table, as tiktoken_ext.openai_public publishes it."""

TOKEN_BYTES_SHA256: dict[str, str] = {
    "o200k_base": "f2929b2254fb87b0c2d7aaa0f3285dc96de938fef74fde5e51a129dcb771c326",
    "cl100k_base": "6ee860e1ed2e05c111f6741b28f54d3900f487fbca4c252fb537266ee91de89c",
}
"""sha256 of each published table's tokens in rank order, as `token_bytes_digest` hashes
them: what an index worker checks toktok's table against (a test derives both from the
shipped tables, whose TABLE_SHA256 they pass). Rebuilding the table's text to hash it took
0.2 s of each worker's start (o200k_base); this takes 0.01 s."""

DATA_DIR = Path(__file__).parent / "data"
"""Where the shipped `<name>.tiktoken.gz` tables live."""

COUNT_INTO_ARRAY_FROM = 1 << 20
"""Characters from which `Tokenizer.count` takes the tokens as an array: `pack --changed` with
a 38 MB diff (one regenerated data file) peaked at 660 MB, 310 MB of it the list of a hunk's
9 million tokens; below this size the list is as cheap and the count a little faster."""
ESTIMATE_CHARS_PER_TOKEN = 3.0
"""Placeholder ratio: over-estimates Python by ~35% and TS by ~19% (FACTS.md §2), rarely under."""

ESTIMATE_CHARS_PER_TOKEN_LONG_LINES = 1.5
"""Ratio for minified-looking text, where real files reach 1.6 chars per token (FACTS.md §2)."""

LONG_LINE_CHARS = 500
"""Average line length above which the long-line ratio applies."""


class Encoder(Protocol):
    """What a Tokenizer encodes with: tiktoken's Encoding, or toktok's (the same ids)."""

    def encode_ordinary(self, text: str) -> list[int]: ...

    def encode_to_numpy(
        self, text: str, *, disallowed_special: tuple[()]
    ) -> npt.NDArray[np.uint32]: ...


class Tokenizer:
    """A loaded encoding: counts tokens of texts and of each line of a text."""

    __slots__ = ("_encoding", "_token_bytes", "name")

    def __init__(self, name: str, encoding: Encoder, token_bytes: npt.NDArray[np.int64]):
        self.name = name
        """Encoding name, e.g. "o200k_base"."""
        self._encoding = encoding
        self._token_bytes = token_bytes
        """Byte length of every ordinary token id, for mapping tokens back to lines."""

    def count(self, text: str) -> int:
        """Return the number of tokens of `text` (special-token text counts as ordinary text)."""
        if len(text) >= COUNT_INTO_ARRAY_FROM:
            # the same tokens (no special token disallowed: their text is ordinary text), as an
            # array of uint32 rather than a list of Python ints (~36 bytes a token)
            tokens = self._encoding.encode_to_numpy(_encodable(text), disallowed_special=())
            return len(tokens)
        return len(self._encoding.encode_ordinary(_encodable(text)))

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Return the token count of each text, encoded in tiktoken's thread pool."""
        batch = getattr(self._encoding, "encode_ordinary_batch", None)
        if batch is None:  # toktok's (only index workers hold one): one text at a time
            return [self.count(text) for text in texts]
        return [len(tokens) for tokens in batch(list(texts))]

    def line_prefix_counts(self, text: str) -> npt.NDArray[np.int64]:
        """Return tokens of lines 1..i at index i (index 0 is 0), from one encode of `text`.

        Lines split on "\\n" only, a final line without "\\n" counts. Each token belongs to
        the line holding its first byte, so the last element equals `count(text)` and a line
        whose bytes all sit inside a token begun earlier counts 0.
        """
        import numpy as np  # deliberate: keeps `import engine` cheap

        lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        if not lines:
            return np.zeros(1, dtype=np.int64)
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates (`_encodable`); else one encode
            text = _encodable(text)
            data = text.encode("utf-8")
        # encode_ordinary's tokens, straight into an array (no list of Python ints); with no
        # special token disallowed, special-token text is ordinary text, as in encode_ordinary
        tokens = self._encoding.encode_to_numpy(text, disallowed_special=())
        lengths = self._token_bytes[tokens]
        starts = lengths.cumsum()
        starts -= lengths
        newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0x0A)
        # tokens of lines 1..i: those whose first byte is at or before line i's "\n" (one
        # search per line, not one per token); every token starts before the text's end.
        # Array methods, no appended end and no +1: numpy's function wrappers and the
        # small arrays were most of the time of a small file's counts (session 29)
        prefix = np.empty(lines + 1, dtype=np.int64)
        prefix[0] = 0
        prefix[1:lines] = starts.searchsorted(newlines[: lines - 1], side="right")
        prefix[lines] = len(tokens)
        return prefix


def load_tokenizer(name: str = "o200k_base", data_dir: Path | None = None) -> Tokenizer:
    """Load a shipped encoding after checking its table's sha256; never touches the network.

    Args:
        name: one of ENCODINGS.
        data_dir: folder holding `<name>.tiktoken.gz`; the shipped one by default.

    Raises:
        TokenizerError: unknown encoding, missing or unreadable table, or a hash mismatch.
    """
    import numpy as np  # deliberate: tiktoken and numpy cost ~0.1 s to import
    import tiktoken

    if name not in ENCODINGS:
        raise TokenizerError(f"unknown encoding {name!r}; choose one of {', '.join(ENCODINGS)}")
    ranks = _read_ranks(name, (data_dir or DATA_DIR) / f"{name}.tiktoken.gz")
    encoding = tiktoken.Encoding(**_constructor_args(name, ranks))
    token_bytes = np.zeros(max(ranks.values()) + 1, dtype=np.int64)
    token_bytes[np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))] = np.fromiter(
        map(len, ranks.keys()), dtype=np.int64, count=len(ranks)
    )
    # tiktoken's Rust core copied the ranks; the Encoding keeps the Python dict only to be
    # pickled (Encoding.__getstate__), which ctxtui never does. Let go, it gives back 26 MB
    # (o200k_base) in every process holding a tokenizer: each index worker, the app.
    vars(encoding).pop("_mergeable_ranks", None)
    del ranks
    return Tokenizer(name, encoding, token_bytes)


def _encodable(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD, as tiktoken encodes it (toktok refuses
    them), so counts and byte offsets agree."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def fast_tokenizer(name: str) -> Tokenizer | None:
    """toktok's encoder of `name` as a Tokenizer, where toktok is installed and holds exactly
    the published table (its tokens in rank order hash to TOKEN_BYTES_SHA256); else None.

    toktok gives tiktoken's token ids (no difference over the 16k scale tree's 25 M tokens;
    the tests compare them) about 10 times as fast: tiktoken's encoder was a sixth of a cold
    index's worker time. Only index workers use it (engine.pool): every other count stays
    tiktoken's, and a missing or different toktok costs speed, never a count.
    """
    import numpy as np  # deliberate: see load_tokenizer

    if name not in ENCODINGS:
        return None
    try:
        import toktok  # deliberate: only index workers load it (65 MB once used)

        # toktok's public API only counts; its encoder object gives the ids (documented
        # "for anyone who knowingly wants the full encode/decode surface")
        encoder = toktok._encoding(name)
        values: list[bytes] = encoder.token_byte_values()
    except (ImportError, AttributeError, KeyError, ValueError, RuntimeError, OSError):
        return None
    token_bytes = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    if token_bytes_digest(values, token_bytes) != TOKEN_BYTES_SHA256[name]:
        return None
    del values
    from engine.heap import give_back_memory  # deliberate: see the import of toktok

    give_back_memory()  # the check's 200,000 small objects: 21 MB the worker would keep
    return Tokenizer(name, cast(Encoder, encoder), token_bytes)


def token_bytes_digest(values: Sequence[bytes], lengths: npt.NDArray[np.int64]) -> str:
    """sha256 of tokens in rank order: their byte lengths (uint32, little-endian), then
    their bytes one after another; the two together give back the list."""
    digest = hashlib.sha256(lengths.astype("<u4").tobytes())
    digest.update(b"".join(values))
    return digest.hexdigest()


def estimate_tokens(text: str) -> int:
    """Guess a token count from characters; a placeholder shown as "≈", never for budgets."""
    if not text:
        return 0
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    ratio = (
        ESTIMATE_CHARS_PER_TOKEN_LONG_LINES
        if len(text) / lines > LONG_LINE_CHARS
        else ESTIMATE_CHARS_PER_TOKEN
    )
    return math.ceil(len(text) / ratio)


def _read_ranks(name: str, path: Path) -> dict[bytes, int]:
    """Gunzip a table, check its sha256, and parse its `base64-token rank` lines."""
    try:
        raw = gzip.decompress(path.read_bytes())
    except FileNotFoundError:
        raise TokenizerError(f"tokenizer table missing: {path}") from None
    except (OSError, EOFError, zlib.error) as error:
        raise TokenizerError(f"tokenizer table unreadable: {path} ({error})") from None
    digest = hashlib.sha256(raw).hexdigest()
    if digest != TABLE_SHA256[name]:
        raise TokenizerError(f"tokenizer table {path} fails its sha256 check (got {digest[:12]}…)")
    # The hash pins the published table, whose ranks run 0, 1, 2, ... in line order: number
    # the tokens by position (0.1 s faster than parsing 200,000 rank fields), and check the
    # first and last rank as they are written.
    lines = [line for line in raw.split(b"\n") if line]
    try:
        if int(lines[0].split()[1]) != 0 or int(lines[-1].split()[1]) != len(lines) - 1:
            raise ValueError("ranks out of order")
        decode = base64.b64decode
        return {decode(line.split(b" ", 1)[0]): rank for rank, line in enumerate(lines)}
    except (ValueError, IndexError, binascii.Error) as error:  # unreachable once hashed
        raise TokenizerError(f"tokenizer table {path} is malformed ({error})") from None


def _constructor_args(name: str, ranks: dict[bytes, int]) -> dict[str, Any]:
    """Run tiktoken's own constructor for `name` with `ranks` in place of its download.

    The constructor is re-created with a private `load_tiktoken_bpe` in its globals instead of
    patching the module attribute, so two encodings can load in two threads at once and
    tiktoken's module is never changed. The hash tiktoken asks for must be ours.
    """
    from tiktoken_ext import openai_public  # deliberate: part of tiktoken's import cost

    def offline_ranks(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash != TABLE_SHA256[name]:
            raise TokenizerError(f"tiktoken expects another table for {name}")
        return ranks

    constructor = cast(types.FunctionType, openai_public.ENCODING_CONSTRUCTORS[name])
    rebound = types.FunctionType(
        constructor.__code__,
        {**constructor.__globals__, "load_tiktoken_bpe": offline_ranks},
        constructor.__name__,
        constructor.__defaults__,
        constructor.__closure__,
    )
    build = cast(Callable[[], dict[str, Any]], rebound)
    return build()
