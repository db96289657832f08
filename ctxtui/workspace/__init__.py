"""The warm workspace the front-ends share: open, refresh (stat check), rank, plan and pack.

Front-end-neutral: the command line, the app and the MCP server all import it, and it imports
none of them (an import-linter contract in pyproject.toml checks that).
`core` holds the opened repository, `gate` the lock that lets a refresh replace the index
under readers, `choices` the frozen user choices, `jobs` the work each front-end runs.
"""

from __future__ import annotations

from ctxtui.workspace.changes import working_changes
from ctxtui.workspace.choices import Choices, SavedOpener, WorkspaceAPI, WorkspaceFactory
from ctxtui.workspace.core import (
    DEFAULT_ENCODING,
    REFRESH_INTERVAL,
    LazyTokenizer,
    Tuning,
    Workspace,
    cache_dir_for,
)
from ctxtui.workspace.gate import ReadWriteGate
from ctxtui.workspace.jobs import (
    build_pack,
    describe_error,
    fresh_pack,
    open_workspace,
    pack_job,
    rank_and_plan,
    refresh_job,
)
from ctxtui.workspace.memory import TextCache

__all__ = [
    "DEFAULT_ENCODING",
    "REFRESH_INTERVAL",
    "Choices",
    "LazyTokenizer",
    "ReadWriteGate",
    "SavedOpener",
    "TextCache",
    "Tuning",
    "Workspace",
    "WorkspaceAPI",
    "WorkspaceFactory",
    "build_pack",
    "cache_dir_for",
    "describe_error",
    "fresh_pack",
    "open_workspace",
    "pack_job",
    "rank_and_plan",
    "refresh_job",
    "working_changes",
]
