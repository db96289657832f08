"""Levels of detail on hand-built parses: exact kept lines, markers with exact ranges, outlines,
and estimates held against the text they estimate."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import make_repo
from index_support import index_repo
from test_levels_cases import (
    CASES,
    PY_SOURCE,
    REPO,
    WordCounter,
    build_fixture,
    decl,
    line_prefix,
    make_index,
    parsed_file,
)

from engine.levels import MARKER_TOKENS, available_levels, level_tokens, render_level
from engine.model import DeclKind, Index, Level, ParsedFile
from engine.rank import rank


@pytest.fixture(scope="module")
def fixture() -> tuple[Index, dict[str, str]]:
    return build_fixture()


def focused(fixture: tuple[Index, dict[str, str]], path: str, *matched: int, **kw: int) -> str:
    index, texts = fixture
    file = index.files[index.path_ids[path]]
    return render_level(file, texts[path], Level.FOCUSED, matched, **kw)  # type: ignore[arg-type]


def outline(fixture: tuple[Index, dict[str, str]], path: str) -> str:
    index, texts = fixture
    return render_level(index.files[index.path_ids[path]], texts[path], Level.OUTLINE)


def test_full_is_the_text_and_off_is_empty(fixture: tuple[Index, dict[str, str]]) -> None:
    index, texts = fixture
    file = index.files[index.path_ids["store.py"]]
    assert render_level(file, texts["store.py"], Level.FULL) == PY_SOURCE
    assert render_level(file, texts["store.py"], Level.OFF) == ""


def test_full_with_line_numbers_pads_to_the_widest_number(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    index, texts = fixture
    file = index.files[index.path_ids["store.py"]]
    lines = render_level(file, texts["store.py"], Level.FULL, line_numbers=True).split("\n")
    assert lines[0] == ' 1 | """Session storage for the web app."""'
    assert lines[1] == " 2 |"
    assert lines[36] == "37 |     return store"


def test_focused_keeps_the_matched_method_whole_under_its_class_signature(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    # only the imports the kept code uses (`os` is not); no signatures of what did not match
    assert (
        focused(fixture, "store.py", 2)
        == '''\
# … lines 1–3 omitted
from typing import (
    Any,
    Optional,
)

TIMEOUT = 30


class SessionStore:
    # … lines 13–17 omitted

    def get_session(self, key: str) -> Optional[Any]:
        """Return the session stored under key."""
        value = self.items.get(key)
        if value is None:
            return None
        return value

    # … lines 26–37 omitted
'''
    )


def test_focused_keeps_every_import_when_the_index_does_not_know_their_uses(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    index, texts = fixture
    file = dataclasses.replace(index.files[index.path_ids["store.py"]], import_uses=None)
    text = render_level(file, texts["store.py"], Level.FOCUSED, (2,))
    assert "\nimport os\nfrom typing import (\n" in text


def test_focused_keeps_the_imports_of_a_kept_body_and_signature(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    # save() calls os.makedirs in its body and names Any in its signature
    text = focused(fixture, "store.py", 3)
    assert "\nimport os\nfrom typing import (\n    Any,\n" in text


def test_focused_uses_the_languages_comment_for_markers(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    assert (
        focused(fixture, "loader.js", 3)
        == """\
import { readFile } from "fs";
import path from "path";

// … lines 4–8 omitted

export class Loader {
  // … lines 11–13 omitted

  async load(name) {
    const file = path.join(this.root, name);
    const text = await readFile(file, "utf8");
    return parseConfig(text);
  }
// … lines 20–22 omitted
"""
    )


def test_focused_without_a_match_shows_imports_and_every_signature(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    assert (
        focused(fixture, "store.go")
        == """\
package store

import (
\t"errors"
\t"fmt"
)

// ErrMissing is returned for unknown keys.
var ErrMissing = errors.New("missing")

// Store keeps values by key.
type Store struct {
\t// … lines 13–16 omitted
func (s *Store) Get(
\tkey string,
) (string, error) {
\t// … lines 20–25 omitted

func newStore() *Store {
\t// … lines 28–29 omitted
"""
    )


def test_focused_cuts_a_long_matched_declaration_with_a_marker(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    text = focused(fixture, "loader.js", 3, best_lines=3)
    assert "  async load(name) {\n    const file = path.join(this.root, name);\n" in text
    assert '    const text = await readFile(file, "utf8");\n' in text
    assert text.endswith("    // … lines 18–22 omitted\n")
    assert "return parseConfig" not in text


def test_focused_cuts_at_80_lines_by_default() -> None:
    body = "".join(f"    x{n} = {n}\n" for n in range(1, 101))
    text = "def big():\n" + body
    prefix = line_prefix(text, WordCounter())
    file = parsed_file(
        "big.py", "python", text,
        (decl(DeclKind.FUNCTION, "big", "def big():", (1, 2, 101)),), (), prefix,
    )  # fmt: skip
    out = render_level(file, text, Level.FOCUSED, (0,))
    assert out.endswith("    x79 = 79\n    # … lines 81–101 omitted\n")
    assert len(out.split("\n")) == 82  # 80 kept lines, the marker, the final newline


def test_focused_markdown_keeps_the_matched_section_under_its_heading(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    assert (
        focused(fixture, "GUIDE.md", 1)
        == """\
# Guide

… lines 3–4 omitted

## Install

Run pip install.
Then run it.

… lines 11–19 omitted
"""
    )


def test_focused_of_a_file_without_declarations_is_its_head(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    text = focused(fixture, "notes.txt")
    assert text.endswith("note 40\n… lines 41–60 omitted\n")
    assert text.count("\n") == 41


def test_focused_line_numbers_leave_markers_unnumbered(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    text = focused(fixture, "store.py", 2, line_numbers=True)
    assert "19 |     def get_session(self, key: str) -> Optional[Any]:\n" in text
    assert "   |     # … lines 13–17 omitted\n18 |\n" in text


def test_focused_never_duplicates_and_keeps_source_order(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    # Everything matched at once: nested ranges overlap and must merge.
    text = focused(fixture, "store.py", 0, 1, 2, 3, 4)
    assert text == PY_SOURCE


def test_outline_nests_by_depth_with_doc_sentences(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    assert (
        outline(fixture, "store.py")
        == """\
class SessionStore:  # Keep sessions in memory.
  def __init__(self, path: str) -> None:
  def get_session(self, key: str) -> Optional[Any]:  # Return the session stored under key.
  def save(self, key: str, value: Any) -> None:
def load_store(path: str) -> SessionStore:  # Build a store for path.
"""
    )
    assert outline(fixture, "store.go").splitlines()[2] == (
        "func (s *Store) Get(key string) (string, error)  // Get returns the value for key."
    )


def test_outline_of_markdown_is_its_headings(fixture: tuple[Index, dict[str, str]]) -> None:
    assert outline(fixture, "GUIDE.md") == "# Guide\n## Install\n## Configure\n### Advanced\n"


def huge_file(count: int) -> ParsedFile:
    decls = tuple(
        decl(
            DeclKind.METHOD if n % 3 else DeclKind.CLASS,
            f"name{n}",
            f"def name{n}(self):" if n % 3 else f"class Name{n}:",
            (n + 1, n + 1, n + 1),
            depth=0 if n % 3 == 0 else (1 if n % 3 == 1 else 2),
            exported=n % 2 == 0,
        )
        for n in range(count)
    )
    return ParsedFile("huge.py", "python", 0, 0, "", count, count * 5, decls, ())


def test_outline_of_a_huge_file_keeps_only_exported_shallow_declarations() -> None:
    file = huge_file(240)
    lines = render_level(file, "", Level.OUTLINE).splitlines()
    shown = [d for d in file.declarations if d.exported and d.depth <= 1]
    assert len(lines) == len(shown) + 1
    assert lines[0] == "class Name0:" and lines[1] == "  def name4(self):"
    assert lines[-1] == f"# … {240 - len(shown)} private or nested declarations omitted"
    assert len(render_level(huge_file(150), "", Level.OUTLINE).splitlines()) == 150


def test_level_tokens_full_and_off_come_from_the_cache(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    index, _ = fixture
    file_id = index.path_ids["store.py"]
    assert level_tokens(index, file_id, Level.FULL) == index.files[file_id].tokens
    assert level_tokens(index, file_id, Level.OFF) == 0


@pytest.mark.parametrize("path", sorted(CASES))
@pytest.mark.parametrize("level", [Level.FOCUSED, Level.OUTLINE])
def test_level_tokens_estimates_the_fake_count_closely(
    fixture: tuple[Index, dict[str, str]], path: str, level: Level
) -> None:
    index, texts = fixture
    file_id = index.path_ids[path]
    file = index.files[file_id]
    matched = (len(file.declarations) - 1,) if file.declarations else ()
    real = WordCounter().count(render_level(file, texts[path], level, matched))
    estimate = level_tokens(index, file_id, level, matched)
    # Word counts split markers and signatures more finely than BPE, so the bound is looser
    # than the ±15 % held against the real tokenizer below.
    assert real * 0.6 <= estimate <= real * 1.5 + 10


def test_available_levels_drop_what_would_not_save_anything(
    fixture: tuple[Index, dict[str, str]],
) -> None:
    index, _ = fixture
    by_path = {f.path: available_levels(f) for f in index.files}
    assert by_path["store.py"] == (Level.FULL, Level.FOCUSED, Level.OUTLINE, Level.OFF)
    assert by_path["notes.txt"] == (Level.FULL, Level.FOCUSED, Level.OFF)  # no outline
    short_text = ParsedFile("a.txt", "text", 90, 0, "", 45, 90, (), ())  # 40 of 45 kept
    assert available_levels(short_text) == (Level.FULL, Level.OFF)


REAL_FILES = ("engine/model.py", "engine/levels.py", "engine/render/to_xml.py")


def test_level_tokens_is_within_15_percent_of_the_real_tokenizer() -> None:
    tokens = pytest.importorskip("engine.tokens")
    extract = pytest.importorskip("engine.parse.extract")
    tokenizer = tokens.load_tokenizer("o200k_base")
    parser = extract.SourceParser()
    files, prefixes, texts = [], [], []
    for path in REAL_FILES:
        text = (REPO / path).read_text(encoding="utf-8")
        prefix = [int(n) for n in tokenizer.line_prefix_counts(text)]
        structure = parser.parse(text, "python", path)
        files.append(parsed_file(path, "python", text, structure.declarations,
                                 structure.imports, prefix))  # fmt: skip
        prefixes.append(prefix)
        texts.append(text)
    index = make_index(files, prefixes)
    for file_id, file in enumerate(index.files):
        for level, matched in ((Level.FOCUSED, ()), (Level.FOCUSED, (2, 5)), (Level.OUTLINE, ())):
            real = tokenizer.count(render_level(file, texts[file_id], level, matched))
            estimate = level_tokens(index, file_id, level, matched)
            # each omission marker is estimated at MARKER_TOKENS (8-11 real): a small view
            # of many gaps may be off by one marker's worth
            slack = max(0.15 * real, MARKER_TOKENS)
            assert abs(estimate - real) <= slack, (file.path, level, matched, real, estimate)


def test_a_focused_view_leaves_out_the_headers_of_top_level_types_without_a_match(
    tmp_path: Path,
) -> None:
    """Only the scopes around what matched keep their headers: rich's console.py showed 25
    class headers and module constants around the one function kept (issue 11)."""
    classes = "".join(
        f"class Unrelated{i}:\n    value = {i}\n\n"
        f"    def other_{i}(self):\n        return {i}\n\n\n"
        for i in range(6)
    )
    text = (
        classes
        + "class Console:\n    def measure_terminal_size(self):\n"
        + "        return os.get_terminal_size()\n"
    )
    root = make_repo(tmp_path / "repo", {"console.py": "import os\n\n\n" + text})
    index = index_repo(root)[0]
    ranked = rank(index, "measure terminal size").files[0]
    file = index.files[ranked.file_id]
    shown = render_level(
        file, (root / "console.py").read_text(), Level.FOCUSED, ranked.matched_declarations
    )
    assert "def measure_terminal_size" in shown and "class Console:" in shown
    assert "import os" in shown
    assert "class Unrelated" not in shown


GROUPED_IMPORTS = {
    "svc/server.go": (
        'package svc\n\nimport (\n\t"fmt"\n\t"net/http"\n\t"os"\n\tstrs "strings"\n)\n\n'
        'func Serve() {\n\tfmt.Println("serving")\n\thttp.ListenAndServe(":8080", nil)\n}\n\n'
        'func Other() {\n\tos.Exit(1)\n\t_ = strs.ToUpper("x")\n}\n\n'
        "func Third() int {\n\treturn 3\n}\n\nfunc Fourth() int {\n\treturn 4\n}\n",
        'import (\n\t"fmt"\n\t"net/http"\n\t// … lines 6–7 omitted\n)\n',
    ),
    "app/serve.py": (
        "import os\nfrom helpers import (\n    fmt_line,\n    listen,\n    unused_one,\n"
        "    unused_two,\n)\n\n\ndef serve():\n    fmt_line('serving')\n    listen(8080)\n"
        "\n\ndef other():\n    os.exit(1)\n\n\ndef third():\n    return 3\n\n\n"
        "def fourth():\n    return 4\n",
        "from helpers import (\n    fmt_line,\n    listen,\n    # … lines 5–6 omitted\n)\n",
    ),
    "src/serve.rs": (
        "use std::{\n    fmt,\n    net::TcpListener,\n    env,\n    process,\n};\n\n"
        'pub fn serve() {\n    let l = TcpListener::bind("x");\n'
        '    fmt::format(format_args!("serving"));\n}\n\n'
        "pub fn other() {\n    process::exit(1);\n}\n\npub fn third() -> u8 {\n    3\n}\n\n"
        "pub fn fourth() -> u8 {\n    4\n}\n",
        "use std::{\n    fmt,\n    net::TcpListener,\n    // … lines 4–5 omitted\n};\n",
    ),
}


@pytest.mark.parametrize("path", sorted(GROUPED_IMPORTS))
def test_focused_keeps_a_grouped_import_around_the_specs_it_keeps(
    tmp_path: Path, path: str
) -> None:
    """Go's `import ( ... )`, Python's `from m import (...)` and Rust's `use a::{...}` over
    several lines: the kept specs stay inside their opening and closing lines."""
    text, kept = GROUPED_IMPORTS[path]
    root = make_repo(tmp_path, {path: text})
    index = index_repo(root)[0]
    ranked = next(f for f in rank(index, "serve").files if f.path == path)
    file = index.files[index.path_ids[path]]
    shown = render_level(file, text, Level.FOCUSED, ranked.matched_declarations)
    assert kept in shown, shown
