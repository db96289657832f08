"""Personalised PageRank over the import graph, seeded by the best keyword hits.

A walker starts at a seed, follows imports forwards (weight 1) and backwards (weight
`backward`), and jumps back to the seeds with probability `restart`. Files where it spends
time sit close to several good hits: the helpers and types an answer file uses. Heavily
imported hubs are damped by 1 + hub_damping * ln(1 + importers) so a shared utility module
does not float to the top of every question. Pure numpy: a few bincounts per iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.memo import ArrayMemo

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

PREPARED_GRAPHS = 8
"""Import graphs kept prepared at once (one per open index; the DEV evaluation opens many)."""
WALKS_KEPT = 16
"""Walks (sets of seed components) kept per prepared graph."""


def personalised_pagerank(
    n_files: int,
    edges: npt.NDArray[np.int32],
    seeds: dict[int, float],
    *,
    restart: float = 0.3,
    backward: float = 0.5,
    hub_damping: float = 0.6,
    iterations: int = 20,
) -> npt.NDArray[np.float64]:
    """Return each file's graph score, 0..1 (the best non-seed file scores 1).

    Args:
        n_files: number of files (nodes).
        edges: rows (importer, imported).
        seeds: file id -> seed weight (the keyword scores of the best hits).
        restart: probability of jumping back to the seeds at each step.
        backward: weight of walking from an imported file to its importer.
        hub_damping: strength of the damping of heavily imported files.
        iterations: power iterations; 20 is converged to ~1e-3 for restart 0.3.
    """
    import numpy as np  # deliberate: numpy loads with the index

    scores = np.zeros(n_files, dtype=np.float64)
    if not seeds or len(edges) == 0 or n_files == 0:
        return scores
    graph = _prepared(n_files, edges, backward, hub_damping)
    start = np.zeros(n_files, dtype=np.float64)
    for file_id, value in seeds.items():
        start[file_id] = max(value, 0.0)
    total = start.sum()
    if total <= 0:
        return scores
    start /= total
    walk = graph.walk_from(list(seeds))
    begin = start[walk.nodes]  # the walk in the seeds' components, in their own numbering
    rank = begin.copy()
    lost_of = np.zeros(graph.dangling_files)
    # rank = restart x begin + (1 - restart) x (flow + lost x begin), each step; worked out
    # in place, operands swapped only where IEEE arithmetic gives the same bits (a + b and
    # a x b commute), so the scores are exactly those of the plain formula.
    restarted = restart * begin
    sent = np.empty(len(walk.run_node))
    spread = np.empty(len(rank))
    for _ in range(iterations):
        # rank[src] x step for every step, worked out once per run of steps that share both
        np.take(rank, walk.run_node, out=sent)
        sent *= walk.run_step
        moved = np.repeat(sent, walk.run_length)
        flow = np.bincount(walk.dst, weights=moved, minlength=len(rank))
        lost_of[walk.dangling_slot] = rank[walk.dangling]  # as the sum over every file adds it
        np.multiply(begin, lost_of.sum(), out=spread)
        spread += flow
        spread *= 1.0 - restart
        rank = restarted + spread
    rank /= graph.hub_divisor[walk.nodes]
    every = np.zeros(n_files, dtype=np.float64)
    every[walk.nodes] = rank
    every[list(seeds)] = 0.0  # seeds already have their keyword score; the graph is for others
    best = every.max()
    if best > 0:
        scores = every / best
    return scores


@dataclass(frozen=True, slots=True)
class _Walk:
    """The part of the graph a walk from some seeds can reach: their connected components."""

    nodes: npt.NDArray[np.int64]
    """File ids of the components, component by component (each ascending); the walk
    numbers them 0, 1, ... (no sum depends on that numbering: a file's steps in, the
    edgeless files' slots and the hub divisors all follow the file, not its number)."""
    dst: npt.NDArray[np.int64]
    """Where each step leads, in the walk's numbering, in the graph's order of steps."""
    run_node: npt.NDArray[np.int64]
    run_step: npt.NDArray[np.float64]
    run_length: npt.NDArray[np.int64]
    """The steps in runs that leave one node with one probability (from, probability, how
    many steps): what a step carries is worked out once per run."""
    dangling: npt.NDArray[np.bool_]
    """Per node: it has no edge (only a seed can be one)."""
    dangling_slot: npt.NDArray[np.int64]
    """Place of each of those among every edgeless file of the graph."""


class _Graph:
    """What the walk needs of one import graph, worked out once (not on every keystroke).

    A walk from seeds never leaves their connected components: every other file keeps a
    score of exactly 0 and adds exactly 0 to any sum. So the walk runs over those components
    only, with their edges in the order of all edges and the edgeless files summed in the
    order of all of them: the scores are exactly those of a walk over the whole graph (on
    the 15,689-file tree a walk over one or two of its repositories instead of fifteen:
    issue 7).
    """

    __slots__ = ("_cuts", "_dangling_slot", "_dst", "_label", "_node_cuts", "_nodes",
                 "_parts", "_src", "_step", "_walks", "dangling", "dangling_files",
                 "hub_divisor")  # fmt: skip

    def __init__(
        self, n_files: int, edges: npt.NDArray[np.int32], backward: float, hub_damping: float
    ) -> None:
        import numpy as np  # deliberate: see personalised_pagerank

        importer, imported = edges[:, 0].astype(np.int64), edges[:, 1].astype(np.int64)
        src = np.concatenate([importer, imported])
        dst = np.concatenate([imported, importer])
        weight = np.concatenate([np.ones(len(edges)), np.full(len(edges), backward)])
        out_weight = np.bincount(src, weights=weight, minlength=n_files)
        step = weight / out_weight[src]
        self.dangling = out_weight == 0
        self.dangling_files = int(self.dangling.sum())
        self._dangling_slot = np.cumsum(self.dangling) - 1
        importers = np.bincount(imported, minlength=n_files)
        self.hub_divisor = 1.0 + hub_damping * np.log1p(importers)
        label = self._label = _components(n_files, importer, imported)
        order = _step_order(edges, label[src], src)
        self._src, self._dst, self._step = src[order], dst[order], step[order]
        groups = np.arange(n_files + 1)
        self._cuts = np.searchsorted(label[self._src], groups)
        self._nodes = np.argsort(label, kind="stable")
        self._node_cuts = np.searchsorted(label[self._nodes], groups)
        self._walks: dict[tuple[int, ...], _Walk] = {}
        self._parts: dict[int, _Walk] = {}

    def walk_from(self, seeds: list[int]) -> _Walk:
        """The seeds' components, numbered for the walk (kept for the next keystrokes, whose
        best hits mostly lie in the same components)."""
        groups = tuple(sorted({int(self._label[s]) for s in seeds}))
        walk = self._walks.get(groups)
        if walk is None:
            if len(self._walks) >= WALKS_KEPT:
                self._walks.clear()
            walk = self._walks[groups] = self._joined([self._part(g) for g in groups])
        return walk

    def _part(self, group: int) -> _Walk:
        """One component's walk, in its own numbering (made once: a keystroke's seeds move
        between a few components, and joining their walks costs a few copies where making
        them anew cost 0.3-2 ms a keystroke on the 16k tree)."""
        part = self._parts.get(group)
        if part is None:
            part = self._parts[group] = self._walk(group)  # two threads: equal parts
        return part

    def _walk(self, group: int) -> _Walk:
        import numpy as np  # deliberate: see personalised_pagerank

        nodes = self._nodes[self._node_cuts[group] : self._node_cuts[group + 1]]
        edges = np.arange(self._cuts[group], self._cuts[group + 1])
        number = np.zeros(len(self._label), dtype=np.int64)
        number[nodes] = np.arange(len(nodes))
        dangling = self.dangling[nodes]
        src, step = number[self._src[edges]], self._step[edges]
        begins = np.ones(len(src), dtype=np.bool_)  # where a run begins
        begins[1:] = (src[1:] != src[:-1]) | (step[1:] != step[:-1])
        starts = np.flatnonzero(begins)
        return _Walk(
            nodes,
            number[self._dst[edges]],
            src[starts],
            step[starts],
            np.diff(np.append(starts, len(src))),
            dangling,
            self._dangling_slot[nodes[dangling]],
        )

    @staticmethod
    def _joined(parts: list[_Walk]) -> _Walk:
        """Components' walks as one, each renumbered after the ones before it. Steps keep
        the graph's order within each component, so every file's steps in come in the order
        they did; a run never spans two components (they share no node)."""
        import numpy as np  # deliberate: see personalised_pagerank

        if len(parts) == 1:
            return parts[0]
        sizes = [len(part.nodes) for part in parts]
        shift = np.cumsum([0, *sizes[:-1]])
        return _Walk(
            np.concatenate([part.nodes for part in parts]),
            np.concatenate([part.dst + k for part, k in zip(parts, shift.tolist(), strict=True)]),
            np.concatenate(
                [part.run_node + k for part, k in zip(parts, shift.tolist(), strict=True)]
            ),
            np.concatenate([part.run_step for part in parts]),
            np.concatenate([part.run_length for part in parts]),
            np.concatenate([part.dangling for part in parts]),
            np.concatenate([part.dangling_slot for part in parts]),
        )


def _step_order(
    edges: npt.NDArray[np.int32],
    component: npt.NDArray[np.int64],
    src: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """The order the walk takes the steps (the edges forwards, then backwards) in: by
    component, then, when the edges are sorted by importer and imported (as an index stores
    them), forwards before backwards and each by the node they leave; else as given.

    A file's share of a step is summed in the order of the steps that reach it, and that
    order must stay the plain formula's for the scores to keep their bits. Sorted edges keep
    it: the steps that reach a file forwards leave its importers in ascending order, and those
    that reach it backwards leave the files it imports in ascending order. Then the steps that
    leave one node come in runs (one forwards, one backwards, per component), and what they
    carry is worked out once per run (a repeat, not a gather: 2.5 times faster on the 16k
    tree).
    """
    import numpy as np  # deliberate: see personalised_pagerank

    importer, imported = edges[:, 0], edges[:, 1]
    same = importer[1:] == importer[:-1]
    if not np.all((importer[1:] > importer[:-1]) | (same & (imported[1:] >= imported[:-1]))):
        return np.argsort(component, kind="stable")
    backwards = np.arange(len(src)) >= len(edges)
    return np.lexsort((src, backwards, component))


def _components(
    n_files: int, one_end: npt.NDArray[np.int64], other_end: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Per file, the smallest file id of its connected component (each edge given once, by
    its two ends): the larger of two roots an edge joins is hooked under the smaller, then
    every file points straight at its root, until no edge joins two roots. A root only ever
    points lower, so each component's root is its smallest id. (Label propagation, the
    smallest label over every edge each pass, took 9 passes and 6 ms on the 16k tree's
    43,043 edges; this takes 4 passes and 2.5 ms, part of a warm start's first ranking.)"""
    import numpy as np  # deliberate: see personalised_pagerank

    label = np.arange(n_files, dtype=np.int64)
    a, b = one_end, other_end
    while True:
        root_a, root_b = label[a], label[b]
        apart = root_a != root_b
        if not apart.any():
            return label
        root_a, root_b = root_a[apart], root_b[apart]
        np.minimum.at(label, np.maximum(root_a, root_b), np.minimum(root_a, root_b))
        while True:  # each file to its root (a root's label is itself)
            up = label[label]
            if np.array_equal(up, label):
                break
            label = up
        a, b = a[apart], b[apart]  # edges within one root stay so


_PREPARED: ArrayMemo[_Graph] = ArrayMemo(PREPARED_GRAPHS)
"""Prepared graphs by edges array, files, backward weight and hub damping."""


def _prepared(
    n_files: int, edges: npt.NDArray[np.int32], backward: float, hub_damping: float
) -> _Graph:
    return _PREPARED.get(
        edges,
        (n_files, backward, hub_damping),
        lambda: _Graph(n_files, edges, backward, hub_damping),
    )
