"""Recency and churn per file, from one `git log --name-only` pass over recent history.

One pass over at most `max_commits` commits costs ~0.2 s on flask, where asking per file costs
~15 s (FACTS.md §7). The signals are a ranking nicety: outside git, in a repository without
commits, or in a shallow clone (whose history would be a lie) they are simply absent, never an
error. `git_head` keys the cached signals so they are recomputed only when HEAD moves.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from engine.gitcmd import git_output
from engine.model import GitSignal

DEFAULT_MAX_COMMITS = 5000
"""History window: enough for a year of a busy project, bounded for giant monorepos."""


def read_git_signals(
    root: Path, paths: Sequence[str], max_commits: int = DEFAULT_MAX_COMMITS
) -> dict[str, GitSignal]:
    """Return last-change time and change count for each of `paths` that git log mentions.

    Args:
        root: the scanned folder; may be a sub-folder of the work tree.
        paths: POSIX paths relative to `root`; files absent from the log get no entry.
        max_commits: newest commits to read.
    """
    # Plain git through engine.gitcmd (GitPython ran it with the repository's own config, and
    # `log.showSignature` with a `gpg.program` of its choosing would run that program).
    answer = git_output(root, "rev-parse", "--is-shallow-repository", "--show-prefix")
    if answer is None:
        return {}  # not a repository, or no git at all
    facts = answer.decode("utf-8", "replace").split("\n")
    if facts[0].strip() != "false":
        return {}  # shallow: counts and dates would describe only the tip
    prefix = facts[1].strip() if len(facts) > 1 else ""
    log_args = ["--name-only", "--no-renames", "-z", "--format=%x00%ct", f"-n{max_commits}"]
    if prefix:
        log_args += ["--", "."]  # only commits touching the root count toward the window
    output = git_output(root, "log", *log_args)
    if output is None:
        return {}  # no commits yet
    return _signals_from_log(output, prefix, frozenset(paths))


def _signals_from_log(output: bytes, prefix: str, wanted: frozenset[str]) -> dict[str, GitSignal]:
    """Parse `git log -z --name-only --format=%x00%ct` output, newest commit first.

    Each commit reads as "\\0<time>\\0\\n<path>\\0<path>\\0..."; so a field that follows an
    empty one is a commit time, and the first path of a commit carries a leading newline.
    Paths are relative to the top level; those outside `prefix` are dropped.
    """
    last_change: dict[str, float] = {}
    changes: dict[str, int] = {}
    fields = output.split(b"\0")
    when = 0.0
    after_empty = False
    first_path = False
    for raw in fields:
        if not raw:
            after_empty = True
            continue
        if after_empty:
            after_empty = False
            when = float(raw)
            first_path = True
            continue
        if first_path:
            raw = raw[1:] if raw.startswith(b"\n") else raw
            first_path = False
        path = os.fsdecode(raw)
        if prefix:
            if not path.startswith(prefix):
                continue
            path = path[len(prefix) :]
        if path not in wanted:
            continue
        changes[path] = changes.get(path, 0) + 1
        if path not in last_change:
            last_change[path] = when
    return {path: GitSignal(last_change[path], changes[path]) for path in sorted(changes)}


def git_head(root: Path) -> str | None:
    """Return the commit HEAD points at, or None outside git or before the first commit."""
    answer = git_output(root, "rev-parse", "--verify", "-q", "HEAD")
    head = answer.decode("ascii", "replace").strip() if answer is not None else ""
    return head or None
