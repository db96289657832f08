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
the original text; only the tree comes from the edited bytes), and the second tree is kept
only when fewer of its bytes are in ERROR nodes than the first's.

Not done for TSX, where most lines that open with `<` are JSX.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

_LINE_OPENING_ANGLE = re.compile(rb"(?m)^([ \t]*)[ \t]<")


def separate_generic_members(src: bytes) -> bytes:
    """Return `src` with a `;` before every indented line-opening `<`, same length."""
    return _LINE_OPENING_ANGLE.sub(rb"\1;<", src)


RETRIES: dict[str, Callable[[bytes], bytes]] = {"typescript": separate_generic_members}
"""Language key -> the edit a failed parse is retried with (same length, same lines)."""


def reparse_if_better(parser: Parser, language: str, src: bytes, tree: Tree) -> Tree:
    """Return a tree of `src` with fewer syntax errors than `tree` when a retry finds one.

    Only trees with errors in a language of `RETRIES` are retried; the edit never moves a byte,
    so the returned tree's positions hold for `src` itself.
    """
    edit = RETRIES.get(language)
    if edit is None or not tree.root_node.has_error:
        return tree
    edited = edit(src)
    if edited == src:
        return tree
    retried = parser.parse(edited)
    if error_bytes(retried.root_node) < error_bytes(tree.root_node):
        return retried
    return tree


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
