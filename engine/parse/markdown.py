"""Heading sections of Markdown, found by a line scan that gives tree-sitter's sections.

tree-sitter's Markdown grammar was a third of the first index's parse time (about 2 MB/s),
and all the index keeps of a Markdown file is its ATX heading sections: where each starts
and ends, its title, and the first sentence of its first paragraph. This scan follows the
block rules those depend on (fenced and indented code, front matter, list items and their
lazy lines, setext headings, thematic breaks) and gives exactly what the tree-sitter path
gives (proven on every Markdown file of the 16k tree). Where a file holds a construct it
does not follow (HTML blocks, block quotes, tables, tabs in indentation, bare carriage
returns, link definitions that run over lines), it answers None and the caller parses the
file with tree-sitter. It stays one module (past 400 lines) because its block rules only
make sense together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.model import Declaration, DeclKind
from engine.parse.nodes import clean_signature, first_sentence

SECTION_SEPARATOR = " > "
"""Joins parent headings in a section's qualified name (the language table's qualifier)."""

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*)|[ \t]*)$")
_FENCE = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)$")
_THEMATIC = re.compile(r" {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
_BULLET = re.compile(r"( {0,3})([-+*])(?:([ \t]+)(.*))?$")
_ORDERED = re.compile(r"( {0,3})([0-9]{1,9})([.)])(?:([ \t]+)(.*))?$")
_QUOTE = re.compile(r" {0,3}> ?(.*)$")
_LINK_DEFINITION = re.compile(r" {0,3}\[(?:[^\[\]\\]|\\.)*\]:")
"""A line that may open a link reference definition (a label and a colon)."""
_WHOLE_LINK_DEFINITION = re.compile(
    r" {0,3}\[(?:[^\[\]\\]|\\.)*[^\s\[\]\\](?:[^\[\]\\]|\\.)*\]:[ \t]*"
    r"(?:<[^<>]*>|[^\s<]\S*)(?:[ \t]+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?[ \t]*$"
)
"""A link reference definition on one line (label, destination, optional title)."""
_UNSURE_LINE = re.compile(r"\n(?:[ \t]*\|| *\t| {0,3}\|?[ \t]*:?-+:?[ \t]*\|)")
"""A line that starts a table row (`|`) or a delimiter row, or whose indentation holds a tab,
after its line break (searched in the text behind a line break of its own): a pattern that
starts with a literal is searched for that character first. The same alternatives, each
behind a multi-line `^`, tried every alternative at every character: 1.1 s of CPU for the
16k tree's 3,704 Markdown files, a third of their scan."""
_BARE_CR = re.compile(r"\r(?!\n)")
_BLOCK_MARKS = frozenset("#`~>-*_+=<[|\t0123456789")
"""First characters (after the indent) of every line `_scan_blocks` tries a block pattern on:
a setext underline, an ATX heading, a fence, a quote, an HTML block, a thematic break, a
list item, a link definition (and a tab, never there: `_unsure`). A line starting with any
other character is paragraph text or indented code, without a pattern tried: most lines of
the 16k tree's Markdown, where the seven patterns each line met were a third of the scan."""


def _unsure(text: str) -> bool:
    """Whether the text holds what leaves the file to tree-sitter: a table (a row starting
    with `|`, or a delimiter row), a tab in a line's indentation, a bare carriage return, a
    byte order mark (a README saved by a Windows editor: tree-sitter still reads its first
    heading) or a NUL."""
    return (
        "\ufeff" in text
        or "\x00" in text
        or ("\r" in text and _BARE_CR.search(text) is not None)
        or _UNSURE_LINE.search("\n" + text) is not None
    )


_HTML_ENDS = {  # CommonMark's HTML blocks 1-5: what closes each
    "script": re.compile(r"</(?:script|pre|style|textarea)>", re.IGNORECASE),
    "comment": re.compile(r"-->"),
    "instruction": re.compile(r"\?>"),
    "declaration": re.compile(r">"),
    "cdata": re.compile(r"\]\]>"),
}
_HTML_START = re.compile(
    r" {0,3}(?:(?P<script><(?:script|pre|style|textarea)(?:[ \t>]|$))|(?P<comment><!--)"
    r"|(?P<instruction><\?)|(?P<declaration><![A-Za-z])|(?P<cdata><!\[CDATA\[)"
    r"|(?P<block></?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col"
    r"|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame"
    r"|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav"
    r"|noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th"
    r"|thead|title|tr|track|ul)(?:[ \t]|/?>|$))"
    r"|(?P<tag>(?:<[A-Za-z][A-Za-z0-9-]*(?:[ \t]+[A-Za-z_:][A-Za-z0-9_.:-]*(?:[ \t]*=[ \t]*"
    r"(?:[^ \t\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*[ \t]*/?>|</[A-Za-z][A-Za-z0-9-]*[ \t]*>)"
    r"[ \t]*$))",
    re.IGNORECASE,
)
"""The start of an HTML block (CommonMark's seven kinds; `tag` cannot end a paragraph)."""


class _Unsure(Exception):
    """The file holds a construct this scan does not follow: tree-sitter must parse it."""


@dataclass(slots=True)
class _Heading:
    """One ATX heading of the document level (setext headings make no section in
    tree-sitter's grammar)."""

    line: int
    """0-based line where its section starts."""
    level: int
    """1-6."""
    title: str | None
    """Its title; None for a heading without one (no section the index keeps, but it
    ends others)."""
    paragraph: list[str] | None = None
    """Lines of the first paragraph of its own (before any deeper heading)."""


@dataclass(slots=True)
class _Scan:
    """The state of the line scan."""

    lines: list[str]
    headings: list[_Heading] = field(default_factory=list)
    paragraph: list[str] | None = None
    """The open paragraph's lines, or None."""
    paragraph_start: int = 0


def markdown_sections(text: str) -> tuple[Declaration, ...] | None:
    """One SECTION declaration per ATX heading with a title, nested by level, as the
    tree-sitter query `engine/queries/markdown.scm` gives them; None when the file holds a
    construct this scan does not follow (then parse it with tree-sitter)."""
    if _unsure(text):
        return None
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    scan = _Scan(lines)
    try:
        _scan_blocks(scan, _front_matter_end(lines))
    except _Unsure:
        return None
    return _declarations(scan, text.split("\n"))


def _front_matter_end(lines: list[str]) -> int:
    """The first line after a `---` front matter block (0 when there is none)."""
    if lines[0] != "---":
        return 0
    for number in range(1, len(lines)):
        if lines[number] == "---":
            return number + 1
    return 0


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_blank(line: str) -> bool:
    return not line.strip(" \t")


def _list_item(line: str, in_paragraph: bool) -> int | None:
    """The content offset of a list item starting on `line`, or None for no item.

    In a paragraph only a non-empty item, and an ordered one only from 1, starts."""
    match = _BULLET.match(line)
    if match is not None:
        indent, marker, spaces, content = match.groups()
    else:
        match = _ORDERED.match(line)
        if match is None:
            return None
        indent, number, dot, spaces, content = match.groups()
        if in_paragraph and int(number) != 1:
            return None
        marker = number + dot
    if not content or not content.strip(" \t"):
        if in_paragraph:
            return None
        return len(indent) + len(marker) + 1
    width = len(spaces)
    if width > 4:
        width = 1  # the item's content is indented code: it starts one space in
    return len(indent) + len(marker) + width


def _scan_blocks(scan: _Scan, start: int) -> None:
    """Walk the document-level blocks, recording headings and first paragraphs."""
    lines = scan.lines
    number = start
    while number < len(lines):
        line = lines[number]
        if _is_blank(line):
            _close_paragraph(scan)
            number += 1
            continue
        in_paragraph = scan.paragraph is not None
        if line.lstrip(" ")[:1] not in _BLOCK_MARKS:  # text: no block pattern can match
            if in_paragraph:
                assert scan.paragraph is not None
                scan.paragraph.append(line)
                number += 1
            elif _indent(line) >= 4:
                number = _indented_code_end(lines, number + 1)
            else:
                scan.paragraph = [line]
                scan.paragraph_start = number
                number += 1
            continue
        if in_paragraph and _SETEXT.match(line):
            assert scan.paragraph is not None
            if _LINK_DEFINITION.match(scan.paragraph[0]):
                raise _Unsure  # link definitions may leave no paragraph to underline
            scan.paragraph = None  # a setext heading: no paragraph, and (in tree-sitter's
            number += 1  # grammar) no section either: it ends none
            continue
        atx = _ATX.match(line)
        if atx is not None:
            _close_paragraph(scan)
            scan.headings.append(_Heading(number, len(atx.group(1)), _title(atx.group(2))))
            number += 1
            continue
        fence = _FENCE.match(line)
        if fence is not None and not (fence.group(2)[0] == "`" and "`" in fence.group(3)):
            _close_paragraph(scan)
            number = _fence_end(lines, number + 1, fence.group(2), 0)
            continue
        quote = _QUOTE.match(line)
        if quote is not None:
            _close_paragraph(scan)
            number = _quote_end(lines, number)
            continue
        html = _HTML_START.match(line)
        if html is not None and not (in_paragraph and html.lastgroup == "tag"):
            _close_paragraph(scan)
            number = _html_end(lines, number, html.lastgroup or "")
            continue
        if _THEMATIC.match(line):
            _close_paragraph(scan)
            number += 1
            continue
        offset = _list_item(line, in_paragraph)
        if offset is not None:
            _close_paragraph(scan)
            number = _list_end(scan, number, offset)
            continue
        if in_paragraph:
            assert scan.paragraph is not None
            scan.paragraph.append(line)
            number += 1
            continue
        if _indent(line) >= 4:
            number = _indented_code_end(lines, number + 1)
            continue
        if _LINK_DEFINITION.match(line) and _owner_wants_paragraph(scan):
            number = _link_definitions_end(lines, number)
            continue
        scan.paragraph = [line]
        scan.paragraph_start = number
        number += 1
    _close_paragraph(scan)


def _link_definitions_end(lines: list[str], number: int) -> int:
    """The blank line (or end) after a run of one-line link definitions starting at
    `number`: they make no paragraph. Anything else there is not followed here."""
    while number < len(lines) and not _is_blank(lines[number]):
        line = lines[number]
        if not _WHOLE_LINK_DEFINITION.match(line) or line.lstrip(" ")[:3] in ("[x]", "[X]"):
            # definitions over lines, a paragraph after them, or a label tree-sitter
            # takes for a task box (its "[x]: /u" is a paragraph): not followed here
            raise _Unsure
        number += 1
    return number


def _title(rest: str | None) -> str | None:
    """An ATX heading's title as the index names it; None when nothing follows the `#`s."""
    if rest is None or not rest.strip():
        return None
    return " ".join(rest.split()).rstrip("#").rstrip()  # "## ##" has one: ""


def _owner_wants_paragraph(scan: _Scan) -> bool:
    return bool(scan.headings) and scan.headings[-1].paragraph is None


def _close_paragraph(scan: _Scan) -> None:
    """End the open paragraph; it is the latest heading's first, if that has none yet."""
    if scan.paragraph is None:
        return
    if scan.headings and scan.headings[-1].paragraph is None:
        scan.headings[-1].paragraph = scan.paragraph
    scan.paragraph = None


def _fence_end(lines: list[str], number: int, opening: str, indent: int) -> int:
    """The line after the fence closing `opening` (or the end of the document); lines less
    indented than `indent` (a fence inside a list item) end it too."""
    closing = re.compile(rf" {{0,3}}{re.escape(opening[0])}{{{len(opening)},}}[ \t]*$")
    while number < len(lines):
        line = lines[number]
        if indent and not _is_blank(line) and _indent(line) < indent:
            return number
        number += 1
        if closing.match(line[indent:] if indent else line):
            return number
        if opening[:3] in line:
            # a fence inside a fence ("/// ```" in a doc comment): tree-sitter may close
            # the outer one there; not followed here
            raise _Unsure
    return number


def _quote_end(lines: list[str], number: int) -> int:
    """The line after the block quote starting on line `number`: its `>` lines, and lines
    that lazily continue a paragraph inside it."""
    fence: str | None = None  # the opening of a fence inside the quote
    lazy = False
    while number < len(lines):
        line = lines[number]
        quote = _QUOTE.match(line)
        if quote is None:
            if _is_blank(line) or fence is not None or not lazy:
                return number
            if _starts_block(line) or _QUOTE.match(line) or _list_item(line, True) is not None:
                return number
            number += 1  # a lazy continuation line
            continue
        content = quote.group(1)
        number += 1
        if fence is None and _ATX.match(content.lstrip(" ")):
            raise _Unsure  # a heading inside a quote: not followed here
        if fence is not None:
            if re.match(rf" {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", content):
                fence = None
            continue
        opening = _FENCE.match(content)
        if opening is not None and not (opening.group(2)[0] == "`" and "`" in opening.group(3)):
            fence, lazy = opening.group(2), False
            continue
        lazy = not _is_blank(content) and not _starts_block(content) and not _QUOTE.match(content)
    return number


def _html_end(lines: list[str], number: int, kind: str) -> int:
    """The line after the HTML block of `kind` starting on line `number`."""
    end = _HTML_ENDS.get(kind)
    if end is None:  # blocks 6 and 7 run to a blank line
        while number < len(lines) and not _is_blank(lines[number]):
            number += 1
        return number
    while number < len(lines):
        number += 1
        if end.search(lines[number - 1]):
            return number
    return number


def _indented_code_end(lines: list[str], number: int) -> int:
    """The first line after an indented code block (trailing blank lines belong after)."""
    last = number
    while number < len(lines):
        line = lines[number]
        if _is_blank(line):
            number += 1
            continue
        if _indent(line) < 4:
            break
        number += 1
        last = number
    return last


def _list_end(scan: _Scan, number: int, offset: int) -> int:
    """The first line after the list starting at `number` with content at `offset`.

    Lines indented to the item's content belong to it; so does a line after paragraph
    text of the item (lazily continued) unless it starts a block that ends a paragraph;
    a new item at the document level continues the list.
    """
    lines = scan.lines
    lazy = _item_starts_lazy(lines[number][offset:])
    number += 1
    blank = False
    while number < len(lines):
        line = lines[number]
        if _is_blank(line):
            blank, lazy = True, False
            number += 1
            continue
        if _indent(line) >= offset:
            content = line[offset:]
            if _ATX.match(content.lstrip(" ")):
                raise _Unsure  # tree-sitter makes a section inside the item: not followed
            fence = _FENCE.match(content)
            if fence is not None and not (fence.group(2)[0] == "`" and "`" in fence.group(3)):
                number = _fence_end(lines, number + 1, fence.group(2), offset)
                blank, lazy = False, False
                continue
            lazy = not _starts_block(content) or _list_item(content.lstrip(" "), False) is not None
            blank = False
            number += 1
            continue
        item = _list_item(line, False)
        if item is not None and not _THEMATIC.match(line):
            offset = item
            lazy = _item_starts_lazy(line[offset:])
            blank = False
            number += 1
            continue
        if blank or not lazy or _starts_block(line) or _list_item(line, True) is not None:
            return number
        number += 1  # a lazy continuation line of the item's paragraph
    return number


def _item_starts_lazy(content: str) -> bool:
    """Whether the first line of a list item (its content) is paragraph text, which later
    lines may continue lazily."""
    if _ATX.match(content.lstrip(" ")):
        raise _Unsure  # tree-sitter makes a section inside the item: not followed here
    return bool(content.strip()) and not _starts_block(content)


def _starts_block(line: str) -> bool:
    """Whether a line opens a block that ends a paragraph (heading, fence, break, HTML)."""
    html = _HTML_START.match(line)
    return bool(
        _ATX.match(line)
        or _FENCE.match(line)
        or _THEMATIC.match(line)
        or _indent(line) >= 4
        or (html is not None and html.lastgroup != "tag")
    )


def _declarations(scan: _Scan, raw_lines: list[str]) -> tuple[Declaration, ...]:
    """Build the SECTION declarations from the headings, as tree-sitter's sections nest."""
    headings = scan.headings
    result: list[Declaration] = []
    open_titles: list[tuple[int, str]] = []  # (level, title) of the enclosing ATX sections
    for position, heading in enumerate(headings):
        while open_titles and open_titles[-1][0] >= heading.level:
            open_titles.pop()
        if heading.title is None:
            continue
        end = len(raw_lines)
        for later in headings[position + 1 :]:
            if later.level <= heading.level:
                end = later.line
                break
        section = "\n".join(raw_lines[heading.line : end]).rstrip()
        parents = [title for _, title in open_titles]
        start_line = heading.line + 1
        result.append(
            Declaration(
                kind=DeclKind.SECTION,
                name=heading.title,
                qualified_name=SECTION_SEPARATOR.join([*parents, heading.title]),
                signature=clean_signature(raw_lines[heading.line]),
                doc=first_sentence("\n".join(heading.paragraph)) if heading.paragraph else "",
                start_line=start_line,
                end_line=max(heading.line + 1 + section.count("\n"), start_line),
                body_start_line=start_line,
                exported=True,
                depth=len(parents),
            )
        )
        open_titles.append((heading.level, heading.title))
    return tuple(result)
