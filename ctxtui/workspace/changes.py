"""The work tree's changes for a pack, with the one-line notice when there are none to pack.

Every front-end says the same thing the same way: outside git, or with nothing changed, the
pack is made without a "Changes" section and the notice tells why.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.changes import Changes, read_changes


def working_changes(root: Path, base: str | None = None) -> tuple[Changes | None, str]:
    """The changes against `base` (default HEAD) to pack, or None and a one-line notice.

    Raises:
        UsageError: `base` names no branch or commit.
    """
    changes = read_changes(root, base)
    if changes is None:
        if shutil.which("git") is None:  # a work tree, maybe, but nothing to read it with
            return None, "git is not installed (not found on PATH): packing without changes"
        return None, f"{root} is not in a git work tree: packing without changes"
    if not changes.files:
        return None, f"no changes against {changes.base}: packing without changes"
    return changes, ""
