"""Parents and earlier siblings of declaration nodes, found by one walk down the tree.

tree-sitter keeps no parent pointers: `Node.parent` and `Node.prev_sibling` descend from the
root every time, so asking them for each of n nested declarations costs O(n * depth), which a
hostile file of a thousand nested functions turns into minutes. `Lineage` instead keeps the path
from the root to the last declaration visited; declarations are visited in source order, outer
before inner, so each node of the tree is entered at most once and every question about a
parent or an earlier sibling is a list look-up.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node


@dataclass(slots=True)
class Step:
    """One node of the path from the root, with the children list it was found in."""

    node: Node
    siblings: list[Node]
    """The children of this node's parent (the root's: just the root)."""
    index: int
    """This node's position in `siblings`."""
    _children: list[Node] | None = field(default=None, repr=False)
    _starts: list[int] | None = field(default=None, repr=False)

    def children(self) -> tuple[list[Node], list[int]]:
        """This node's children and their start bytes (read once, while on the path)."""
        if self._children is None or self._starts is None:
            self._children = list(self.node.children)
            self._starts = [child.start_byte for child in self._children]
        return self._children, self._starts


class Lineage:
    """The path from the root to the last node located, reused from one node to the next."""

    def __init__(self, root: Node) -> None:
        self.path: list[Step] = [Step(root, [root], 0)]
        """Root first; the last step is the node last located."""

    def locate(self, node: Node) -> list[Step]:
        """Move the path so that it ends at `node`, and return it.

        Cheap when nodes come in source order, outer first. A node that cannot be reached by
        byte ranges (zero-width nodes in broken code) gets a path from `Node.parent` instead.
        """
        path = self.path
        while len(path) > 1 and not _encloses(path[-1].node, node):
            path.pop()
        while path[-1].node != node:
            step = _child_towards(path[-1], node)
            if step is None:
                self.path = _path_by_parents(node)
                return self.path
            path.append(step)
        return path


def _child_towards(step: Step, node: Node) -> Step | None:
    """The child of `step` that is `node` or holds it; None when no child does."""
    children, starts = step.children()
    last = bisect.bisect_right(starts, node.start_byte) - 1
    holder: int | None = None
    at = last
    while at >= 0 and (at == last or starts[at] == starts[last]):
        child = children[at]
        if child == node:
            return Step(child, children, at)
        if holder is None and _encloses(child, node):
            holder = at
        at -= 1
    if holder is None:
        return None
    return Step(children[holder], children, holder)


def _path_by_parents(node: Node) -> list[Step]:
    """The path to `node` by climbing `Node.parent` (slow; only for nodes ranges cannot find)."""
    chain = [node]
    parent = node.parent
    while parent is not None:
        chain.append(parent)
        parent = parent.parent
    chain.reverse()
    path = [Step(chain[0], [chain[0]], 0)]
    for child in chain[1:]:
        siblings = list(path[-1].node.children)
        index = next((i for i, s in enumerate(siblings) if s == child), 0)
        path.append(Step(child, siblings, index))
    return path


def _encloses(outer: Node, inner: Node) -> bool:
    """Tell whether `outer`'s byte range holds `inner`'s."""
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte
