"""A pack stays within its budget in every format, also after levels move to richer views."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import make_repo
from index_support import index_repo, shared_tokenizer

from engine.model import Format
from engine.pack import pack
from engine.rank import rank

WORDS = ["parse", "config", "loader", "cache", "token", "budget", "render", "retry"]


def _function(pick: random.Random, name: str, lines: int) -> str:
    body = "".join(
        f"    {pick.choice(WORDS)}_{i} = parse_config(value_{i})  # {pick.choice(WORDS)}\n"
        for i in range(lines)
    )
    doc = f'    """Parse the config {name}."""\n'
    return f"def {name}(config, value):\n{doc}{body}    return config\n\n\n"


def _files() -> dict[str, str]:
    """Functions of every length whose lines quote names and comments: their JSON escapes
    make a focused view cost more rendered than its text counts."""
    pick = random.Random(7)
    files = {
        "oneline.py": "def parse_config(x): return x",
        "comments.py": "# parse config\n# only comments here\n" * 30,
        "big.py": "import os\nimport json\n\n"
        + "".join(_function(pick, f"parse_config_{i}", pick.randint(3, 150)) for i in range(40)),
    }
    for i in range(25):
        files[f"pkg/m{i}.py"] = "".join(
            _function(pick, f"f{i}_{j}_{pick.choice(WORDS)}", pick.randint(2, 90))
            for j in range(pick.randint(1, 8))
        )
    return files


@pytest.mark.parametrize("fmt", [Format.JSON, Format.XML, Format.MARKDOWN])
def test_an_automatic_pack_never_goes_over_its_budget(tmp_path: Path, fmt: Format) -> None:
    index = index_repo(make_repo(tmp_path / "repo", _files()))[0]
    ranking = rank(index, "retry budget render token cache")
    over = []
    for budget in range(600, 800, 5):
        planned, rendered = pack(ranking, index, budget, fmt, counter=shared_tokenizer())
        if rendered.tokens > budget:
            over.append((budget, rendered.tokens, planned.notes))
    assert over == []
