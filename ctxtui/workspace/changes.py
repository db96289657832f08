"""The work tree's changes for a pack, with the one-line notice when there are none to pack
or they are not against what was asked.

Every front-end says the same thing the same way: outside git, or with nothing changed, the
pack is made without a "Changes" section and the notice tells why; with no merge base of the
base and HEAD, the notice says the changes are against the base itself.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.changes import Changes, read_changes
from engine.errors import EngineError, UsageError


def working_changes(root: Path, base: str | None = None) -> tuple[Changes | None, str]:
    """The changes against `base` (default HEAD) to pack, or None, and a one-line notice
    (empty when there is nothing to say).

    Without git (no work tree, or git not installed) the pack of the work tree's changes is
    made without them and the notice says why; a `base` asked for by name cannot be
    honoured there, and raises.

    Raises:
        UsageError: `base` names no branch or commit, or `root` is not in a git work tree.
        EngineError: `base` is given and git is not installed.
        GitError: git failed in the work tree (a damaged index...): the changes are unknown,
            and a failure is not "no changes" (engine.changes.read_changes).
    """
    changes = read_changes(root, base)
    if changes is None:
        if shutil.which("git") is None:  # a work tree, maybe, but nothing to read it with
            if base:
                raise EngineError(
                    f"git is not installed (not found on PATH): cannot diff against {base!r}"
                )
            return None, "git is not installed (not found on PATH): packing without changes"
        if base:
            raise UsageError(f"{root} is not in a git work tree: no {base!r} to diff against")
        return None, f"{root} is not in a git work tree: packing without changes"
    if changes.no_merge_base:
        # git diffs against the base itself, which also shows, reversed, what the base has
        # that HEAD never had: say what was compared
        why = f"no merge base of {changes.base} and HEAD (unrelated histories, or a shallow clone)"
        against = f"{changes.base} itself ({changes.base_commit[:12]})"
        if not changes.files:
            return None, f"{why}: no changes against {against}: packing without changes"
        return changes, f"{why}: the changes are against {against}"
    if not changes.files:
        return None, f"no changes against {changes.base}: packing without changes"
    return changes, ""
