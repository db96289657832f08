"""The offline tokenizer: exact counts, per-line prefix sums, hash checks, and no network."""

from __future__ import annotations

import gzip
import shutil
import socket
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import tiktoken
from tiktoken.load import load_tiktoken_bpe
from tiktoken_ext import openai_public

from engine.errors import TokenizerError
from engine.tokens import (
    COUNT_INTO_ARRAY_FROM,
    DATA_DIR,
    ENCODINGS,
    TOKEN_BYTES_SHA256,
    Tokenizer,
    _read_ranks,
    estimate_tokens,
    fast_tokenizer,
    load_tokenizer,
    token_bytes_digest,
)

SAMPLES = [
    "",
    "hello world",
    "def get_user_session(user_id: int) -> Session:\n    return db.query(user_id)\n",
    "line one\r\nline two\r\n\r\n",
    "naïve café — 漢字かな 🙂🙂 emoji\n\tindented\n",
    "<|endoftext|> is plain text here\n",
    "a\n\n\n\nb",
    "    \n        \n",
    "x" * 3000 + "\n" + "y = 1\n",
]


@pytest.fixture(
    scope="module",
    params=[(name, fast) for fast in (False, True) for name in ENCODINGS],
    ids=lambda param: f"{param[0]}-{'toktok' if param[1] else 'tiktoken'}",
)
def tokenizer(request: pytest.FixtureRequest) -> Tokenizer:
    """Each encoding as tiktoken counts it, and as index workers count it (toktok)."""
    name, fast = request.param
    if not fast:
        return load_tokenizer(name)
    return _fast_or_skip(name)


def _fast_or_skip(name: str) -> Tokenizer:
    """The workers' toktok counter for `name`. Below Python 3.11 toktok has no wheels (the
    workers count with tiktoken) and the toktok cases skip; from 3.11 it is a dependency, so its
    absence is a broken install, not a reason to skip 74 tests."""
    loaded = fast_tokenizer(name)
    if loaded is not None:
        return loaded
    if sys.version_info >= (3, 11):
        pytest.fail("toktok-rs is a dependency from Python 3.11 but did not load: reinstall")
    pytest.skip("toktok-rs has no wheels below Python 3.11: workers count with tiktoken")


@pytest.fixture(scope="module")
def oracles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tiktoken.Encoding]:
    """tiktoken's own loader on the shipped tables, built the way FACTS.md §2 measured it."""
    folder = tmp_path_factory.mktemp("plain")
    encodings = {}
    for name in ENCODINGS:
        plain = folder / f"{name}.tiktoken"
        plain.write_bytes(gzip.decompress((DATA_DIR / f"{name}.tiktoken.gz").read_bytes()))
        with mock.patch.dict("os.environ", {"TIKTOKEN_CACHE_DIR": ""}):
            ranks = load_tiktoken_bpe(str(plain))
        with mock.patch.object(openai_public, "load_tiktoken_bpe", return_value=ranks):
            encodings[name] = tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())
    return encodings


def reference_prefix_counts(encoding: tiktoken.Encoding, text: str) -> list[int]:
    """Slow reference: walk the tokens, find the line of each token's first byte."""
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    counts = [0] * (lines + 1)
    data = text.encode("utf-8")
    offset = 0
    for token in encoding.encode_ordinary(text):
        counts[data[:offset].count(b"\n") + 1] += 1
        offset += len(encoding.decode_single_token_bytes(token))
    running = [0]
    for count in counts[1:]:
        running.append(running[-1] + count)
    return running


@pytest.mark.parametrize("text", SAMPLES)
def test_counts_equal_tiktoken(
    tokenizer: Tokenizer, oracles: dict[str, tiktoken.Encoding], text: str
) -> None:
    assert tokenizer.count(text) == len(oracles[tokenizer.name].encode_ordinary(text))


def test_a_long_text_is_counted_as_an_array_to_the_same_count(
    tokenizer: Tokenizer, oracles: dict[str, tiktoken.Encoding], monkeypatch: pytest.MonkeyPatch
) -> None:
    """From COUNT_INTO_ARRAY_FROM characters the tokens come as uint32s, not a list of ints
    (a 38 MB diff's hunk was a 310 MB list), special-token text still counting as text."""
    text = "".join(SAMPLES) * (COUNT_INTO_ARRAY_FROM // len("".join(SAMPLES)) + 1)
    expected = len(oracles[tokenizer.name].encode_ordinary(text))
    encoding = tokenizer._encoding

    def no_list(_: str) -> list[int]:
        raise AssertionError("a long text counted through a list of ints")

    monkeypatch.setattr(tokenizer, "_encoding", mock.Mock(wraps=encoding))
    tokenizer._encoding.encode_ordinary = no_list  # type: ignore[attr-defined]
    assert tokenizer.count(text) == expected


def test_count_many_equals_count(tokenizer: Tokenizer) -> None:
    assert tokenizer.count_many(SAMPLES) == [tokenizer.count(t) for t in SAMPLES]
    assert tokenizer.count_many([]) == []


def test_encodings_differ_where_they_should(tokenizer: Tokenizer) -> None:
    expected = {"o200k_base": 2, "cl100k_base": 2}
    assert tokenizer.count("hello world") == expected[tokenizer.name]


@pytest.mark.parametrize("text", SAMPLES)
def test_line_prefix_counts_match_a_token_walk(
    tokenizer: Tokenizer, oracles: dict[str, tiktoken.Encoding], text: str
) -> None:
    counts = tokenizer.line_prefix_counts(text)
    assert counts.dtype == np.int64
    assert counts.tolist() == reference_prefix_counts(oracles[tokenizer.name], text)


@pytest.mark.parametrize("text", SAMPLES)
def test_line_prefix_counts_shape_and_total(tokenizer: Tokenizer, text: str) -> None:
    counts = tokenizer.line_prefix_counts(text)
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    assert len(counts) == lines + 1
    assert counts[0] == 0
    assert counts[-1] == tokenizer.count(text)
    assert bool(np.all(np.diff(counts) >= 0))


def test_empty_text_has_one_zero(tokenizer: Tokenizer) -> None:
    assert tokenizer.line_prefix_counts("").tolist() == [0]


def test_final_line_without_newline_counts(tokenizer: Tokenizer) -> None:
    assert len(tokenizer.line_prefix_counts("a\nb")) == 3
    assert len(tokenizer.line_prefix_counts("a\nb\n")) == 3


def test_lines_inside_a_run_of_newlines_hold_no_tokens(tokenizer: Tokenizer) -> None:
    counts = tokenizer.line_prefix_counts("x = 1\n\n\n\ny = 2\n")
    per_line = np.diff(counts).tolist()
    assert per_line[0] > 0 and per_line[-1] > 0
    assert 0 in per_line[1:4]  # the blank lines' newlines merge into a token begun above


def test_lone_surrogates_do_not_break_line_counts(tokenizer: Tokenizer) -> None:
    text = "a = '\ud800'\nb = 2\n"
    counts = tokenizer.line_prefix_counts(text)
    assert counts[-1] == tokenizer.count(text)
    assert len(counts) == 3


def test_a_loaded_tokenizer_keeps_no_python_copy_of_its_ranks(tokenizer: Tokenizer) -> None:
    # tiktoken's Rust core holds its own copy; the Python dict would cost each index worker
    # (and the app) 26 MB for nothing
    assert "_mergeable_ranks" not in getattr(tokenizer._encoding, "__dict__", {})
    assert tokenizer.count("hello world") == 2
    assert tokenizer.count_many(["hello world", "a"]) == [2, 1]


ODD_TEXTS = [
    "caf\xe9 \ufffd\ufffd latin-1 read as UTF-8\n",
    "\ufeffBOM first\r\nthen CRLF\r\n",
    "NUL\x00inside\x00\n",
    "x" * 200_000 + "\n" + " " * 5000 + "y\n",
    "\n" * 3000,
    "<|endoftext|><|fim_prefix|> special tokens as text\n",
]


@pytest.mark.parametrize("name", ENCODINGS)
def test_index_workers_count_the_ids_tiktoken_gives(
    name: str, oracles: dict[str, tiktoken.Encoding]
) -> None:
    fast = _fast_or_skip(name)
    slow = load_tokenizer(name)
    for text in SAMPLES + ODD_TEXTS:
        assert fast.line_prefix_counts(text).tolist() == slow.line_prefix_counts(text).tolist()
        assert fast.count(text) == len(oracles[name].encode_ordinary(text))
    assert fast.count("a = '\ud800'\n") == slow.count("a = '\ud800'\n")


def test_toktok_with_another_table_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    toktok = pytest.importorskip("toktok")
    real = toktok._encoding("o200k_base")

    class Changed:
        def token_byte_values(self) -> list[bytes]:
            values: list[bytes] = real.token_byte_values()
            return [values[1], values[0], *values[2:]]  # two ranks swapped

    monkeypatch.setattr(toktok, "_encoding", lambda name: Changed())
    assert fast_tokenizer("o200k_base") is None
    assert fast_tokenizer("no_such_encoding") is None


@pytest.mark.parametrize("name", ENCODINGS)
def test_workers_check_toktok_against_the_published_tables_tokens(name: str) -> None:
    ranks = _read_ranks(name, DATA_DIR / f"{name}.tiktoken.gz")  # passes TABLE_SHA256
    values = sorted(ranks, key=ranks.__getitem__)
    lengths = np.array([len(value) for value in values], dtype=np.int64)
    assert token_bytes_digest(values, lengths) == TOKEN_BYTES_SHA256[name]
    swapped = [values[1], values[0], *values[2:]]
    assert token_bytes_digest(swapped, lengths) != TOKEN_BYTES_SHA256[name]


def test_without_toktok_workers_fall_back_to_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    import engine.pool

    monkeypatch.setitem(sys.modules, "toktok", None)  # import toktok raises ImportError
    assert fast_tokenizer("o200k_base") is None
    monkeypatch.setattr(engine.pool, "exit_with_parent", lambda parent: None)
    monkeypatch.setattr(engine.pool.WorkerState, "analyser", None)
    monkeypatch.setattr(engine.pool, "settle_collector", lambda: None)  # not this process's
    engine.pool.start_worker("cl100k_base")
    analyser = engine.pool.WorkerState.analyser
    assert analyser is not None and analyser.tokenizer.name == "cl100k_base"
    assert isinstance(analyser.tokenizer._encoding, tiktoken.Encoding)


def test_tampered_table_is_rejected(tmp_path: Path) -> None:
    raw = bytearray(gzip.decompress((DATA_DIR / "cl100k_base.tiktoken.gz").read_bytes()))
    raw[-3] = ord("9") if raw[-3] != ord("9") else ord("8")  # change the last rank's digits
    (tmp_path / "cl100k_base.tiktoken.gz").write_bytes(gzip.compress(bytes(raw)))
    with pytest.raises(TokenizerError, match="sha256"):
        load_tokenizer("cl100k_base", data_dir=tmp_path)


def test_corrupt_gzip_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "o200k_base.tiktoken.gz").write_bytes(b"not gzip at all")
    with pytest.raises(TokenizerError, match="unreadable"):
        load_tokenizer("o200k_base", data_dir=tmp_path)


def test_missing_table_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="missing"):
        load_tokenizer("o200k_base", data_dir=tmp_path)


def test_unknown_encoding_is_rejected() -> None:
    with pytest.raises(TokenizerError, match="unknown encoding 'gpt2'"):
        load_tokenizer("gpt2")


def test_a_good_copy_elsewhere_loads(tmp_path: Path) -> None:
    shutil.copy(DATA_DIR / "cl100k_base.tiktoken.gz", tmp_path)
    assert load_tokenizer("cl100k_base", data_dir=tmp_path).count("hello world") == 2


def test_loading_touches_no_network_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    for name in ENCODINGS:
        tokenizer = load_tokenizer(name)
        assert tokenizer.name == name
        assert tokenizer.count("def f(): pass") > 0
    assert not (tmp_path / "cache").exists()


def test_loading_leaves_tiktoken_module_untouched() -> None:
    before = openai_public.load_tiktoken_bpe
    load_tokenizer("cl100k_base")
    assert openai_public.load_tiktoken_bpe is before


def test_estimate_is_a_character_ratio() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 2
    assert estimate_tokens("x" * 300 + "\n") == 101
    long_line = "y" * 900
    assert estimate_tokens(long_line) == 600
