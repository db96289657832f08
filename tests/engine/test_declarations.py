"""Declarations as small documents: their own words, the imports their code uses, and the
scoring that picks the ones answering the whole question (issue 11).

The focused view must keep the declaration whose code does what the question asks, not the
one that merely shares a common word with it in its name.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_repo
from index_support import index_repo

from engine.focus import header_last_lines
from engine.levels import split_lines
from engine.model import Declaration, DeclKind, Import, ImportUse, Index, ParsedFile
from engine.rank import rank
from engine.relevance import (
    DeclarationWeights,
    _nested_once,
    match_declarations,
    score_declarations,
)
from engine.tables import Span
from engine.units import UnitWords, analyse_units, file_identifiers, own_lines
from engine.words import count_words, identifier_words

CONSOLE = '''\
"""The console: how wide it is, and what the terminal can do."""

import os
import sys
from dataclasses import dataclass
from typing import Optional


def detect_legacy_windows() -> bool:
    """Detect a legacy Windows console."""
    return sys.platform == "win32" and not os.environ.get("WT_SESSION")


@dataclass
class ConsoleDimensions:
    width: int
    height: int


class Console:
    """A terminal to write to."""

    def __init__(self, width: Optional[int] = None) -> None:
        self._width = width

    @property
    def size(self) -> ConsoleDimensions:
        """The width and height of the terminal."""
        if self._width is not None:
            return ConsoleDimensions(self._width, 25)
        columns, lines = os.get_terminal_size()
        return ConsoleDimensions(columns, lines)

    def print(self, text: str) -> None:
        sys.stdout.write(text + "\\n")
'''
QUESTION = "detect the width and height of the terminal with get_terminal_size"


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Index:
    files: dict[str, str | bytes] = {
        "rich/console.py": CONSOLE,
        "rich/color.py": "def detect_color_system():\n    return 'truecolor'\n",
    }
    return index_repo(make_repo(tmp_path_factory.mktemp("decl") / "repo", files))[0]


def _decls(index: Index, path: str) -> tuple[Declaration, ...]:
    return index.files[index.path_ids[path]].declarations


def _term(index: Index, word: str) -> int:
    """The term id of a word as the index spells it (stemmed)."""
    return index.vocab[identifier_words(word)[0]]


def _names(index: Index, path: str, positions: tuple[int, ...]) -> list[str]:
    decls = _decls(index, path)
    return [decls[p].qualified_name for p in positions]


def test_the_declaration_whose_body_answers_beats_one_sharing_a_word_in_its_name(
    console: Index,
) -> None:
    ranked = rank(console, QUESTION)
    first = next(f for f in ranked.files if f.path == "rich/console.py")
    assert _names(console, "rich/console.py", first.matched_declarations)[0] == "Console.size"


def test_scores_cover_only_declarations_with_a_word_of_the_question(console: Index) -> None:
    file_id = console.path_ids["rich/console.py"]
    scores = score_declarations(console, [(_term(console, "terminal"), 1.0)], [file_id])[file_id]
    found = {_decls(console, "rich/console.py")[p].qualified_name for _, p in scores}
    assert found == {"Console", "Console.size"}  # their doc sentences say "terminal"


def test_only_the_files_asked_for_are_scored(console: Index) -> None:
    term = _term(console, "detect")
    color = console.path_ids["rich/color.py"]
    assert set(score_declarations(console, [(term, 1.0)], [color])) == {color}


def test_a_match_share_of_one_keeps_only_the_best(console: Index) -> None:
    file_id = console.path_ids["rich/console.py"]
    terms = [(_term(console, w), 1.0) for w in ("terminal", "width", "detect")]
    weights = DeclarationWeights(match_share=1.0)
    assert len(match_declarations(console, terms, [file_id], weights)[file_id]) == 1


def test_a_short_function_holding_a_match_is_kept_whole_in_its_stead(tmp_path: Path) -> None:
    text = (
        "def find_error_handler(error):\n"
        "    def find_handler(handler_map):\n"
        "        queue = deque(error.__mro__)\n"
        "        while queue:\n"
        "            return handler_map.get(queue.popleft())\n"
        "    return find_handler({})\n"
    )
    index = index_repo(make_repo(tmp_path / "repo", {"app.py": text}))[0]
    file_id = index.path_ids["app.py"]
    terms = [(_term(index, "deque"), 1.0), (_term(index, "handler"), 1.0)]
    matched = match_declarations(index, terms, [file_id])[file_id]
    assert _names(index, "app.py", matched) == ["find_error_handler"]


def _cors(closure_at: int) -> str:
    """hono's cors middleware in Python: a 90-line function holding a small `set` closure
    after `closure_at` lines of its body, beside an options type sharing one word."""
    filler = [f"    allowed_{n} = options.get('allow_{n}')\n" for n in range(90)]
    closure = "    def set(key, value):\n        response.headers[key] = value\n"
    body = "".join(filler[:closure_at]) + closure + "".join(filler[closure_at:])
    return (
        "class CorsOptions:\n"
        "    origin: str\n"
        "    allow_headers: list\n"
        "\n"
        "\n"
        "def cors(options):\n"
        '    """The cors middleware: set the headers of every response."""\n'
        f"{body}"
        "    set('Access-Control-Allow-Origin', options.origin)\n"
        "    set('Access-Control-Allow-Headers', options.allow_headers)\n"
    )


@pytest.mark.parametrize(("closure_at", "first"), [(20, "cors"), (90, "cors.set")])
def test_a_long_function_that_answers_better_than_its_closure_is_kept(
    tmp_path: Path, closure_at: int, first: str
) -> None:
    """Dropping `cors` for its closure left hono's view to the options type; but a closure
    past the lines a long function's view shows (80) stays the match, or it would vanish."""
    index = index_repo(make_repo(tmp_path / "repo", {"cors.py": _cors(closure_at)}))[0]
    file_id = index.path_ids["cors.py"]
    terms = [(_term(index, w), 1.0) for w in ("cors", "middleware", "set", "headers")]
    matched = match_declarations(index, terms, [file_id])[file_id]
    assert _names(index, "cors.py", matched)[0] == first


def test_a_match_kept_by_a_function_dropped_for_a_better_one_stands_on_its_own() -> None:
    """A long function that would keep one inner match but is dropped for a better one it
    also holds lets the first stand on its own again (it once vanished with the function)."""
    function = DeclKind.FUNCTION
    spans = [Span(function, 1, 100), Span(function, 10, 15), Span(function, 20, 25)]
    found = [(3.0, 0), (5.0, 1), (2.5, 2)]
    assert sorted(_nested_once(found, spans, 80)) == [(2.5, 2), (5.0, 1)]


# --------------------------------------------------------------------------- own lines, imports


def _parsed(text: str) -> ParsedFile:
    decls = (
        Declaration(DeclKind.CLASS, "Box", "Box", "class Box:", "A box.", 4, 9, 5, True, 0),
        Declaration(DeclKind.METHOD, "open", "Box.open", "def open(self) -> Path:", "", 7,
                    9, 8, True, 1),
    )  # fmt: skip
    imports = (Import("os", 1, 1), Import("pathlib.Path", 2, 2))
    return ParsedFile("box.py", "python", len(text), 0, "0" * 40, 9, 0, decls, imports)


BOX = """\
import os
from pathlib import Path

class Box:
    size = 3

    def open(self) -> Path:
        return os.getcwd()
        # the end
"""


def test_each_line_belongs_to_its_innermost_declaration_header_or_body() -> None:
    parsed = _parsed(BOX)
    owner, header = own_lines(parsed.declarations, 9, header_last_lines(parsed))
    assert owner[1:] == [-1, -1, -1, 0, 0, 0, 1, 1, 1]
    assert header[1:] == [False, False, False, True, False, False, True, False, False]


def _units(parsed: ParsedFile, text: str) -> tuple[UnitWords[str], tuple[ImportUse, ...]]:
    """analyse_units as the indexer calls it, words counted as text."""
    lines = split_lines(text)
    found = file_identifiers(parsed, text, lines, header_last_lines(parsed))
    return analyse_units(parsed, found, lines, lambda ids: count_words(" ".join(ids)))


def test_a_declarations_words_are_its_own_and_not_its_methods() -> None:
    parsed = _parsed(BOX)
    units, _ = _units(parsed, BOX)
    rows = units.rows.tolist()
    box_words = dict(zip(units.words[: rows[0]], units.tf[: rows[0]].tolist(), strict=True))
    open_words = dict(zip(units.words[rows[0] :], units.tf[rows[0] :].tolist(), strict=True))
    assert box_words["box"] == [1, 2, 0]  # its name, its header line and its doc sentence
    assert box_words[identifier_words("size")[0]] == [0, 0, 1]
    assert "getcwd" not in box_words and "getcwd" in open_words
    assert open_words["path"] == [0, 1, 0]  # in the signature only


def test_import_lines_know_which_declarations_use_them() -> None:
    parsed = _parsed(BOX)
    _, uses = _units(parsed, BOX)
    by_line = {u.line: (u.users, u.header_users) for u in uses}
    assert by_line == {1: ((1,), ()), 2: ((), (1,))}


def _parsed_uses(name: str, language: str, text: str) -> dict[int, tuple[int, ...]]:
    """Import line -> positions of the declarations whose code uses it, through the real
    parser and analyse_units as the indexer calls them."""
    from engine.parse.extract import SourceParser

    structure = SourceParser().parse(text, language, name)
    parsed = ParsedFile(name, language, len(text), 0, "0" * 40, 0, 0, structure.declarations,
                        structure.imports)  # fmt: skip
    _, uses = _units(parsed, text)
    return {u.line: tuple(sorted({*u.users, *u.header_users})) for u in uses}


IMPORT_PATH_WORDS = {
    # each file: line 1 imports a name the code never uses, from a module whose path words
    # (exceptions, routing, collections, util, gin) the code does use as its own names
    "python": (
        "app.py",
        "from werkzeug.exceptions import HTTPException\n"
        "from werkzeug.routing import Map\n\n\n"
        "def handle(exceptions):\n    return Map(exceptions)\n",
    ),
    "javascript": (
        "app.js",
        'import { Router } from "./routing/router";\nimport { parse } from "./util";\n\n'
        "export function route(routing) {\n  return parse(routing);\n}\n",
    ),
    "typescript": (
        "app.ts",
        'import type { Router } from "./routing/router";\nimport { parse } from "./util";\n\n'
        "export function route(routing: string): string {\n  return parse(routing);\n}\n",
    ),
    "go": (
        "app.go",
        'package app\n\nimport (\n\t"github.com/gin-gonic/gin/binding"\n\t"net/http"\n)\n\n'
        "func Handle(gin string) int {\n\treturn http.StatusOK\n}\n",
    ),
    "rust": (
        "app.rs",
        "use std::collections::HashMap;\nuse crate::config::Config;\n\n"
        "pub fn build(collections: usize) -> Config {\n    Config::new(collections)\n}\n",
    ),
    "java": (
        "App.java",
        "import java.util.List;\nimport org.example.util.Strings;\n\n"
        "public class App {\n    public String name(String util) {\n"
        "        return Strings.trim(util);\n    }\n}\n",
    ),
}


@pytest.mark.parametrize("language", sorted(IMPORT_PATH_WORDS))
def test_an_import_line_is_used_by_the_names_it_binds_not_its_module_path(
    language: str,
) -> None:
    name, text = IMPORT_PATH_WORDS[language]
    uses = _parsed_uses(name, language, text)
    lines = text.split("\n")
    unused = next(n for n, line in enumerate(lines, 1) if "Router" in line or "HashMap" in line
                  or "List;" in line or "HTTPException" in line or "binding" in line)  # fmt: skip
    used = unused + 1
    assert uses[unused] == ()
    assert uses[used] != ()


@pytest.mark.parametrize(
    "language, name, text, declarations",
    [
        ("python", "app.py", "from os.path import *\n\n\ndef a():\n    return 1\n", 1),
        ("java", "App.java",
         "import java.util.*;\n\npublic class App {\n    int a() { return 1; }\n}\n", 2),
        ("rust", "app.rs", "use std::io::*;\n\npub fn a() -> u8 {\n    1\n}\n", 1),
    ],
)  # fmt: skip
def test_a_wildcard_import_line_is_used_by_every_declaration(
    language: str, name: str, text: str, declarations: int
) -> None:
    # the names it binds are unknown: whatever code is kept may use one of them
    assert _parsed_uses(name, language, text)[1] == tuple(range(declarations))


def test_a_name_said_only_in_a_docstring_does_not_keep_its_import() -> None:
    text = (
        "from werkzeug.exceptions import HTTPException\nfrom .ctx import Context\n\n\n"
        "def errorhandler(code):\n"
        '    """Register a handler for a code or an exception, even one that is not a\n'
        '    :class:`~werkzeug.exceptions.HTTPException`; see :class:`Context`."""\n'
        "    return Context(code)\n"
    )
    uses = _parsed_uses("app.py", "python", text)
    assert uses[1] == ()  # the docstring's reference only
    assert uses[2] == (0,)  # the docstring and the code


def test_an_attribute_above_a_declaration_uses_its_import() -> None:
    # Rust's parse starts `struct Opt` below its attributes and doc comment
    text = (
        "use clap::Parser;\nuse serde::Serialize;\n\n"
        "#[derive(Parser, Debug)]\n/// The options.\nstruct Opt {\n    debug: bool,\n}\n"
    )
    uses = _parsed_uses("opt.rs", "rust", text)
    assert uses[1] == (0,)
    assert uses[2] == ()


def test_header_length_normalisation_lowers_a_long_signatures_words(tmp_path: Path) -> None:
    params = "".join(f"    width_{n}: int = 0,\n" for n in range(30))
    files: dict[str, str | bytes] = {
        "console.py": (
            f"class Console:\n    def __init__(\n        self,\n{params}    ) -> None:\n"
            "        self.items = []\n\n"
            "    def width(self) -> int:\n        return self.measure() + 1\n"
        ),
    }
    index = index_repo(make_repo(tmp_path / "repo", files))[0]
    file_id = index.path_ids["console.py"]
    terms = [(_term(index, "width"), 1.0)]

    def scores(weights: DeclarationWeights) -> dict[str, float]:
        found = score_declarations(index, terms, [file_id], weights)[file_id]
        return {_decls(index, "console.py")[p].name: s for s, p in found}

    plain, normalised = scores(DeclarationWeights()), scores(DeclarationWeights(header_b=1.0))
    assert normalised["__init__"] < plain["__init__"]
    assert normalised["__init__"] / normalised["width"] < plain["__init__"] / plain["width"]


def test_a_string_that_starts_a_statement_is_no_docstring() -> None:
    # A review found both imports lost: the first body line starts with a string, but code
    # follows it on that line, so the names there are used, not documented.
    joined = (
        "from html import escape\n\n\ndef render(items):\n    '<br>'.join(map(escape, items))\n"
    )
    assert _parsed_uses("a.py", "python", joined)[1] == (0,)
    then = "from html import escape\n\n\ndef f(s):\n    '''Doc with escape.'''; return escape(s)\n"
    assert _parsed_uses("b.py", "python", then)[1] == (0,)
