"""The JSON pack of DESIGN §8, for scripts and tools: stable key order, indent 2, UTF-8 kept."""

from __future__ import annotations

import json

from engine.model import printable
from engine.render.view import FileView, PackView

SCORE_DIGITS = 4
"""Scores are rounded so the same ranking always prints the same digits."""


def to_json(pack: PackView) -> str:
    """Format a pack as JSON (keys in the documented order)."""
    document: dict[str, object] = {"instructions": pack.instructions} if pack.instructions else {}
    document |= {
        "query": pack.query,
        "root": pack.root,
        "budget": pack.budget,
        "encoding": pack.encoding,
        "total_tokens": pack.total_tokens,
    }
    if pack.changes is not None:
        document["changes"] = _changes_object(pack)
    document["files"] = [_file_object(file) for file in pack.files]
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def file_json(file: FileView) -> str:
    """One file's object as the pack holds it (one level less indented)."""
    return json.dumps(_file_object(file), indent=2, ensure_ascii=False)


def _file_object(file: FileView) -> dict[str, object]:
    return {
        "path": file.path,
        "level": file.level.value,
        "tokens": file.tokens,
        "score": round(file.score, SCORE_DIGITS),
        "pinned": file.pinned,
        "reasons": [
            {"kind": reason.kind.value, "detail": reason.detail, "fields": list(reason.fields)}
            for reason in file.reasons
        ],
        "content": file.content,
    }


def _changes_object(pack: PackView) -> dict[str, object]:
    section = pack.changes
    assert section is not None
    return {
        "base": section.base,
        "tokens": section.tokens,
        "hunks": section.hunks,
        "hunks_left_out": section.hunks_left_out,
        "files": [
            {
                "path": printable(f.path),
                "status": f.status.value,
                "old_path": printable(f.old_path) or None,
            }
            for f in section.files
        ],
        "diff": section.diff,
    }
