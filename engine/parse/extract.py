"""Turn source text into declarations and raw imports, with tree-sitter queries as the data.

One generic walk serves every language: the query file of a language names declarations
(`@definition.<kind>`, `@name`, `@receiver`), scopes that qualify names (`@scope`) and imports
(`@import`, `@import.member`, `@import.mod`, `@import.wildcard`, `@import.statement`).
`SourceParser` compiles each grammar and query once (2-12 ms each) and reuses them for every file.
"""

from __future__ import annotations

import bisect
import sys
import time
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from engine.model import Declaration, DeclKind, Import
from engine.parse import nodes
from engine.parse.languages import LanguageSpec, spec_for
from engine.parse.lineage import Lineage
from engine.parse.markdown import markdown_sections
from engine.parse.prose import rst_sections
from engine.parse.recover import error_bytes, retry_source

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Query, Tree

CLASS_LIKE = frozenset(
    {DeclKind.CLASS, DeclKind.STRUCT, DeclKind.INTERFACE, DeclKind.TRAIT, DeclKind.ENUM}
)
"""Kinds whose functions are methods."""

JSX_QUERY = "[(jsx_element) (jsx_self_closing_element)] @jsx"
"""Nodes that make a PascalCase function a component (a fragment is a `jsx_element` too)."""
DEADLINE_EVERY = 256
"""Query matches handled between two looks at the clock."""
DECLARATIONS_CHECK_EVERY = 16
"""Declarations built between two looks at the clock."""

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
    timed_out: bool = False
    """True when the analysis went past its time limit: nothing was kept, the file is plain
    text to the index."""


class AnalysisTimeout(Exception):
    """A file's analysis went past its time limit (raised inside the parser, never out)."""


@dataclass(frozen=True, slots=True)
class Deadline:
    """When the analysis of one file must give up, in CPU seconds of the analysing thread.

    CPU time, not the wall clock: on a loaded machine a file must not lose its declarations
    because other processes ran, or the same repository would index differently by the load.
    """

    at: float
    """time.thread_time() value past which `check` raises."""

    @classmethod
    def after(cls, seconds: float | None) -> Deadline | None:
        """A deadline `seconds` of CPU time from now; None (no limit) for None."""
        return None if seconds is None else cls(time.thread_time() + seconds)

    def check(self) -> None:
        """Raise AnalysisTimeout once the deadline has passed."""
        if self.passed():
            raise AnalysisTimeout

    def passed(self) -> bool:
        """True once the deadline has passed."""
        return time.thread_time() > self.at


@dataclass(frozen=True, slots=True)
class _Grammar:
    """A compiled parser and query for one language."""

    parser: Parser
    query: Query
    jsx: Query | None
    """Finds JSX nodes, for languages that have them (components are functions holding JSX)."""


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

    def __init__(self, line_scan: bool = True) -> None:
        self._grammars: dict[str, _Grammar | None] = {}
        self.line_scan = line_scan
        """Find Markdown sections by a line scan (engine.parse.markdown) where it can, 6
        times as fast as tree-sitter with the same result; False: always tree-sitter."""

    def parse(
        self, text: str, language: str, path: str = "", *, time_limit: float | None = None
    ) -> SourceStructure:
        """Return the declarations and imports of `text`; never raises, even on garbage.

        Args:
            text: the decoded file content.
            language: a language key of the table; unknown keys and "text" give nothing.
            path: the file's relative path, used only to describe the file (may be empty).
            time_limit: CPU seconds the extraction may take; past it the result is empty and
                says `timed_out` (a hostile file must not stall the index). None: no limit.
        """
        spec = spec_for(language)
        if spec is None or not text:
            return SourceStructure()
        if not spec.grammar:
            return SourceStructure(declarations=rst_sections(text))
        if spec.key == "markdown" and self.line_scan:
            sections = markdown_sections(text)
            if sections is not None:  # else a construct the scan does not follow
                return SourceStructure(declarations=sections)
        grammar = self._grammar(spec)
        if grammar is None:
            return SourceStructure()
        src = text.encode("utf-8", errors="replace")
        deadline = Deadline.after(time_limit)
        try:
            tree = _parse(grammar.parser, src, deadline)
            structure = _extract(src, spec, grammar, tree.root_node, deadline)
            edited = retry_source(spec.key, src, tree)
            if edited is None:
                return structure
            retried = _parse(grammar.parser, edited, deadline)
            if error_bytes(retried.root_node) >= error_bytes(tree.root_node):
                return structure
            # The retried tree's positions hold for `src` (the edit moves no byte); it is kept
            # only when it loses none of the declarations the first parse found.
            other = _extract(src, spec, grammar, retried.root_node, deadline)
            return other if _keeps_every_declaration(structure, other) else structure
        except AnalysisTimeout:
            return SourceStructure(timed_out=True)
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
            jsx = Query(language, JSX_QUERY) if spec.jsx else None
            grammar = _Grammar(Parser(language), Query(language, source), jsx)
        except (ImportError, LookupError, OSError, ValueError, RuntimeError, NameError):
            grammar = None  # a missing grammar or broken query disables the language, no more
        self._grammars[spec.key] = grammar
        return grammar


PARSE_CHUNK = 1 << 16
"""Bytes handed to tree-sitter at a time when a parse must watch a deadline."""
TEXT_CHUNK = 256
"""Bytes handed over by the first read once the parse is done: a query's `#eq?` or `#match?`
then reads one node's text through the reader (the tree holds no bytes), and py-tree-sitter
copies each chunk twice and counts its line breaks byte by byte: with PARSE_CHUNK, a 7-byte
name cost three copies of 64 KB. The names these predicates test are short; a longer node is
read on from where the last read ended, each chunk twice the last (the binding joins them
anew at each read: fixed chunks would copy a long node's bytes over and over)."""
PROGRESS_CHECK_EVERY = 16
"""Progress calls of a parse between two looks at the clock. tree-sitter calls back every
100 or so parse steps (56,000 calls for 1,147 files of the 16k tree); the thread's CPU clock
is a system call (2.4 us here), which every call paid."""


def _parse(parser: Parser, src: bytes, deadline: Deadline | None) -> Tree:
    """Parse `src`; with a deadline, cancel the parse itself once it passes.

    tree-sitter calls a progress callback only when it reads the text through a callable (a
    bytestring ignores it); returning True cancels the parse, which then raises ValueError. A
    hostile file (hundreds of broken statements) can take a parse 10 s of CPU, all of it
    holding the GIL: without the callback the limit was looked at only after the parse.
    """
    if deadline is None:
        return parser.parse(src)
    cancelled = False
    calls = 0

    def cancel(*_: object) -> bool:
        nonlocal cancelled, calls
        calls += 1
        if calls % PROGRESS_CHECK_EVERY:
            return False
        cancelled = deadline.passed()
        return cancelled

    reader = _Reader(src)
    try:
        return parser.parse(reader, progress_callback=cancel)
    except ValueError:
        if cancelled:
            raise AnalysisTimeout from None
        raise
    finally:
        reader.release()


class _Reader:
    """Hands tree-sitter a source in chunks, and afterwards drops the reference the binding
    keeps of each chunk.

    py-tree-sitter (0.26.1 here) takes a reference to every chunk a read callable returns
    and never lets it go, so every file parsed with a deadline stayed in memory for the
    process's life: a pool worker grew by the bytes of each file it parsed (~8 MB a pass
    over a 2,000-file sample; each worker past 400 MB on the 5x tree). Chunks are fresh
    copies, so this reader and the binding are their only holders: once the parse has
    returned (tree-sitter reads its input only while it parses; a tree keeps the callable,
    never a chunk), a chunk held once more than that lost its reference, which `release`
    gives back. A binding that keeps no such reference leaves the counts as they should be,
    and nothing is done.
    """

    def __init__(self, src: bytes) -> None:
        self._view = memoryview(src)
        self._given: list[bytes] | None = []
        """The parse's chunks; None once the parse is done (`release`)."""
        self._text_end = -1
        """Where the last read of a node's text ended (once the parse is done)."""
        self._text_chunk = TEXT_CHUNK

    def __call__(self, offset: int, _point: object) -> bytes:
        if self._given is None:  # a query reading a node's text (TEXT_CHUNK)
            size = 2 * self._text_chunk if offset == self._text_end else TEXT_CHUNK
            self._text_chunk, self._text_end = size, offset + size
            return bytes(self._view[offset : offset + size])
        chunk = bytes(self._view[offset : offset + PARSE_CHUNK])
        if len(chunk) > 1:  # an empty or 1-byte bytes object is a shared constant
            self._given.append(chunk)
        return chunk

    def release(self) -> None:
        """Give back the references the parse kept of the chunks (see the class); later
        reads are a query's, of one node's text (TEXT_CHUNK), which the binding lets go."""
        given, self._given = self._given or [], None
        while given:
            chunk = given.pop()
            # held by `chunk` and getrefcount's argument; one more is the binding's
            if sys.getrefcount(chunk) == HELD_BY_RELEASE + 1:
                _decref(chunk)


HELD_BY_RELEASE = 2
"""sys.getrefcount of a chunk `_Reader.release` holds alone (its variable, the argument)."""


def _decref(item: object) -> None:
    """Drop one reference to `item` that nothing will ever drop (see `_Reader`)."""
    import ctypes  # deliberate: only parses with a deadline need it

    decref = ctypes.pythonapi.Py_DecRef
    decref.argtypes = [ctypes.py_object]
    decref.restype = None
    decref(item)


def _keeps_every_declaration(first: SourceStructure, second: SourceStructure) -> bool:
    """True when `second` holds every declaration (name and first line) `first` holds."""
    found = {(d.qualified_name, d.start_line) for d in second.declarations}
    return all((d.qualified_name, d.start_line) in found for d in first.declarations)


def _extract(
    src: bytes, spec: LanguageSpec, grammar: _Grammar, root: Node, deadline: Deadline | None
) -> SourceStructure:
    """Run the query over a tree and build the declarations and imports."""
    from tree_sitter import QueryCursor  # deliberately lazy, like the language pack

    found: dict[tuple[int, int, str], _Found] = {}
    imports: dict[tuple[str, int], Import] = {}
    matches = QueryCursor(grammar.query).matches(root)
    for position, (pattern, captures) in enumerate(matches):
        if deadline is not None and position % DEADLINE_EVERY == 0:
            deadline.check()
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
    context = _FileContext(src, spec, Lineage(root), _JsxStarts(grammar.jsx, root), deadline)
    declarations = _declarations(context, found)
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


class _JsxStarts:
    """Sorted start bytes of a file's JSX nodes, found when first asked for: only a function
    named in PascalCase asks (is it a component?): 663 of the 16k tree's 1,136 TSX and
    JavaScript files ask nothing, and their parse took 4.0 s of CPU with the search over
    every tree, 3.5 s without it where nothing asks."""

    __slots__ = ("_query", "_root", "_starts")

    def __init__(self, query: Query | None, root: Node) -> None:
        self._query = query
        self._root = root
        self._starts: list[int] | None = None

    def get(self) -> list[int]:
        """The start bytes (none for a language without JSX)."""
        if self._starts is None:
            from tree_sitter import QueryCursor  # deliberately lazy, like the language pack

            nodes_found = (
                QueryCursor(self._query).captures(self._root).get("jsx", [])
                if self._query is not None
                else []
            )
            self._starts = sorted(node.start_byte for node in nodes_found)
        return self._starts


@dataclass(frozen=True, slots=True)
class _FileContext:
    """What every declaration of one file is built against."""

    src: bytes
    spec: LanguageSpec
    lineage: Lineage
    jsx: _JsxStarts
    """The file's JSX nodes."""
    deadline: Deadline | None

    def holds_jsx(self, node: Node) -> bool:
        """Tell whether a JSX node starts inside `node`."""
        starts = self.jsx.get()
        at = bisect.bisect_left(starts, node.start_byte)
        return at < len(starts) and starts[at] < node.end_byte


def _declarations(
    context: _FileContext, found: dict[tuple[int, int, str], _Found]
) -> list[Declaration]:
    """Place each found node in its enclosing declarations and build the records.

    Enclosing declarations come from a stack of open byte ranges (tree nodes nest), not from
    climbing `Node.parent`, which tree-sitter answers by descending from the root: climbing
    made deeply nested files cubic.
    """
    result: list[Declaration] = []
    open_items: list[_Found] = []
    for position, item in enumerate(_ordered(found)):
        if context.deadline is not None and position % DECLARATIONS_CHECK_EVERY == 0:
            context.deadline.check()
        while open_items and not _encloses(open_items[-1].node, item.node):
            open_items.pop()
        inner = open_items[-1] if open_items else None
        if item.receiver:
            item.qualified = f"{item.receiver}.{item.name}"
        elif inner is not None:
            item.qualified = f"{inner.qualified}{context.spec.qualifier}{item.name}"
        else:
            item.qualified = item.name
        if item.kind is not None:
            result.append(_declaration(context, item, inner, len(open_items)))
        open_items.append(item)
    return result


def _ordered(found: dict[tuple[int, int, str], _Found]) -> list[_Found]:
    """Found nodes outer before inner: by start, longest first; equal ranges by tree depth."""
    ordered = sorted(found.values(), key=lambda f: (f.node.start_byte, -f.node.end_byte))
    for i in range(1, len(ordered)):
        # Two nodes with one byte range (a wrapper and what it wraps): the ancestor first.
        j = i
        while j > 0 and ordered[j - 1].node.byte_range == ordered[j].node.byte_range:
            if not _is_ancestor(ordered[j].node, ordered[j - 1].node):
                break
            ordered[j - 1], ordered[j] = ordered[j], ordered[j - 1]
            j -= 1
    return ordered


def _is_ancestor(node: Node, other: Node) -> bool:
    """Tell whether `node` encloses `other` in the tree, both spanning the same bytes."""
    parent = other.parent
    while parent is not None and parent.byte_range == node.byte_range:
        if parent == node:
            return True
        parent = parent.parent
    return False


def _encloses(outer: Node, inner: Node) -> bool:
    """Tell whether `outer`'s byte range holds `inner`'s (the nodes of one tree nest)."""
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def _declaration(
    context: _FileContext, item: _Found, inner: _Found | None, depth: int
) -> Declaration:
    """Build one Declaration from a found node, the innermost declaration or scope holding it
    and how many hold it."""
    src, spec = context.src, context.spec
    node, name = item.node, item.name
    kind = item.kind or DeclKind.FUNCTION
    if kind is DeclKind.FUNCTION and inner is not None and _is_class_like(inner):
        kind = DeclKind.METHOD
    elif kind is DeclKind.METHOD and inner is None and not item.receiver:
        kind = DeclKind.FUNCTION
    if spec.jsx and kind is DeclKind.FUNCTION and name[:1].isupper() and context.holds_jsx(node):
        kind = DeclKind.COMPONENT
    path = context.lineage.locate(node)
    outer_at = nodes.outer_step(path)
    outer = path[outer_at].node
    first_at = nodes.first_index(path[outer_at])
    siblings = path[outer_at].siblings
    first = siblings[first_at]
    body = nodes.find_body(node) if spec.bodies else None
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
        doc=nodes.doc_of(src, spec, node, (siblings, first_at), body),
        start_line=start_line,
        end_line=max(end_line, start_line),
        body_start_line=max(body_line, start_line),
        exported=nodes.is_exported(src, spec, node, name, path[1].node if outer_at else outer),
        depth=depth,
    )


def _is_class_like(item: _Found) -> bool:
    return item.kind is None or item.kind in CLASS_LIKE


def _trim_blank_end(src: bytes, node: Node, end_line: int) -> int:
    """Drop blank lines a node swallowed at its end (Markdown sections run to the next one)."""
    if node.type != "section":
        return end_line
    text = nodes.text_of(src, node.start_byte, node.end_byte).rstrip()
    return node.start_point[0] + 1 + text.count("\n")
