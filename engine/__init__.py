"""ctxtui's engine: turn a repository and a question into a ranked, budgeted context pack.

A pipeline of plain functions over the dataclasses in `engine.model`:
scan -> build_index (parse, words, tokens, graph, git, cache) -> rank -> plan -> render.
Importing this package is cheap: the stage functions are loaded on first use (PEP 562), and
numpy, tree-sitter, tiktoken and git are imported only inside the functions that need them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from engine.errors import CacheError, EngineError, ScanError, TokenizerError, UsageError
from engine.model import (
    FIELDS,
    Declaration,
    DeclKind,
    Format,
    Import,
    Index,
    IndexReport,
    Intent,
    Level,
    ParsedFile,
    Plan,
    PlanEntry,
    PlanLimits,
    Progress,
    Ranking,
    RankedFile,
    Reason,
    ReasonKind,
    Rendered,
    ScanOptions,
    ScanReport,
    Session,
    SkippedFile,
    SkipReason,
    SourceFile,
)

if TYPE_CHECKING:
    from engine.indexer import build_index, refresh_index
    from engine.levels import level_tokens, render_level
    from engine.pack import pack
    from engine.plan import plan
    from engine.rank import DEFAULT_WEIGHTS, RankWeights, rank
    from engine.render import render
    from engine.scan import scan
    from engine.tokens import Tokenizer, load_tokenizer

_LAZY = {
    "scan": "engine.scan",
    "build_index": "engine.indexer",
    "refresh_index": "engine.indexer",
    "rank": "engine.rank",
    "RankWeights": "engine.rank",
    "DEFAULT_WEIGHTS": "engine.rank",
    "plan": "engine.plan",
    "pack": "engine.pack",
    "render": "engine.render",
    "render_level": "engine.levels",
    "level_tokens": "engine.levels",
    "Tokenizer": "engine.tokens",
    "load_tokenizer": "engine.tokens",
}


def __getattr__(name: str) -> Any:
    """Load a stage function on first use, keeping `import engine` cheap."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "DEFAULT_WEIGHTS",
    "FIELDS",
    "CacheError",
    "DeclKind",
    "Declaration",
    "EngineError",
    "Format",
    "Import",
    "Index",
    "IndexReport",
    "Intent",
    "Level",
    "ParsedFile",
    "Plan",
    "PlanEntry",
    "PlanLimits",
    "Progress",
    "RankWeights",
    "RankedFile",
    "Ranking",
    "Reason",
    "ReasonKind",
    "Rendered",
    "ScanError",
    "ScanOptions",
    "ScanReport",
    "Session",
    "SkipReason",
    "SkippedFile",
    "SourceFile",
    "TokenizerError",
    "Tokenizer",
    "UsageError",
    "build_index",
    "level_tokens",
    "load_tokenizer",
    "pack",
    "plan",
    "rank",
    "refresh_index",
    "render",
    "render_level",
    "scan",
]
