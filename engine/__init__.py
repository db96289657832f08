"""ctxtui's engine: turn a repository and a question into a ranked, budgeted context pack.

A pipeline of plain functions over the dataclasses in `engine.model`:
scan -> build_index (parse, words, tokens, graph, git, cache) -> rank -> plan -> render.
Importing this package is cheap: numpy, tree-sitter, tiktoken and git are imported only
inside the functions that need them.
"""

from __future__ import annotations

from engine.errors import CacheError, EngineError, ScanError, TokenizerError, UsageError

# The stage functions are imported eagerly: their modules load numpy, tree-sitter, tiktoken
# and git only inside the functions that need them, so this stays cheap (see the import test).
# (A lazy __getattr__ cannot work here: importing engine.rank would rebind `engine.rank` to
# the module.)
from engine.indexer import build_index, refresh_index
from engine.levels import level_tokens, render_level
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
    RankedFile,
    Ranking,
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
from engine.pack import pack
from engine.plan import plan
from engine.rank import DEFAULT_WEIGHTS, RankWeights, rank
from engine.render import render
from engine.saved import open_saved
from engine.scan import scan
from engine.tokens import Tokenizer, load_tokenizer

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
    "Tokenizer",
    "TokenizerError",
    "UsageError",
    "build_index",
    "level_tokens",
    "load_tokenizer",
    "open_saved",
    "pack",
    "plan",
    "rank",
    "refresh_index",
    "render",
    "render_level",
    "scan",
]
