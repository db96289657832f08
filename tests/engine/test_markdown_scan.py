"""The Markdown line scan gives exactly tree-sitter's sections, or hands the file back."""

from __future__ import annotations

import pytest

from engine.model import DeclKind
from engine.parse.extract import SourceParser
from engine.parse.markdown import markdown_sections


@pytest.fixture(scope="module")
def tree_sitter() -> SourceParser:
    return SourceParser(line_scan=False)


SCANNED = {
    "fenced code with # lines": (
        "# Install\n\nRun it.\n\n```sh\n# not a heading\nmake\n```\n\n## Linux\n\nUse apt.\n"
    ),
    "tilde fence, longer close, unclosed fence": (
        "# A\n\n~~~~\n# no\n~~~~~\n\n## B\n\n```\n# never closed\n"
    ),
    "setext headings end no section": (
        "# Top\n\nTitle\n=====\n\nText under it.\n\nOther\n-----\n\n## Sub\n\nMore.\n"
    ),
    "front matter": "---\ntitle: x\n# not a heading\n---\n\n# Real\n\nFirst. Second.\n",
    "front matter never closed is a break": "---\n# Heading\n\nText\n",
    "nested lists with lazy lines": (
        "# List\n\n- one\n  - two\n    deeper\nlazy line\n- three\n\n  continued\n\n"
        "Paragraph after.\n\n## Next\n\n1. a\n2. b\n\n   text in item\n\n# Out\n"
    ),
    "list item with a fence": "# A\n\n- item\n  ```\n  # code\n  ```\n\nAfter the list.\n",
    "empty items and ordered lists": "# A\ntext\n2. not an item\n-\n  x\n\n3) y\n\nz\n",
    "indented code and paragraph continuation": (
        "# A\n\n    # code\n    more\n\nPara\n    # continued, not code\n\n## B\n"
    ),
    "closing sequences and empty headings": (
        "# Title ##\n\nx\n\n##\n\n### ###\n\n#### Real #\n\n#5 not a heading\n"
    ),
    "thematic breaks": "# A\n\n***\n\nText\n- - -\n\n___\n\n## B\n\nb\n",
    "html blocks": (
        "# A\n\n<div>\n# inside html\n</div>\n\nAfter.\n\n<!--\n# in a comment\n\n-->\n\n"
        "## B\n\n<img src='x'>\n\nDoc of B.\n\n<script>\n# js\n</script>\n"
    ),
    "block quotes with lazy lines": (
        "# A\n\n> quoted\nlazy\n\nFirst paragraph.\n\n> ```\n> # code\n> ```\n\n## B\n"
    ),
    "crlf line ends": "# A\r\n\r\nText here.\r\n\r\n## B\r\n\r\nMore.\r\n",
    "deep and skipped levels": "### Deep\n\nd\n\n# One\n\n### Three\n\nt\n\n## Two\n\nw\n",
    "no trailing newline": "# A\n\npara without end",
    "link definitions make no paragraph": (
        "# A\n\n[y]: https://x.org\n[z]: <a b> 'T'\n\nThe doc.\n\n## B\n\n[link](u) and text.\n"
    ),
    "heading text with spaces and trailing brace": "#   Many   spaces   {\n\n## `code` *em*\n",
}


@pytest.mark.parametrize("text", list(SCANNED.values()), ids=list(SCANNED))
def test_the_line_scan_gives_tree_sitters_sections(tree_sitter: SourceParser, text: str) -> None:
    expected = tree_sitter.parse(text, "markdown")
    assert not expected.partial
    assert markdown_sections(text) == expected.declarations


HANDED_BACK = {
    "a table": "# A\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "a delimiter row without outer pipes": "# A\n\na | b\n--|--\n",
    "a fence inside a fence": "# A\n\n```\n/// ```rust\n/// x\n/// ```\n```\n\n## B\n",
    "a tab in the indentation": "# A\n\n-\tx\n\t# y\n",
    "a bare carriage return": "# A\r\rtext\n",
    "a link definition with its title on the next line": '# A\n\n[x]: /u\n"title"\n',
    "a link definition and text after it": "# A\n\n[y]: /u\nText.\n",
    "a link definition labelled like a task box": "# A\n\n[x]: /u\n\nText.\n",
    "a heading inside a list item": "# A\n\n1. a\n\n   # inside\n",
    "a heading opening a list item": "# A\n\n- # item\n",
    "a heading inside a block quote": "# A\n\n> # quoted\n",
    "a byte order mark": "\ufeff# Title\n\nIntro text.\n\n## Usage\n\nRun it.\n",
    "a NUL": "# A\x00 text\n\nx\n",
}


@pytest.mark.parametrize("text", list(HANDED_BACK.values()), ids=list(HANDED_BACK))
def test_constructs_the_scan_does_not_follow_go_to_tree_sitter(text: str) -> None:
    assert markdown_sections(text) is None
    structure = SourceParser().parse(text, "markdown")  # the parser falls back by itself
    assert structure == SourceParser(line_scan=False).parse(text, "markdown")


def test_sections_nest_with_qualified_names_and_first_sentences() -> None:
    text = "# Install\n\nRun make. Then go.\n\n## On Linux\n\nUse apt.\n\n\n# Use\n"
    sections = markdown_sections(text)
    assert sections is not None
    rows = [(d.qualified_name, d.depth, d.start_line, d.end_line, d.doc) for d in sections]
    assert rows == [
        ("Install", 0, 1, 7, "Run make."),
        ("Install > On Linux", 1, 5, 7, "Use apt."),
        ("Use", 0, 10, 10, ""),
    ]
    assert {d.kind for d in sections} == {DeclKind.SECTION}


def test_the_parser_uses_the_scan_for_markdown(tree_sitter: SourceParser) -> None:
    text = SCANNED["nested lists with lazy lines"]
    assert SourceParser().parse(text, "markdown") == tree_sitter.parse(text, "markdown")
