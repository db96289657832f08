"""Turn source text into declarations and raw imports, with tree-sitter queries as the data.

One generic walk serves every language: the query file of a language names declarations
(`@definition.<kind>`, `@name`, `@receiver`), scopes that qualify names (`@scope`) and imports
(`@import`, `@import.member`, `@import.mod`, `@import.wildcard`, `@import.statement`).
`SourceParser` compiles each grammar and query once (2-12 ms each) and reuses them for every file.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from engine.model import Declaration, DeclKind, Import
from engine.parse import nodes
from engine.parse.languages import LanguageSpec, spec_for
from engine.parse.prose import rst_sections

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Query

CLASS_LIKE = frozenset(
    {DeclKind.CLASS, DeclKind.STRUCT, DeclKind.INTERFACE, DeclKind.TRAIT, DeclKind.ENUM}
)
"""Kinds whose functions are methods."""

JSX_TYPES = frozenset({"jsx_element", "jsx_self_closing_element", "jsx_fragment"})
"""Nodes that make a PascalCase function a component."""

_KINDS = {f"definition.{kind.value}": kind for kind in DeclKind}


@dataclass(frozen=True, slots=True)
class SourceStructure:
    """What the parser found in one file, before token counts and import resolution."""

    declarations: tuple[Declaration, ...] = ()
    """Declarations in source order (start line, then outer before inner)."""
    imports: tuple[Import, ...] = ()
    """Imports as written, in source order, with no targets yet."""
    partial: bool = False
    """True when the tree has syntax errors; some declarations may be missing."""


@dataclass(frozen=True, slots=True)
class _Grammar:
    """A compiled parser and query for one language."""

    parser: Parser
    query: Query


@dataclass(slots=True)
class _Found:
    """A declaration or scope node from one query match, before it is placed in its parents."""

    node: Node
    kind: DeclKind | None
    """None for a scope (a Rust impl) that qualifies names but is no declaration."""
    name: str
    receiver: str
    pattern: int
    qualified: str = ""
    """Filled outer-first, so a nested declaration extends its parent's qualified name."""


class SourceParser:
    """Parse source text of any supported language; keeps compiled grammars and queries."""

    def __init__(self) -> None:
        self._grammars: dict[str, _Grammar | None] = {}

    def parse(self, text: str, language: str, path: str = "") -> SourceStructure:
        """Return the declarations and imports of `text`; never raises, even on garbage.

        Args:
            text: the decoded file content.
            language: a language key of the table; unknown keys and "text" give nothing.
            path: the file's relative path, used only to describe the file (may be empty).
        """
        spec = spec_for(language)
        if spec is None or not text:
            return SourceStructure()
        if not spec.grammar:
            return SourceStructure(declarations=rst_sections(text))
        grammar = self._grammar(spec)
        if grammar is None:
            return SourceStructure()
        src = text.encode("utf-8", errors="replace")
        try:
            tree = grammar.parser.parse(src)
            return _extract(src, spec, grammar.query, tree.root_node)
        except (ValueError, RuntimeError, RecursionError, UnicodeError):
            # tree-sitter reports internal failures (a cancelled parse, a bad byte range) this
            # way; one file's bad luck must not stop the index.
            return SourceStructure(partial=True)

    def _grammar(self, spec: LanguageSpec) -> _Grammar | None:
        """Return the compiled parser and query of a language, building them on first use."""
        if spec.key in self._grammars:
            return self._grammars[spec.key]
        grammar: _Grammar | None = None
        try:
            # Deliberately lazy: importing the language pack costs about 0.1 s.
            import tree_sitter_language_pack as pack
            from tree_sitter import Parser, Query

            language = pack.get_language(spec.grammar)  # type: ignore[arg-type]
            source = resources.files("engine.queries").joinpath(spec.query_file).read_text("utf-8")
            grammar = _Grammar(Parser(language), Query(language, source))
        except (ImportError, LookupError, OSError, ValueError, RuntimeError, NameError):
            grammar = None  # a missing grammar or broken query disables the language, no more
        self._grammars[spec.key] = grammar
        return grammar


def _extract(src: bytes, spec: LanguageSpec, query: Query, root: Node) -> SourceStructure:
    """Run the query over a tree and build the declarations and imports."""
    from tree_sitter import QueryCursor  # deliberately lazy, like the language pack

    found: dict[tuple[int, int, str], _Found] = {}
    imports: dict[tuple[str, int], Import] = {}
    for pattern, captures in QueryCursor(query).matches(root):
        if "import" in captures or "import.mod" in captures:
            record = _import_of(src, captures)
            if record is not None:
                imports.setdefault((record.raw, record.start_line), record)
            continue
        item = _found_of(src, pattern, captures)
        if item is None:
            continue
        key = (item.node.start_byte, item.node.end_byte, item.node.type)
        previous = found.get(key)
        if previous is None or previous.pattern <= item.pattern:
            found[key] = item  # later patterns in a query file refine earlier ones
    declarations = _declarations(src, spec, found)
    ordered_imports = sorted(imports.values(), key=lambda i: (i.start_line, i.end_line))
    return SourceStructure(tuple(declarations), tuple(ordered_imports), root.has_error)


def _text(src: bytes, node: Node) -> str:
    return nodes.text_of(src, node.start_byte, node.end_byte)


def _found_of(src: bytes, pattern: int, captures: dict[str, list[Node]]) -> _Found | None:
    """Read one declaration or scope match."""
    names = captures.get("name")
    if not names:
        return None
    name = " ".join(_text(src, names[0]).split())
    receivers = captures.get("receiver")
    receiver = _text(src, receivers[0]) if receivers else ""
    if "scope" in captures:
        return _Found(captures["scope"][0], None, name, receiver, pattern)
    for capture, kind in _KINDS.items():
        if capture in captures:
            if kind is DeclKind.SECTION:
                name = name.rstrip("#").rstrip()
            return _Found(captures[capture][0], kind, name, receiver, pattern)
    return None


def _import_of(src: bytes, captures: dict[str, list[Node]]) -> Import | None:
    """Read one import match: the module as written, joined with a member or marked as `mod`."""
    if "import.mod" in captures:
        raw = "mod:" + _text(src, captures["import.mod"][0])
    else:
        raw = " ".join(_text(src, captures["import"][0]).split())
        if len(raw) >= 2 and raw[0] in "'\"`" and raw[-1] == raw[0]:
            raw = raw[1:-1]
        members = captures.get("import.member")
        if members:
            member = _text(src, members[0])
            raw = raw + member if raw.endswith(".") else f"{raw}.{member}"
        if "import.wildcard" in captures:
            raw += ".*"
    if not raw:
        return None
    statement = (captures.get("import.statement") or captures.get("import") or [])[:1]
    if not statement:
        return None
    return Import(raw, statement[0].start_point[0] + 1, _end_line(statement[0]))


def _end_line(node: Node) -> int:
    """1-based last line of a node; a node ending at column 0 ends on the line before."""
    row, column = node.end_point
    if column == 0 and row > node.start_point[0]:
        return row
    return row + 1


def _declarations(
    src: bytes, spec: LanguageSpec, found: dict[tuple[int, int, str], _Found]
) -> list[Declaration]:
    """Place each found node in its enclosing declarations and build the records."""
    result: list[Declaration] = []
    ordered = sorted(found.values(), key=lambda f: (f.node.start_byte, -f.node.end_byte))
    for item in ordered:
        parents = _parents(item.node, found)
        if item.receiver:
            item.qualified = f"{item.receiver}.{item.name}"
        elif parents:
            item.qualified = f"{parents[0].qualified}{spec.qualifier}{item.name}"
        else:
            item.qualified = item.name
        if item.kind is not None:
            result.append(_declaration(src, spec, item, parents))
    return result


def _parents(node: Node, found: dict[tuple[int, int, str], _Found]) -> list[_Found]:
    """Enclosing declarations and scopes, innermost first."""
    parents: list[_Found] = []
    parent = node.parent
    while parent is not None:
        item = found.get((parent.start_byte, parent.end_byte, parent.type))
        if item is not None:
            parents.append(item)
        parent = parent.parent
    return parents


def _declaration(
    src: bytes, spec: LanguageSpec, item: _Found, parents: list[_Found]
) -> Declaration:
    """Build one Declaration from a found node and its enclosing declarations."""
    node, name = item.node, item.name
    kind = item.kind or DeclKind.FUNCTION
    inner = parents[0] if parents else None
    if kind is DeclKind.FUNCTION and inner is not None and _is_class_like(inner):
        kind = DeclKind.METHOD
    elif kind is DeclKind.METHOD and inner is None and not item.receiver:
        kind = DeclKind.FUNCTION
    if (
        spec.jsx
        and kind is DeclKind.FUNCTION
        and name[:1].isupper()
        and nodes.contains_type(node, JSX_TYPES)
    ):
        kind = DeclKind.COMPONENT
    outer = nodes.outer_node(node)
    first = nodes.first_node(outer)
    body = nodes.find_body(node)
    start_line = first.start_point[0] + 1
    end_line = _trim_blank_end(src, node, _end_line(outer))
    signature_from = nodes.signature_start(outer)
    if body is not None and body.start_byte > signature_from:
        signature = nodes.text_of(src, signature_from, body.start_byte)
        body_line = body.start_point[0] + 1
    else:
        line_end = src.find(b"\n", signature_from, outer.end_byte)
        signature = nodes.text_of(
            src, signature_from, line_end if line_end >= 0 else outer.end_byte
        )
        body_line = start_line
    return Declaration(
        kind=kind,
        name=name,
        qualified_name=item.qualified,
        signature=nodes.clean_signature(signature),
        doc=nodes.doc_of(src, spec, node, first, body),
        start_line=start_line,
        end_line=max(end_line, start_line),
        body_start_line=max(body_line, start_line),
        exported=nodes.is_exported(src, spec, node, outer, name),
        depth=len(parents),
    )


def _is_class_like(item: _Found) -> bool:
    return item.kind is None or item.kind in CLASS_LIKE


def _trim_blank_end(src: bytes, node: Node, end_line: int) -> int:
    """Drop blank lines a node swallowed at its end (Markdown sections run to the next one)."""
    if node.type != "section":
        return end_line
    text = nodes.text_of(src, node.start_byte, node.end_byte).rstrip()
    return node.start_point[0] + 1 + text.count("\n")
