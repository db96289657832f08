"""The import graph's connected components, which bound each walk (engine.graph): every file
labelled with its component's smallest file id, whatever the shape of the graph."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.graph import _components


def components_by_search(n_files: int, edges: list[tuple[int, int]]) -> list[int]:
    """Each file's component's smallest id, by a plain search from each file in id order."""
    neighbours: list[list[int]] = [[] for _ in range(n_files)]
    for a, b in edges:
        neighbours[a].append(b)
        neighbours[b].append(a)
    label = [-1] * n_files
    for first in range(n_files):
        if label[first] >= 0:
            continue
        label[first], todo = first, [first]
        while todo:
            for other in neighbours[todo.pop()]:
                if label[other] < 0:
                    label[other] = first
                    todo.append(other)
    return label


def components(n_files: int, edges: list[tuple[int, int]]) -> list[int]:
    ends = np.array(edges, dtype=np.int64).reshape(-1, 2)
    return list(_components(n_files, ends[:, 0], ends[:, 1]).tolist())


@pytest.mark.parametrize("seed", range(40))
def test_each_file_is_labelled_with_its_components_smallest_id(seed: int) -> None:
    rng = random.Random(seed)
    n_files = rng.choice((1, 2, 17, 120, 400))
    count = rng.choice((0, 1, n_files // 2, n_files, 3 * n_files))
    edges = [(rng.randrange(n_files), rng.randrange(n_files)) for _ in range(count)]
    assert components(n_files, edges) == components_by_search(n_files, edges)


def test_long_chains_and_stars_in_any_order_and_direction() -> None:
    n_files = 300
    chain = [(i + 1, i) for i in range(0, 99)]  # 0..99 joined end to end, pointing down
    zigzag = [(100 + 2 * i, 101 + 2 * i) for i in range(50)]  # pairs 100-199 ...
    zigzag += [(101 + 2 * i, 102 + 2 * i) for i in range(49)]  # ... then chained
    star = [(299, leaf) for leaf in range(200, 299)]  # a hub with the largest id
    edges = chain + zigzag + star + [(5, 5)]  # and a file importing itself
    random.Random(3).shuffle(edges)
    label = components(n_files, edges)
    assert label == components_by_search(n_files, edges)
    assert set(label) == {0, 100, 200}
