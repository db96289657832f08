"""A failed parse retried with a same-length edit, for a known gap of the TypeScript grammar."""

from __future__ import annotations

import pytest

from engine.parse.extract import SourceParser
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
    assert edited.count(b";<") == 2
    assert [i for i, (a, b) in enumerate(zip(src, edited, strict=True)) if a != b] == [
        src.index(b"  <P extends string = string>") + 1,
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
