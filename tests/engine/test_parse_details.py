"""Signatures, body lines, express-style JavaScript and parser robustness."""

from __future__ import annotations

import pytest

from engine.model import DeclKind
from engine.parse.extract import SourceParser, SourceStructure
from engine.parse.languages import LANGUAGES, language_for_path, spec_for


@pytest.fixture(scope="module")
def parser() -> SourceParser:
    return SourceParser()


def signatures(structure: SourceStructure) -> dict[str, str]:
    return {d.qualified_name: d.signature for d in structure.declarations}


def test_python_signature_keeps_colon_and_skips_decorators(parser: SourceParser) -> None:
    source = "@cache\ndef f(a,\n      b) -> int:\n    return a\n"
    (declaration,) = parser.parse(source, "python").declarations
    assert declaration.signature == "def f(a, b) -> int:"
    assert (declaration.start_line, declaration.body_start_line, declaration.end_line) == (1, 4, 4)


def test_brace_languages_drop_the_opening_brace(parser: SourceParser) -> None:
    go = parser.parse("package p\nfunc (c *Command) Execute() error {\n\treturn nil\n}\n", "go")
    assert signatures(go) == {"Command.Execute": "func (c *Command) Execute() error"}
    java = parser.parse("class A {\n  @Override\n  public void m(int a) {\n  }\n}\n", "java")
    assert signatures(java)["A.m"] == "public void m(int a)"
    assert java.declarations[1].start_line == 2


def test_rust_attributes_are_in_the_line_range_not_the_signature(parser: SourceParser) -> None:
    source = "/// A point.\n#[derive(Debug)]\npub struct P {\n    x: i32,\n}\n"
    (declaration,) = parser.parse(source, "rust").declarations
    assert (declaration.start_line, declaration.end_line) == (2, 5)
    assert declaration.signature == "pub struct P"
    assert declaration.doc == "A point."


def test_express_style_member_assignments_are_methods(parser: SourceParser) -> None:
    source = (
        "var res = module.exports = {};\n"
        "/**\n * Send a response.\n *\n * @param {string} body\n */\n\n"
        "res.send = function send(body) {\n  function inner() {}\n};\n"
        "app.use = function use(fn) {};\n"
        "var x = function () {};\n"
    )
    structure = parser.parse(source, "javascript")
    rows = [(d.kind, d.name, d.qualified_name) for d in structure.declarations]
    assert rows == [
        (DeclKind.METHOD, "send", "res.send"),
        (DeclKind.FUNCTION, "inner", "res.send.inner"),
        (DeclKind.METHOD, "use", "app.use"),
        (DeclKind.FUNCTION, "x", "x"),
    ]
    send = structure.declarations[0]
    assert send.doc == "Send a response."
    assert (send.start_line, send.end_line) == (8, 10)
    assert send.signature == "res.send = function send(body)"


def test_jsx_component_needs_pascal_case_and_jsx(parser: SourceParser) -> None:
    source = "function Card() { return <div/>; }\nfunction Plain() { return 1; }\n"
    kinds = [d.kind for d in parser.parse(source, "javascript").declarations]
    assert kinds == [DeclKind.COMPONENT, DeclKind.FUNCTION]


def test_markdown_section_signature_is_the_heading_line(parser: SourceParser) -> None:
    structure = parser.parse("# Top #\n\nText.\n\n## Next\n", "markdown")
    assert [(d.name, d.signature) for d in structure.declarations] == [
        ("Top", "# Top #"),
        ("Next", "## Next"),
    ]


@pytest.mark.parametrize("language", sorted(LANGUAGES))
@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00\x01\x02\xff\ufffd" * 50,
        "}}}{{{ ((( def class fn func <<< ''' \"\"\" /* \n" * 20,
        "\ud800 lone surrogate",
    ],
)
def test_parser_never_raises(parser: SourceParser, language: str, text: str) -> None:
    structure = parser.parse(text, language, "x")
    assert isinstance(structure, SourceStructure)


def test_unknown_and_text_languages_give_an_empty_structure(parser: SourceParser) -> None:
    assert parser.parse("def f(): pass", "text") == SourceStructure()
    assert parser.parse("def f(): pass", "cobol") == SourceStructure()


def test_syntax_errors_give_partial_with_declarations(parser: SourceParser) -> None:
    source = "def good():\n    return 1\n\ndef broken(:\n    pass\n\nclass Later:\n    pass\n"
    structure = parser.parse(source, "python")
    assert structure.partial
    assert "good" in [d.name for d in structure.declarations]


def test_large_file_parses(parser: SourceParser) -> None:
    source = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(5000))
    structure = parser.parse(source, "python")
    assert len(structure.declarations) == 5000
    assert structure.declarations[-1].end_line == 3 * 4999 + 2


def test_language_table_covers_every_extension() -> None:
    assert language_for_path("src/app.tsx") == "tsx"
    assert language_for_path("notes.txt") == "text"
    for language in set(language_for_path(f"x{ext}") for ext in (".py", ".go", ".cs", ".rst")):
        spec = spec_for(language)
        assert spec is not None and spec.key == language
    assert spec_for("python") is not None and spec_for("python").line_comment == "#"  # type: ignore[union-attr]
    assert spec_for("rust").line_comment == "//"  # type: ignore[union-attr]
