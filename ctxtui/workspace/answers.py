"""Rankings and packs as plain JSON-able data, worded the same for every front-end.

`ctxtui rank --json` and the MCP server's rank_files print the same records; the reasons are
data in the engine and words here ("session in names", "imports: app/db.py").
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from engine.model import Index, Plan, Ranking, Reason, ReasonKind, Rendered
from engine.shown_path import shown_detail, shown_path


def reason_text(reason: Reason, *, redact: bool = True) -> str:
    """One reason in words: a matched word as is, anything else after its kind (a path in
    it shown as every path is: engine.shown_path)."""
    detail = shown_detail(reason, redact=redact)
    if reason.kind is ReasonKind.WORD:
        return detail
    return f"{reason.kind.value}: {detail}"


def ranking_to_json(
    ranking: Ranking, limit: int, *, redact: bool = True
) -> list[dict[str, object]]:
    """The `rank --json` list: path, score and reasons, best first (paths as shown: valid
    Unicode, secrets in names redacted unless `redact` is off)."""
    return [
        {
            "path": shown_path(f.path, redact=redact),
            "score": round(f.score, 6),
            "reasons": [
                {
                    "kind": r.kind.value,
                    "detail": shown_detail(r, redact=redact),
                    "fields": list(r.fields),
                    "share": r.share,
                }
                for r in f.reasons
            ],
            "pinned": f.pinned,
            "focused": f.focused,
        }
        for f in ranking.files[:limit]
    ]


def ranked_files(
    ranking: Ranking, index: Index, limit: int, *, redact: bool = True
) -> list[dict[str, object]]:
    """The best files with their whole-file token cost and their reasons in words."""
    return [
        {
            "path": shown_path(f.path, redact=redact),
            "score": round(f.score, 6),
            "tokens": index.files[f.file_id].tokens,
            "reasons": [reason_text(r, redact=redact) for r in f.reasons],
            "pinned": f.pinned,
        }
        for f in ranking.files[:limit]
    ]


def pack_summary(plan: Plan, rendered: Rendered) -> dict[str, object]:
    """What a pack holds: each file's level and tokens, the totals, the planner's notes."""

    def shown(path: str) -> str:
        return shown_path(path, redact=rendered.redacted)

    return {
        "format": rendered.fmt.value,
        "budget": plan.budget,
        "tokens": rendered.tokens,
        "over_budget": plan.over_budget or rendered.tokens > plan.budget,
        "changes_tokens": plan.changes_tokens,
        "files": [
            {"path": shown(e.path), "level": e.level.value, "tokens": e.tokens}
            for e in plan.entries
        ],
        "notes": list(plan.notes),
        "secrets": [
            {"path": shown(s.path), "line": s.line, "kind": s.kind} for s in rendered.secrets
        ],
        "redacted": rendered.redacted,
    }


def left_out(index: Index, path: str) -> str:
    """Why the index left a file out, in words ("secret file", "too large"), or the folder
    it is in ("excluded", "dependency or build folder"); "" when the scan did not meet it
    (no such file, or one git ignores)."""
    within = {path, *(folder.as_posix() for folder in PurePosixPath(path).parents)}
    found = next((skipped for skipped in index.skipped if skipped.path in within), None)
    return found.reason.value if found is not None else ""


def under_root(root: Path, path: Path) -> str | None:
    """`path` (absolute, or relative to the current folder) as a relative POSIX path under
    `root` (a resolved folder), links followed; None when it is outside. A path through a
    symlink loop cannot be followed to its end (Path.resolve raises RuntimeError on Python
    3.11, OSError on 3.13), so its folder is, and its last part is taken as written: the
    index then says what it left out ("symlink loop")."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        try:
            real = path.parent.resolve() / path.name
        except (OSError, RuntimeError):
            real = Path(os.path.abspath(path))
    try:
        return real.relative_to(root).as_posix()
    except ValueError:
        return None


def gone_paths(index: Index, chosen: Iterable[str]) -> tuple[str, ...]:
    """The chosen paths (pins, levels) the index no longer holds, sorted: deleted or renamed
    since they were chosen. A look-up per path, not a pass over the index's files."""
    return tuple(sorted(path for path in set(chosen) if path not in index.path_ids))
