"""Hand-built parses of small Python, JavaScript, Go, Markdown and text files, and the index
holding them, shared by test_levels and test_render.

They are written out by hand (not produced by engine.parse) so the tests pin down what levels
and renderers do with a given parse, whatever the parser does.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np

from engine.focus import header_last_lines
from engine.levels import split_lines
from engine.model import Declaration, DeclKind, Import, Index, ParsedFile, Postings
from engine.units import analyse_units, file_identifiers
from engine.words import count_words

REPO = Path(__file__).resolve().parents[2]


class WordCounter:
    """A stand-in tokenizer: words and punctuation marks; tokens never span lines."""

    name = "words"

    def count(self, text: str) -> int:
        return len(re.findall(r"\w+|[^\w\s]", text))


PY_SOURCE = '''\
"""Session storage for the web app."""

import os
from typing import (
    Any,
    Optional,
)

TIMEOUT = 30


class SessionStore:
    """Keep sessions in memory."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.items: dict[str, Any] = {}

    def get_session(self, key: str) -> Optional[Any]:
        """Return the session stored under key."""
        value = self.items.get(key)
        if value is None:
            return None
        return value

    def save(self, key: str, value: Any) -> None:
        self.items[key] = value
        os.makedirs(self.path, exist_ok=True)


@cached
def load_store(
    path: str,
) -> SessionStore:
    """Build a store for path."""
    store = SessionStore(path)
    return store
'''

JS_SOURCE = """\
import { readFile } from "fs";
import path from "path";

/** Parse a config file. */
export function parseConfig(text) {
  const lines = text.split(",");
  return lines.map((line) => line.trim());
}

export class Loader {
  constructor(root) {
    this.root = root;
  }

  async load(name) {
    const file = path.join(this.root, name);
    const text = await readFile(file, "utf8");
    return parseConfig(text);
  }
}

const helper = (x) => x * 2;
"""

GO_SOURCE = """\
package store

import (
\t"errors"
\t"fmt"
)

// ErrMissing is returned for unknown keys.
var ErrMissing = errors.New("missing")

// Store keeps values by key.
type Store struct {
\tvalues map[string]string
}

// Get returns the value for key.
func (s *Store) Get(
\tkey string,
) (string, error) {
\tv, ok := s.values[key]
\tif !ok {
\t\treturn "", fmt.Errorf("get %q: %w", key, ErrMissing)
\t}
\treturn v, nil
}

func newStore() *Store {
\treturn &Store{values: map[string]string{}}
}
"""

MD_SOURCE = """\
# Guide

Welcome to the guide.
It covers setup.

## Install

Run pip install.
Then run it.

## Configure

Set the session timeout.
It defaults to 30 minutes.

### Advanced

Tune the cache.
Or turn it off.
"""


def decl(
    kind: DeclKind,
    name: str,
    signature: str,
    lines: tuple[int, int, int],
    *,
    depth: int = 0,
    doc: str = "",
    exported: bool = True,
) -> Declaration:
    """A declaration spanning lines (start, body start, end)."""
    start, body, end = lines
    return Declaration(kind, name, name, signature, doc, start, end, body, exported, depth)


PY_DECLS = (
    decl(DeclKind.CLASS, "SessionStore", "class SessionStore:", (12, 13, 28),
         doc="Keep sessions in memory."),
    decl(DeclKind.METHOD, "__init__", "def __init__(self, path: str) -> None:", (15, 16, 17),
         depth=1, exported=False),
    decl(DeclKind.METHOD, "get_session", "def get_session(self, key: str) -> Optional[Any]:",
         (19, 20, 24), depth=1, doc="Return the session stored under key."),
    decl(DeclKind.METHOD, "save", "def save(self, key: str, value: Any) -> None:", (26, 27, 28),
         depth=1),
    decl(DeclKind.FUNCTION, "load_store", "def load_store( path: str, ) -> SessionStore:",
         (31, 35, 37), doc="Build a store for path."),
)  # fmt: skip
PY_IMPORTS = (Import("os", 3, 3), Import("typing.Any", 4, 7), Import("typing.Optional", 4, 7))

JS_DECLS = (
    decl(DeclKind.FUNCTION, "parseConfig", "export function parseConfig(text)", (5, 5, 8),
         doc="Parse a config file."),
    decl(DeclKind.CLASS, "Loader", "export class Loader", (10, 10, 20)),
    decl(DeclKind.METHOD, "constructor", "constructor(root)", (11, 11, 13), depth=1),
    decl(DeclKind.METHOD, "load", "async load(name)", (15, 15, 19), depth=1),
    decl(DeclKind.FUNCTION, "helper", "const helper = (x) =>", (22, 22, 22), exported=False),
)  # fmt: skip
JS_IMPORTS = (Import("fs", 1, 1), Import("path", 2, 2))

GO_DECLS = (
    decl(DeclKind.CONSTANT, "ErrMissing", 'var ErrMissing = errors.New("missing")', (9, 9, 9),
         doc="ErrMissing is returned for unknown keys."),
    decl(DeclKind.STRUCT, "Store", "type Store struct", (12, 12, 14),
         doc="Store keeps values by key."),
    decl(DeclKind.METHOD, "Get", "func (s *Store) Get( key string, ) (string, error)",
         (17, 19, 25), doc="Get returns the value for key."),
    decl(DeclKind.FUNCTION, "newStore", "func newStore() *Store", (27, 27, 29), exported=False),
)  # fmt: skip
GO_IMPORTS = (Import("errors", 3, 6), Import("fmt", 3, 6))

MD_DECLS = (
    decl(DeclKind.SECTION, "Guide", "# Guide", (1, 1, 19), doc="Welcome to the guide."),
    decl(DeclKind.SECTION, "Install", "## Install", (6, 6, 9), depth=1, doc="Run pip install."),
    decl(DeclKind.SECTION, "Configure", "## Configure", (11, 11, 19), depth=1),
    decl(DeclKind.SECTION, "Advanced", "### Advanced", (16, 16, 19), depth=2),
)

CASES: dict[str, tuple[str, str, tuple[Declaration, ...], tuple[Import, ...]]] = {
    "store.py": ("python", PY_SOURCE, PY_DECLS, PY_IMPORTS),
    "loader.js": ("javascript", JS_SOURCE, JS_DECLS, JS_IMPORTS),
    "store.go": ("go", GO_SOURCE, GO_DECLS, GO_IMPORTS),
    "GUIDE.md": ("markdown", MD_SOURCE, MD_DECLS, ()),
    "notes.txt": ("text", "".join(f"note {n}\n" for n in range(1, 61)), (), ()),
}
"""path -> (language, text, declarations, imports)."""


def line_prefix(text: str, counter: WordCounter) -> list[int]:
    """Prefix sums of tokens per line, starting with 0 (the index's line_tokens run)."""
    prefix = [0]
    for line in text.split("\n")[: text.count("\n") + (0 if text.endswith("\n") else 1)]:
        prefix.append(prefix[-1] + counter.count(line + "\n"))
    return prefix


def parsed_file(
    path: str,
    language: str,
    text: str,
    decls: tuple[Declaration, ...],
    imports: tuple[Import, ...],
    prefix: list[int],
) -> ParsedFile:
    """A ParsedFile with declaration token counts filled from the line prefix sums."""
    counted = tuple(
        dataclasses.replace(
            d,
            body_tokens=prefix[d.end_line] - prefix[d.start_line - 1],
            signature_tokens=prefix[d.body_start_line] - prefix[d.start_line - 1],
        )
        for d in decls
    )
    parsed = ParsedFile(
        path,
        language,
        len(text.encode()),
        0,
        "0" * 40,
        len(prefix) - 1,
        prefix[-1],
        counted,
        imports,
    )
    # which declarations use which import lines, as the indexer finds it
    lines = split_lines(text)
    found = file_identifiers(parsed, text, lines, header_last_lines(parsed))
    _, uses = analyse_units(parsed, found, lines, lambda ids: count_words(" ".join(ids)))
    return dataclasses.replace(parsed, import_uses=uses)


def make_index(
    files: list[ParsedFile], prefixes: list[list[int]], root: str = "/src/shop"
) -> Index:
    """An Index holding only what levels and renderers read; other fields are left empty."""
    ptr = np.cumsum([0] + [len(p) for p in prefixes]).astype(np.int64)
    values: dict[str, object] = {
        "root": root,
        "encoding": "words",
        "files": tuple(files),
        "vocab": {},
        "terms_sorted": (),
        "postings": Postings(
            np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros((0, 6), np.float32)
        ),
        "body_length": np.zeros(len(files), np.float32),
        "line_tokens": np.array([n for p in prefixes for n in p], dtype=np.int64),
        "line_tokens_ptr": ptr,
        "imports": tuple(() for _ in files),
        "importers": tuple(() for _ in files),
        "git": tuple(None for _ in files),
        "path_ids": {f.path: i for i, f in enumerate(files)},
    }
    # The model grows fields for ranking (graph edges, roles, ...) that levels never read.
    required = {
        f.name
        for f in dataclasses.fields(Index)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    values.update(dict.fromkeys(required - values.keys()))
    return Index(**values)  # type: ignore[arg-type]


def build_fixture(counter: WordCounter | None = None) -> tuple[Index, dict[str, str]]:
    """The index of CASES (in path order) and the texts by path."""
    counter = counter or WordCounter()
    files, prefixes, texts = [], [], {}
    for path in sorted(CASES):
        language, text, decls, imports = CASES[path]
        prefix = line_prefix(text, counter)
        files.append(parsed_file(path, language, text, decls, imports, prefix))
        prefixes.append(prefix)
        texts[path] = text
    return make_index(files, prefixes), texts
