"""Errors the engine raises; each message is one line a user can act on.

Problems with a single file (binary, unreadable, vanished) are not errors: they are recorded in
the scan or index report and the work carries on.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class ScanError(EngineError):
    """The root cannot be scanned: missing, not a folder, or unreadable."""


class CacheError(EngineError):
    """The cache folder cannot be written or read at all."""


class DamagedCache(CacheError):
    """A record of the index cache cannot be decoded though the file loaded (damaged inside):
    the file is removed, so that the next run rebuilds it."""


class TokenizerError(EngineError):
    """A tokenizer table is missing, damaged, or the encoding is unknown."""


class GitError(EngineError):
    """git failed on a repository it can read as a rule (a damaged index or object, a lock,
    a folder it may not enter): what it would have said is unknown, which is not "nothing"."""


class UsageError(EngineError):
    """A parameter is out of range (a negative budget, an unknown format)."""
