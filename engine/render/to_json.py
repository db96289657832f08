"""The JSON pack of DESIGN §8, for scripts and tools: stable key order, UTF-8 kept.

The pack is read by a model inside a token budget, so its wrapping is kept lean: the header is
indented, but each file is one object on one line (an indented file object spent ~16 tokens on
its line breaks and indents), its reasons are short strings ("declaration Flask.errorhandler",
"word errorhandler in exported, docs, body"; an object `{"kind", "detail", "fields"}` cost
~27 tokens a reason, a string ~8), its score carries three significant digits, and `pinned`
appears only when true. On 60 DEV packs at 8,000 tokens (session 27) a file's wrapping came
from 140 tokens to ~61 without losing a fact. `rank --json` and the MCP tools keep their
structured reasons (kind, detail, fields, share): scripts read those, and they carry no code.
"""

from __future__ import annotations

import json

from engine.model import Reason
from engine.render.view import FileView, PackView

SCORE_DIGITS = 3
"""Significant digits of a printed score: the order and the ratios of the files show, and the
same ranking always prints the same digits (9.37, 0.0412)."""


def to_json(pack: PackView) -> str:
    """Format a pack as JSON (keys in the documented order, one line a file)."""
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
    head = json.dumps(document, indent=2, ensure_ascii=False).removesuffix("\n}")
    files = ",\n".join(f"    {file_json(file)}" for file in pack.files)
    listed = f"[\n{files}\n  ]" if files else "[]"
    return f'{head},\n  "files": {listed}\n}}\n'


def file_json(file: FileView) -> str:
    """One file's object as the pack holds it, on one line."""
    return json.dumps(_file_object(file), ensure_ascii=False)


def reason_line(reason: Reason) -> str:
    """A reason as the pack carries it: its kind, its detail, then the fields a word matched
    in ("word session in name, body"). The kind is one word, so a script splits it off."""
    text = f"{reason.kind.value} {reason.detail}"
    return f"{text} in {', '.join(reason.fields)}" if reason.fields else text


def printed_score(score: float) -> float:
    """A score as the pack prints it: SCORE_DIGITS significant digits."""
    return float(f"{score:.{SCORE_DIGITS}g}")


def _file_object(file: FileView) -> dict[str, object]:
    shown: dict[str, object] = {
        "path": file.path,
        "level": file.level.value,
        "tokens": file.tokens,
        "score": printed_score(file.score),
    }
    if file.pinned:
        shown["pinned"] = True
    shown["reasons"] = [reason_line(reason) for reason in file.reasons]
    shown["content"] = file.content
    return shown


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
                "path": f.path,  # shown as render made them (engine.shown_path)
                "status": f.status.value,
                "old_path": f.old_path or None,
            }
            for f in section.files
        ],
        "diff": section.diff,
    }
