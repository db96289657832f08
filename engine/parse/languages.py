"""Which language a path is written in, and what the parser needs to know about each language.

Language knowledge is data: a row of `LanguageSpec` per language (grammar, query file, comment
style, how visibility and docs are written, which import resolver applies) plus one
`engine/queries/<lang>.scm`. The extraction code is generic and reads only these rows.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
}


def language_for_path(path: str) -> str:
    """Return the language key for a relative path, or "text" when none applies."""
    _, ext = posixpath.splitext(path.lower())
    return EXTENSIONS.get(ext, "text")


class Visibility(str, Enum):
    """How a language says that a declaration is visible outside its file."""

    NO_UNDERSCORE = "no_underscore"
    """Python: public unless the name starts with "_"."""
    EXPORT_STATEMENT = "export_statement"
    """JS/TS: under `export`, or assigned to `exports.x` / `module.exports`."""
    CAPITALISED = "capitalised"
    """Go: the name starts with an upper-case letter."""
    PUB_KEYWORD = "pub_keyword"
    """Rust: a `pub` visibility modifier."""
    PUBLIC_MODIFIER = "public_modifier"
    """Java, C#: a `public` modifier."""
    NOT_STATIC = "not_static"
    """C, C++: external linkage unless `static`."""
    NOT_PRIVATE = "not_private"
    """PHP, Ruby: public unless marked private or protected."""
    ALWAYS = "always"
    """Every declaration counts as visible (document sections)."""


class DocStyle(str, Enum):
    """Where a declaration's documentation is written."""

    DOCSTRING = "docstring"
    """Python: a string as the first statement of the body; comments above as a fallback."""
    COMMENT_ABOVE = "comment_above"
    """The comment block right above the declaration (/** */, ///, //, #)."""
    FIRST_PARAGRAPH = "first_paragraph"
    """Markdown: the first paragraph of the section."""


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """One row of the language table: everything language-specific the parser uses."""

    key: str
    """Language key, as `language_for_path` returns it."""
    grammar: str
    """tree-sitter-language-pack grammar name; empty when the language has no grammar (rst)."""
    query_file: str
    """File name under engine/queries; empty when there is none."""
    line_comment: str
    """Prefix of a line comment, used to write omission markers; empty for prose formats."""
    resolver: str
    """Import resolver key in engine.parse.resolve ("python", "js", "go", ...); empty for none."""
    visibility: Visibility
    """How `exported` is decided."""
    doc_style: DocStyle = DocStyle.COMMENT_ABOVE
    """Where documentation is found."""
    comment_types: tuple[str, ...] = ("comment",)
    """Node types of comments in the grammar."""
    qualifier: str = "."
    """Separator between the parts of a qualified name."""
    jsx: bool = False
    """PascalCase functions that return JSX are components."""
    bodies: bool = True
    """Declarations can have a body node; False where the grammar has none (Markdown has no
    `body` field and none of nodes.BODY_TYPES), so none is looked for: a section holds its
    subsections, and searching them was a sixth of the time of parsing a Markdown file."""


_C_COMMENTS = ("comment",)
_RUST_COMMENTS = ("line_comment", "block_comment")
_JAVA_COMMENTS = ("line_comment", "block_comment")

LANGUAGES: MappingProxyType[str, LanguageSpec] = MappingProxyType(
    {
        spec.key: spec
        for spec in (
            LanguageSpec(
                "python",
                "python",
                "python.scm",
                "#",
                "python",
                Visibility.NO_UNDERSCORE,
                DocStyle.DOCSTRING,
            ),
            LanguageSpec(
                "javascript",
                "javascript",
                "javascript.scm",
                "//",
                "js",
                Visibility.EXPORT_STATEMENT,
                jsx=True,
            ),
            LanguageSpec(
                "typescript",
                "typescript",
                "typescript.scm",
                "//",
                "js",
                Visibility.EXPORT_STATEMENT,
            ),
            LanguageSpec(
                "tsx", "tsx", "typescript.scm", "//", "js", Visibility.EXPORT_STATEMENT, jsx=True
            ),
            LanguageSpec("go", "go", "go.scm", "//", "go", Visibility.CAPITALISED),
            LanguageSpec(
                "rust",
                "rust",
                "rust.scm",
                "//",
                "rust",
                Visibility.PUB_KEYWORD,
                comment_types=_RUST_COMMENTS,
            ),
            LanguageSpec(
                "java",
                "java",
                "java.scm",
                "//",
                "java",
                Visibility.PUBLIC_MODIFIER,
                comment_types=_JAVA_COMMENTS,
            ),
            LanguageSpec("c", "c", "c.scm", "//", "c", Visibility.NOT_STATIC),
            LanguageSpec("cpp", "cpp", "cpp.scm", "//", "c", Visibility.NOT_STATIC),
            LanguageSpec("csharp", "csharp", "csharp.scm", "//", "", Visibility.PUBLIC_MODIFIER),
            LanguageSpec("ruby", "ruby", "ruby.scm", "#", "ruby", Visibility.NOT_PRIVATE),
            LanguageSpec("php", "php", "php.scm", "//", "php", Visibility.NOT_PRIVATE),
            LanguageSpec(
                "markdown",
                "markdown",
                "markdown.scm",
                "",
                "",
                Visibility.ALWAYS,
                DocStyle.FIRST_PARAGRAPH,
                comment_types=(),
                qualifier=" > ",
                bodies=False,
            ),
            LanguageSpec(
                "rst",
                "",
                "",
                "",
                "",
                Visibility.ALWAYS,
                DocStyle.FIRST_PARAGRAPH,
                comment_types=(),
                qualifier=" > ",
                bodies=False,
            ),
        )
    }
)
"""The language table, keyed by language key; "text" and unknown keys have no row."""


def spec_for(language: str) -> LanguageSpec | None:
    """Return the table row of a language key, or None for plain text and unknown keys."""
    return LANGUAGES.get(language)
