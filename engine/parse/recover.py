"""Second parses for known gaps of a grammar, kept only when they parse better.

The TypeScript grammar of tree-sitter-language-pack 0.13.0 cannot end a generic call
signature at a line break. In

    interface Handler {
      <P>(handler: P): R
      <Q>(handler: Q): R
    }

the second `<` is read as continuing the first member's return type, and the parser gives up
on the rest of the file: hono's `src/types.ts` (2,000 lines) became one ERROR node with no
declarations, its `context.ts` lost half of its own. A semicolon after the first member makes
the file parse. The retry writes one in place of the last indentation character before each
`<` that opens a line, so every byte offset and line number stays as it was (the index keeps
the original text; only the tree comes from the edited bytes). A `<` after a line that ends
inside an expression (`=`, `(`, `,`, `=>`, `:`...) is left alone: it opens a generic arrow
function or a type, not a member. The second tree is kept only when fewer of its bytes are in
ERROR nodes than the first's and the declarations found in it include every one found in the
first (engine.parse.extract).

Not done for TSX, where most lines that open with `<` are JSX.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

_LINE_OPENING_ANGLE = re.compile(rb"(?m)^([ \t]*)[ \t]<")
_CONTINUES = tuple(b"=(,:|&?<[{!")
"""Last characters of a line after which a line-opening `<` continues an expression or opens
the first member (a generic arrow function after `=`, `(` or `=>`, a type after `:` or `|`, a
member right after `{`): no member ends there, so no `;` is written."""


def separate_generic_members(src: bytes) -> bytes:
    """Return `src` with a `;` before every indented line-opening `<` that follows a line
    that could end a member, same length."""
    out = bytearray(src)
    for match in _LINE_OPENING_ANGLE.finditer(src):
        before = _previous_code_line(src, match.start())
        if before and before[-1] not in _CONTINUES and not before.endswith(b"=>"):
            out[match.end() - 2] = ord(";")
    return bytes(out)


def _previous_code_line(src: bytes, start: int) -> bytes:
    """The code on the last line before offset `start` that has any, stripped: blank lines,
    `//` lines and block comments (a member's JSDoc) are passed over."""
    end = start
    while end > 0:
        begin = src.rfind(b"\n", 0, end - 1) + 1
        line = src[begin:end].strip()
        if line.endswith(b"*/"):
            opening = src.rfind(b"/*", 0, begin + src[begin:end].rstrip().rfind(b"*/"))
            if opening < 0:
                return line
            end = opening  # then the code before the comment, on its line or above
            continue
        if line and not line.startswith(b"//"):
            return line
        end = begin
    return b""


RETRIES: dict[str, Callable[[bytes], bytes]] = {"typescript": separate_generic_members}
"""Language key -> the edit a failed parse is retried with (same length, same lines)."""


def retry_source(language: str, src: bytes, tree: Tree) -> bytes | None:
    """The edited text to parse again when `tree` has errors and its language has a retry that
    changes something; None otherwise. The caller keeps the retried tree only when it has fewer
    error bytes (`error_bytes`) and loses no declaration of the first."""
    edit = RETRIES.get(language)
    if edit is None or not tree.root_node.has_error:
        return None
    edited = edit(src)
    return None if edited == src else edited


def error_bytes(root: Node) -> int:
    """Bytes under ERROR nodes, plus one for each node the parser had to invent (MISSING)."""
    total = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error:
            total += max(1, node.end_byte - node.start_byte)
        elif node.is_missing:
            total += 1
        elif node.has_error:
            stack.extend(node.children)
    return total
