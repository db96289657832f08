"""Which names an import statement binds in its file, line by line, per language.

The focused view keeps an import line when kept code uses a name the line imports. The words
of the module path are not such names: `from werkzeug.exceptions import HTTPException` binds
`HTTPException` only, and counting `werkzeug` and `exceptions` kept the line for any code that
mentions an exception. One row of `SYNTAX` per import resolver; a language without a row keeps
every identifier of the line (C's `#include "parser.h"` binds nothing it names).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from engine.words import IDENTIFIER

KEYWORDS = frozenset(
    "import from as use require include using package static type typeof const let var pub "
    "crate self super mod extern namespace export default".split()
)
"""Words of import statements that name no imported thing."""


class PathKeeps(Enum):
    """Which identifier of a qualified path (`a.b.c`) the importing code writes."""

    FIRST = "first"
    """Python `import os.path` binds `os`."""
    LAST = "last"
    """Java `import java.util.List` binds `List`; Rust `use std::io::Read` binds `Read`."""


class Strings(Enum):
    """What a string literal of an import statement is."""

    MODULE = "module"
    """A module specifier (JavaScript's `from "./router"`): binds nothing."""
    PACKAGE = "package"
    """Go's import path: binds its package name (the last segment) unless an alias is given."""


@dataclass(frozen=True, slots=True)
class ImportSyntax:
    """How one language's import statements name what they bind."""

    joint: str
    """Separator of a qualified path's parts."""
    keeps: PathKeeps
    """Which part of a qualified path is bound."""
    strings: Strings = Strings.MODULE
    """What its string literals are."""


SYNTAX = {
    "python": ImportSyntax(".", PathKeeps.FIRST),
    "js": ImportSyntax(".", PathKeeps.LAST),
    "go": ImportSyntax(".", PathKeeps.LAST, Strings.PACKAGE),
    "rust": ImportSyntax("::", PathKeeps.LAST),
    "java": ImportSyntax(".", PathKeeps.LAST),
}
"""Keyed by engine.parse.languages' resolver key (JavaScript, TypeScript and TSX share "js")."""
EVERY_NAME = "*"
"""Returned for a wildcard import (`from m import *`, `java.util.*`, `use a::*`, Go's dot
import): the names it binds are unknown, so any kept code may use it."""
TOKEN = re.compile(
    r"""(?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)"""
    r"|(?P<comment>//.*|/\*.*?\*/)"
    r"|(?P<word>[^\W\d]\w*)"
    r"|(?P<mark>::|\S)"
)
"""Strings first (a `//` inside one is no comment), then comments, identifiers (as
engine.words.IDENTIFIER finds them in code, less its kebab-case joining), and single marks."""
WORD = re.compile(r"[^\W\d]\w*")
GO_MAJOR_VERSION = re.compile(r"v\d+")
"""A Go import path's last segment that is a major version (`validator/v10` is `validator`)."""
Token = tuple[int, str, str]
"""(line offset in the statement, kind: string, word or mark, text)."""


def bound_names(resolver: str, lines: Sequence[str], hash_comments: bool) -> list[set[str]]:
    """Return, per line of one import statement, the names it binds there (EVERY_NAME for a
    wildcard); a language without a SYNTAX row gets every identifier of each line.

    Args:
        resolver: the language's resolver key (engine.parse.languages).
        lines: the statement's lines.
        hash_comments: `#` starts a comment (Python).
    """
    syntax = SYNTAX.get(resolver)
    if syntax is None:
        return [set(IDENTIFIER.findall(line)) - KEYWORDS for line in lines]
    tokens = _tokens(lines, hash_comments)
    kept = _kept_words(tokens, syntax)
    out: list[set[str]] = [set() for _ in lines]
    for line, text in kept:
        out[line].add(text)
    return out


def _tokens(lines: Sequence[str], hash_comments: bool) -> list[Token]:
    """The statement's strings, identifiers and marks, comments left out."""
    tokens: list[Token] = []
    for number, line in enumerate(lines):
        if hash_comments and "#" in line:
            line = line.split("#", 1)[0]  # Python's imports hold no string with a `#`
        for match in TOKEN.finditer(line):
            kind = match.lastgroup or "mark"
            if kind != "comment":
                tokens.append((number, kind, match.group()))
    return tokens


def _kept_words(tokens: list[Token], syntax: ImportSyntax) -> list[tuple[int, str]]:
    """(line, name) of each name the statement binds."""
    texts = [t[2] for t in tokens]
    dropped = [False] * len(tokens)
    if "from" in texts and "import" in texts[texts.index("from") :]:
        # Python's `from a.b import c`: the module is no name of the file
        start, stop = texts.index("from"), texts.index("import", texts.index("from"))
        dropped[start:stop] = [True] * (stop - start)
    if "=" in texts:  # `const x = require("m").y`, TypeScript's `import x = require("m")`
        cut = texts.index("=")
        dropped[cut:] = [True] * (len(tokens) - cut)
    out: list[tuple[int, str]] = []
    for i, (line, kind, text) in enumerate(tokens):
        before = texts[i - 1] if i > 0 else ""
        after = texts[i + 1] if i + 1 < len(texts) else ""
        if dropped[i]:
            continue
        if kind == "string":
            if syntax.strings is Strings.PACKAGE:
                out.extend((line, name) for name in _go_names(before, text))
            continue
        if text == "*" and after != "as" and before in ("import", syntax.joint, "{", ","):
            out.append((line, EVERY_NAME))
        if kind != "word" or text in KEYWORDS or after in ("as", ":"):
            continue  # `a as b` and `{ a: b }` bind b
        if syntax.keeps is PathKeeps.FIRST and before == syntax.joint:
            continue
        # a path's leading parts bind nothing, but Rust's `use a::b::{self, C}` binds b too
        rust_self = texts[i + 2 : i + 3] == ["{"] and "self" in texts
        if syntax.keeps is PathKeeps.LAST and after == syntax.joint and not rust_self:
            continue
        if syntax.strings is Strings.PACKAGE and after.startswith('"'):
            continue  # Go's alias: read with the path it names
        if syntax.keeps is PathKeeps.FIRST and _inside_as(texts, i, syntax.joint):
            continue  # `import a.b as c` binds c only
        out.append((line, text))
    return out


def _inside_as(texts: list[str], i: int, joint: str) -> bool:
    """Whether the word at i starts a dotted path that `as` renames."""
    j = i + 1
    while j + 1 < len(texts) and texts[j] == joint:
        j += 2
    return j < len(texts) and texts[j] == "as"


def _go_names(alias: str, literal: str) -> list[str]:
    """Names a Go import spec binds: its alias, or its path's package name (every identifier
    of the last segment that is not a major version, less a `go` affix: `go-isatty` gives
    `isatty`, `yaml.v2` gives `yaml` and `v2`)."""
    if alias == "_":
        return []
    if alias == ".":
        return [EVERY_NAME]
    if WORD.fullmatch(alias) and alias not in KEYWORDS:
        return [alias]
    segments = [s for s in literal.strip('"`').split("/") if s]
    while len(segments) > 1 and GO_MAJOR_VERSION.fullmatch(segments[-1]):
        segments.pop()
    names = WORD.findall(segments[-1]) if segments else []
    return [n for n in names if n != "go"] if len(names) > 1 else names  # go-isatty, yaml-go
