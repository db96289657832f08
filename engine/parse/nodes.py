"""Small generic helpers over tree-sitter nodes: bodies, signatures, doc comments, visibility.

They know node *shapes* shared by many grammars (a `body` field, a preceding comment, a
`modifiers` child), never a single language, so that languages stay data (queries + table rows).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.parse.languages import DocStyle, LanguageSpec, Visibility

if TYPE_CHECKING:
    from tree_sitter import Node

    from engine.parse.lineage import Step

WRAPPER_TYPES = frozenset(
    {
        "decorated_definition",
        "export_statement",
        "expression_statement",
        "lexical_declaration",
        "variable_declaration",
        "template_declaration",
        "ambient_declaration",
        "const_declaration",
        "var_declaration",
    }
)
"""Parents that belong to the declaration they wrap (decorators, `export`, `const`)."""

DECORATOR_TYPES = frozenset(
    {"decorator", "attribute_item", "marker_annotation", "annotation", "attribute_list"}
)
"""Leading parts of a declaration that the line range includes but the signature skips."""

BODY_TYPES = frozenset({"field_declaration_list", "class_body", "declaration_list", "block"})
"""Block nodes taken as the body when the declaration has no `body` field (Go structs)."""

_BODY_SEARCH_DEPTH = 3
"""How deep under a declaration to look for its body: type_declaration > spec > type > list."""

MAX_DOC_CHARS = 300
"""Longest doc sentence kept; longer ones are cut at a word boundary."""

_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.DOTALL)
_XML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_COMMENT_MARK = re.compile(r"^\s*(?:/\*\*+|/\*!?|\*+/|\*|///?!?|#+!?|--)\s?")
_STRING_PREFIX = re.compile(r"^[rRbBuUfF]*('''|\"\"\"|'|\")")


def text_of(src: bytes, start: int, end: int) -> str:
    """Decode a byte range of the source, replacing broken UTF-8."""
    return src[start:end].decode("utf-8", errors="replace")


def last_row(node: Node) -> int:
    """0-based row of a node's last character (a node ending at column 0 ends on the row before)."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point[0] else row


def outer_step(path: list[Step]) -> int:
    """Climb from the declaration at the end of `path` through the wrappers it owns (`export`,
    `const`, decorators); return the position in `path` of the outermost one."""
    at = len(path) - 1
    while at > 0 and path[at - 1].node.type in WRAPPER_TYPES and _sole_part(path[at - 1].node):
        at -= 1
    return at


def _sole_part(wrapper: Node) -> bool:
    """Tell whether a wrapper holds one declaration (`const a = 1`, not `const (a = 1; b = 2)`)."""
    parts = [
        child
        for child in wrapper.named_children
        if child.type not in DECORATOR_TYPES and "comment" not in child.type
    ]
    return len(parts) == 1


def first_index(outer: Step) -> int:
    """Return the position among `outer`'s siblings of the first node of the declaration's line
    range: the outer node, or the attribute lines right above it."""
    siblings = outer.siblings
    first = outer.index
    at = first - 1
    while at >= 0:
        sibling = siblings[at]
        if sibling.is_named:
            if sibling.type not in DECORATOR_TYPES:
                break
            first = at
        at -= 1
    return first


def signature_start(outer: Node) -> int:
    """Return the byte where the signature starts: after decorators and annotations."""
    node = outer
    while True:
        children = node.children
        skipped = 0
        while skipped < len(children) and children[skipped].type in DECORATOR_TYPES:
            skipped += 1
        if skipped == len(children):
            after = node.next_sibling if node is not outer else None
            return after.start_byte if after is not None else outer.start_byte
        following = children[skipped]
        if following.type == "modifiers" and any(
            child.type in DECORATOR_TYPES for child in following.children
        ):
            node = following
            continue
        return following.start_byte if skipped else node.start_byte


def find_body(node: Node) -> Node | None:
    """Return the body node of a declaration, or None for body-less ones (constants, headings)."""
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    level = [node]
    for _ in range(_BODY_SEARCH_DEPTH):
        following: list[Node] = []
        for parent in level:
            for child in parent.named_children:
                inner = child.child_by_field_name("body")
                if inner is not None and child.type not in ("parameters", "formal_parameters"):
                    return inner
                if child.type in BODY_TYPES:
                    return child
                following.append(child)
        level = following
    return None


def clean_signature(text: str) -> str:
    """Collapse whitespace to one line and drop a trailing `{` (keep Python's `:`)."""
    line = " ".join(text.split())
    if line.endswith("{"):
        line = line[:-1].rstrip()
    return line


def first_sentence(text: str) -> str:
    """Return the first sentence of the first paragraph of a doc text."""
    paragraph: list[str] = []
    for line in text.strip().splitlines():
        stripped = line.strip()
        if not stripped:
            if paragraph:
                break
            continue
        paragraph.append(stripped)
    joined = " ".join(paragraph)
    match = _SENTENCE.match(joined)
    sentence = match.group(1) if match else joined
    if len(sentence) > MAX_DOC_CHARS:
        sentence = sentence[:MAX_DOC_CHARS].rsplit(" ", 1)[0] + "…"
    return sentence


def docstring_of(src: bytes, body: Node | None) -> str:
    """Return the first sentence of a Python-style docstring at the top of `body`."""
    if body is None or body.named_child_count == 0:
        return ""
    string = body.named_children[0]
    if string.type == "expression_statement" and string.named_child_count == 1:
        string = string.named_children[0]
    if string.type not in ("string", "concatenated_string"):
        return ""
    raw = text_of(src, string.start_byte, string.end_byte)
    match = _STRING_PREFIX.match(raw)
    if match is None:
        return ""
    quote = match.group(1)
    inner = raw[match.end() :]
    if inner.endswith(quote):
        inner = inner[: -len(quote)]
    return first_sentence(inner)


def _touches(src: bytes, comment: Node, row: int, parts: list[str]) -> bool:
    """Tell whether a comment ends right above `row`; a /** block may sit one blank line up."""
    gap = row - last_row(comment) - 1
    if gap <= 0:
        return True
    return gap == 1 and not parts and src.startswith(b"/**", comment.start_byte)


def comment_above(
    src: bytes, siblings: list[Node], first: int, comment_types: tuple[str, ...]
) -> str:
    """Return the first sentence of the comment block right above a declaration, whose first
    node is `siblings[first]`."""
    if not comment_types:
        return ""
    parts: list[str] = []
    row = siblings[first].start_point[0]
    at = first - 1
    while (
        at >= 0 and siblings[at].type in comment_types and _touches(src, siblings[at], row, parts)
    ):
        sibling = siblings[at]
        before = siblings[at - 1] if at > 0 else None
        if before is not None and last_row(before) == sibling.start_point[0]:
            break  # a trailing comment of the previous statement, not a doc comment
        parts.append(text_of(src, sibling.start_byte, sibling.end_byte))
        row = sibling.start_point[0]
        at -= 1
    if not parts:
        return ""
    lines: list[str] = []
    for part in reversed(parts):
        for line in part.splitlines():
            cleaned = _COMMENT_MARK.sub("", line, count=1)
            if cleaned.rstrip().endswith("*/"):
                cleaned = cleaned.rstrip()[:-2]
            lines.append(cleaned)
    return first_sentence(_XML_TAG.sub("", "\n".join(lines)))


def first_paragraph(src: bytes, node: Node) -> str:
    """Return the first sentence of the first paragraph inside a document section."""
    for child in node.named_children:
        if child.type == "paragraph":
            return first_sentence(text_of(src, child.start_byte, child.end_byte))
    return ""


def doc_of(
    src: bytes, spec: LanguageSpec, node: Node, first: tuple[list[Node], int], body: Node | None
) -> str:
    """Return a declaration's doc sentence in the style its language uses.

    Args:
        first: the declaration's first node, as its parent's children and its position there.
    """
    if spec.doc_style is DocStyle.FIRST_PARAGRAPH:
        return first_paragraph(src, node)
    if spec.doc_style is DocStyle.DOCSTRING:
        doc = docstring_of(src, body)
        if doc:
            return doc
    return comment_above(src, *first, spec.comment_types)


def _has_word_child(src: bytes, node: Node, types: frozenset[str], words: frozenset[str]) -> bool:
    """Tell whether a direct child of one of `types` contains one of `words`."""
    for child in node.children:
        if (
            child.type in types
            and set(text_of(src, child.start_byte, child.end_byte).split()) & words
        ):
            return True
    return False


_MODIFIER_TYPES = frozenset({"modifiers", "modifier", "visibility_modifier"})
_STORAGE_TYPES = frozenset({"storage_class_specifier"})


def is_exported(
    src: bytes, spec: LanguageSpec, node: Node, name: str, top: Node | None = None
) -> bool:
    """Decide whether a declaration is visible outside its file, by the language's rule.

    Args:
        top: the statement at the top of the file that holds the declaration (JS/TS look
            for `export` there); None for a declaration at the top itself.
    """
    rule = spec.visibility
    if rule is Visibility.NO_UNDERSCORE:
        return not name.startswith("_")
    if rule is Visibility.CAPITALISED:
        return name[:1].isupper()
    if rule is Visibility.PUB_KEYWORD:
        return any(child.type == "visibility_modifier" for child in node.children)
    if rule is Visibility.PUBLIC_MODIFIER:
        return _has_word_child(src, node, _MODIFIER_TYPES, frozenset({"public"}))
    if rule is Visibility.NOT_STATIC:
        return not _has_word_child(src, node, _STORAGE_TYPES, frozenset({"static"}))
    if rule is Visibility.NOT_PRIVATE:
        private = frozenset({"private", "protected"})
        return not _has_word_child(src, node, _MODIFIER_TYPES, private)
    if rule is Visibility.EXPORT_STATEMENT:
        return top is not None and _is_js_exported(src, top)
    return True


def _is_js_exported(src: bytes, top: Node) -> bool:
    """JS/TS: under an `export` statement, or assigned to `exports.x` / `module.exports`.

    `top` is found by the caller from the file's top-level statements, not by climbing
    `Node.parent`: tree-sitter finds a parent by descending from the root, so climbing from
    each of n nested declarations cost O(n³) (a 15 KB file of 1,000 nested functions: 84 s).
    """
    if top.type == "export_statement":
        return True
    if top.type == "expression_statement":
        head = text_of(src, top.start_byte, min(top.end_byte, top.start_byte + 16))
        return head.startswith(("exports.", "module.exports"))
    return False
