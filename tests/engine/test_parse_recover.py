"""A failed parse retried with a same-length edit, for a known gap of the TypeScript grammar."""

from __future__ import annotations

import pytest

from engine.parse import recover
from engine.parse.extract import AnalysisTimeout, Deadline, SourceParser, _parse
from engine.parse.recover import separate_generic_members

# Two generic call signatures a line apart: the grammar reads the second `<` as part of the
# first member's return type and loses everything after it (hono's src/types.ts).
HANDLER = """\
export interface HandlerInterface<E extends Env = Env> {
  // app.get(handler)
  <P extends string = string>(
    handler: H<E, P>
  ): Hono<E, P>

  // app.get(path, handler)
  <P extends string>(path: P, handler: H<E, P>): Hono<E, P>
}

export class Context<E extends Env = any> {
  env: E['Bindings']
  header(name: string, value: string): void {
    this.headers.set(name, value)
  }
}

export function createFactory<E extends Env>(): Factory<E> {
  return new Factory<E>()
}
"""


@pytest.fixture(scope="module")
def parser() -> SourceParser:
    return SourceParser()


def test_declarations_after_generic_call_signatures_are_found(parser: SourceParser) -> None:
    structure = parser.parse(HANDLER, "typescript", "src/types.ts")
    spans = {d.qualified_name: (d.start_line, d.end_line) for d in structure.declarations}
    assert spans["HandlerInterface"] == (1, 9)
    assert spans["Context"] == (11, 16)
    assert spans["Context.header"] == (13, 15)
    assert spans["createFactory"] == (18, 20)
    assert not structure.partial


def test_signatures_come_from_the_original_text(parser: SourceParser) -> None:
    structure = parser.parse(HANDLER, "typescript")
    signatures = {d.qualified_name: d.signature for d in structure.declarations}
    assert ";" not in "".join(signatures.values())
    assert signatures["Context.header"] == "header(name: string, value: string): void"


def test_the_edit_keeps_every_byte_offset() -> None:
    src = HANDLER.encode()
    edited = separate_generic_members(src)
    assert len(edited) == len(src)
    assert edited.count(b"\n") == src.count(b"\n")
    # Only the second member: the first follows the interface's `{` (no member ends there).
    assert [i for i, (a, b) in enumerate(zip(src, edited, strict=True)) if a != b] == [
        src.index(b"  <P extends string>(path") + 1,
    ]


def test_a_retry_that_parses_worse_is_not_kept(parser: SourceParser) -> None:
    # A generic arrow function on its own line: a `;` before it would break the assignment.
    source = "const identity =\n  <T>(value: T): T => value\n\nfunction after(): void {}\n"
    structure = parser.parse(source, "typescript")
    assert not structure.partial
    assert [d.qualified_name for d in structure.declarations][-1] == "after"


def test_tsx_is_not_retried(parser: SourceParser) -> None:
    # JSX lines open with `<`: the same edit would break them, so TSX keeps its own parse.
    source = "export function App() {\n  return (\n    <div>\n      <b>hi</b>\n    </div>\n  )\n}\n"
    structure = parser.parse(source, "tsx")
    assert [d.qualified_name for d in structure.declarations] == ["App"]
    assert not structure.partial


def test_a_generic_arrow_function_in_a_broken_file_is_kept(parser: SourceParser) -> None:
    # The retry must fix the interface without cutting the arrow function off its `=`
    # (a review found `identity` lost when every line-opening `<` got a `;`).
    source = HANDLER + "\nexport const identity =\n  <T,>(value: T): T => value\n"
    names = [d.qualified_name for d in parser.parse(source, "typescript").declarations]
    assert "identity" in names
    assert "createFactory" in names
    assert separate_generic_members(source.encode()).count(b";<") == 1


def test_a_member_after_its_doc_comment_is_separated() -> None:
    source = b"interface A {\n  <P>(h: P): R\n  /** Two. */\n  <Q>(h: Q): R\n}\n"
    assert separate_generic_members(source).count(b";<") == 1


def test_a_retry_that_loses_a_declaration_is_not_kept(
    parser: SourceParser, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An edit that fixes the interface but breaks `createFactory`: fewer error bytes, yet the
    # first parse's declarations are kept.
    def fix_and_break(src: bytes) -> bytes:
        return separate_generic_members(src).replace(
            b"function createFactory", b"function +reateFactory"
        )

    monkeypatch.setitem(recover.RETRIES, "typescript", fix_and_break)
    names = [d.qualified_name for d in parser.parse(HANDLER, "typescript").declarations]
    assert "createFactory" in names


def test_a_parse_past_its_deadline_is_cancelled() -> None:
    # The limit is watched during the parse itself, not only after it: a hostile file can take
    # tree-sitter seconds of CPU with the GIL held.
    from tree_sitter_language_pack import get_parser

    source = ("x = [" + "1, " * 200_000 + "]\n").encode()
    with pytest.raises(AnalysisTimeout):
        _parse(get_parser("python"), source, Deadline(at=0.0))
    assert not _parse(get_parser("python"), source, None).root_node.has_error


def test_a_parse_with_a_deadline_keeps_none_of_its_source() -> None:
    # py-tree-sitter keeps a reference to every chunk a read callable returns: without
    # _Reader.release, every file a worker parsed stayed in its memory (a worker passed
    # 400 MB on the 5x tree). 40 parses of a 200 KB file kept 8 MB; the 10 parsed here would
    # keep 2 MB, twice the bar (each traced parse takes ~0.4 s of CPU: 40 cost 15-24 s).
    import tracemalloc

    from tree_sitter_language_pack import get_parser

    parser = get_parser("python")
    source = "".join(f"def f{i}(a, b):\n    return a + b * {i}\n\n\n" for i in range(5000))
    src = source.encode()
    assert len(src) > 150_000
    _parse(parser, src, Deadline.after(60.0))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(10):
            tree = _parse(parser, src, Deadline.after(60.0))
            assert tree.root_node.child_count == 5000
            del tree
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 1_000_000


def test_every_declaration_found_with_and_without_a_deadline(parser: SourceParser) -> None:
    # The deadline's reader hands the source over in chunks (copies, given back afterwards):
    # the declarations are the same as from the bytes at once, across a chunk's end.
    from engine.parse.extract import PARSE_CHUNK

    source = "".join(f"class C{i}:\n    def m{i}(self):\n        return {i}\n" for i in range(4000))
    assert len(source) > 2 * PARSE_CHUNK
    timed = parser.parse(source, "python", time_limit=60.0)
    untimed = parser.parse(source, "python", time_limit=None)
    assert timed == untimed
    assert len(timed.declarations) == 8000


def test_after_the_parse_the_reader_hands_over_short_chunks() -> None:
    # A query's #eq? / #match? reads a node's text through the reader (the tree holds no
    # bytes); py-tree-sitter copies each chunk twice and counts its line breaks: a 64 KB chunk
    # for a 7-byte `require` made a TypeScript test file's query three times its parse.
    from engine.parse.extract import PARSE_CHUNK, TEXT_CHUNK, _Reader

    src = b"x" * (3 * PARSE_CHUNK)
    reader = _Reader(src)
    assert len(reader(0, None)) == PARSE_CHUNK
    reader.release()
    assert len(reader(10, None)) == TEXT_CHUNK < PARSE_CHUNK
    # a long node is read on in chunks twice as long each time (the binding joins them
    # anew at every read): a 1 MB node takes a dozen reads, not 4,000
    assert len(reader(10 + TEXT_CHUNK, None)) == 2 * TEXT_CHUNK
    assert len(reader(10 + 3 * TEXT_CHUNK, None)) == 4 * TEXT_CHUNK
    assert len(reader(0, None)) == TEXT_CHUNK
    assert reader(len(src) - 3, None) == b"xxx"


def test_predicates_read_through_the_reader_agree_with_the_bytes(parser: SourceParser) -> None:
    # The predicates test the same text with or without a deadline, also a node longer than
    # TEXT_CHUNK (read in several pieces): `exports` and `module.exports` assignments,
    # `require` calls and Python's upper-case constants.
    from engine.parse.extract import TEXT_CHUNK

    long_object = "registry(" + ", ".join(f"'entry{i}'" for i in range(60)) + ")"
    assert len(long_object) > 2 * TEXT_CHUNK
    script = "\n".join(
        [
            "const fs = require('fs');",
            "const other = notRequire('x');",
            "exports.load = function () { return 1; };",
            "module.exports.save = function () { return 2; };",
            "Widget.prototype.draw = function () { return 3; };",
            f"{long_object}.run = function () {{ return 4; }};",
            "module.exports = function named() { return 5; };",
        ]
        * 40
    )
    python = "\n".join(["LIMIT = 3", "lower = 4", "Mixed = 5", "MAX_SIZE_2 = 6"] * 40)
    for text, language in ((script, "javascript"), (script, "typescript"), (python, "python")):
        timed = parser.parse(text, language, time_limit=60.0)
        untimed = parser.parse(text, language, time_limit=None)
        assert timed == untimed
        assert timed.declarations or timed.imports
